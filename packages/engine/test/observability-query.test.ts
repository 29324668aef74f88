import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type WebSocket from 'ws';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import { RawClient } from '../../../test/raw-client.ts';
import { frame, hex, type LogSpec, logsRequest, otelSocket, type SpanSpec, sendFrames, tracesRequest } from './observability-helpers.ts';

// seed §2.6 (trace filters) and §2.7 (log filters), each alone and combined; engine-protocol §4.3
// pagination and ordering. The data arrives as OTLP frames on `/otel`, as a worker's SDK sends it.

let engine: EngineProcess;
let client: RawClient;
let otel: WebSocket;
const clients: RawClient[] = [];

const T0 = Date.now() - 3_600_000;
const t = { orders: hex(16), payments: hex(16), reserve: hex(16), release: hex(16), internal: hex(16) };
const bulk = Array.from({ length: 20 }, () => hex(16));
const rootOf: Record<string, string> = {};

function root(traceId: string, spec: Omit<SpanSpec, 'traceId' | 'spanId'>): SpanSpec {
  const spanId = hex(8);
  rootOf[traceId] = spanId;
  return { traceId, spanId, ...spec };
}

const spans: SpanSpec[] = [
  root(t.orders, { name: 'GET /orders', service: 'checkout', startMs: T0, durationMs: 100, status: 1 }),
  {
    traceId: t.orders,
    parentSpanId: '',
    name: 'db query',
    service: 'postgres',
    startMs: T0 + 10,
    durationMs: 20,
    attributes: { 'db.system': 'postgresql' },
  },
  {
    traceId: t.orders,
    parentSpanId: '',
    name: 'execute orders::create',
    service: 'orders-worker',
    startMs: T0 + 40,
    durationMs: 50,
    status: 1,
    attributes: { function_id: 'orders::create', 'eng.session.id': 'sess-1' },
  },
  root(t.payments, {
    name: 'POST /payments',
    service: 'checkout',
    startMs: T0 + 1000,
    durationMs: 250,
    status: 2,
    attributes: { 'http.method': 'POST', tenant: 'acme' },
  }),
  { traceId: t.payments, parentSpanId: '', name: 'charge card', service: 'payments', startMs: T0 + 1010, durationMs: 200, status: 2 },
  root(t.reserve, {
    name: 'reserve stock',
    service: 'inventory',
    startMs: T0 + 2000,
    durationMs: 5,
    attributes: { tenant: 'acme', region: 'eu' },
  }),
  root(t.release, {
    name: 'release stock',
    service: 'inventory',
    startMs: T0 + 3000,
    durationMs: 1500,
    status: 1,
    attributes: { tenant: 'globex', region: 'eu' },
  }),
  root(t.internal, {
    name: 'call engine::functions::list',
    service: 'eng',
    startMs: T0 + 4000,
    durationMs: 1,
    status: 1,
    attributes: { function_id: 'engine::functions::list', 'eng.function.kind': 'internal' },
  }),
  ...bulk.map((id, n) =>
    root(id, {
      name: `bulk job ${String(n).padStart(2, '0')}`,
      service: 'bulk',
      startMs: T0 + 10_000 + n * 10,
      durationMs: 30 + n,
      status: 1,
    }),
  ),
];
// children point at their trace's root
for (const span of spans) if (span.parentSpanId === '') span.parentSpanId = rootOf[span.traceId];

const logs: LogSpec[] = [
  { timeMs: T0, severity: 9, text: 'INFO', body: 'user signed in', service: 'auth', traceId: t.orders },
  { timeMs: T0 + 100, severity: 13, body: 'slow query detected', service: 'postgres', traceId: t.orders },
  { timeMs: T0 + 200, severity: 17, text: 'ERROR', body: 'Payment declined for order 7', service: 'payments', traceId: t.payments },
  { timeMs: T0 + 300, severity: 5, text: 'debug', body: 'cache miss', service: 'inventory' },
  { timeMs: T0 + 400, severity: 1, text: 'TRACE', body: 'entering reserve', service: 'inventory' },
  { timeMs: T0 + 500, severity: 9, text: 'INFO', body: 'payment retried', service: 'payments', traceId: t.payments },
];

