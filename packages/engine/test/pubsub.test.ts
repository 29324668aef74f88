/**
 * eng-pubsub against real engines: `publish` and `subscribe` triggers with iii-sdk 0.22.1 and
 * @eng/sdk, the local adapter, and the redis adapter with two engines sharing one redis-server.
 * spec: engine-protocol §4.6, §5.5, §7.2, §11 item 9.
 */
import { connect, type EngClient } from '@eng/sdk';
import { registerWorker } from 'iii-sdk-0.22.1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import { RawClient } from '../../../test/raw-client.ts';
import { type RedisProcess, startRedis } from '../../../test/redis.ts';

type IiiWorker = ReturnType<typeof registerWorker>;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function iiiWorker(url: string, name: string): IiiWorker {
  return registerWorker(url, { workerName: name, otel: { enabled: false }, enableMetricsReporting: false } as never);
}

/** Collects what a handler received: its input and the metadata argument. */
function recorder() {
  const calls: Array<{ input: unknown; metadata: unknown }> = [];
  return {
    calls,
    handler: async (input: unknown, metadata?: unknown) => {
      calls.push({ input, metadata });
      return { ignored: true };
    },
  };
}

/**
 * Resolves once every subscription reached the engine: probes are published until each recorder has
 * seen one. Subscriptions made on different connections reach the engine in no fixed order.
 */
async function subscribed(publish: (data: unknown) => Promise<unknown>, ...recorders: Array<Array<{ input: unknown }>>): Promise<void> {
  await waitFor(async () => {
    await publish({ probe: true });
    await sleep(30);
    return recorders.every((calls) => calls.some((c) => (c.input as { probe?: boolean })?.probe));
  });
  await sleep(50);
  for (const calls of recorders) calls.length = 0;
}

describe('pub/sub, local adapter', () => {
  let engine: EngineProcess;
  let iii: IiiWorker;
  let eng: EngClient;
  let raw: RawClient;

  beforeAll(async () => {
    engine = await startEngine({ workersYaml: '  - name: iii-pubsub\n' });
    iii = iiiWorker(engine.busUrl, 'pubsub-iii');
    eng = connect(engine.busUrl, { name: 'pubsub-eng' });
    await eng.ready();
    raw = await RawClient.worker(engine.busUrl);
  });
  afterAll(async () => {
    await iii?.shutdown();
    await eng?.close();
    await raw?.terminate();
    await engine?.stop();
  });

  it('delivers the raw data to every subscriber of the topic, without metadata, and publish has no result', async () => {
    const a = recorder();
    const b = recorder();
    const other = recorder();
    iii.registerFunction('sub::a', a.handler);
    iii.registerTrigger({ type: 'subscribe', function_id: 'sub::a', config: { topic: 'orders' }, metadata: { not: 'delivered' } });
    eng.registerFunction('sub::b', (input, ctx) => b.handler(input, ctx.metadata));
    eng.registerTrigger({ type: 'subscribe', function_id: 'sub::b', config: { topic: 'orders' } });
    iii.registerFunction('sub::other', other.handler);
    iii.registerTrigger({ type: 'subscribe', function_id: 'sub::other', config: { topic: 'invoices' } });
    const publish = (data: unknown) => iii.trigger({ function_id: 'publish', payload: { topic: 'orders', data } });
    await subscribed(publish, a.calls, b.calls);

    const result = await publish({ order_id: 7, items: ['x'] });
    expect(result).toBeUndefined();
    await waitFor(() => a.calls.length === 1 && b.calls.length === 1);
    // subscribers get the data as published, as in iii (issue 26 item 3)
    const delivered = { order_id: 7, items: ['x'] };
    expect(a.calls[0]).toEqual({ input: delivered, metadata: undefined });
    expect(b.calls[0]?.input).toEqual(delivered);
    expect(b.calls[0]?.metadata).toBeUndefined();
    await sleep(100);
    expect(other.calls).toEqual([]);
  });

  it('publishes from @eng/sdk too, any JSON value as data', async () => {
    const s = recorder();
    iii.registerFunction('sub::values', s.handler);
    iii.registerTrigger({ type: 'subscribe', function_id: 'sub::values', config: { topic: 'values' } });
    const publish = (data: unknown) => eng.trigger({ function_id: 'publish', payload: { topic: 'values', data } });
    await subscribed(publish, s.calls);
    for (const value of ['text', 42, [1, 2], null]) await publish(value);
    await waitFor(() => s.calls.length === 4);
    expect(s.calls.map((c) => c.input)).toEqual(['text', 42, [1, 2], null]);
  });

  it('stops delivering once the subscription is removed', async () => {
    const s = recorder();
    iii.registerFunction('sub::gone', s.handler);
    const trigger = iii.registerTrigger({ type: 'subscribe', function_id: 'sub::gone', config: { topic: 'gone' } });
    const publish = (data: unknown) => iii.trigger({ function_id: 'publish', payload: { topic: 'gone', data } });
    await subscribed(publish, s.calls);
    trigger.unregister();
    await sleep(200);
    await publish({ after: true });
    await sleep(200);
    expect(s.calls).toEqual([]);
  });

  it('refuses bad publish input with a clear code, and a subscribe trigger without a topic', async () => {
    const missing = await raw.call('publish', { data: 1 });
    expect(missing.error).toEqual({ code: 'topic_not_set', message: 'topic is required' });
    const empty = await raw.call('publish', { topic: '', data: 1 });
    expect((empty.error as { code: string }).code).toBe('topic_not_set');
    const wrongType = await raw.call('publish', { topic: 5, data: 1 });
    expect(wrongType.error).toEqual({ code: 'deserialization_error', message: 'topic: expected a string, got number' });
    const notObject = await raw.call('publish', 'orders');
    expect((notObject.error as { code: string }).code).toBe('deserialization_error');

    raw.send({ type: 'registerfunction', id: 'raw::sub' });
    raw.send({ type: 'registertrigger', id: 'no-topic', trigger_type: 'subscribe', function_id: 'raw::sub', config: {} });
    const refused = await raw.next((f) => f.type === 'triggerregistrationresult' && f.id === 'no-topic');
    expect(refused.error).toEqual({ code: 'trigger_registration_failed', message: 'topic is required for subscribe triggers' });
    // a refused binding is listed as an error with the reason (so the console can show it), never active
    const listed = await raw.result<{ registered_triggers: Array<{ id: string; status?: string; error?: string }> }>(
      'engine::registered-triggers::list',
      { trigger_type: 'subscribe' },
    );
    expect(listed.registered_triggers.find((t) => t.id === 'no-topic')).toMatchObject({
      status: 'error',
      error: 'topic is required for subscribe triggers',
    });
  });
});

