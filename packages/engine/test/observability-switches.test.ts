import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, REPO_ROOT, startEngine, waitFor } from '../../../test/harness.ts';
import type { RawClient, RawFrame } from '../../../test/raw-client.ts';
import { autoExecutor, frame, hex, logsRequest, otelSocket, rawClients, sendFrames, tracesRequest } from './observability-helpers.ts';

// spec: engine-protocol §7.2 `enabled: false`; §5.8 `log` trigger with its default level `all`;
// §5.9 `trace` trigger `status` filter; §4.3 `engine::health::check` components and version.

const raw = rawClients();
afterAll(() => raw.closeAll());

const ENGINE_VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'packages/engine/package.json'), 'utf8')) as { version: string }).version;

async function bind(worker: RawClient, caller: RawClient, trigger: Record<string, unknown>): Promise<void> {
  worker.send({ type: 'registertrigger', ...trigger });
  await waitFor(async () => {
    const list = await caller.result<{ registered_triggers: Array<{ id: string; status?: string }> }>(
      'engine::registered-triggers::list',
      {},
    );
    return list.registered_triggers.some((t) => t.id === trigger.id && t.status === 'active');
  });
}

describe('enabled: false', () => {
  let engine: EngineProcess;
  let client: RawClient;
  let httpUrl: string;
  beforeAll(async () => {
    engine = await startEngine({
      workersYaml:
        '  - name: eng-http\n    config:\n      port: {{HTTP_PORT}}\n  - name: eng-observability\n    config:\n      enabled: false\n',
    });
    httpUrl = (engine.addresses.http as { url: string }).url;
    client = await raw.open(engine.busUrl);
  });
  afterAll(() => engine?.stop());

  it('the trace functions answer memory_exporter_not_enabled; logs::list is empty; log writes store nothing', async () => {
    for (const [fn, input] of [
      ['engine::traces::list', {}],
      ['engine::traces::tree', { trace_id: hex(16) }],
      ['engine::traces::spans', { trace_id: hex(16) }],
      ['engine::traces::group_by', { attribute: 'function_id' }],
      ['engine::traces::clear', {}],
    ] as const) {
      const answer = await client.call(fn, input);
      expect(answer.error, fn).toMatchObject({ code: 'memory_exporter_not_enabled' });
    }
    for (const level of ['trace', 'debug', 'info', 'warn', 'error']) {
      expect(await client.result(`engine::log::${level}`, { message: `disabled ${level}` })).toBeUndefined();
    }
    expect(await client.result('engine::logs::list', {})).toMatchObject({ logs: [], total: 0 });
    expect(await client.result('engine::logs::clear', {})).toMatchObject({ success: true });
  });

  it('collects nothing: no call spans or context, no worker telemetry, no OTLP/HTTP receiver, no metrics, no log trigger firing', async () => {
    const { invokes, worker } = await autoExecutor(() => raw.open(engine.busUrl), client, 'off::work');
    const logHandler = await autoExecutor(() => raw.open(engine.busUrl), client, 'off::on_log');
    await bind(worker, client, { id: 'off-logs', trigger_type: 'log', function_id: 'off::on_log', config: {} });
    for (let i = 0; i < 5; i++) expect((await client.call('off::work', {})).error).toBeUndefined();
    // the executor gets no engine context (no span was opened)
    expect(invokes.map((f) => f.traceparent)).toEqual([undefined, undefined, undefined, undefined, undefined]);

    // worker telemetry frames are accepted (the socket stays open) and dropped
    const otel = await otelSocket(engine.busUrl);
    await sendFrames(otel, [
      frame('OTLP', tracesRequest([{ traceId: hex(16), name: 'ignored', service: 'w', startMs: Date.now(), durationMs: 1 }])),
      frame('LOGS', logsRequest([{ timeMs: Date.now(), severity: 17, body: 'ignored log', service: 'w' }])),
    ]);
    await new Promise((r) => setTimeout(r, 300));
    expect(otel.readyState).toBe(otel.OPEN);
    otel.terminate();

    // no OTLP/HTTP receiver on the HTTP port
    const posted = await fetch(`${httpUrl}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(posted.status).toBe(404);

    const metrics = await client.result<any>('engine::metrics::list', {});
    expect(metrics.engine_metrics.invocations).toMatchObject({ total: 0, success: 0, error: 0, deferred: 0, by_function: {} });
    expect(metrics.engine_metrics.workers).toMatchObject({ spawns: 0, deaths: 0 });
    expect(metrics.sdk_metrics).toEqual([]);
    expect(metrics.series.every((b: { invocations: number }) => b.invocations === 0)).toBe(true);

    expect(await client.result('engine::logs::list', {})).toMatchObject({ total: 0 });
    expect(logHandler.invokes).toEqual([]);

    const health = await client.result<any>('engine::health::check', {});
    expect(health.status).toBe('healthy');
    expect(health.version).toBe(ENGINE_VERSION);
    for (const name of ['otel', 'metrics', 'logs', 'spans']) expect(health.components[name].status, name).toBe('disabled');
    expect(health.components.spans.details).toMatchObject({ stored_spans: 0, received: 0 });
    expect(health.components.logs.details).toMatchObject({ stored_logs: 0, received: 0 });
    expect(health.components.metrics.details).toMatchObject({ sdk_points: 0, invocations_total: 0 });
  });

  it('an HTTP request hands the handler the caller’s trace context unchanged, sampled or not, and none when it brought none', async () => {
    const { invokes, worker } = await autoExecutor(() => raw.open(engine.busUrl), client, 'off::http');
    await bind(worker, client, {
      id: 'off-http',
      trigger_type: 'http',
      function_id: 'off::http',
      config: { api_path: 'off/http', http_method: 'GET' },
    });
    const sampled = `00-${hex(16)}-${hex(8)}-01`;
    const unsampled = `00-${hex(16)}-${hex(8)}-00`;
    for (const traceparent of [undefined, sampled, unsampled]) {
      const headers: Record<string, string> = traceparent ? { traceparent } : {};
      await fetch(`${httpUrl}/off/http`, { headers }).then((r) => r.arrayBuffer());
    }
    // a disabled engine opens no span, so it must not replace the context (a new span id, flags 00)
    // and turn off the tracing of the user's own workers
    expect(invokes.map((f) => f.traceparent)).toEqual([undefined, sampled, unsampled]);
  });
});

describe('log and trace triggers, health', () => {
  let engine: EngineProcess;
  let client: RawClient;
  beforeAll(async () => {
    engine = await startEngine({ workersYaml: '  - name: eng-observability\n    config:\n      logs_console_output: false\n' });
    client = await raw.open(engine.busUrl);
  });
  afterAll(() => engine?.stop());

  it('`log` with the default level (no level, or no config at all) receives every level, worker records included', async () => {
    const noLevel = await autoExecutor(() => raw.open(engine.busUrl), client, 'trig::all_logs');
    const noConfig = await autoExecutor(() => raw.open(engine.busUrl), client, 'trig::all_logs_bare');
    await bind(noLevel.worker, client, { id: 'logs-all', trigger_type: 'log', function_id: 'trig::all_logs', config: {} });
    await bind(noConfig.worker, client, { id: 'logs-bare', trigger_type: 'log', function_id: 'trig::all_logs_bare' });
    const tag = hex(4);
    for (const level of ['trace', 'debug', 'info', 'warn', 'error'])
      await client.result(`engine::log::${level}`, { message: `${tag} ${level}` });
    const otel = await otelSocket(engine.busUrl);
    await sendFrames(otel, [
      frame('LOGS', logsRequest([{ timeMs: Date.now(), severity: 21, text: 'FATAL', body: `${tag} fatal`, service: 'w' }])),
    ]);
    otel.terminate();

    for (const { invokes } of [noLevel, noConfig]) {
      const ours = await waitFor(() => {
        const seen = invokes.filter((f) => String((f.data as { body: string }).body).startsWith(tag));
        return seen.length === 6 ? seen : null;
      });
      const levels = ours.map((f) => [(f.data as any).severity_text, (f.data as any).severity_number]);
      expect(levels.slice(0, 5)).toEqual([
        ['TRACE', 1],
        ['DEBUG', 5],
        ['INFO', 9],
        ['WARN', 13],
        ['ERROR', 17],
      ]);
      expect(ours[5]?.data).toMatchObject({ body: `${tag} fatal`, severity_number: 21 });
    }
  });

  it('`trace` with a status filter: error, ok and pending each get only their traces', async () => {
    const errors = await autoExecutor(() => raw.open(engine.busUrl), client, 'trig::error_traces');
    const oks = await autoExecutor(() => raw.open(engine.busUrl), client, 'trig::ok_traces');
    const pendings = await autoExecutor(() => raw.open(engine.busUrl), client, 'trig::pending_traces');
    await bind(errors.worker, client, {
      id: 'tr-error',
      trigger_type: 'trace',
      function_id: 'trig::error_traces',
      config: { status: 'error' },
    });
    await bind(oks.worker, client, { id: 'tr-ok', trigger_type: 'trace', function_id: 'trig::ok_traces', config: { status: 'ok' } });
    await bind(pendings.worker, client, {
      id: 'tr-pending',
      trigger_type: 'trace',
      function_id: 'trig::pending_traces',
      config: { status: 'pending' },
    });

    const failed = hex(16);
    const fine = hex(16);
    const otel = await otelSocket(engine.busUrl);
    await sendFrames(otel, [
      frame(
        'OTLP',
        tracesRequest([
          { traceId: failed, name: 'failing op', service: 'st', startMs: Date.now(), durationMs: 2, status: 2 },
          { traceId: fine, name: 'fine op', service: 'st', startMs: Date.now(), durationMs: 2, status: 1 },
        ]),
      ),
    ]);
    otel.terminate();
    // a call held for 400 ms is stored as Pending first (then ok)
    const slow = await autoExecutor(
      () => raw.open(engine.busUrl),
      client,
      'trig::slow',
      () => new Promise((r) => setTimeout(r, 400)),
    );
    expect((await client.call('trig::slow', {})).error).toBeUndefined();
    const slowTrace = String(slow.invokes[0]?.traceparent).split('-')[1] as string;

    const idsOf = (invokes: RawFrame[]) => new Set(invokes.flatMap((f) => (f.data as { trace_ids: string[] }).trace_ids));
    await waitFor(() => idsOf(errors.invokes).has(failed) && idsOf(oks.invokes).has(fine) && idsOf(oks.invokes).has(slowTrace), 5000);
    await waitFor(() => idsOf(pendings.invokes).has(slowTrace), 5000);
    await new Promise((r) => setTimeout(r, 500)); // past one more debounce window
    expect(idsOf(errors.invokes).has(fine)).toBe(false);
    expect(idsOf(errors.invokes).has(slowTrace)).toBe(false);
    expect(idsOf(oks.invokes).has(failed)).toBe(false);
    expect(idsOf(pendings.invokes).has(failed)).toBe(false);
    expect(idsOf(pendings.invokes).has(fine)).toBe(false);
  });

  it('`trace` refuses an unknown status naming it', async () => {
    const owner = await raw.open(engine.busUrl);
    owner.send({ type: 'registerfunction', id: 'trig::bad_status' });
    owner.send({
      type: 'registertrigger',
      id: 'tr-bad',
      trigger_type: 'trace',
      function_id: 'trig::bad_status',
      config: { status: 'sideways' },
    });
    const result = await owner.next((f) => f.type === 'triggerregistrationresult' && f.id === 'tr-bad');
    expect((result.error as { message: string }).message).toMatch(/status/);
  });

  it('health::check: otel, metrics, logs and spans components and the engine version', async () => {
    await autoExecutor(() => raw.open(engine.busUrl), client, 'trig::counted');
    for (let i = 0; i < 3; i++) await client.call('trig::counted', {});
    const health = await waitFor(async () => {
      const h = await client.result<any>('engine::health::check', {});
      return h.components.metrics.details.invocations_total >= 3 ? h : null;
    });
    expect(health).toMatchObject({ status: 'healthy', version: ENGINE_VERSION, timestamp: expect.any(Number) });
    expect(Math.abs(health.timestamp - Date.now())).toBeLessThan(10_000);
    expect(health.components.otel).toEqual({
      status: 'healthy',
      details: { exporter: 'memory', logs_exporter: 'memory', service_name: 'eng', sampling_ratio: 1 },
    });
    expect(health.components.metrics).toMatchObject({
      status: 'healthy',
      details: { sdk_points: 0, max_points: 10_000, retention_seconds: 3600 },
    });
    expect(health.components.logs.status).toBe('healthy');
    expect(health.components.logs.details.stored_logs).toBeGreaterThan(0);
    expect(health.components.logs.details.max_logs).toBe(100_000);
    expect(health.components.spans.status).toBe('healthy');
    expect(health.components.spans.details.stored_spans).toBeGreaterThanOrEqual(3);
    expect(health.components.spans.details.received).toBeGreaterThanOrEqual(health.components.spans.details.stored_spans);
    // the same figure metrics::list reports
    const metrics = await client.result<any>('engine::metrics::list', {});
    expect(metrics.engine_metrics.invocations.total).toBe(health.components.metrics.details.invocations_total);
  });
});