beforeAll(async () => {
  engine = await startEngine({
    // engine log lines stay out of the log store here (level: error) so every count is exact
    workersYaml: '  - name: eng-observability\n    config:\n      level: error\n      logs_console_output: false\n',
  });
  client = await RawClient.worker(engine.busUrl);
  clients.push(client);
  otel = await otelSocket(engine.busUrl);
  // children first, as OTel exports them (a child ends before its parent)
  await sendFrames(otel, [frame('OTLP', tracesRequest([...spans].reverse())), frame('LOGS', logsRequest(logs))]);
  await waitFor(async () => (await list({ search_all_spans: true, include_internal: true })).total === spans.length);
}, 30_000);

afterAll(async () => {
  otel?.terminate();
  await Promise.all(clients.map((c) => c.terminate()));
  await engine?.stop();
});

interface Row {
  trace_id: string;
  span_id: string;
  name: string;
  service_name: string;
  status: string;
  pending?: boolean;
  span_count: number;
  error_count: number;
  duration_ms: number;
  trace_tags?: Record<string, string>;
}

async function list(input: Record<string, unknown>): Promise<{ spans: Row[]; total: number; offset: number; limit: number }> {
  return client.result('engine::traces::list', input);
}
/** Root names of a listing, in order. */
async function names(input: Record<string, unknown>): Promise<string[]> {
  return (await list(input)).spans.map((s) => s.name);
}
async function logBodies(input: Record<string, unknown>): Promise<string[]> {
  const result = await client.result<{ logs: Array<{ body: string }> }>('engine::logs::list', input);
  return result.logs.map((l) => l.body);
}
const window = { start_time: T0 - 1, end_time: T0 + 3_000 };
const NON_BULK = ['GET /orders', 'POST /payments', 'reserve stock', 'release stock'];

