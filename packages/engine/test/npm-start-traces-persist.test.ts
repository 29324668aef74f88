/**
 * Issue 25 item 7: with `npm start`'s configuration (the root config.yaml), traces and logs survive
 * an engine restart, so a session's Traces link still finds its trace afterwards. The engine runs
 * the file's own module entries (ports moved to free ones, the launched workers left out: only the
 * engine's stores are under test).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { type EngineProcess, REPO_ROOT, startEngine, waitFor } from '../../../test/harness.ts';
import { findBuiltin } from '../src/modules/index.ts';
import { frame, hex, otelSocket, rawClients, sendFrames, tracesRequest } from './observability-helpers.ts';

/** The root config.yaml with only its engine modules, each `${ENG_*_PORT:…}` a free port. */
function npmStartModules(): string {
  const doc = parseDocument(readFileSync(join(REPO_ROOT, 'config.yaml'), 'utf8'));
  const workers = doc.toJS().workers as Array<{ name: string }>;
  doc.set(
    'workers',
    workers.filter((w) => findBuiltin(w.name)),
  );
  return doc.toString().replace(/\$\{ENG_([A-Z]+)_PORT:\d+\}/g, '{{$1_PORT}}');
}

const raw = rawClients();
let engine: EngineProcess;
afterAll(async () => {
  await raw.closeAll();
  await engine?.stop();
});

describe("npm start's configuration", () => {
  it('keeps spans and logs across a restart (engine::traces::list and engine::logs::list find them)', async () => {
    engine = await startEngine({ configYaml: npmStartModules(), env: { ENG_LOG_LEVEL: 'info' } });
    const traceId = hex(16);
    const now = Date.now();
    const otel = await otelSocket(engine.busUrl);
    await sendFrames(otel, [
      frame(
        'OTLP',
        tracesRequest([
          { traceId, spanId: 'aaaaaaaaaaaaaaaa', name: 'harness turn', service: 'harness', startMs: now, durationMs: 10 },
          { traceId, parentSpanId: 'aaaaaaaaaaaaaaaa', name: 'generation', service: 'harness', startMs: now + 1, durationMs: 5 },
        ]),
      ),
    ]);
    otel.terminate();
    let client = await raw.open(engine.busUrl);
    await client.result('engine::log::info', { message: 'turn log kept across restart', trace_id: traceId });
    await waitFor(
      async () =>
        (await client.result<{ total: number }>('engine::traces::list', { trace_id: traceId })).total === 1 &&
        (await client.result<{ total: number }>('engine::logs::list', { trace_id: traceId })).total === 1,
      20_000,
    );

    await engine.restart();
    client = await raw.open(engine.busUrl);
    const traces = await client.result<{ spans: Array<{ name: string; span_count: number }> }>('engine::traces::list', {
      trace_id: traceId,
    });
    expect(traces.spans).toMatchObject([{ name: 'harness turn', span_count: 2 }]);
    const logs = await client.result<{ logs: Array<{ body: string }> }>('engine::logs::list', { trace_id: traceId });
    expect(logs.logs.map((l) => l.body)).toEqual(['turn log kept across restart']);
    // the data sits with the other stores, bounded by the stores' budgets (persistence.ts)
    expect(engine.logs()).toContain(join(engine.dataDir, 'observability.db'));
  });
});
