/**
 * The orders demo: a small shop backend that uses every trigger type, so a newcomer running
 * `npm start` has something to look at in the console and to call over MCP.
 *
 *   HTTP   GET  /orders            → orders::list
 *          POST /orders            → orders::create     (JSON body {sku, qty, customer})
 *          GET  /orders/:id        → orders::get
 *   event  order.created           → notifications::on_order_created (pub/sub subscriber)
 *   queue  fulfilment (enqueue)    → fulfilment::reserve_stock (a job for one function, retried per
 *                                    `queue_configs.fulfilment` in config.yaml)
 *   topic  fulfilment (durable)    → fulfilment::ship  (durable:subscriber: its own copy of each
 *                                    published order, retried per eng-queue's default_queue_config
 *                                    or the trigger's queue_config, then DLQ; SKUs FAIL… always fail)
 *   state  scope "orders"          → orders::audit (state trigger: every change is counted)
 *   cron   every 30 s              → reports::hourly_summary (writes a summary into state)
 *   MCP    orders::receipt         → answers with MCP content (text, a resource link, the order)
 *          orders://order/{id}     → an MCP resource template read by orders::resource
 *   stream "orders" / "live"       → the live feed the console's stream monitor shows;
 *                                    live::on_order_event (stream trigger) counts its changes and
 *                                    live::on_join / live::on_leave (stream:join / stream:leave)
 *                                    count the sockets that watch it, all in state stats/live_feed
 *
 * What a new order goes through (orders::create):
 *   state orders/<id>  →  pub/sub `order.created`  →  enqueue `fulfilment::reserve_stock` on queue
 *   `fulfilment`  →  durable publish to topic `fulfilment` (fulfilment::ship marks it shipped)  →
 *   stream orders/live/<id>
 */
import { connect } from '@eng/sdk';
import { z } from 'zod';

const client = connect(process.env.ENG_URL, { name: process.env.ENG_WORKER_NAME ?? 'orders', description: 'orders demo app' });

interface Order {
  id: string;
  sku: string;
  qty: number;
  customer: string;
  status: 'created' | 'shipped';
  created_at: string;
}

const state = {
  get: (scope: string, key: string) => client.call('state::get', { scope, key }),
  set: (scope: string, key: string, value: unknown) => client.call('state::set', { scope, key, value }),
  list: (scope: string) => client.call('state::list', { scope }) as Promise<unknown[] | undefined>,
};

/** What a new order may say; `qty` defaults to 1, anything else is refused with the field's name. */
const NewOrder = z.object({
  sku: z.string({ error: 'sku is required and must be a string' }).trim().min(1, 'sku is required'),
  qty: z
    .number({ error: 'qty must be a number' })
    .int('qty must be a whole number')
    .min(1, 'qty must be at least 1')
    .max(10_000, 'qty must be at most 10000')
    .default(1),
  customer: z.string({ error: 'customer must be a string' }).max(200, 'customer must be at most 200 characters').default('guest'),
});

/** A 400 message naming the first field that is wrong ("qty must be at least 1"). */
function describeInvalid(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid order';
  const field = issue.path.join('.');
  return !field || issue.message.startsWith(`${field} `) ? issue.message : `${field}: ${issue.message}`;
}

/**
 * An HTTP call carries the request (`body`, `headers`); a direct call (MCP, `eng trigger`) is the
 * order itself. Either way a bad order is refused before anything is stored.
 */