describe('trace list: each filter of seed §2.6 alone', () => {
  it('lists root spans only, oldest first, internal traces hidden, with span counts', async () => {
    const result = await list({ limit: 4 });
    expect(result.total).toBe(4 + bulk.length);
    expect(result.spans.map((s) => s.name)).toEqual(NON_BULK);
    expect(result.spans.map((s) => s.span_count)).toEqual([3, 2, 1, 1]);
    expect(result.spans[1]?.error_count).toBe(2);
    expect(result.spans[0]?.trace_tags).toEqual({ 'eng.session.id': 'sess-1' });
    expect(result.spans[0]?.duration_ms).toBe(100);
  });

  it('Trace ID: exact match only', async () => {
    expect(await names({ trace_id: t.payments })).toEqual(['POST /payments']);
    expect(await names({ trace_id: t.payments.toUpperCase() })).toEqual(['POST /payments']);
    expect(await names({ trace_id: t.payments.slice(0, 16) })).toEqual([]);
    expect(await names({ trace_ids: [t.orders, t.release] })).toEqual(['GET /orders', 'release stock']);
  });

  it('Service Name: case-insensitive substring of any service in the trace', async () => {
    expect(await names({ service_name: 'CHECK' })).toEqual(['GET /orders', 'POST /payments']);
    expect(await names({ service_name: 'postgres' })).toEqual(['GET /orders']);
    expect(await names({ service_name: 'nowhere' })).toEqual([]);
  });

  it('Span Name: case-insensitive substring', async () => {
    expect(await names({ name: 'stock' })).toEqual(['reserve stock', 'release stock']);
    expect(await names({ name: 'CHARGE' })).toEqual(['POST /payments']);
  });

  it('Status: OK, Error (anywhere in the trace), Pending', async () => {
    expect(await names({ status: 'Error' })).toEqual(['POST /payments']);
    expect(await names({ status: 'error' })).toEqual(['POST /payments']);
    // OTel leaves successful spans unset: a finished trace without errors is OK
    expect(await names({ status: 'OK', limit: 3 })).toEqual(['GET /orders', 'reserve stock', 'release stock']);
    expect((await list({ status: 'ok' })).total).toBe(3 + bulk.length);
    expect(await names({ status: 'unset' })).toEqual(['reserve stock']);
    expect(await names({ status: 'Pending' })).toEqual([]);
  });

  it('Duration: min and max in milliseconds, inclusive', async () => {
    expect(await names({ min_duration_ms: 200 })).toEqual(['POST /payments', 'release stock']);
    expect(await names({ max_duration_ms: 10 })).toEqual(['reserve stock']);
    expect(await names({ min_duration_ms: 100, max_duration_ms: 250 })).toEqual(['GET /orders', 'POST /payments']);
  });

  it('Time Range: start and end window on the trace start (ms)', async () => {
    expect(await names({ start_time: T0 + 500, end_time: T0 + 2500 })).toEqual(['POST /payments', 'reserve stock']);
    expect(await names({ start_time: T0 + 3000, limit: 1 })).toEqual(['release stock']);
    expect((await list({ end_time: T0 + 999 })).total).toBe(1);
  });

  it('Attributes: key-value pairs with AND logic, each pair on any span of the trace', async () => {
    expect(await names({ attributes: [['tenant', 'acme']] })).toEqual(['POST /payments', 'reserve stock']);
    expect(
      await names({
        attributes: [
          ['tenant', 'acme'],
          ['region', 'eu'],
        ],
      }),
    ).toEqual(['reserve stock']);
    expect(await names({ attributes: [['db.system', 'postgresql']] })).toEqual(['GET /orders']);
    expect(
      await names({
        attributes: [
          ['db.system', 'postgresql'],
          ['function_id', 'orders::create'],
        ],
      }),
    ).toEqual(['GET /orders']);
    expect(
      await names({
        attributes: [
          ['tenant', 'acme'],
          ['region', 'us'],
        ],
      }),
    ).toEqual([]);
    expect(await names({ attributes: { tenant: 'globex' } })).toEqual(['release stock']);
  });

  it('exclude_attributes drops traces carrying a pair', async () => {
    expect(await names({ service_name: 'inventory', exclude_attributes: [['tenant', 'acme']] })).toEqual(['release stock']);
  });

  it('include_internal shows engine built-in traces', async () => {
    expect(await names({ service_name: 'eng' })).toEqual([]);
    expect(await names({ service_name: 'eng', include_internal: true })).toEqual(['call engine::functions::list']);
  });
});

