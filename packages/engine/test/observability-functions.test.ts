import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import { RawClient } from '../../../test/raw-client.ts';
import { frame, hex, tracesRequest } from './observability-helpers.ts';

// spec: engine-protocol §4.3 (`engine::log::*`, `logs::list`, `metrics::list`, `health::check`,
// `sampling::rules`), §5.8 (`log` trigger), §8.1 (worker gauges); bad input to every function.

let engine: EngineProcess;
let client: RawClient;
const clients: RawClient[] = [];

beforeAll(async () => {
  engine = await startEngine({ workersYaml: '  - name: eng-observability\n    config:\n      logs_console_output: false\n' });
  client = await RawClient.worker(engine.busUrl);
  clients.push(client);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.terminate()));
  await engine?.stop();
});

async function call<T = any>(functionId: string, data: unknown = {}): Promise<T> {
  return client.result<T>(functionId, data);
}

describe('the log trigger type', () => {
  it('`log` fires for the exact level only, with the stored record as payload', async () => {
    const listener = await RawClient.worker(engine.busUrl);
    clients.push(listener);
    listener.send({ type: 'registerfunction', id: 'obs::on_error_log' });
    listener.send({
      type: 'registertrigger',
      id: 'log-errors',
      trigger_type: 'log',
      function_id: 'obs::on_error_log',
      config: { level: 'error' },
    });
    await waitFor(async () => {
      const list = await call<{ registered_triggers: Array<{ id: string; status?: string }> }>('engine::registered-triggers::list', {});
      return list.registered_triggers.some((t) => t.id === 'log-errors' && t.status === 'active');
    });
    await call('engine::log::warn', { message: 'not for the trigger' });
    await call('engine::log::error', { message: 'payment failed', data: { order: 9 }, service_name: 'billing' });
    const invoke = await listener.next((f) => f.type === 'invokefunction' && f.function_id === 'obs::on_error_log');
    expect(invoke.data).toMatchObject({ severity_text: 'ERROR', severity_number: 17, body: 'payment failed', service_name: 'billing' });
    expect((invoke.data as any).attributes['log.data']).toEqual({ order: 9 });
    await new Promise((r) => setTimeout(r, 200));
    expect(listener.frames.filter((f) => f.type === 'invokefunction' && (f.data as any)?.body === 'not for the trigger')).toHaveLength(0);
  });

  it('`log` refuses an unknown level with a readable error', async () => {
    const owner = await RawClient.worker(engine.busUrl);
    clients.push(owner);
    owner.send({ type: 'registerfunction', id: 'obs::bad_log' });
    owner.send({ type: 'registertrigger', id: 'log-bad', trigger_type: 'log', function_id: 'obs::bad_log', config: { level: 'loud' } });
    const result = await owner.next((f) => f.type === 'triggerregistrationresult' && f.id === 'log-bad');
    expect((result.error as { message: string }).message).toMatch(/level/);
  });
});

