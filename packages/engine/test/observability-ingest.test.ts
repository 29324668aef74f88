import { rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { context, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type WebSocket from 'ws';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import { RawClient } from '../../../test/raw-client.ts';
import { frame, hex, logsRequest, otelSocket, otlpSpan, sendFrames, tracesRequest } from './observability-helpers.ts';

// spec: engine-protocol §8.1 (frames), §2.12 (/otel), §7.2 (exporter, persistence); the OTLP/HTTP
// receiver; bad input never harms the socket or the store.

const clients: RawClient[] = [];
afterAll(async () => {
  await Promise.all(clients.map((c) => c.terminate()));
});

async function rawWorker(engine: EngineProcess): Promise<RawClient & { workerId: string }> {
  const client = await RawClient.worker(engine.busUrl);
  clients.push(client);
  return client;
}

interface Row {
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  name: string;
  service_name: string;
  start_time_unix_nano: number;
  end_time_unix_nano: number;
  attributes: [string, string][];
}

describe('ingest: bad input is dropped with a log line, socket and store unharmed', () => {
  let engine: EngineProcess;
  let client: RawClient;
  let otel: WebSocket;
  let httpUrl: string;

  beforeAll(async () => {
    engine = await startEngine({
      workersYaml:
        '  - name: eng-http\n    config:\n      port: {{HTTP_PORT}}\n  - name: eng-observability\n    config:\n      logs_console_output: false\n',
    });
    httpUrl = (engine.addresses.http as { url: string }).url;
    client = await rawWorker(engine);
    otel = await otelSocket(engine.busUrl);
  });
  afterAll(async () => {
    otel?.terminate();
    await engine?.stop();
  });

  const count = async (service: string) =>
    (await client.result<{ total: number }>('engine::traces::list', { search_all_spans: true, service_name: service })).total;

  it('drops truncated frames, unknown prefixes, bad JSON and non-OTLP payloads', async () => {
    const now = Date.now();
    const good = (name: string) =>
      frame('OTLP', tracesRequest([{ traceId: hex(16), name, service: 'svc-bad-input', startMs: now, durationMs: 1 }]));
    const whole = good('truncated').toString('latin1');
    await sendFrames(otel, [
      Buffer.from('OT'),
      Buffer.from('OTLP'),
      Buffer.from(whole.slice(0, whole.length - 20), 'latin1'), // a frame cut short
      frame('XXXX', '{}'),
      frame('OTLP', '{"resourceSpans": [ {"resource": '),
      frame('OTLP', 'null'),
      frame('OTLP', '[]'),
      frame('OTLP', { foo: 1 }),
      frame('LOGS', { resourceSpans: [] }),
      frame('MTRC', '\u0000\u0001binary'),
      good('after-garbage'),
    ]);
    otel.send('a text frame is ignored on /otel');
    const names = await waitFor(async () => {
      const list = await client.result<{ spans: Row[] }>('engine::traces::list', { search_all_spans: true, service_name: 'svc-bad-input' });
      return list.spans.length ? list.spans.map((s) => s.name) : null;
    });
    expect(names).toEqual(['after-garbage']);
    expect(otel.readyState).toBe(otel.OPEN);
    await waitFor(() => /dropped OTLP frame from \/otel: not JSON/.test(engine.logs()));
    expect(engine.logs()).toMatch(/dropped traces payload from \/otel: malformed OTLP traces: payload is not a JSON object/);
    expect(engine.logs()).toMatch(/dropped logs payload from \/otel: malformed OTLP logs/);
    // the drops are log records too
    const logged = await client.result<{ logs: Array<{ body: string; severity_text: string }> }>('engine::logs::list', {
      search: 'dropped',
    });
    expect(logged.logs.length).toBeGreaterThan(0);
    expect(logged.logs.every((l) => l.severity_text === 'WARN')).toBe(true);
  });

  it('drops records with bad ids or absurd timestamps and keeps the good ones of the same frame', async () => {
    const now = Date.now();
    const traceId = hex(16);
    const span = (name: string, patch: Record<string, unknown>) => ({
      ...otlpSpan({ traceId, name, service: 'svc-ts', startMs: now, durationMs: 5 }),
      ...patch,
    });
    const payload = {
      resourceSpans: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'svc-ts' } }] },
          scopeSpans: [
            {
              scope: { name: 't' },
              spans: [
                span('zero start', { startTimeUnixNano: '0', endTimeUnixNano: '0' }),
                span('epoch 1970', { startTimeUnixNano: '1000000', endTimeUnixNano: '2000000' }),
                span('year 3000', { startTimeUnixNano: '32503680000000000000', endTimeUnixNano: '32503680000000000001' }),
                span('not a number', { startTimeUnixNano: 'abc' }),
                span('ends before start', { endTimeUnixNano: String(BigInt(now - 1000) * 1_000_000n) }),
                span('bad trace id', { traceId: 'xyz' }),
                span('zero span id', { spanId: '0000000000000000' }),
                span('number timestamps', { startTimeUnixNano: now * 1e6, endTimeUnixNano: (now + 3) * 1e6 }),
                span('long timestamps', {
                  startTimeUnixNano: {
                    low: Number((BigInt(now) * 1_000_000n) & 0xffffffffn),
                    high: Number((BigInt(now) * 1_000_000n) >> 32n),
                  },
                  endTimeUnixNano: String(BigInt(now + 2) * 1_000_000n),
                }),
                'not even an object',
              ],
            },
          ],
        },
      ],
    };
    await sendFrames(otel, [frame('OTLP', payload)]);
    const names = await waitFor(async () => {
      const list = await client.result<{ spans: Row[] }>('engine::traces::list', { search_all_spans: true, service_name: 'svc-ts' });
      return list.spans.length ? list.spans.map((s) => s.name).sort() : null;
    });
    expect(names).toEqual(['long timestamps', 'number timestamps']);
    const longSpan = (await client.result<{ spans: Row[] }>('engine::traces::list', { search_all_spans: true, name: 'long timestamps' }))
      .spans[0];
    expect(Math.round((longSpan?.start_time_unix_nano ?? 0) / 1e6)).toBe(now);
    await waitFor(() => /dropped 8 traces record\(s\) from \/otel: .*absurd startTimeUnixNano/.test(engine.logs()));
  });

  it('accepts base64 ids, string ints and nested attribute values', async () => {
    const traceId = Buffer.from(hex(16), 'hex');
    const spanId = Buffer.from(hex(8), 'hex');
    const now = Date.now();
    const payload = tracesRequest([{ traceId: 'x', name: 'base64', service: 'svc-b64', startMs: now, durationMs: 2 }]);
    const s = payload.resourceSpans[0]?.scopeSpans[0]?.spans[0] as Record<string, unknown>;
    s.traceId = traceId.toString('base64');
    s.spanId = spanId.toString('base64');
    s.kind = 'SPAN_KIND_SERVER';
    s.status = { code: 'STATUS_CODE_ERROR', message: 'nope' };
    s.attributes = [
      { key: 'n', value: { intValue: '42' } },
      { key: 'list', value: { arrayValue: { values: [{ stringValue: 'a' }, { boolValue: true }] } } },
      { key: 'map', value: { kvlistValue: { values: [{ key: 'k', value: { doubleValue: 1.5 } }] } } },
    ];
    await sendFrames(otel, [frame('OTLP', payload)]);
    const row = await waitFor(async () => {
      const list = await client.result<{ spans: Array<Row & { kind: string; status: string; status_description: string }> }>(
        'engine::traces::list',
        { trace_id: traceId.toString('hex') },
      );
      return list.spans[0];
    });
    expect(row).toMatchObject({ span_id: spanId.toString('hex'), kind: 'server', status: 'error', status_description: 'nope' });
    expect(row.attributes).toEqual([
      ['n', '42'],
      ['list', '["a",true]'],
      ['map', '{"k":1.5}'],
    ]);
  });

  it('a bad frame on the worker socket `/` leaves the worker connected', async () => {
    const worker = await rawWorker(engine);
    worker.socket.send(frame('OTLP', '{not json'), { binary: true });
    worker.socket.send(frame('LOGS', { resourceLogs: 'nope' }), { binary: true });
    const result = await worker.call('engine::functions::list', {});
    expect(result.error).toBeUndefined();
    expect(worker.isOpen).toBe(true);
    await waitFor(() => engine.logs().includes(`dropped OTLP frame from worker ${worker.workerId}: not JSON`));
  });

  it('OTLP/HTTP: JSON traces, logs and metrics are accepted; gzip too', async () => {
    const traceId = hex(16);
    const now = Date.now();
    const body = JSON.stringify(tracesRequest([{ traceId, name: 'via http', service: 'svc-http', startMs: now, durationMs: 3 }]));
    const res = await fetch(`${httpUrl}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
    const zipped = gzipSync(JSON.stringify(logsRequest([{ timeMs: now, severity: 17, body: 'zipped log', service: 'svc-http', traceId }])));
    const logRes = await fetch(`${httpUrl}/v1/logs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8', 'content-encoding': 'gzip' },
      body: zipped,
    });
    expect(logRes.status).toBe(200);
    const metricRes = await fetch(`${httpUrl}/v1/metrics`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ resourceMetrics: [] }),
    });
    expect(metricRes.status).toBe(200);
    const spans = await client.result<{ spans: Row[] }>('engine::traces::list', { trace_id: traceId });
    expect(spans.spans.map((s) => s.name)).toEqual(['via http']);
    const logs = await client.result<{ logs: Array<{ body: string }> }>('engine::logs::list', { trace_id: traceId });
    expect(logs.logs.map((l) => l.body)).toEqual(['zipped log']);
  });

  it('OTLP/HTTP: protobuf gets 415 with a clear JSON message; bad JSON gets 400; rejects are reported', async () => {
    const proto = await fetch(`${httpUrl}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf' },
      body: Buffer.from([10, 0]),
    });
    expect(proto.status).toBe(415);
    const protoBody = (await proto.json()) as { error: { code: string; message: string } };
    expect(protoBody.error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    expect(protoBody.error.message).toMatch(/OTLP\/JSON only/);
    expect(protoBody.error.message).toMatch(/http\/json/);
    const bad = await fetch(`${httpUrl}/v1/logs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"resourceLogs":',
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('deserialization_error');
    const wrong = await fetch(`${httpUrl}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"spans":[]}',
    });
    expect(wrong.status).toBe(400);
    expect(((await wrong.json()) as { error: { message: string } }).error.message).toMatch(/resourceSpans/);
    const partial = tracesRequest([{ traceId: hex(16), name: 'ok one', service: 'svc-partial', startMs: Date.now(), durationMs: 1 }]);
    (partial.resourceSpans[0]!.scopeSpans[0]!.spans as unknown[]).push({ traceId: 'bad', spanId: 'bad', name: 'bad one' });
    const partialRes = await fetch(`${httpUrl}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(partial),
    });
    expect(partialRes.status).toBe(200);
    expect(await partialRes.json()).toMatchObject({
      partialSuccess: { rejectedSpans: 1, errorMessage: expect.stringContaining('bad one') },
    });
    expect(await count('svc-partial')).toBe(1);
  });

  it('an OpenTelemetry SDK (sdk-trace-node 2.12 + exporter-trace-otlp-http 0.223) exporting to the engine shows up', async () => {
    const provider = new NodeTracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'otel-sdk-app' }),
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${httpUrl}/v1/traces` }))],
    });
    const tracer = provider.getTracer('test-app', '1.2.3');
    const parent = tracer.startSpan('checkout', { attributes: { tenant: 'acme' } });
    const traceId = parent.spanContext().traceId;
    const child = tracer.startSpan('charge', {}, trace.setSpan(context.active(), parent));
    child.recordException(new Error('card declined'));
    child.setStatus({ code: 2, message: 'card declined' });
    child.end();
    parent.end();
    await provider.forceFlush();
    await provider.shutdown();
    const list = await waitFor(async () => {
      const result = await client.result<{
        spans: Array<Row & { span_count: number; error_count: number; instrumentation_scope_name: string }>;
      }>('engine::traces::list', { service_name: 'otel-sdk-app' });
      return result.spans.length ? result : null;
    });
    expect(list.spans).toHaveLength(1);
    expect(list.spans[0]).toMatchObject({
      trace_id: traceId,
      name: 'checkout',
      span_count: 2,
      error_count: 1,
      instrumentation_scope_name: 'test-app',
      attributes: [['tenant', 'acme']],
    });
    const tree = await client.result<{
      roots: Array<{ children: Array<{ name: string; status: string; events: Array<{ name: string }> }> }>;
    }>('engine::traces::tree', { trace_id: traceId });
    expect(tree.roots[0]?.children[0]).toMatchObject({ name: 'charge', status: 'error', events: [{ name: 'exception' }] });
  });
});

/** A real HTTP server standing in for an OpenTelemetry collector. */
async function collector(): Promise<{ server: Server; url: string; requests: Array<{ path: string; body: any }> }> {
  const requests: Array<{ path: string; body: any }> = [];
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({ path: req.url ?? '', body: JSON.parse(Buffer.concat(chunks).toString() || '{}') });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return { server, url: `http://127.0.0.1:${address.port}`, requests };
}

describe('exporter: otlp', () => {
  let engine: EngineProcess;
  let sink: Awaited<ReturnType<typeof collector>>;

  beforeAll(async () => {
    sink = await collector();
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
    await waitFor(async () => (await client.result<{ total: number }>('engine::traces::list', { trace_id: traceId })).total === 1);
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