function parseNewOrder(input: any): { order: z.infer<typeof NewOrder> } | { error: string } {
  const overHttp = input !== null && typeof input === 'object' && 'body' in input && 'headers' in input;
  const body = overHttp ? input.body : input;
  if (overHttp && body === null) {
    const type = String(input.headers?.['content-type'] ?? '');
    if (!type.includes('json')) return { error: 'the body must be JSON (content-type: application/json)' };
    const empty =
      input.headers?.['content-length'] === '0' ||
      (input.headers?.['content-length'] === undefined && !input.headers?.['transfer-encoding']);
    return { error: empty ? 'the body is empty: send a JSON order such as {"sku":"SKU-1","qty":2}' : 'invalid JSON body' };
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    return { error: `the order must be a JSON object, got ${Array.isArray(body) ? 'an array' : body === null ? 'null' : typeof body}` };
  const parsed = NewOrder.safeParse(body);
  return parsed.success ? { order: parsed.data } : { error: describeInvalid(parsed.error) };
}

client.registerFunction(
  'orders::create',
  async (input: any) => {
    const overHttp = input !== null && typeof input === 'object' && 'body' in input && 'headers' in input;
    const checked = parseNewOrder(input);
    if ('error' in checked) {
      if (overHttp) return { status_code: 400, body: { error: checked.error } };
      throw new Error(checked.error);
    }
    const body = checked.order;
    const order: Order = {
      id: `ord_${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`,
      sku: body.sku,
      qty: body.qty,
      customer: body.customer,
      status: 'created',
      created_at: new Date().toISOString(),
    };
    await state.set('orders', order.id, order);
    await client.trigger({ function_id: 'publish', payload: { topic: 'order.created', data: order }, action: { type: 'void' } });
    // the enqueue action: one job for one function, stored before the receipt comes back
    await client
      .trigger({ function_id: 'fulfilment::reserve_stock', payload: order, action: { type: 'enqueue', queue: 'fulfilment' } })
      .catch(() => undefined);
    // a durable publish: every durable:subscriber of the topic gets its own stored copy (here: fulfilment::ship)
    await client.call('eng::durable::publish', { topic: 'fulfilment', data: order }).catch(() => undefined);
    await client.call('stream::set', { stream_name: 'orders', group_id: 'live', item_id: order.id, data: order }).catch(() => undefined);
    return overHttp ? { status_code: 201, body: order } : order;
  },
  {
    description: 'Create an order',
    request_format: {
      type: 'object',
      properties: {
        sku: { type: 'string', minLength: 1, description: 'product SKU' },
        qty: { type: 'integer', minimum: 1, maximum: 10000, default: 1 },
        customer: { type: 'string', maxLength: 200, default: 'guest' },
      },
      required: ['sku'],
    },
    response_format: { type: 'object', properties: { id: { type: 'string' }, status: { type: 'string' } } },
    metadata: {
      'mcp.expose': true,
      'mcp.tier': 'ops',
      mcp: { title: 'Create order', annotations: { destructiveHint: false } },
      // what the function touches, for the console's Flow page (packages/web/src/components/flow/README.md)
      uses: { state: ['orders'], queues: ['fulfilment'], events: ['order.created'] },
    },
  },
);

client.registerFunction(
  'orders::get',
  async (input: any) => {
    const id = input?.path_params?.id ?? input?.id;
    const order = await state.get('orders', String(id));
    if (input?.path_params) return order ? { body: order } : { status_code: 404, body: { error: `order ${id} not found` } };
    if (!order) throw new Error(`order ${id} not found`);
    return order;
  },
  {
    description: 'Fetch one order by id',
    request_format: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
    metadata: { 'mcp.expose': true, mcp: { annotations: { readOnlyHint: true } }, uses: { state: ['orders'] } },
  },
);

client.registerFunction(
  'orders::list',
  async (input: any) => {
    const orders = ((await state.list('orders')) ?? []) as Order[];
    orders.sort((a, b) => (a.created_at < b.created_at ? 1 : -1));
    return input?.query_params !== undefined ? { body: { orders } } : { orders };
  },
  {
    description: 'List orders, newest first',
    metadata: { 'mcp.expose': true, mcp: { annotations: { readOnlyHint: true } }, uses: { state: ['orders'] } },
  },
);

/** One stored order, or an error naming the id. */
async function loadOrder(id: unknown): Promise<Order> {
  const order = (await state.get('orders', String(id ?? ''))) as Order | undefined;
  if (!order) throw new Error(`order ${String(id ?? '')} not found`);
  return order;
}

// Over MCP a function may answer with MCP content itself (packages/mcp/README.md, "The result"):
// eng-mcp passes `{content: [...]}` through as the tool result, here a text, a link to the order
// resource below and the order embedded as JSON.
client.registerFunction(
  'orders::receipt',
  async (input: any) => {
    const order = await loadOrder(input?.id);
    const uri = `orders://order/${order.id}`;
    return {
      content: [
        { type: 'text', text: `Receipt ${order.id}: ${order.qty} × ${order.sku} for ${order.customer} (${order.status})` },
        { type: 'resource_link', uri, name: `order ${order.id}`, mimeType: 'application/json' },
        { type: 'resource', resource: { uri, mimeType: 'application/json', text: JSON.stringify(order, null, 2) } },
      ],
    };
  },
  {
    description: 'A receipt for one order: a line of text, a link to the order resource and the order itself',
    request_format: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
    metadata: { 'mcp.expose': true, mcp: { read_only_hint: true }, uses: { state: ['orders'] } },
  },
);

// An MCP resource template served by a function ("mcp.resource"): clients read orders://order/<id>.
client.registerFunction(
  'orders::resource',
  async (input: any) => {
    const order = await loadOrder(input?.id);
    return { contents: [{ uri: input.uri, mimeType: 'application/json', text: JSON.stringify(order, null, 2) }] };
  },
  {
    description: 'One order as an MCP resource',
    metadata: {
      'mcp.expose': true,
      'mcp.resource': { uri_template: 'orders://order/{id}', name: 'order', mime_type: 'application/json' },
      uses: { state: ['orders'] },
    },
  },
);

client.registerFunction(
  'fulfilment::reserve_stock',
  async (order: any) => {
    await client.call('state::update', {
      scope: 'stock',
      key: String(order.sku),
      ops: [{ type: 'increment', path: 'reserved', by: Number(order.qty) || 1 }],
    });
    return null;
  },
  { description: 'Reserve stock for an order (queue job)', metadata: { uses: { state: ['stock'] } } },
);

client.registerFunction(
  'fulfilment::ship',
  async (order: any) => {
    const current = (await state.get('orders', order.id)) as Order | undefined;
    if (!current) throw new Error(`order ${order.id} vanished before shipping`);
    if (current.sku.startsWith('FAIL')) throw new Error(`warehouse rejected ${current.sku}`); // lets the demo show retries and the DLQ
    await state.set('orders', order.id, { ...current, status: 'shipped' });
    return { shipped: order.id };
  },
  { description: 'Ship an order (durable subscriber of topic fulfilment)', metadata: { uses: { state: ['orders'] } } },
);

client.registerFunction(
  'notifications::on_order_created',
  async (order: any) => {
    await client
      .call('engine::log::info', { message: `order ${order.id} created for ${order.customer}`, data: { order_id: order.id } })
      .catch(() => undefined);
    return null;
  },
  { description: 'Reacts to order.created events' },
);

client.registerFunction(
  'orders::audit',
  async (event: any) => {
    await client.call('state::update', {
      scope: 'stats',
      key: 'orders',
      ops: [
        {
          type: 'increment',
          path: event.event_type === 'state:created' ? 'created' : event.event_type === 'state:deleted' ? 'deleted' : 'updated',
          by: 1,
        },
      ],
    });
    return null;
  },
  { description: 'Counts every change to the orders scope', metadata: { uses: { state: ['stats'] } } },
);

client.registerFunction(
  'reports::hourly_summary',
  async () => {
    const orders = ((await state.list('orders')) ?? []) as Order[];
    const summary = { at: new Date().toISOString(), total: orders.length, shipped: orders.filter((o) => o.status === 'shipped').length };
    await state.set('reports', 'latest', summary);
    return summary;
  },
  { description: 'Summarise orders (cron)', metadata: { 'mcp.expose': true, uses: { state: ['orders', 'reports'] } } },
);

/** Counters of the live feed in state stats/live_feed: one per stream event type, plus joins and leaves. */
const countLive = (ops: unknown[]) => client.call('state::update', { scope: 'stats', key: 'live_feed', ops });

client.registerFunction(
  'live::on_order_event',
  async (message: any) => {
    // the stream payload: {type: 'stream', streamName, groupId, id, event: {type: 'create' | 'update' | 'delete', data}}
    await countLive([
      { type: 'increment', path: message.event.type, by: 1 },
      { type: 'set', path: 'last_order_id', value: message.id ?? null },
    ]);
    return null;
  },
  { description: 'Counts the changes of the orders live feed (stream trigger)', metadata: { uses: { state: ['stats'] } } },
);

// stream:join / stream:leave fire for every stream, so each handler looks at stream_name. A join
// handler also authorises the subscription: it must answer (and not throw) or the join is refused.
client.registerFunction(
  'live::on_join',
  async (join: any) => {
    if (join.stream_name === 'orders') await countLive([{ type: 'increment', path: 'joins', by: 1 }]).catch(() => undefined);
    return null; // {unauthorized: true} would refuse the subscription
  },
  { description: 'Counts sockets joining the orders live feed (stream:join)', metadata: { uses: { state: ['stats'] } } },
);

client.registerFunction(
  'live::on_leave',
  async (leave: any) => {
    if (leave.stream_name === 'orders') await countLive([{ type: 'increment', path: 'leaves', by: 1 }]).catch(() => undefined);
    return null;
  },
  { description: 'Counts sockets leaving the orders live feed (stream:leave)', metadata: { uses: { state: ['stats'] } } },
);

client.registerTrigger({ type: 'http', function_id: 'orders::list', config: { api_path: 'orders', http_method: 'GET' } });
client.registerTrigger({ type: 'http', function_id: 'orders::create', config: { api_path: 'orders', http_method: 'POST' } });
client.registerTrigger({ type: 'http', function_id: 'orders::get', config: { api_path: 'orders/:id', http_method: 'GET' } });
client.registerTrigger({ type: 'subscribe', function_id: 'notifications::on_order_created', config: { topic: 'order.created' } });
client.registerTrigger({ type: 'durable:subscriber', function_id: 'fulfilment::ship', config: { topic: 'fulfilment' } });
client.registerTrigger({ type: 'state', function_id: 'orders::audit', config: { scope: 'orders' } });
client.registerTrigger({ type: 'cron', function_id: 'reports::hourly_summary', config: { expression: '*/30 * * * * *' } });
client.registerTrigger({ type: 'stream', function_id: 'live::on_order_event', config: { stream_name: 'orders', group_id: 'live' } });
client.registerTrigger({ type: 'stream:join', function_id: 'live::on_join', config: {} });
client.registerTrigger({ type: 'stream:leave', function_id: 'live::on_leave', config: {} });

await client.ready();
process.stdout.write(`orders demo worker connected as ${client.workerId}\n`);

const shutdown = async () => {
  await client.close();
  process.exit(0);
};
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
