/**
 * The orders demo (examples/orders) as `npm start` runs it: the shipped config.yaml — the same
 * worker list, file-based stores — with free ports and a temporary data dir. Each trigger of the
 * example is proven by its side effect: HTTP routes, pub/sub event, the enqueue job, the durable
 * subscriber (with its retries and dead-letter queue), the state trigger, cron, and the stream,
 * stream:join and stream:leave triggers.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, type EngClient } from '@eng/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, REPO_ROOT, startEngine, TSX_IMPORT, waitFor } from '../../../test/harness.ts';
import { StreamsClient } from './kv-clients.ts';

interface Order {
  id: string;
  sku: string;
  qty: number;
  customer: string;
  status: string;
}
interface TriggerRecord {
  id: string;
  trigger_type: string;
  function_id: string;
  config: Record<string, unknown>;
  status: string;
}

/**
 * config.yaml with `{{NAME_PORT}}` placeholders (free ports) instead of `${ENG_NAME_PORT:default}`,
 * and the demo's entry file and tsx loader as absolute paths: supervised workers run in the
 * directory of the config file, which is a temporary one here.
 */
function shippedConfigForTest(): string {
  const shipped = readFileSync(join(REPO_ROOT, 'config.yaml'), 'utf8');
  const entry = '"examples/orders/src/main.ts"';
  expect(shipped).toContain(entry);
  expect(shipped).toMatch(/"--import", "tsx"/);
  const text = shipped
    .replace(/\$\{ENG_([A-Z]+)_PORT:\d+\}/g, '{{$1_PORT}}')
    .replace('"tsx"', JSON.stringify(TSX_IMPORT))
    .replace(entry, JSON.stringify(join(REPO_ROOT, 'examples/orders/src/main.ts')));
  expect(text).not.toContain('${');
  return text;
}

const EXPECTED_BINDINGS = [
  ['cron', 'reports::hourly_summary'],
  ['durable:subscriber', 'fulfilment::ship'],
  ['http', 'orders::create'],
  ['http', 'orders::get'],
  ['http', 'orders::list'],
  ['state', 'orders::audit'],
  ['stream', 'live::on_order_event'],
  ['stream:join', 'live::on_join'],
  ['stream:leave', 'live::on_leave'],
  ['subscribe', 'notifications::on_order_created'],
];

let engine: EngineProcess;
let client: EngClient;
let http: string;

const call = <T = any>(id: string, input: unknown) => client.call<T>(id, input);
const state = <T = any>(scope: string, key: string) => call<T | undefined>('state::get', { scope, key });
const bindings = () =>
  call<{ registered_triggers: TriggerRecord[] }>('engine::registered-triggers::list', { worker: 'orders' }).then(
    (r) => r.registered_triggers,
  );