describe('trace list: filters combined (AND), sorting, pagination', () => {
  it('combines filters with AND', async () => {
    expect(await names({ service_name: 'checkout', status: 'Error' })).toEqual(['POST /payments']);
    expect(await names({ service_name: 'checkout', status: 'OK' })).toEqual(['GET /orders']);
    expect(await names({ service_name: 'inventory', attributes: [['tenant', 'globex']], min_duration_ms: 1000 })).toEqual([
      'release stock',
    ]);
    expect(await names({ name: 'stock', end_time: T0 + 2500 })).toEqual(['reserve stock']);
    expect(await names({ trace_id: t.orders, service_name: 'inventory' })).toEqual([]);
    expect(
      await names({
        ...window,
        service_name: 'o',
        name: 's',
        status: 'ok',
        attributes: [['region', 'eu']],
        min_duration_ms: 1,
        max_duration_ms: 10,
      }),
    ).toEqual(['reserve stock']);
  });

  it('paginates with a total counted before pagination', async () => {
    const pages: string[] = [];
    for (let offset = 0; offset < 24; offset += 5) {
      const page = await list({ service_name: 'bulk', offset, limit: 5 });
      expect(page.total).toBe(20);
      expect(page.offset).toBe(offset);
      expect(page.limit).toBe(5);
      pages.push(...page.spans.map((s) => s.name));
    }
    expect(pages).toEqual(bulk.map((_, n) => `bulk job ${String(n).padStart(2, '0')}`));
    const beyond = await list({ service_name: 'bulk', offset: 40, limit: 5 });
    expect(beyond).toMatchObject({ spans: [], total: 20 });
    expect((await list({})).limit).toBe(100);
  });

  it('sorts by start time, duration, service and name in both orders', async () => {
    expect(await names({ service_name: 'bulk', sort_order: 'desc', limit: 2 })).toEqual(['bulk job 19', 'bulk job 18']);
    expect(await names({ ...window, sort_by: 'duration', sort_order: 'desc' })).toEqual([
      'release stock',
      'POST /payments',
      'GET /orders',
      'reserve stock',
    ]);
    expect(await names({ ...window, sort_by: 'duration_ms' })).toEqual(['reserve stock', 'GET /orders', 'POST /payments', 'release stock']);
    expect(await names({ ...window, sort_by: 'name' })).toEqual(['GET /orders', 'POST /payments', 'release stock', 'reserve stock']);
    const byService = await list({ ...window, sort_by: 'service_name', sort_order: 'desc' });
    expect(byService.spans.map((s) => s.service_name)).toEqual(['inventory', 'inventory', 'checkout', 'checkout']);
    const page = await list({ service_name: 'bulk', sort_by: 'duration', sort_order: 'desc', offset: 2, limit: 2 });
    expect(page.spans.map((s) => s.name)).toEqual(['bulk job 17', 'bulk job 16']);
    expect(page.total).toBe(20);
  });

  it('search_all_spans lists every span and filters each span itself', async () => {
    const all = await list({ search_all_spans: true, service_name: 'postgres' });
    expect(all.spans.map((s) => s.name)).toEqual(['db query']);
    expect(await names({ search_all_spans: true, status: 'error' })).toEqual(['POST /payments', 'charge card']);
    expect(await names({ search_all_spans: true, attributes: [['function_id', 'orders::create']] })).toEqual(['execute orders::create']);
    expect((await list({ search_all_spans: true })).total).toBe(spans.length - 1);
  });
});