describe('engine::log::*, worker gauges, health, sampling', () => {
  it('stores engine::log::* records with their severities, newest first', async () => {
    const tag = hex(4);
    for (const level of ['trace', 'debug', 'info', 'warn', 'error']) await call(`engine::log::${level}`, { message: `${tag} ${level}` });
    const result = await call<{ logs: any[]; total: number }>('engine::logs::list', { search: tag });
    expect(result.total).toBe(5);
    expect(result.logs.map((l) => [l.severity_text, l.severity_number])).toEqual([
      ['ERROR', 17],
      ['WARN', 13],
      ['INFO', 9],
      ['DEBUG', 5],
      ['TRACE', 1],
    ]);
  });

  it('captures engine log lines as records of service eng', async () => {
    const result = await call<{ logs: any[] }>('engine::logs::list', { service_name: 'eng', search: 'worker bus listening' });
    expect(result.logs[0]).toMatchObject({ service_name: 'eng', severity_text: 'INFO' });
  });

  it('fills latest_metrics of the worker record from MTRC gauges', async () => {
    const worker = await RawClient.worker(engine.busUrl);
    clients.push(worker);
    worker.registerWorker('gauged');
    const now = String(BigInt(Date.now()) * 1_000_000n);
    const gauge = (name: string, value: number) => ({
      name,
      gauge: {
        dataPoints: [{ attributes: [{ key: 'worker.id', value: { stringValue: worker.workerId } }], timeUnixNano: now, asDouble: value }],
      },
    });
    worker.socket.send(
      frame('MTRC', {
        resourceMetrics: [
          {
            resource: { attributes: [{ key: 'service.name', value: { stringValue: 'gauged' } }] },
            scopeMetrics: [
              { scope: { name: 'iii' }, metrics: [gauge('iii.worker.memory.rss', 123456), gauge('iii.worker.cpu.percent', 12.5)] },
            ],
          },
        ],
      }),
      { binary: true },
    );
    const record = await waitFor(async () => {
      const list = await call<{ workers: any[] }>('engine::workers::list', {});
      return list.workers.find((w) => w.id === worker.workerId && w.latest_metrics);
    });
    expect(record.latest_metrics).toMatchObject({ memory_rss: 123456, cpu_percent: 12.5, runtime: 'node' });
    const metrics = await call<any>('engine::metrics::list', { metric_name: 'iii.worker.memory.rss' });
    expect(metrics.sdk_metrics.some((p: any) => p.value === 123456)).toBe(true);
  });

  it('reports health and sampling rules', async () => {
    const spans = [1, 2, 3].map((n) => ({ traceId: hex(16), name: `health ${n}`, service: 'h', startMs: Date.now(), durationMs: 1 }));
    client.socket.send(frame('OTLP', tracesRequest(spans)), { binary: true });
    const health = await waitFor(async () => {
      const h = await call<any>('engine::health::check', {});
      return h.components.spans.details.stored_spans === 3 ? h : null;
    });
    expect(health.status).toBe('healthy');
    expect(health.components.spans).toMatchObject({
      status: 'healthy',
      details: { stored_traces: 3, max_spans: 100_000, evicted_spans: 0 },
    });
    expect(health.components.logs.status).toBe('healthy');
    const rules = await call<any>('engine::sampling::rules', {});
    expect(rules.traces).toMatchObject({ default_ratio: 1, parent_based: true, rules: [] });
    expect(rules.logs).toEqual({ sampling_ratio: 1 });
  });
});

describe('bad input to the observability functions', () => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['engine::traces::list', { limit: 'ten' }, /limit/],
    ['engine::traces::list', { limit: 0 }, /limit/],
    ['engine::traces::list', { status: 'bogus' }, /status/],
    ['engine::traces::list', { attributes: 'a=b' }, /attributes/],
    ['engine::traces::list', { sort_by: 'colour' }, /sort_by/],
    ['engine::traces::list', { min_duration_ms: 10, max_duration_ms: 5 }, /min_duration_ms/],
    ['engine::traces::tree', {}, /trace_id/],
    ['engine::traces::spans', { trace_id: 5 }, /trace_id/],
    ['engine::traces::group_by', {}, /attribute/],
    ['engine::logs::list', { severity_text: 5 }, /severity_text/],
    ['engine::logs::list', { start_time: -1 }, /start_time/],
    ['engine::log::info', {}, /message/],
    ['engine::log::info', { message: 'x', trace_id: 'nothex' }, /trace_id/],
    ['engine::metrics::list', { aggregate_interval: -1 }, /aggregate_interval/],
  ];
  it.each(cases)('%s %j → deserialization_error naming the field', async (functionId, input, field) => {
    const frameResult = await client.call(functionId, input);
    const error = frameResult.error as { code: string; message: string };
    expect(error.code).toBe('deserialization_error');
    expect(error.message).toMatch(field);
  });

  it('stores nothing for a refused log write', async () => {
    const before = await call<{ total: number }>('engine::logs::list', { search: 'refused-write' });
    await client.call('engine::log::info', { message: 'refused-write', trace_id: 'zz' });
    const after = await call<{ total: number }>('engine::logs::list', { search: 'refused-write' });
    expect(after.total).toBe(before.total);
    expect(after.total).toBe(0);
  });
});
