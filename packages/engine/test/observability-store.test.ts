import type { StoredSpan } from '@eng/protocol';
import { describe, expect, it } from 'vitest';
import { ObservabilityConfig } from '../src/modules/observability/config.ts';
import { SpanStore } from '../src/modules/observability/span-store.ts';
import { traceSpans, traceTree } from '../src/modules/observability/trace-detail.ts';
import { listTraces } from '../src/modules/observability/trace-query.ts';
import { PENDING_AFTER_MS, Tracer } from '../src/modules/observability/tracer.ts';

// The span store keeps spans compact (flat attributes, per-slot times, packed status) and builds
// its filter postings lazily, when a query first needs them; entries of evicted spans die with
// their slot's generation. These tests pin what that must not change: the records given back,
// roots and parents, filters before and after eviction and replacement, and the tracer's spans.

let nextId = 1;
const id = (chars: number) => (nextId++).toString(16).padStart(chars, '0');
// nanosecond epochs as doubles are exact to 256 ns: steps below are microseconds
const T0 = 1_700_000_000_000 * 1e6;
const US = 1000;

function span(over: Partial<StoredSpan> & { trace_id: string }): StoredSpan {
  return {
    span_id: id(16),
    parent_span_id: null,
    name: 'op',
    kind: 'internal',
    start_time_unix_nano: T0,
    end_time_unix_nano: T0 + 1e6,
    status: 'ok',
    attributes: [],
    service_name: 'svc',
    events: [],
    links: [],
    ...over,
  };
}

const list = (store: SpanStore, input: Parameters<typeof listTraces>[1] = {}) => listTraces(store, { limit: 1000, ...input });
const traceIdsOf = (store: SpanStore, input: Parameters<typeof listTraces>[1] = {}) =>
  list(store, input)
    .spans.map((s) => s.trace_id)
    .sort();