describe('trace tree, spans and group_by', () => {
  it('builds the tree from parent links', async () => {
    const tree = await client.result<{ roots: Array<{ name: string; children: Array<{ name: string; children: unknown[] }> }> }>(
      'engine::traces::tree',
      { trace_id: t.orders },
    );
    expect(tree.roots).toHaveLength(1);
    expect(tree.roots[0]?.name).toBe('GET /orders');
    expect(tree.roots[0]?.children.map((c) => c.name)).toEqual(['db query', 'execute orders::create']);
    const unknown = await client.result<{ roots: unknown[] }>('engine::traces::tree', { trace_id: hex(16) });
    expect(unknown.roots).toEqual([]);
  });

  it('groups traces by an attribute with a label', async () => {
    const result = await client.result<{ groups: any[] }>('engine::traces::group_by', { attribute: 'tenant', label_attribute: 'region' });
    const byValue = Object.fromEntries(result.groups.map((g) => [g.value, g]));
    expect(Object.keys(byValue).sort()).toEqual(['acme', 'globex']);
    expect(byValue.acme.trace_ids.sort()).toEqual([t.payments, t.reserve].sort());
    // a tenant names whole traces: POST /payments (acme's, failed) and charge card (failed in the
    // same trace, without the attribute) both count
    expect(byValue.acme).toMatchObject({ span_count: 3, error_count: 2, label: 'eu' });
    expect(byValue.globex).toMatchObject({ trace_ids: [t.release], span_count: 1, error_count: 0, duration_ms: 1500 });
    expect(result.groups[0].value).toBe('globex'); // most recent first
    const limited = await client.result<{ groups: any[] }>('engine::traces::group_by', { attribute: 'tenant', limit: 1 });
    expect(limited.groups).toHaveLength(1);
    const session = await client.result<{ groups: any[] }>('engine::traces::group_by', { attribute: 'eng.session.id' });
    expect(session.groups.map((g) => g.trace_ids)).toEqual([[t.orders]]);
    // grouped by function, a group counts only its own failed spans (issue 19 §7): a function in a
    // failed trace that did not fail itself shows none
    const byFunction = await client.result<{ groups: any[] }>('engine::traces::group_by', { attribute: 'function_id' });
    expect(byFunction.groups.find((g) => g.value === 'orders::create')).toMatchObject({ error_count: 0 });
  });

  it('counts only the traces the list filters keep, when a filter is given', async () => {
    const group = (filter: Record<string, unknown>) =>
      client
        .result<{ groups: any[] }>('engine::traces::group_by', { attribute: 'tenant', filter })
        .then((r) => Object.fromEntries(r.groups.map((g) => [g.value, g.trace_ids])));
    // the inventory service's two root spans, one per tenant: acme keeps reserve, loses payments
    expect(await group({ service_name: 'inventory' })).toEqual({ acme: [t.reserve], globex: [t.release] });
    expect(await group({ name: 'release' })).toEqual({ globex: [t.release] });
    expect(await group({ service_name: 'nobody' })).toEqual({});
    // the list's own validation applies
    const bad = await client.call('engine::traces::group_by', { attribute: 'tenant', filter: { min_duration_ms: 5, max_duration_ms: 1 } });
    expect(bad.error).toMatchObject({ code: 'deserialization_error' });
  });
});

describe('log list: each filter of seed §2.7, alone and combined', () => {
  it('lists newest first with the seed fields', async () => {
    const result = await client.result<{ logs: any[]; total: number }>('engine::logs::list', {});
    expect(result.total).toBe(6);
    expect(result.logs.map((l) => l.body)).toEqual([
      'payment retried',
      'entering reserve',
      'cache miss',
      'Payment declined for order 7',
      'slow query detected',
      'user signed in',
    ]);
    const log = result.logs[3];
    expect(log).toMatchObject({
      severity_text: 'ERROR',
      service_name: 'payments',
      trace_id: t.payments,
      timestamp_unix_nano: (T0 + 200) * 1e6,
    });
    expect(typeof log.attributes).toBe('object');
    // a record without severityText is named from its number; `debug` is upper-cased
    expect(result.logs[4].severity_text).toBe('WARN');
    expect(result.logs[2].severity_text).toBe('DEBUG');
  });

  it('severity: one level or several, any case', async () => {
    expect(await logBodies({ severity_text: 'ERROR' })).toEqual(['Payment declined for order 7']);
    expect(await logBodies({ severity_text: 'info' })).toEqual(['payment retried', 'user signed in']);
    expect(await logBodies({ severity_text: ['warn', 'ERROR'] })).toEqual(['Payment declined for order 7', 'slow query detected']);
    expect(await logBodies({ severity_text: ['WARNING'] })).toEqual(['slow query detected']);
    expect(await logBodies({ severity_min: 13 })).toEqual(['Payment declined for order 7', 'slow query detected']);
  });

  it('time range (ms, inclusive)', async () => {
    expect(await logBodies({ start_time: T0 + 150, end_time: T0 + 450 })).toEqual([
      'entering reserve',
      'cache miss',
      'Payment declined for order 7',
    ]);
    expect(await logBodies({ end_time: T0 })).toEqual(['user signed in']);
  });

  it('full-text search over messages, case-insensitive', async () => {
    expect(await logBodies({ search: 'PAYMENT' })).toEqual(['payment retried', 'Payment declined for order 7']);
    expect(await logBodies({ search: 'order 7' })).toEqual(['Payment declined for order 7']);
    expect(await logBodies({ search: 'nothing like it' })).toEqual([]);
  });

  it('trace id, span id and service', async () => {
    expect(await logBodies({ trace_id: t.payments })).toEqual(['payment retried', 'Payment declined for order 7']);
    expect(await logBodies({ trace_id: hex(16) })).toEqual([]);
    expect(await logBodies({ service_name: 'INVENT' })).toEqual(['entering reserve', 'cache miss']);
  });

  it('combined filters, pagination and total', async () => {
    expect(await logBodies({ severity_text: 'INFO', search: 'payment' })).toEqual(['payment retried']);
    expect(await logBodies({ trace_id: t.orders, severity_text: ['WARN'] })).toEqual(['slow query detected']);
    expect(await logBodies({ service_name: 'inventory', start_time: T0 + 350 })).toEqual(['entering reserve']);
    const page = await client.result<{ logs: any[]; total: number }>('engine::logs::list', { offset: 2, limit: 2 });
    expect(page.total).toBe(6);
    expect(page.logs.map((l) => l.body)).toEqual(['cache miss', 'Payment declined for order 7']);
    const filteredPage = await client.result<{ logs: any[]; total: number }>('engine::logs::list', { search: 'e', offset: 1, limit: 1 });
    expect(filteredPage.total).toBe(6);
    expect(filteredPage.logs).toHaveLength(1);
  });

  it("a log's trace id finds its trace", async () => {
    const [declined] = (await client.result<{ logs: any[] }>('engine::logs::list', { severity_text: 'ERROR' })).logs;
    const traces = await list({ trace_id: declined.trace_id });
    expect(traces.spans.map((s) => s.name)).toEqual(['POST /payments']);
  });
});

