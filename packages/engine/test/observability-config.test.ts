import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type WebSocket from 'ws';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import type { RawClient } from '../../../test/raw-client.ts';
import {
  type FakeCollector,
  fakeCollector,
  frame,
  hex,
  logsRequest,
  otelSocket,
  rawClients,
  sendFrames,
  tracesRequest,
} from './observability-helpers.ts';

// spec: engine-protocol §7.2 — the eng-observability config: OTLP export, persistence, store sizes
// and retention, sampling, logs switched off, config validation.

const raw = rawClients();
afterAll(() => raw.closeAll());
const rawWorker = (engine: EngineProcess) => raw.open(engine.busUrl);

describe('exporter: otlp', () => {
  let engine: EngineProcess;
  let sink: FakeCollector;

  beforeAll(async () => {
    sink = await fakeCollector();
    engine = await startEngine({
      workersYaml: `  - name: eng-observability\n    config:\n      exporter: otlp\n      logs_exporter: otlp\n      logs_flush_interval_ms: 100\n      endpoint: ${sink.url}\n`,
    });
  });
  afterAll(async () => {
    await engine?.stop();
    sink?.server.close();
  });

  it('sends engine spans and logs to the OTLP endpoint and keeps no traces in memory', async () => {
    const executor = await rawWorker(engine);
    const caller = await rawWorker(engine);
    executor.send({ type: 'registerfunction', id: 'exp::work' });
    await waitFor(async () => (await caller.call('engine::functions::info', { function_id: 'exp::work' })).result);
    const pending = caller.call('exp::work', {});
    const invoke = await executor.next((f) => f.type === 'invokefunction' && f.function_id === 'exp::work');
    executor.send({ type: 'invocationresult', invocation_id: invoke.invocation_id, function_id: 'exp::work', result: { done: true } });
    expect((await pending).result).toEqual({ done: true });
    await caller.result('engine::log::warn', { message: 'exported log line' });

    const span = await waitFor(
      () => {
        for (const request of sink.requests.filter((r) => r.path === '/v1/traces')) {
          for (const rs of request.body.resourceSpans) {
            for (const ss of rs.scopeSpans) {
              const found = ss.spans.find((s: { name: string }) => s.name === 'call exp::work');
              if (found) return { found, service: rs.resource.attributes };
            }
          }
        }
        return null;
      },
      5000,
      50,
    );
    expect(span.service).toEqual([{ key: 'service.name', value: { stringValue: 'eng' } }]);
    expect(span.found).toMatchObject({ kind: 2, status: { code: 1 }, traceId: expect.stringMatching(/^[0-9a-f]{32}$/) });
    expect(span.found.traceId).toBe(String(invoke.traceparent).split('-')[1]);
    await waitFor(() =>
      sink.requests.some(
        (r) => r.path === '/v1/logs' && JSON.stringify(r.body).includes('exported log line') && JSON.stringify(r.body).includes('"WARN"'),
      ),
    );
    const list = await caller.call('engine::traces::list', {});
    expect(list.error).toMatchObject({ code: 'memory_exporter_not_enabled' });
    const logs = await caller.result<{ total: number }>('engine::logs::list', {});
    expect(logs.total).toBe(0);
  });
});