describe('span store', () => {
  it('gives back every field of the stored record', () => {
    const store = new SpanStore(10);
    const full: StoredSpan = {
      trace_id: id(32),
      span_id: id(16),
      parent_span_id: null,
      name: 'GET /x',
      kind: 'server',
      start_time_unix_nano: T0,
      end_time_unix_nano: T0 + 5e6,
      status: 'error',
      status_description: 'E: boom',
      attributes: [
        ['a', '1'],
        ['b', 'two'],
      ],
      service_name: 'Checkout',
      events: [{ name: 'exception', timestamp_unix_nano: T0 + 1, attributes: [['exception.type', 'E']] }],
      links: [{ trace_id: id(32), span_id: id(16), trace_state: 'k=v', attributes: [] }],
      instrumentation_scope_name: 'scope',
      instrumentation_scope_version: '1.2',
      flags: 257,
      trace_state: 'vendor=1',
    };
    store.upsert(structuredClone(full));
    expect(traceSpans(store, full.trace_id)).toEqual([full]);
    // flags past the packed range and a pending span
    const odd = span({ trace_id: id(32), flags: 2 ** 20, pending: true, end_time_unix_nano: 0, status: 'unset' });
    store.upsert(structuredClone(odd));
    const back = traceSpans(store, odd.trace_id)[0] as StoredSpan;
    expect(back.flags).toBe(2 ** 20);
    expect(back.pending).toBe(true);
    expect(back.status).toBe('unset');
    const plain = span({ trace_id: id(32) });
    store.upsert(structuredClone(plain));
    const again = traceSpans(store, plain.trace_id)[0] as StoredSpan;
    expect(again).toEqual(plain);
    expect('flags' in again || 'pending' in again || 'status_description' in again).toBe(false);
  });

  it('keeps roots right when children come first and when a parent is evicted', () => {
    const store = new SpanStore(3);
    const traceId = id(32);
    const rootId = id(16);
    store.upsert(span({ trace_id: traceId, parent_span_id: rootId, name: 'child a', start_time_unix_nano: T0 + 2 * US }));
    // an orphan until its parent arrives
    expect(list(store).spans.map((s) => s.name)).toEqual(['child a']);
    store.upsert(span({ trace_id: traceId, span_id: rootId, name: 'root', start_time_unix_nano: T0 + US }));
    store.upsert(span({ trace_id: traceId, parent_span_id: rootId, name: 'child b', start_time_unix_nano: T0 + 3 * US }));
    expect(list(store).spans.map((s) => [s.name, s.span_count])).toEqual([['root', 3]]);
    const tree = traceTree(store, traceId);
    expect(tree.roots.map((n) => [n.name, n.children.map((c) => c.name)])).toEqual([['root', ['child a', 'child b']]]);
    // the ring is full: the next span evicts the oldest (child a), then the root: child b is a root again
    store.upsert(span({ trace_id: id(32), name: 'other 1', start_time_unix_nano: T0 + 10 * US }));
    expect(list(store).spans.map((s) => [s.name, s.span_count])).toEqual([
      ['root', 2],
      ['other 1', 1],
    ]);
    store.upsert(span({ trace_id: id(32), name: 'other 2', start_time_unix_nano: T0 + 11 * US }));
    expect(store.evicted).toBe(2);
    expect(list(store).spans.map((s) => s.name)).toEqual(['child b', 'other 1', 'other 2']);
    expect(list(store, { search_all_spans: true }).total).toBe(3);
  });

  it('finds spans by service, name and attribute, and forgets evicted ones', () => {
    const store = new SpanStore(50);
    const traces: string[] = [];
    for (let i = 0; i < 50; i++) {
      const traceId = id(32);
      traces.push(traceId);
      store.upsert(
        span({
          trace_id: traceId,
          name: `GET /items/${i % 5}`,
          service_name: `svc-${i % 2}`,
          start_time_unix_nano: T0 + i * US,
          attributes: [
            ['tenant', `t-${i % 3}`],
            ['seq', String(i)],
          ],
        }),
      );
    }
    expect(list(store, { attributes: [['tenant', 't-1']] }).total).toBe(17);
    expect(list(store, { service_name: 'SVC-1' }).total).toBe(25);
    expect(list(store, { name: 'items/3', attributes: [['tenant', 't-0']] }).total).toBe(4);
    expect(traceIdsOf(store, { attributes: [['seq', '7']] })).toEqual([traces[7]]);
    // 30 more spans evict the 30 oldest: the postings built above must not bring them back
    for (let i = 50; i < 80; i++) {
      store.upsert(
        span({ trace_id: id(32), name: 'later', service_name: 'svc-9', start_time_unix_nano: T0 + i, attributes: [['seq', String(i)]] }),
      );
    }
    expect(list(store, { attributes: [['seq', '7']] }).total).toBe(0);
    expect(list(store, { attributes: [['seq', '77']] }).total).toBe(1);
    expect(list(store, { attributes: [['tenant', 't-1']] }).total).toBe(7);
    expect(list(store, { service_name: 'svc-1' }).total).toBe(10);
    expect(list(store, { exclude_attributes: [['tenant', 't-1']] }).total).toBe(43);
    // every slot reused many times over: filters stay exact
    for (let i = 0; i < 500; i++)
      store.upsert(span({ trace_id: id(32), start_time_unix_nano: T0 + 100 + i, attributes: [['seq', String(i % 7)]] }));
    // the 50 kept are i = 450…499, of which 451, 458, …, 493 have i % 7 = 3
    expect(list(store, { attributes: [['seq', '3']] }).total).toBe(7);
    expect(list(store, { attributes: [['tenant', 't-1']] }).total).toBe(0);
  });

  it('re-indexes a pending span that ends with other attributes, before and after a query', () => {
    for (const queryFirst of [false, true]) {
      const store = new SpanStore(100);
      const traceId = id(32);
      const spanId = id(16);
      const pending = span({
        trace_id: traceId,
        span_id: spanId,
        status: 'unset',
        pending: true,
        end_time_unix_nano: 0,
        attributes: [['phase', 'running']],
      });
      store.upsert(pending);
      if (queryFirst) expect(list(store, { attributes: [['phase', 'running']] }).total).toBe(1);
      expect(list(store, { status: 'pending' }).total).toBe(1);
      store.upsert({ ...pending, pending: undefined, status: 'error', end_time_unix_nano: T0 + 9e6, attributes: [['phase', 'done']] });
      expect(list(store, { attributes: [['phase', 'running']] }).total).toBe(0);
      expect(list(store, { attributes: [['phase', 'done']] }).total).toBe(1);
      expect(list(store, { status: 'pending' }).total).toBe(0);
      expect(list(store, { status: 'error' }).total).toBe(1);
      const row = list(store).spans[0];
      expect(row?.duration_ms).toBe(9);
      expect(row?.error_count).toBe(1);
      expect(store.size).toBe(1);
    }
  });

  it('moves a span that changed its start time or parent', () => {
    const store = new SpanStore(10);
    const traceId = id(32);
    const parentId = id(16);
    const spanId = id(16);
    store.upsert(span({ trace_id: traceId, span_id: parentId, name: 'parent', start_time_unix_nano: T0 }));
    store.upsert(span({ trace_id: traceId, span_id: spanId, name: 'moved', start_time_unix_nano: T0 + 50 * US, attributes: [['k', 'v']] }));
    // two roots of one trace (the second has no parent yet): the filter matches the trace, both are listed
    expect(list(store).spans.map((s) => s.name)).toEqual(['parent', 'moved']);
    expect(list(store, { attributes: [['k', 'v']] }).total).toBe(2);
    store.upsert(
      span({
        trace_id: traceId,
        span_id: spanId,
        parent_span_id: parentId,
        name: 'moved',
        start_time_unix_nano: T0 + 5 * US,
        attributes: [['k', 'w']],
      }),
    );
    expect(list(store).spans.map((s) => [s.name, s.span_count])).toEqual([['parent', 2]]);
    expect(list(store, { search_all_spans: true, end_time: (T0 + 10 * US) / 1e6 }).spans.map((s) => s.name)).toEqual(['parent', 'moved']);
    expect(list(store, { attributes: [['k', 'v']] }).total).toBe(0);
    expect(list(store, { attributes: [['k', 'w']] }).total).toBe(1);
    expect(store.size).toBe(2);
  });

  it('handles a trace of many spans (maps by id past 32 members) and out-of-order starts', () => {
    const store = new SpanStore(1000);
    const traceId = id(32);
    const rootId = id(16);
    const ids: string[] = [];
    for (let i = 0; i < 100; i++) {
      const spanId = id(16);
      ids.push(spanId);
      // children arrive newest first, before their root
      store.upsert(
        span({
          trace_id: traceId,
          span_id: spanId,
          parent_span_id: rootId,
          name: `child ${i}`,
          start_time_unix_nano: T0 + (1000 - i) * US,
        }),
      );
    }
    expect(list(store).total).toBe(100);
    store.upsert(span({ trace_id: traceId, span_id: rootId, name: 'root', start_time_unix_nano: T0 }));
    expect(list(store).spans.map((s) => [s.name, s.span_count])).toEqual([['root', 101]]);
    const all = list(store, { search_all_spans: true });
    expect(all.spans[0]?.name).toBe('root');
    expect(all.spans[1]?.name).toBe('child 99');
    expect(all.spans.at(-1)?.name).toBe('child 0');
    expect(traceTree(store, traceId).roots[0]?.children).toHaveLength(100);
    expect(store.get(traceId, ids[42] as string)?.name).toBe('child 42');
  });

  it('evicts the oldest spans to stay within the byte budget', () => {
    const store = new SpanStore(1000, 10_000);
    for (let i = 0; i < 100; i++) store.upsert(span({ trace_id: id(32), start_time_unix_nano: T0 + i * US }), 1_000);
    expect(store.size).toBe(10);
    expect(store.bytes).toBe(10_000);
    expect(list(store).spans[0]?.start_time_unix_nano).toBe(T0 + 90 * US);
  });
});