describe('pending traces and clearing', () => {
  it('Pending: an unanswered call is listed as Pending, alone and with other filters', async () => {
    const executor = await RawClient.worker(engine.busUrl);
    const caller = await RawClient.worker(engine.busUrl);
    clients.push(executor, caller);
    executor.send({ type: 'registerfunction', id: 'q::hang' });
    await waitFor(async () => (await caller.call('engine::functions::info', { function_id: 'q::hang' })).result);
    caller.send({ type: 'invokefunction', invocation_id: crypto.randomUUID(), function_id: 'q::hang', data: {} });
    const invoked = await executor.next((f) => f.type === 'invokefunction');
    expect(invoked.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    // a call still running after 50 ms is stored as a Pending snapshot
    const pending = await waitFor(async () => (await list({ status: 'Pending' })).spans[0]);
    expect(pending).toMatchObject({ name: 'call q::hang', service_name: 'eng', status: 'unset', pending: true });
    // the executor got the pending span's context
    expect(invoked.traceparent).toContain(`${pending?.trace_id}-${pending?.span_id}`);
    expect(await names({ status: 'pending', name: 'hang', service_name: 'eng' })).toEqual(['call q::hang']);
    expect(await names({ status: 'pending', service_name: 'checkout' })).toEqual([]);
    expect(await names({ status: 'ok', name: 'hang' })).toEqual([]);
    // its status is still unset, but a running span belongs to Pending only
    expect(await names({ status: 'unset', name: 'hang' })).toEqual([]);
    // the executor dies: the call ends with invocation_stopped and the span is no longer pending
    await executor.terminate();
    const ended = await waitFor(async () => (await list({ name: 'hang', status: 'error' })).spans[0]);
    expect(ended.pending).toBeUndefined();
  });

  it('clears traces and logs', async () => {
    expect(await client.result('engine::traces::clear', {})).toEqual({ success: true });
    expect((await list({ search_all_spans: true, include_internal: true })).total).toBe(0);
    expect(await client.result('engine::logs::clear', {})).toMatchObject({ success: true });
    expect((await client.result<{ total: number }>('engine::logs::list', {})).total).toBe(0);
  });
});
