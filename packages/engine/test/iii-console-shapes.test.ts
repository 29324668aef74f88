/**
 * Issue 26 item 2: every engine function iii 0.22.1's console backend (console-rust/src/bridge)
 * calls for its 34 `_console/*` routes answers on eng with iii's input and output shapes: the
 * payloads are the ones the bridge sends, the fields asserted are the ones iii's engine answers
 * (engine/src/workers/{engine_fn,observability,queue,state,stream}) and the bridge or the
 * frontend reads. Called from an iii-sdk 0.22.1 worker, as the bridge does.
 */
import { registerWorker } from 'iii-sdk-0.22.1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';

type IiiWorker = ReturnType<typeof registerWorker>;

const MODULES = `  - name: eng-http
    config: { port: {{HTTP_PORT}} }
  - name: eng-stream
    config: { port: {{STREAMS_PORT}} }
  - name: eng-state
  - name: eng-queue
    config:
      adapter: { name: memory }
      queue_configs:
        fulfilment: { max_retries: 0 }
  - name: eng-pubsub
  - name: eng-cron
  - name: eng-observability
  - name: eng-engine-functions
`;

let engine: EngineProcess;
let iii: IiiWorker;
const call = <T = any>(function_id: string, payload: unknown = {}): Promise<T> =>
  iii.trigger({ function_id, payload, timeoutMs: 10_000 } as never) as Promise<T>;

const isNum = expect.any(Number);
const isStr = expect.any(String);

beforeAll(async () => {
  engine = await startEngine({ workersYaml: MODULES });
  iii = registerWorker(engine.busUrl, { workerName: 'iii-console-shapes' });
  iii.registerFunction('demo::echo', async (input: unknown) => ({ echoed: input }), { description: 'echo' } as never);
  iii.registerFunction('demo::fail', async () => {
    throw new Error('always fails');
  });
  iii.registerFunction('demo::tick', async (input: unknown) => ({ ticked: input }));
  iii.registerTrigger({ type: 'cron', function_id: 'demo::tick', config: { expression: '0 0 1 1 * * *' } });
  iii.registerTrigger({
    type: 'durable:subscriber',
    function_id: 'demo::fail',
    config: { topic: 'orders.dead' },
  });
  iii.registerTrigger({ type: 'http', function_id: 'demo::echo', config: { api_path: 'demo/echo', http_method: 'POST' } });
  await waitFor(async () => {
    const { functions } = await call('engine::functions::list', {});
    return functions.some((f: any) => f.function_id === 'demo::tick');
  }, 15_000);
}, 60_000);

afterAll(async () => {
  await iii?.shutdown();
  await engine?.stop();
});