async function createOrder(body: Record<string, unknown>): Promise<Order> {
  const res = await fetch(`${http}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(201);
  return (await res.json()) as Order;
}

beforeAll(async () => {
  // SKIP_WEB_BUILD: the console worker uses the UI bundle as it is and never builds one in a test
  engine = await startEngine({ configYaml: shippedConfigForTest(), env: { SKIP_WEB_BUILD: '1' }, readyTimeoutMs: 30_000 });
  http = (engine.addresses.http as { url: string }).url;
  client = connect(engine.busUrl, { name: 'example-test', reconnect: { maxRetries: 0 } });
  await client.ready({ timeoutMs: 10_000 });
  // the supervisor launched the demo worker; wait until all of its triggers are bound
  await waitFor(async () => {
    const list = await bindings();
    return list.length === EXPECTED_BINDINGS.length && list.every((b) => b.status === 'active');
  }, 30_000);
}, 90_000);

afterAll(async () => {
  await client?.close();
  await engine?.stop();
});

describe('examples/orders under the shipped config.yaml', () => {
  it('runs the configured modules and binds one trigger of every type', async () => {
    const list = await bindings();
    expect(list.map((b) => [b.trigger_type, b.function_id])).toEqual(EXPECTED_BINDINGS);
    expect(engine.logs()).toMatch(/modules {5}.*eng-http.*eng-cron.*eng-state.*eng-stream.*eng-queue/);
    const { workers } = await call<{ workers: Array<{ name: string; running: boolean }> }>('engine::supervisor::list', {});
    // the shipped config also runs the chat stack; its roles not in this build yet are not launched
    expect(workers.map((w) => w.name)).toEqual(expect.arrayContaining(['console', 'mcp', 'orders', 'session-manager', 'approval-gate']));
    expect(workers.find((w) => w.name === 'orders')?.running).toBe(true);
  });

  it('http: POST /orders creates, GET /orders/:id and GET /orders read it back, bad input is a 400', async () => {
    const order = await createOrder({ sku: 'HTTP-1', qty: 2, customer: 'ada' });
    expect(order).toMatchObject({ sku: 'HTTP-1', qty: 2, customer: 'ada', status: 'created' });
    const got = await fetch(`${http}/orders/${order.id}`);
    expect(got.status).toBe(200);
    expect(await got.json()).toMatchObject({ id: order.id, sku: 'HTTP-1' });
    const list = (await (await fetch(`${http}/orders`)).json()) as { orders: Order[] };
    expect(list.orders.map((o) => o.id)).toContain(order.id);
    expect((await fetch(`${http}/orders/ord_missing`)).status).toBe(404);
    // every bad order is a 400 naming what is wrong, and nothing is stored
    const before = ((await call('state::list', { scope: 'orders' })) ?? []) as Order[];
    const refused = async (body: string, contentType = 'application/json') => {
      const res = await fetch(`${http}/orders`, { method: 'POST', headers: { 'content-type': contentType }, body });
      expect(res.status, body).toBe(400);
      return ((await res.json()) as { error: string }).error;
    };
    expect(await refused('{}')).toBe('sku is required and must be a string');
    expect(await refused('{"sku": ""}')).toBe('sku is required');
    expect(await refused('{"sku": "A", "qty": "two"}')).toBe('qty must be a number');
    expect(await refused('{"sku": "A", "qty": -3}')).toBe('qty must be at least 1');
    expect(await refused('{"sku": "A", "qty": 1.5}')).toBe('qty must be a whole number');
    expect(await refused('{"sku": "A", "customer": 7}')).toBe('customer must be a string');
    expect(await refused('{"sku": "A", "qty": 2')).toBe('invalid JSON body');
    expect(await refused('[{"sku": "A"}]')).toBe('the order must be a JSON object, got an array');
    expect(await refused('"SKU-1"')).toBe('the order must be a JSON object, got string');
    expect(await refused('sku=A', 'application/x-www-form-urlencoded')).toBe('the body must be JSON (content-type: application/json)');
    const after = ((await call('state::list', { scope: 'orders' })) ?? []) as Order[];
    expect(after.length).toBe(before.length);
    // a direct call (MCP, eng trigger) gets the same message as an error
    await expect(call('orders::create', { sku: 'A', qty: 0 })).rejects.toThrow('qty must be at least 1');
  });

  it('pub/sub: order.created reaches notifications::on_order_created, which logs the order', async () => {
    const order = await createOrder({ sku: 'EVENT-1', customer: 'grace' });
    const logs = await waitFor(async () => {
      const r = await call<{ logs: Array<{ body: unknown }> }>('engine::logs::list', { search: `order ${order.id} created` });
      return r.logs.length > 0 ? r.logs : null;
    });
    expect(String(logs[0]?.body)).toBe(`order ${order.id} created for grace`);
  });

  it('state trigger: orders::audit counts creates and updates of scope orders in stats/orders', async () => {
    const before = ((await state<{ created?: number; updated?: number }>('stats', 'orders')) ?? {}) as {
      created?: number;
      updated?: number;
    };
    await call('state::set', { scope: 'orders', key: 'audit-probe', value: { id: 'audit-probe', sku: 'X', status: 'created' } });
    await waitFor(async () => ((await state('stats', 'orders'))?.created ?? 0) === (before.created ?? 0) + 1);
    await call('state::set', { scope: 'orders', key: 'audit-probe', value: { id: 'audit-probe', sku: 'Y', status: 'created' } });
    await waitFor(async () => ((await state('stats', 'orders'))?.updated ?? 0) >= (before.updated ?? 0) + 1);
    await call('state::delete', { scope: 'orders', key: 'audit-probe' });
    await waitFor(async () => ((await state('stats', 'orders'))?.deleted ?? 0) >= 1);
  });

  it('queue: the enqueue action runs fulfilment::reserve_stock on queue fulfilment, configured from config.yaml', async () => {
    await createOrder({ sku: 'RESERVE-1', qty: 3 });
    await createOrder({ sku: 'RESERVE-1', qty: 4 });
    await waitFor(async () => (await state('stock', 'RESERVE-1'))?.reserved === 7);
    const stats = await call('engine::queue::topic_stats', { topic: 'fulfilment' });
    // queue_configs.fulfilment of the shipped config.yaml
    expect(stats.config).toMatchObject({ max_retries: 3, backoff_ms: 2000 });
  });

  it('durable subscriber: the durable publish to topic fulfilment reaches fulfilment::ship, which ships the order', async () => {
    const order = await createOrder({ sku: 'SHIP-1' });
    await waitFor(async () => (await state<Order>('orders', order.id))?.status === 'shipped');
    const topics = await call<Array<{ name: string; broker_type: string; subscriber_count: number }>>('engine::queue::list_topics', {});
    expect(topics.filter((t) => t.name === 'fulfilment').map((t) => t.broker_type)).toEqual(['function_queue', 'topic']);
    expect(topics.find((t) => t.name === 'fulfilment' && t.broker_type === 'topic')?.subscriber_count).toBe(1);
    const stats = await call('engine::queue::topic_stats', { topic: 'fulfilment' });
    expect(stats.subscribers).toEqual([expect.objectContaining({ function_id: 'fulfilment::ship', active: true })]);
    expect(stats.delivered).toBeGreaterThanOrEqual(2); // at least this order's job and its copy
  });

  it('durable subscriber: a failing order is retried, then dead-lettered on the topic with its last error', async () => {
    const order = await createOrder({ sku: 'FAIL-1' });
    // default_queue_config: 1 + 3 attempts, 1 s backoff doubling → about 7 s
    const dead = await waitFor(
      async () => {
        const page = await call('engine::queue::dlq_messages', { paged: true, topic: 'fulfilment' });
        return page.messages.find((m: { payload: { id?: string } }) => m.payload?.id === order.id);
      },
      20_000,
      250,
    );
    expect(dead).toMatchObject({ function_id: 'fulfilment::ship', retries: 4, error: 'invocation_failed: warehouse rejected FAIL-1' });
    // the example only ever enqueues reserve_stock: a dead fulfilment::ship is the topic's copy
    expect(await call('engine::queue::dlq_topics', {})).toContainEqual({ topic: 'fulfilment', broker_type: 'topic', message_count: 1 });
    expect((await state<Order>('orders', order.id))?.status).toBe('created');
  }, 30_000);

  it('cron: firing the reports::hourly_summary binding writes reports/latest', async () => {
    const cron = (await bindings()).find((b) => b.trigger_type === 'cron') as TriggerRecord;
    expect(cron.config.expression).toBe('*/30 * * * * *');
    const { next_runs } = await call<{ next_runs: string[] }>('eng::cron::next_runs', { trigger_id: cron.id, count: 2 });
    expect(Date.parse(next_runs[1] as string) - Date.parse(next_runs[0] as string)).toBe(30_000);

    await call('state::delete', { scope: 'reports', key: 'latest' });
    const startedAt = new Date().toISOString();
    const fired = await call('eng::cron::trigger_now', { trigger_id: cron.id });
    expect(fired).toMatchObject({ trigger: 'cron', job_id: cron.id, function_id: 'reports::hourly_summary', manual: true });
    const summary = await waitFor(() => state<{ at: string; total: number; shipped: number }>('reports', 'latest'));
    expect(summary.at >= startedAt).toBe(true);
    const orders = ((await call('state::list', { scope: 'orders' })) ?? []) as Order[];
    expect(summary.total).toBe(orders.length);
    expect(summary.shipped).toBeGreaterThanOrEqual(1);
  });

  it('stream: a new order lands in stream orders/live, and live::on_order_event counts it in stats/live_feed', async () => {
    const before = (await state<{ create?: number }>('stats', 'live_feed'))?.create ?? 0;
    const order = await createOrder({ sku: 'LIVE-1' });
    expect(await call('stream::get', { stream_name: 'orders', group_id: 'live', item_id: order.id })).toMatchObject({ id: order.id });
    const feed = await waitFor(async () => {
      const value = await state<{ create?: number; last_order_id?: string }>('stats', 'live_feed');
      return value?.last_order_id === order.id ? value : null;
    });
    expect(feed.create).toBe(before + 1);
    // other streams do not fire it
    await call('stream::set', { stream_name: 'elsewhere', group_id: 'live', item_id: 'x', data: { n: 1 } });
    await new Promise((r) => setTimeout(r, 300));
    expect((await state('stats', 'live_feed'))?.last_order_id).toBe(order.id);
  });

  it('one request, one trace: what POST /orders causes (event, state trigger, stream trigger, queue, durable topic) joins its trace', async () => {
    const traceId = crypto.randomUUID().replaceAll('-', '');
    const res = await fetch(`${http}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: `00-${traceId}-${'ab'.repeat(8)}-01` },
      body: JSON.stringify({ sku: 'TRACE-1', customer: 'ada' }),
    });
    expect(res.status).toBe(201);
    const expected = [
      'orders::create',
      'notifications::on_order_created', // pub/sub
      'orders::audit', // state trigger
      'live::on_order_event', // stream trigger
      'fulfilment::reserve_stock', // enqueue
      'fulfilment::ship', // durable publish
    ];
    // each function shows as the engine's `call <id>` span or the worker's `execute <id>` span
    const names = await waitFor(async () => {
      const { spans } = await call<{ spans: Array<{ name: string }> }>('engine::traces::spans', { trace_id: traceId });
      const seen = new Set(spans.map((s) => s.name.replace(/^(call|execute) /, '')));
      return expected.every((f) => seen.has(f)) ? seen : null;
    }, 20_000).catch(async (err: Error) => {
      const { spans } = await call<{ spans: Array<{ name: string }> }>('engine::traces::spans', { trace_id: traceId });
      throw new Error(`${err.message}; the trace holds: ${spans.map((s) => s.name).join(', ')}`);
    });
    expect([...names]).toEqual(expect.arrayContaining(expected));
  });

  it('stream:join / stream:leave: sockets watching the orders feed are counted, other streams are not', async () => {
    const counts = async () =>
      ((await state<{ joins?: number; leaves?: number }>('stats', 'live_feed')) ?? {}) as { joins?: number; leaves?: number };
    const before = await counts();
    const socket = await StreamsClient.connect(engine.addresses.streams?.url as string);
    try {
      socket.join('watch-orders', 'orders', 'live');
      // the join handler authorised it: the socket gets its sync with the stored orders
      const sync = await socket.next('sync');
      expect(sync.streamName).toBe('orders');
      expect(Array.isArray(sync.event.data)).toBe(true);
      socket.join('watch-other', 'elsewhere', 'live');
      await socket.next('sync', (f) => f.streamName === 'elsewhere');
      await waitFor(async () => (await counts()).joins === (before.joins ?? 0) + 1);

      // and the feed keeps flowing to it
      const order = await createOrder({ sku: 'WATCHED-1' });
      const created = await socket.next('create', (f) => f.id === order.id);
      expect(created.event.data).toMatchObject({ id: order.id, sku: 'WATCHED-1' });

      socket.leave('watch-orders', 'orders', 'live');
      await waitFor(async () => (await counts()).leaves === (before.leaves ?? 0) + 1);
    } finally {
      socket.close();
    }
    // closing the socket leaves `elsewhere`, which is not counted
    await new Promise((r) => setTimeout(r, 300));
    expect(await counts()).toMatchObject({ joins: (before.joins ?? 0) + 1, leaves: (before.leaves ?? 0) + 1 });
  });
});