describe('tracer', () => {
  it('records parent, kind and every attribute, and a Pending snapshot of a long span', async () => {
    const stored: StoredSpan[] = [];
    const tracer = new Tracer(ObservabilityConfig.parse({}), (s) => stored.push(structuredClone(s)));
    const server = tracer.startSpan('GET /orders/:id', {
      kind: 'server',
      attributes: { 'http.request.method': 'GET', 'url.path': '/orders/7', skipped: undefined },
    });
    const child = tracer.startSpan('call orders::get', {
      traceparent: server.traceparent,
      kind: 'server',
      attributes: () => ({ function_id: 'orders::get', 'eng.invocation.id': 'inv-1' }),
    });
    child.setAttribute('eng.invocation.id', 'inv-2');
    child.end({ error: { code: 'E_NOPE', message: 'nope' } });
    await new Promise((r) => setTimeout(r, PENDING_AFTER_MS * 2 + 30));
    server.setAttribute('http.response.status_code', 200);
    server.setAttribute('http.request.method', 'HEAD');
    server.end();
    tracer.stop();
    const [callSpan, snapshot, ended] = stored as [StoredSpan, StoredSpan, StoredSpan];
    expect(callSpan.parent_span_id).toBe(server.spanId);
    expect(callSpan.trace_id).toBe(server.traceId);
    expect(callSpan.attributes).toEqual([
      ['function_id', 'orders::get'],
      ['eng.invocation.id', 'inv-2'],
    ]);
    expect(callSpan.status).toBe('error');
    expect(callSpan.status_description).toBe('E_NOPE: nope');
    expect(callSpan.events[0]?.name).toBe('exception');
    expect(snapshot.pending).toBe(true);
    expect(snapshot.span_id).toBe(server.spanId);
    expect(ended.pending).toBeUndefined();
    expect(ended.kind).toBe('server');
    expect(ended.status).toBe('ok');
    expect(ended.attributes).toEqual([
      ['http.request.method', 'HEAD'],
      ['url.path', '/orders/7'],
      ['http.response.status_code', '200'],
    ]);
    expect(server.traceparent).toBe(`00-${server.traceId}-${server.spanId}-01`);
    expect(new Set([server.traceId.length, server.spanId.length, child.spanId.length])).toEqual(new Set([32, 16]));
  });

  it('keeps events to the span they were added to (spans without events share nothing mutable)', () => {
    const stored: StoredSpan[] = [];
    const tracer = new Tracer(ObservabilityConfig.parse({}), (s) => stored.push(s));
    const a = tracer.startSpan('a');
    const b = tracer.startSpan('b');
    const c = tracer.startSpan('c');
    a.addEvent('retry', { attempt: 2 });
    b.end({ error: 'boom' });
    a.end();
    c.end();
    const d = tracer.startSpan('d');
    d.end();
    tracer.stop();
    const byName = Object.fromEntries(stored.map((s) => [s.name, s]));
    expect(byName.a?.events.map((e) => e.name)).toEqual(['retry']);
    expect(byName.a?.events[0]?.attributes).toEqual([['attempt', '2']]);
    expect(byName.b?.events.map((e) => e.name)).toEqual(['exception']);
    expect(byName.c?.events).toEqual([]);
    expect(byName.d?.events).toEqual([]);
    expect(byName.d?.links).toEqual([]);
  });
});