describe('persist: true', () => {
  let engine: EngineProcess;
  afterAll(async () => {
    await engine?.stop();
  });

  it('keeps traces and logs across a restart', async () => {
    engine = await startEngine({
      workersYaml: '  - name: eng-observability\n    config:\n      persist: true\n      logs_console_output: false\n',
    });
    const otel = await otelSocket(engine.busUrl);
    const traceId = hex(16);
    const now = Date.now();
    await sendFrames(otel, [
      frame(
        'OTLP',
        tracesRequest([
          { traceId, spanId: 'aaaaaaaaaaaaaaaa', name: 'persisted root', service: 'svc-persist', startMs: now, durationMs: 10 },
          { traceId, parentSpanId: 'aaaaaaaaaaaaaaaa', name: 'persisted child', service: 'svc-persist', startMs: now + 1, durationMs: 5 },
        ]),
      ),
      frame('LOGS', logsRequest([{ timeMs: now, severity: 9, body: 'persisted log', service: 'svc-persist', traceId }])),
    ]);
    let client = await rawWorker(engine);
    // both records are in the engine's stores before it stops; its graceful stop writes out the last batch
    await waitFor(
      async () =>
        (await client.result<{ total: number }>('engine::traces::list', { trace_id: traceId })).total === 1 &&
        (await client.result<{ total: number }>('engine::logs::list', { trace_id: traceId })).total === 1,
      30_000,
    );
    otel.terminate();
    await new Promise((r) => setTimeout(r, 700)); // one batch interval
    await engine.restart();
    expect(engine.logs()).toMatch(/restored \d+ spans and \d+ logs from .*observability\.db/);

    client = await rawWorker(engine);
    const list = await client.result<{ spans: Array<{ name: string; span_count: number }> }>('engine::traces::list', { trace_id: traceId });
    expect(list.spans).toMatchObject([{ name: 'persisted root', span_count: 2 }]);
    const logs = await client.result<{ logs: Array<{ body: string }> }>('engine::logs::list', { trace_id: traceId });
    expect(logs.logs.map((l) => l.body)).toEqual(['persisted log']);
    // clear reaches the file too
    await client.result('engine::traces::clear', {});
    await engine.restart();
    client = await rawWorker(engine);
    expect((await client.result<{ total: number }>('engine::traces::list', { trace_id: traceId })).total).toBe(0);
    expect((await client.result<{ total: number }>('engine::logs::list', { trace_id: traceId })).total).toBe(1);
  });

  it('starts without persistence, saying so, when observability.db is unusable', async () => {
    await engine.stop();
    const file = join(engine.dataDir, 'observability.db');
    for (const suffix of ['-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
    writeFileSync(file, 'this is not a database '.repeat(100));
    await engine.restart();
    expect(engine.logs()).toMatch(/observability\.db is unusable .*: traces and logs will not survive a restart/);
    const client = await rawWorker(engine);
    expect(await client.result('engine::log::info', { message: 'still logging' })).toBeUndefined();
    expect((await client.result<{ total: number }>('engine::logs::list', { search: 'still logging' })).total).toBe(1);
  });
});

describe('bounded stores and sampling', () => {
  let engine: EngineProcess;
  let client: RawClient;
  let otel: WebSocket;
  beforeAll(async () => {
    engine = await startEngine({
      workersYaml:
        '  - name: eng-observability\n    config:\n      memory_max_spans: 10\n      logs_max_count: 5\n      logs_retention_seconds: 60\n      sampling_ratio: 0\n      logs_console_output: false\n      level: error\n',
    });
    client = await rawWorker(engine);
    otel = await otelSocket(engine.busUrl);
  });
  afterAll(async () => {
    otel?.terminate();
    await engine?.stop();
  });

  it('evicts the oldest spans whole; a child whose parent left becomes a root', async () => {
    const traceId = hex(16);
    const now = Date.now();
    // the parent arrives first, then four children, then eight more one-span traces: 13 spans into 10
    const first = [
      { traceId, spanId: 'aaaaaaaaaaaaaaaa', name: 'parent', service: 'cap', startMs: now, durationMs: 50 },
      ...[1, 2, 3, 4].map((c) => ({
        traceId,
        parentSpanId: 'aaaaaaaaaaaaaaaa',
        name: `child ${c}`,
        service: 'cap',
        startMs: now + c,
        durationMs: 1,
      })),
    ];
    const others = Array.from({ length: 8 }, (_, i) => ({
      traceId: hex(16),
      name: `other ${i}`,
      service: 'cap',
      startMs: now + 10 + i,
      durationMs: 1,
    }));
    await sendFrames(otel, [frame('OTLP', tracesRequest(first))]);
    await waitFor(async () => (await client.result<{ total: number }>('engine::traces::list', { trace_id: traceId })).total === 1);
    expect((await client.result<{ spans: Array<{ name: string }> }>('engine::traces::list', { trace_id: traceId })).spans[0]?.name).toBe(
      'parent',
    );
    await sendFrames(otel, [frame('OTLP', tracesRequest(others))]);
    const health = await waitFor(async () => {
      const h = await client.result<{ components: { spans: { details: { stored_spans: number; evicted_spans: number } } } }>(
        'engine::health::check',
        {},
      );
      return h.components.spans.details.evicted_spans === 3 ? h.components.spans.details : null;
    });
    expect(health.stored_spans).toBe(10);
    // parent, child 1 and child 2 are gone; children 3 and 4 are now the trace's roots
    const roots = await client.result<{ spans: Array<{ name: string; span_count: number }> }>('engine::traces::list', {
      trace_id: traceId,
    });
    expect(roots.spans.map((s) => [s.name, s.span_count])).toEqual([
      ['child 3', 2],
      ['child 4', 2],
    ]);
    const all = await client.result<{ total: number }>('engine::traces::list', { search_all_spans: true });
    expect(all.total).toBe(10);
  });

  it('keeps the newest logs_max_count records and hides records past retention', async () => {
    const now = Date.now();
    const logs = [
      { timeMs: now - 120_000, severity: 9, body: 'two minutes old', service: 'cap' },
      ...Array.from({ length: 7 }, (_, i) => ({ timeMs: now + i, severity: 9, body: `recent ${i}`, service: 'cap' })),
    ];
    await sendFrames(otel, [frame('LOGS', logsRequest(logs))]);
    const result = await waitFor(async () => {
      const r = await client.result<{ logs: Array<{ body: string }>; total: number }>('engine::logs::list', {});
      return r.logs[0]?.body === 'recent 6' ? r : null;
    });
    expect(result.total).toBe(5);
    expect(result.logs.map((l) => l.body)).toEqual(['recent 6', 'recent 5', 'recent 4', 'recent 3', 'recent 2']);
    await sendFrames(otel, [frame('LOGS', logsRequest([{ timeMs: now - 61_000, severity: 9, body: 'past retention', service: 'cap' }]))]);
    await new Promise((r) => setTimeout(r, 200));
    const after = await client.result<{ logs: Array<{ body: string }> }>('engine::logs::list', { search: 'past retention' });
    expect(after.logs).toEqual([]);
  });

  it('sampling_ratio 0: engine root spans are not recorded but the context still travels (flags 00)', async () => {
    const executor = await rawWorker(engine);
    executor.send({ type: 'registerfunction', id: 'sample::me' });
    await waitFor(async () => (await client.call('engine::functions::info', { function_id: 'sample::me' })).result);
    const done = client.call('sample::me', {});
    const invoke = await executor.next((f) => f.type === 'invokefunction' && f.function_id === 'sample::me');
    expect(invoke.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    executor.send({ type: 'invocationresult', invocation_id: invoke.invocation_id, function_id: 'sample::me', result: 1 });
    expect((await done).result).toBe(1);
    const traceId = String(invoke.traceparent).split('-')[1];
    expect((await client.result<{ total: number }>('engine::traces::list', { trace_id: traceId, include_internal: true })).total).toBe(0);
    const rules = await client.result<{ traces: { default_ratio: number } }>('engine::sampling::rules', {});
    expect(rules.traces.default_ratio).toBe(0);
  });
});

describe('logs_enabled: false', () => {
  let engine: EngineProcess;
  afterAll(async () => {
    await engine?.stop();
  });

  it('stores no logs and lists none, while traces still work', async () => {
    engine = await startEngine({ workersYaml: '  - name: iii-observability\n    config:\n      logs_enabled: false\n' });
    const client = await rawWorker(engine);
    expect(await client.result('engine::log::error', { message: 'dropped' })).toBeUndefined();
    const otel = await otelSocket(engine.busUrl);
    const traceId = hex(16);
    await sendFrames(otel, [
      frame('LOGS', logsRequest([{ timeMs: Date.now(), severity: 9, body: 'worker log', service: 'w' }])),
      frame('OTLP', tracesRequest([{ traceId, name: 'still traced', service: 'w', startMs: Date.now(), durationMs: 1 }])),
    ]);
    await waitFor(async () => (await client.result<{ total: number }>('engine::traces::list', { trace_id: traceId })).total === 1);
    const logs = await client.result<{ logs: unknown[]; total: number }>('engine::logs::list', {});
    expect(logs).toMatchObject({ logs: [], total: 0 });
    const health = await client.result<{ components: { logs: { status: string } } }>('engine::health::check', {});
    expect(health.components.logs.status).toBe('disabled');
    otel.terminate();
  });

  it('refuses an unknown config key naming it', async () => {
    await expect(startEngine({ workersYaml: '  - name: eng-observability\n    config:\n      memory_max_span: 10\n' })).rejects.toThrow(
      /memory_max_span/,
    );
  });
});
