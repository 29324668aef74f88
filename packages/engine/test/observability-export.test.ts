import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, freePort, startEngine, waitFor } from '../../../test/harness.ts';
import type { RawClient } from '../../../test/raw-client.ts';
import {
  autoExecutor,
  type FakeCollector,
  fakeCollector,
  frame,
  hex,
  otelSocket,
  rawClients,
  sendFrames,
  tracesRequest,
} from './observability-helpers.ts';

// spec: engine-protocol §7.2 `exporter: otlp|memory|both`, `logs_exporter`, `endpoint`,
// `service_version`, `service_namespace`; §8.1 (engine spans and worker spans go the same way).
// The OTLP collector is a real HTTP server on loopback that records what it receives.

const raw = rawClients();
afterAll(() => raw.closeAll());

type Sink = FakeCollector;

type ExportedSpan = { traceId: string; spanId: string; name: string; resource: Record<string, string> };

/** Every span the collector received, with its resource attributes flattened. */
function exportedSpans(sink: Sink): ExportedSpan[] {
  const out: ExportedSpan[] = [];
  for (const request of sink.requests.filter((r) => r.path === '/v1/traces')) {
    for (const rs of request.body.resourceSpans) {
      const resource = Object.fromEntries(
        rs.resource.attributes.map((a: { key: string; value: { stringValue: string } }) => [a.key, a.value.stringValue]),
      );
      for (const ss of rs.scopeSpans) for (const span of ss.spans) out.push({ ...span, resource });
    }
  }
  return out;
}

const exportedLogBodies = (sink: Sink): string[] =>
  sink.requests
    .filter((r) => r.path === '/v1/logs')
    .flatMap((r) =>
      r.body.resourceLogs.flatMap((rl: any) => rl.scopeLogs.flatMap((sl: any) => sl.logRecords.map((l: any) => l.body.stringValue))),
    );

describe('exporter: both', () => {
  let engine: EngineProcess;
  let sink: Sink;
  let client: RawClient;

  beforeAll(async () => {
    sink = await fakeCollector();
    engine = await startEngine({
      workersYaml: [
        '  - name: eng-observability',
        '    config:',
        '      exporter: both',
        '      logs_exporter: both',
        '      logs_flush_interval_ms: 100',
        '      logs_console_output: false',
        '      service_version: 1.2.3',
        '      service_namespace: shop',
        `      endpoint: ${sink.url}`,
        '',
      ].join('\n'),
    });
    client = await raw.open(engine.busUrl);
  });
  afterAll(async () => {
    await engine?.stop();
    await sink?.close();
  });

  it('sends engine spans and worker spans to the OTLP endpoint and keeps them in memory', async () => {
    const { invokes } = await autoExecutor(() => raw.open(engine.busUrl), client, 'both::work');
    expect((await client.call('both::work', {})).error).toBeUndefined();
    const engineTrace = String(invokes[0]?.traceparent).split('-')[1];

    const otel = await otelSocket(engine.busUrl);
    const workerTrace = hex(16);
    await sendFrames(otel, [
      frame(
        'OTLP',
        tracesRequest([{ traceId: workerTrace, name: 'worker op', service: 'svc-worker', startMs: Date.now(), durationMs: 3 }]),
      ),
    ]);
    otel.terminate();

    // exported (the span batch goes out within a second)
    const exported = await waitFor(
      () => {
        const spans = exportedSpans(sink);
        const ours = spans.find((s) => s.traceId === engineTrace);
        const theirs = spans.find((s) => s.traceId === workerTrace);
        return ours && theirs ? { ours, theirs } : null;
      },
      5000,
      50,
    );
    expect(exported.ours).toMatchObject({
      name: 'call both::work',
      resource: { 'service.name': 'eng', 'service.version': '1.2.3', 'service.namespace': 'shop' },
    });
    expect(exported.theirs).toMatchObject({ name: 'worker op', resource: { 'service.name': 'svc-worker' } });
    expect(exported.theirs.resource['service.version']).toBeUndefined();

    // and in memory, with the same ids
    for (const [traceId, name] of [
      [engineTrace, 'call both::work'],
      [workerTrace, 'worker op'],
    ] as const) {
      const list = await client.result<{ spans: Array<{ name: string; span_id: string }> }>('engine::traces::list', { trace_id: traceId });
      expect(list.spans.map((s) => s.name)).toEqual([name]);
    }
    expect(exportedSpans(sink).find((s) => s.traceId === workerTrace)?.spanId).toBe(
      (await client.result<{ spans: Array<{ span_id: string }> }>('engine::traces::list', { trace_id: workerTrace })).spans[0]?.span_id,
    );
  });

  it('sends log records to both as well, and health::check reports the exporter', async () => {
    const text = `both log ${hex(4)}`;
    await client.result('engine::log::warn', { message: text });
    await waitFor(() => exportedLogBodies(sink).includes(text));
    expect((await client.result<{ total: number }>('engine::logs::list', { search: text })).total).toBe(1);
    const health = await client.result<any>('engine::health::check', {});
    expect(health.components.otel).toMatchObject({
      status: 'healthy',
      details: { exporter: 'both', logs_exporter: 'both', endpoint: sink.url, spans: { dropped: 0, failures: 0 }, logs: { failures: 0 } },
    });
    expect(health.components.otel.details.spans.sent).toBeGreaterThanOrEqual(2);
    expect(health.components.otel.details.logs.sent).toBeGreaterThanOrEqual(1);
  });
});