describe('pub/sub, redis adapter: two engines on one redis', () => {
  let redis: RedisProcess;
  let one: EngineProcess;
  let two: EngineProcess;
  let w1: IiiWorker;
  let w2: EngClient;

  beforeAll(async () => {
    redis = await startRedis();
    const yaml = `  - name: eng-pubsub\n    config:\n      adapter:\n        name: redis\n        config:\n          redis_url: ${redis.url}\n`;
    [one, two] = await Promise.all([startEngine({ workersYaml: yaml }), startEngine({ workersYaml: yaml })]);
    w1 = iiiWorker(one.busUrl, 'pubsub-one');
    w2 = connect(two.busUrl, { name: 'pubsub-two' });
    await w2.ready();
  });
  afterAll(async () => {
    await w1?.shutdown();
    await w2?.close();
    await one?.stop();
    await two?.stop();
    await redis?.stop();
  });

  it("delivers each engine's events to the other's subscribers, exactly once each", async () => {
    const s1 = recorder();
    const s2 = recorder();
    w1.registerFunction('shared::one', s1.handler);
    w1.registerTrigger({ type: 'subscribe', function_id: 'shared::one', config: { topic: 'shared' } });
    w2.registerFunction('shared::two', (input) => s2.handler(input));
    w2.registerTrigger({ type: 'subscribe', function_id: 'shared::two', config: { topic: 'shared' } });
    const fromOne = (data: unknown) => w1.trigger({ function_id: 'publish', payload: { topic: 'shared', data } });
    const fromTwo = (data: unknown) => w2.trigger({ function_id: 'publish', payload: { topic: 'shared', data } });
    await subscribed(fromTwo, s1.calls, s2.calls);
    await sleep(100);
    s1.calls.length = 0;
    s2.calls.length = 0;

    await fromOne({ from: 'one' });
    await fromTwo({ from: 'two' });
    await waitFor(() => s1.calls.length === 2 && s2.calls.length === 2);
    await sleep(200);
    // the data as published, on both engines (issue 26 item 3)
    expect(s1.calls.map((c) => c.input)).toEqual(expect.arrayContaining([{ from: 'one' }, { from: 'two' }]));
    expect(s2.calls.map((c) => c.input)).toEqual(expect.arrayContaining([{ from: 'one' }, { from: 'two' }]));
    expect(s1.calls).toHaveLength(2);
    expect(s2.calls).toHaveLength(2);
  });

  it('refuses to start when the redis adapter cannot reach its server', async () => {
    await expect(
      startEngine({
        workersYaml:
          '  - name: eng-pubsub\n    config:\n      adapter:\n        name: redis\n        config:\n          redis_url: redis://127.0.0.1:1\n',
        readyTimeoutMs: 15_000,
      }),
    ).rejects.toThrow(/redis/i);
  });
});
