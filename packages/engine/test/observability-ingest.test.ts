import { gzipSync } from 'node:zlib';
import type { StoredSpan } from '@eng/protocol';
import { context, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type WebSocket from 'ws';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import type { RawClient } from '../../../test/raw-client.ts';
import { frame, hex, logsRequest, otelSocket, otlpSpan, rawClients, sendFrames, tracesRequest } from './observability-helpers.ts';

// spec: engine-protocol §8.1 (frames), §2.12 (/otel); the OTLP/HTTP receiver; an OpenTelemetry SDK
// exporting to the engine. Bad input never harms the socket or the store.

const raw = rawClients();
afterAll(() => raw.closeAll());
const rawWorker = (engine: EngineProcess) => raw.open(engine.busUrl);

type Row = StoredSpan;

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