describe('exporter: both with the collector down', () => {
  let engine: EngineProcess;
  let client: RawClient;
  let port: number;
  let sink: Sink | undefined;

  beforeAll(async () => {
    port = await freePort(); // nothing listens here until the last test
    engine = await startEngine({
      workersYaml: [
        '  - name: eng-observability',
        '    config:',
        '      exporter: both',
        '      logs_exporter: both',
        '      logs_flush_interval_ms: 100',
        '      logs_console_output: false',
        `      endpoint: http://127.0.0.1:${port}`,
        '',
      ].join('\n'),
    });
    client = await raw.open(engine.busUrl);
  });
  afterAll(async () => {
    await engine?.stop();
    await sink?.close();
  });

  it('serves calls and fills the memory stores; the failures are logged once per signal, not per span', async () => {
    const { invokes } = await autoExecutor(() => raw.open(engine.busUrl), client, 'down::work');
    const tag = hex(4);
    // spread over more than two span flush intervals (1 s) and many log flush intervals (100 ms)
    for (let round = 0; round < 5; round++) {
      const results = await Promise.all(Array.from({ length: 20 }, () => client.call('down::work', {})));
      expect(results.every((r) => r.error === undefined)).toBe(true);
      await client.result('engine::log::info', { message: `${tag} round ${round}` });
      await new Promise((r) => setTimeout(r, 550));
    }
    expect(invokes).toHaveLength(100);
    const stored = await waitFor(async () => {
      const r = await client.result<{ total: number }>('engine::traces::list', { name: 'call down::work' });
      return r.total >= 100 ? r : null;
    }, 30_000);
    expect(stored.total).toBe(100);
    const logged = await waitFor(async () => {
      const r = await client.result<{ total: number }>('engine::logs::list', { search: tag });
      return r.total >= 5 ? r : null;
    }, 30_000);
    expect(logged.total).toBe(5);

    const health = await waitFor(async () => {
      const h = await client.result<any>('engine::health::check', {});
      return h.components.otel.details.spans.failures >= 2 && h.components.otel.details.spans.dropped >= 100 ? h : null;
    }, 30_000);
    expect(health.status).toBe('healthy');
    expect(health.components.otel.details.spans.dropped).toBeGreaterThanOrEqual(100);
    expect(health.components.otel.details.spans.sent).toBe(0);
    expect(health.components.otel.details.logs.failures).toBeGreaterThanOrEqual(2);

    const lines = engine.logs().split('\n');
    const traceWarnings = lines.filter((l) => l.includes(`OTLP export to http://127.0.0.1:${port}/v1/traces failed`));
    const logWarnings = lines.filter((l) => l.includes(`OTLP export to http://127.0.0.1:${port}/v1/logs failed`));
    expect(traceWarnings).toHaveLength(1);
    expect(logWarnings).toHaveLength(1);
    expect(traceWarnings[0]).toMatch(/ECONNREFUSED|fetch failed/);
  });

  it('exports again once the collector is up, saying so once', async () => {
    sink = await fakeCollector(port);
    const { invokes } = await autoExecutor(() => raw.open(engine.busUrl), client, 'down::later');
    expect((await client.call('down::later', {})).error).toBeUndefined();
    const traceId = String(invokes[0]?.traceparent).split('-')[1];
    await waitFor(() => exportedSpans(sink as Sink).some((s) => s.traceId === traceId), 30_000, 50);
    const recovered = `OTLP export to http://127.0.0.1:${port}/v1/traces works again`;
    await waitFor(() => engine.logs().includes(recovered), 30_000);
    expect(engine.logs().split(recovered)).toHaveLength(2);
  });
});