describe("engine functions iii's console calls, iii 0.22.1 shapes", () => {
  it('engine::health::check {} → {status, components: {otel, metrics, logs, spans}, timestamp, version}', async () => {
    const health = await call('engine::health::check', {});
    expect(health).toMatchObject({ status: 'healthy', timestamp: isNum, version: isStr });
    for (const c of ['otel', 'metrics', 'logs', 'spans']) expect(health.components[c]).toMatchObject({ status: isStr });
  });

  it('engine::workers::list {} → {workers: [{id, name, runtime, status, function_count, connected_at_ms, active_invocations}]}', async () => {
    const { workers } = await call('engine::workers::list', {});
    const me = workers.find((w: any) => w.name === 'iii-console-shapes');
    expect(me).toMatchObject({ id: isStr, status: isStr, function_count: isNum, connected_at_ms: isNum, active_invocations: isNum });
    expect('runtime' in me && 'os' in me && 'version' in me && 'ip_address' in me && 'isolation' in me).toBe(true);
  });

  it('engine::functions::list and ::info answer iii summaries and details', async () => {
    const { functions } = await call('engine::functions::list', { include_internal: true });
    const echo = functions.find((f: any) => f.function_id === 'demo::echo');
    expect(echo).toMatchObject({ function_id: 'demo::echo', worker_name: 'iii-console-shapes' });
    const info = await call('engine::functions::info', { function_id: 'demo::echo' });
    expect(info).toMatchObject({ function_id: 'demo::echo', worker_name: 'iii-console-shapes' });
    expect(Array.isArray(info.registered_triggers)).toBe(true);
    expect(info.registered_triggers[0]).toMatchObject({ id: isStr, trigger_type: 'http', config: { api_path: 'demo/echo' } });
  });

  it('engine::triggers::list {include_internal} → {triggers: [{id, worker_name, description}]}; registered-triggers → {registered_triggers}', async () => {
    const { triggers } = await call('engine::triggers::list', { include_internal: true });
    expect(triggers.find((t: any) => t.id === 'cron')).toMatchObject({ id: 'cron', worker_name: isStr, description: isStr });
    const { registered_triggers } = await call('engine::registered-triggers::list', { include_internal: true });
    const cron = registered_triggers.find((t: any) => t.function_id === 'demo::tick');
    expect(cron).toMatchObject({ id: isStr, trigger_type: 'cron', function_id: 'demo::tick', worker_name: isStr, config_summary: isStr });
    expect(cron.config).toMatchObject({ expression: '0 0 1 1 * * *' });
  });

  it('engine::metrics::list, engine::sampling::rules', async () => {
    const metrics = await call('engine::metrics::list', {});
    expect(metrics).toMatchObject({ engine_metrics: expect.any(Object), sdk_metrics: expect.any(Array), timestamp: isNum });
    const rules = await call('engine::sampling::rules', {});
    expect(rules).toMatchObject({ traces: expect.any(Object), timestamp: isNum });
  });

  it('engine::alerts::list {} → {alerts: [], rules: [], firing_count: 0, timestamp}', async () => {
    expect(await call('engine::alerts::list', {})).toEqual({ alerts: [], rules: [], firing_count: 0, timestamp: isNum });
  });

  it('engine::rollups::list {start_time, end_time, level} → {rollups, histogram_rollups, level, source, query, timestamp}', async () => {
    const now = Date.now();
    const answer = await call('engine::rollups::list', { start_time: now - 3_600_000, end_time: now, level: 1 });
    expect(answer).toMatchObject({
      rollups: expect.any(Array),
      histogram_rollups: [],
      level: 1,
      source: 'on_the_fly',
      query: { start_time: now - 3_600_000, end_time: now, metric_name: null },
      timestamp: isNum,
    });
  });

  it('logs and traces: list, tree, clear', async () => {
    await call('demo::echo', { hello: 1 });
    const logs = await call('engine::logs::list', { limit: 10 });
    expect(logs).toMatchObject({ logs: expect.any(Array), total: isNum });
    const traces = await waitFor(async () => {
      const page = await call('engine::traces::list', { limit: 50, include_internal: false });
      return page.spans?.length ? page : undefined;
    }, 10_000);
    expect(traces).toMatchObject({ spans: expect.any(Array), total: isNum });
    const span = traces.spans[0];
    expect(span).toMatchObject({ trace_id: isStr, span_id: isStr, name: isStr, start_time_unix_nano: isNum, end_time_unix_nano: isNum });
    const tree = await call('engine::traces::tree', { trace_id: span.trace_id });
    expect(Array.isArray(tree.roots)).toBe(true);
    expect(tree.roots[0]).toMatchObject({ trace_id: span.trace_id, span_id: isStr, children: expect.any(Array) });
    expect(await call('engine::logs::clear', {})).toMatchObject({ success: true });
    expect(await call('engine::traces::clear', {})).toMatchObject({ success: true });
  });

  it('state: list_groups → {groups}, list → bare array of values, set/get/delete', async () => {
    await call('state::set', { scope: 'console-shapes', key: 'a', value: { n: 1 } });
    const groups = await call('state::list_groups', {});
    expect(groups.groups).toContain('console-shapes');
    expect(await call('state::list', { scope: 'console-shapes' })).toEqual([{ n: 1 }]);
    expect(await call('state::get', { scope: 'console-shapes', key: 'a' })).toEqual({ n: 1 });
    await call('state::delete', { scope: 'console-shapes', key: 'a' });
    expect(await call('state::list', { scope: 'console-shapes' })).toEqual([]);
  });

  it('stream::list_all {} → {stream: [{id, groups}], count}', async () => {
    await call('stream::set', { stream_name: 'shapes', group_id: 'g1', item_id: 'i1', data: { v: 1 } });
    const all = await call('stream::list_all', {});
    expect(all.stream.find((s: any) => s.id === 'shapes')).toMatchObject({ id: 'shapes', groups: ['g1'] });
  });

  it('queues: list_topics → [{name, broker_type, subscriber_count}], topic_stats → {depth, consumer_count, dlq_depth, config}', async () => {
    await call('iii::durable::publish', { topic: 'orders.dead', data: { id: 'o1' } });
    const topics = await call('engine::queue::list_topics', {});
    expect(Array.isArray(topics)).toBe(true);
    expect(topics.find((t: any) => t.name === 'orders.dead')).toMatchObject({
      name: 'orders.dead',
      broker_type: isStr,
      subscriber_count: isNum,
    });
    const stats = await call('engine::queue::topic_stats', { topic: 'orders.dead' });
    expect(stats).toMatchObject({ depth: isNum, consumer_count: isNum, dlq_depth: isNum });
    expect('config' in stats).toBe(true);
  });

  it('dead letters: dlq_topics → [{topic, broker_type, message_count}], dlq_messages → a bare array; redrive, discard', async () => {
    const dead = await waitFor(async () => {
      const messages = await call('engine::queue::dlq_messages', { topic: 'orders.dead', offset: 0, limit: 50 });
      return Array.isArray(messages) && messages.length > 0 ? messages : undefined;
    }, 30_000);
    expect(dead[0]).toMatchObject({ id: isStr, payload: { id: 'o1' }, error: isStr, failed_at: isNum, retries: isNum, size_bytes: isNum });
    const topics = await call('engine::queue::dlq_topics', {});
    expect(topics.find((t: any) => t.topic === 'orders.dead')).toMatchObject({
      topic: 'orders.dead',
      broker_type: isStr,
      message_count: 1,
    });
    // the paged form eng's own console asks for
    expect(await call('engine::queue::dlq_messages', { topic: 'orders.dead', paged: true })).toMatchObject({
      total: 1,
      offset: 0,
      limit: 50,
    });
    expect(await call('iii::queue::discard_message', { queue: 'orders.dead', message_id: dead[0].id })).toMatchObject({
      queue: 'orders.dead',
      message_id: dead[0].id,
      redriven: 1,
    });
    expect(await call('iii::queue::redrive', { queue: 'orders.dead' })).toEqual({ queue: 'orders.dead', redriven: 0 });
    expect(await call('iii::queue::redrive_message', { queue: 'orders.dead', message_id: 'nope' })).toEqual({
      queue: 'orders.dead',
      message_id: 'nope',
      redriven: 0,
    });
  });

  it("cron Run Now: the bridge calls the bound function with iii's manual cron payload", async () => {
    const now = String(Math.floor(Date.now() / 1000));
    const payload = { trigger: 'cron', job_id: 'x', scheduled_time: now, actual_time: now, manual: true, source: 'console' };
    // (a direct call carries the caller's `_caller_worker_id` beside, as iii 0.22.1 adds it)
    expect(await call('demo::tick', payload)).toMatchObject({ ticked: payload });
  });
});
