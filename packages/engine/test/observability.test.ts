import type { StoredSpan, TraceListSpan, TraceTreeNode } from '@eng/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import { RawClient } from '../../../test/raw-client.ts';
import { hex, killAllWorkers, spawnChainWorker, type WorkerProcess } from './observability-helpers.ts';

// spec: engine-protocol §2.6, §4.3, §5.9, §8, §11 item 17 — real engine; worker A is written with
// iii-sdk 0.22.1, worker B with @eng/sdk, so one trace crosses both SDKs.

type Span = StoredSpan & Partial<Pick<TraceListSpan, 'span_count' | 'duration_ms'>>;
type Node = TraceTreeNode;

let engine: EngineProcess;
let client: RawClient;
let _workerA: WorkerProcess;
let httpUrl: string;
const clients: RawClient[] = [];

beforeAll(async () => {
  engine = await startEngine({
    workersYaml:
      '  - name: eng-http\n    config:\n      port: {{HTTP_PORT}}\n  - name: eng-state\n  - name: iii-observability\n    config:\n      logs_console_output: false\n',
  });
  httpUrl = (engine.addresses.http as { url: string }).url;
  client = await RawClient.worker(engine.busUrl);
  clients.push(client);
  [_workerA] = await Promise.all([spawnChainWorker(engine.busUrl, 'a', 'svc-a'), spawnChainWorker(engine.busUrl, 'b-eng', 'svc-b')]);
  // the http binding of worker A is in place once the route answers
  await waitFor(async () => (await fetch(`${httpUrl}/chain/warmup`)).status === 200, 10_000);
}, 60_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.terminate()));
  await killAllWorkers();
  await engine?.stop();
});

async function call<T = any>(functionId: string, data: unknown = {}): Promise<T> {
  return client.result<T>(functionId, data);
}

function flatten(nodes: Node[], out: Node[] = []): Node[] {
  for (const node of nodes) {
    out.push(node);
    flatten(node.children, out);
  }
  return out;
}

/** Wait until the trace holding `spanName` has its spans from both workers, then return its tree. */
async function treeContaining(traceId: string, names: string[]): Promise<{ roots: Node[]; all: Node[] }> {
  return waitFor(
    async () => {
      const tree = await call<{ roots: Node[] }>('engine::traces::tree', { trace_id: traceId });
      const all = flatten(tree.roots);
      const done = names.every((n) => all.some((s) => s.name === n)) && all.every((s) => !s.pending);
      return done ? { roots: tree.roots, all } : null;
    },
    10_000,
    50,
  );
}

/** Trace ids holding a span whose name contains `spanName`. */
async function traceIdsWith(spanName: string): Promise<Set<string>> {
  const list = await call<{ spans: Span[] }>('engine::traces::list', { search_all_spans: true, name: spanName, limit: 1000 });
  return new Set(list.spans.map((s) => s.trace_id));
}

/** Run `action`, then wait for a trace holding `spanName` that did not exist before. */
async function newTraceWith(spanName: string, action: () => Promise<unknown>): Promise<string> {
  const before = await traceIdsWith(spanName);
  await action();
  return waitFor(async () => [...(await traceIdsWith(spanName))].find((id) => !before.has(id)), 10_000);
}

describe('one trace across the HTTP module and two workers', () => {
  let chainTraceId: string;

  it('links HTTP request → worker A → worker B with services, parents and durations', async () => {
    const res = await fetch(`${httpUrl}/chain/42`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ from: 'a', b: { from: 'b', id: '42' } });

    // the worker's span records its input (0.22.1 payload events): that names this request's trace
    chainTraceId = await waitFor(async () => {
      const list = await call<{ spans: Span[] }>('engine::traces::list', { search_all_spans: true, name: 'execute chain::b', limit: 1000 });
      const span = list.spans.find((s) =>
        s.events.some((e) => e.attributes.some(([k, v]) => (k === 'iii.payload.json' || k === 'eng.payload') && v.includes('"id":"42"'))),
      );
      return span?.trace_id;
    }, 10_000);
    // a service that only takes part in the trace finds it (trace-level service filter, any case)
    const byService = await call<{ spans: Span[] }>('engine::traces::list', { service_name: 'SVC-B', limit: 1000 });
    expect(byService.spans.some((s) => s.trace_id === chainTraceId)).toBe(true);
    const { roots, all } = await treeContaining(chainTraceId, ['execute chain::a', 'execute chain::b']);

    expect(roots).toHaveLength(1);
    const root = roots[0] as Node;
    expect(root.service_name).toBe('eng');
    expect(root.parent_span_id).toBeNull();
    const a = all.find((s) => s.name === 'execute chain::a') as Node;
    const b = all.find((s) => s.name === 'execute chain::b') as Node;
    expect(a.service_name).toBe('svc-a');
    expect(b.service_name).toBe('svc-b');
    // B runs inside A's span; A runs inside the engine's span for the HTTP-triggered call
    expect(b.parent_span_id).toBe(a.span_id);
    const aParent = all.find((s) => s.span_id === a.parent_span_id) as Node;
    expect(aParent.service_name).toBe('eng');
    for (const span of all) expect(span.trace_id).toBe(chainTraceId);
    // durations nest: B slept 30 ms, A waited for B, the engine span waited for A
    const ms = (s: Span) => (s.end_time_unix_nano - s.start_time_unix_nano) / 1e6;
    expect(ms(b)).toBeGreaterThanOrEqual(29);
    expect(ms(a)).toBeGreaterThanOrEqual(ms(b));
    expect(ms(root)).toBeGreaterThanOrEqual(ms(a) - 1);
    expect(all.every((s) => s.status === 'ok')).toBe(true);

    // the root is the HTTP module's server span `<METHOD> <route>`, A's direct parent
    expect(root.name).toBe('GET /chain/:id');
    expect(a.parent_span_id).toBe(root.span_id);
    expect(Object.fromEntries(root.attributes)).toMatchObject({
      'http.request.method': 'GET',
      'http.route': '/chain/:id',
      'http.response.status_code': '200',
      function_id: 'chain::a',
    });

    // the listing row counts the trace's spans
    const listed = await call<{ spans: Span[]; total: number }>('engine::traces::list', { trace_id: chainTraceId });
    expect(listed.total).toBe(1);
    expect(listed.spans[0]?.span_id).toBe(root.span_id);
    expect(listed.spans[0]?.span_count).toBe(all.length);
    const flat = await call<{ spans: Span[] }>('engine::traces::spans', { trace_id: chainTraceId });
    expect(flat.spans.map((s) => s.span_id).sort()).toEqual(all.map((s) => s.span_id).sort());
  });

  it('parents the trace on an incoming W3C traceparent header', async () => {
    const traceId = hex(16);
    const parentId = hex(8);
    const res = await fetch(`${httpUrl}/chain/7`, { headers: { traceparent: `00-${traceId}-${parentId}-01` } });
    expect(res.status).toBe(200);
    const { all } = await treeContaining(traceId, ['execute chain::a', 'execute chain::b']);
    const ids = new Set(all.map((s) => s.span_id));
    const tops = all.filter((s) => !s.parent_span_id || !ids.has(s.parent_span_id));
    expect(tops).toHaveLength(1);
    expect(tops[0]?.parent_span_id).toBe(parentId);
    // its parent is not stored, so it is listed as the trace's root
    const listed = await call<{ spans: Span[] }>('engine::traces::list', { trace_id: traceId });
    expect(listed.spans.map((s) => s.span_id)).toEqual([tops[0]?.span_id]);
  });

  it('a worker log line carries the trace id, and that id finds the trace', async () => {
    const logs = await waitFor(async () => {
      const result = await call<{ logs: any[]; total: number }>('engine::logs::list', { search: 'chain a handling 42' });
      return result.total === 1 ? result.logs : null;
    }, 10_000);
    const log = logs[0];
    expect(log).toMatchObject({ severity_text: 'INFO', severity_number: 9, service_name: 'svc-a', body: 'chain a handling 42' });
    expect(log.attributes['log.data']).toEqual({ order_id: '42' });
    expect(log.trace_id).toBe(chainTraceId);
    const listed = await call<{ spans: Span[]; total: number }>('engine::traces::list', { trace_id: log.trace_id });
    expect(listed.total).toBe(1);
    const byTrace = await call<{ logs: any[] }>('engine::logs::list', { trace_id: chainTraceId });
    expect(byTrace.logs.map((l) => l.body)).toEqual(['chain b done 42', 'chain a handling 42']);
  });

  it('a thrown error marks the spans Error with an exception event', async () => {
    const traceId = await newTraceWith('chain::a_fails', async () => {
      const failed = await client.call('chain::a_fails', {});
      expect((failed.error as { message: string }).message).toContain('card declined');
    });
    const { all } = await treeContaining(traceId, ['execute chain::a_fails', 'execute chain::fail']);
    const engineSpan = all.find((s) => s.name === 'call chain::a_fails') as Node;
    expect(engineSpan.status).toBe('error');
    expect(engineSpan.status_description).toContain('card declined');
    const exception = engineSpan.events.find((e) => e.name === 'exception');
    expect(Object.fromEntries(exception?.attributes ?? [])).toMatchObject({
      'exception.message': expect.stringContaining('card declined'),
    });
    const workerSpan = all.find((s) => s.name === 'execute chain::fail') as Node;
    expect(workerSpan.status).toBe('error');
    expect(workerSpan.service_name).toBe('svc-b');

    const errors = await call<{ spans: Span[] }>('engine::traces::list', { status: 'Error', trace_id: traceId });
    expect(errors.spans).toHaveLength(1);
    const ok = await call<{ spans: Span[] }>('engine::traces::list', { status: 'OK', trace_id: traceId });
    expect(ok.spans).toHaveLength(0);
  });

  it('shows an in-progress call as Pending until it ends', async () => {
    const done = client.call('chain::slow', {});
    const pending = await waitFor(async () => {
      const list = await call<{ spans: Span[] }>('engine::traces::list', { status: 'Pending', name: 'chain::slow' });
      return list.spans[0];
    }, 3000);
    expect(pending).toMatchObject({ name: 'call chain::slow', status: 'unset', pending: true, end_time_unix_nano: 0 });
    expect((await done).result).toEqual({ slow: true });
    const finished = await waitFor(async () => {
      const list = await call<{ spans: Span[] }>('engine::traces::list', { trace_id: pending.trace_id });
      return list.spans[0]?.pending ? null : list.spans[0];
    });
    expect(finished.status).toBe('ok');
    expect(finished.end_time_unix_nano).toBeGreaterThan(finished.start_time_unix_nano);
    const stillPending = await call<{ spans: Span[] }>('engine::traces::list', { status: 'pending', trace_id: pending.trace_id });
    expect(stillPending.spans).toHaveLength(0);
  });

  it('traces module functions under a caller context as internal spans; never engine built-ins', async () => {
    const traceId = hex(16);
    const stored = await client.call('state::get', { scope: 'obs', key: 'k' }, { traceparent: `00-${traceId}-${hex(8)}-01` });
    expect(stored.error).toBeUndefined();
    const hidden = await call<{ total: number }>('engine::traces::list', { trace_id: traceId });
    expect(hidden.total).toBe(0);
    const shown = await call<{ spans: Span[] }>('engine::traces::list', { trace_id: traceId, include_internal: true });
    expect(shown.spans.map((s) => s.name)).toEqual(['call state::get']);
    expect(Object.fromEntries(shown.spans[0]?.attributes ?? [])['eng.function.kind']).toBe('internal');
    // engine::* built-ins (the console's polling) and reading traces never create spans
    const builtinTrace = hex(16);
    await client.call('engine::functions::list', {}, { traceparent: `00-${builtinTrace}-${hex(8)}-01` });
    await client.call('engine::traces::list', {}, { traceparent: `00-${builtinTrace}-${hex(8)}-01` });
    const none = await call<{ total: number }>('engine::traces::list', {
      trace_id: builtinTrace,
      include_internal: true,
      search_all_spans: true,
    });
    expect(none.total).toBe(0);
  });

  it('counts invocations, errors and latency in engine::metrics::list', async () => {
    const metrics = await call<any>('engine::metrics::list', {});
    const m = metrics.engine_metrics;
    expect(m.invocations.by_function['chain::a']).toBeGreaterThanOrEqual(3);
    expect(m.invocations.by_function['chain::b']).toBeGreaterThanOrEqual(2);
    expect(m.invocations.error).toBeGreaterThanOrEqual(2);
    expect(m.invocations.total).toBe(m.invocations.success + m.invocations.error);
    // built-ins (the console's polling) are not application invocations
    expect(Object.keys(m.invocations.by_function).some((id) => id.startsWith('engine::'))).toBe(false);
    expect(m.performance.p50_duration_ms).toBeGreaterThan(0);
    expect(m.performance.p99_duration_ms).toBeGreaterThanOrEqual(m.performance.p50_duration_ms);
    expect(m.performance.max_duration_ms).toBeGreaterThanOrEqual(1400); // chain::slow
    expect(m.workers.active).toBeGreaterThanOrEqual(3);
    expect(m.workers.spawns).toBeGreaterThanOrEqual(3);
    // 15 minutes in 10 s buckets, and every invocation lands in one
    expect(metrics.series.length).toBeGreaterThanOrEqual(90);
    const sum = metrics.series.reduce((n: number, b: { invocations: number }) => n + b.invocations, 0);
    expect(sum).toBe(m.invocations.total);
    const errors = metrics.series.reduce((n: number, b: { errors: number }) => n + b.errors, 0);
    expect(errors).toBe(m.invocations.error);
    const minute = await call<any>('engine::metrics::list', { aggregate_interval: 60 });
    expect(minute.series.length).toBeGreaterThanOrEqual(15);
    expect(minute.series.length).toBeLessThanOrEqual(16);
  });
});

describe('other SDKs and context propagation', () => {
  it('stores an iii-sdk 0.11.6 worker span and its log line in the same trace', async () => {
    await spawnChainWorker(engine.busUrl, 'legacy', 'svc-legacy');
    const traceId = await newTraceWith('legacy::hello', async () => {
      expect(await call('legacy::hello', { name: 'ada' })).toEqual({ hello: 'ada' });
    });
    const { all } = await treeContaining(traceId, ['call legacy::hello']);
    // 0.11.6 names its handler span `call <fn>` (SERVER), like the engine's
    const workerSpan = await waitFor(async () => {
      const tree = await call<{ roots: Node[] }>('engine::traces::tree', { trace_id: traceId });
      return flatten(tree.roots).find((s) => s.service_name === 'svc-legacy');
    }, 10_000);
    const engineSpan = all.find((s) => s.service_name === 'eng') as Node;
    expect(workerSpan.parent_span_id).toBe(engineSpan.span_id);
    const logs = await waitFor(async () => {
      const result = await call<{ logs: any[] }>('engine::logs::list', { search: 'legacy hello ada' });
      return result.logs[0];
    }, 10_000);
    expect(logs).toMatchObject({ service_name: 'svc-legacy', trace_id: traceId, severity_text: 'INFO' });
  });

  it('stores @eng/sdk spans and logs: engine span → execute a → execute b', async () => {
    const { connect } = await import('@eng/sdk');
    const a = connect(engine.busUrl, { name: 'sdk-a', tracing: { serviceName: 'sdk-a' }, reconnect: { maxRetries: 0 } });
    const b = connect(engine.busUrl, { name: 'sdk-b', tracing: { serviceName: 'sdk-b' }, reconnect: { maxRetries: 0 } });
    try {
      await Promise.all([a.ready(), b.ready()]);
      b.registerFunction('engsdk::b', async (input: { n: number }) => ({ doubled: input.n * 2 }));
      a.registerFunction('engsdk::a', async (input: { n: number }, ctx) => {
        ctx.log.info('engsdk a running', { n: input.n });
        return a.trigger({ function_id: 'engsdk::b', payload: { n: input.n } });
      });
      await waitFor(async () => (await client.call('engine::functions::info', { function_id: 'engsdk::a' })).result);
      await waitFor(async () => (await client.call('engine::functions::info', { function_id: 'engsdk::b' })).result);
      const traceId = await newTraceWith('engsdk::a', async () => {
        expect(await call('engsdk::a', { n: 21 })).toEqual({ doubled: 42 });
      });
      const { roots, all } = await treeContaining(traceId, ['execute engsdk::a', 'execute engsdk::b']);
      expect(roots.map((r) => r.name)).toEqual(['call engsdk::a']);
      const spanA = all.find((s) => s.name === 'execute engsdk::a') as Node;
      const spanB = all.find((s) => s.name === 'execute engsdk::b') as Node;
      expect([spanA.service_name, spanB.service_name]).toEqual(['sdk-a', 'sdk-b']);
      expect(spanA.parent_span_id).toBe(roots[0]?.span_id);
      expect(spanB.parent_span_id).toBe(spanA.span_id);
      const log = await waitFor(
        async () => (await call<{ logs: any[] }>('engine::logs::list', { search: 'engsdk a running' })).logs[0],
        10_000,
      );
      expect(log).toMatchObject({ trace_id: traceId, span_id: spanA.span_id, service_name: 'sdk-a', severity_text: 'INFO' });
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('forwards traceparent and baggage to the executor; without one the executor gets the engine span', async () => {
    const executor = await RawClient.worker(engine.busUrl);
    const caller = await RawClient.worker(engine.busUrl);
    clients.push(executor, caller);
    executor.send({ type: 'registerfunction', id: 'ctx::echo' });
    await waitFor(async () => (await caller.call('engine::functions::info', { function_id: 'ctx::echo' })).result);
    const answer = async () => {
      const invoke = await executor.next((f) => f.type === 'invokefunction' && f.function_id === 'ctx::echo');
      executor.send({ type: 'invocationresult', invocation_id: invoke.invocation_id, function_id: 'ctx::echo', result: {} });
      return invoke;
    };
    const traceparent = `00-${hex(16)}-${hex(8)}-01`;
    const [withContext] = await Promise.all([
      answer(),
      caller.call('ctx::echo', {}, { traceparent, baggage: 'tenant=acme,iii.function.id=caller::fn' }),
    ]);
    // 0.22.1: the caller's context is forwarded unchanged; the function-id baggage key follows the call
    expect(withContext.traceparent).toBe(traceparent);
    expect(withContext.baggage).toBe('tenant=acme,iii.function.id=ctx::echo');
    const [without] = await Promise.all([answer(), caller.call('ctx::echo', {}, { baggage: 'tenant=acme' })]);
    expect(without.baggage).toBe('tenant=acme');
    const [, traceId, spanId] = String(without.traceparent).split('-');
    const listed = await call<{ spans: Span[] }>('engine::traces::list', { trace_id: traceId });
    expect(listed.spans.map((s) => [s.name, s.span_id])).toEqual([['call ctx::echo', spanId]]);
  });
});

describe('the trace trigger type', () => {
  it('`trace` sends debounced trace ids for matching spans', async () => {
    const listener = await RawClient.worker(engine.busUrl);
    clients.push(listener);
    listener.send({ type: 'registerfunction', id: 'obs::on_trace' });
    listener.send({
      type: 'registertrigger',
      id: 'trace-b',
      trigger_type: 'trace',
      function_id: 'obs::on_trace',
      config: { service_name: 'svc-b' },
    });
    // the binding is active before the trace it must report is made
    await waitFor(async () => {
      const list = await call<{ registered_triggers: Array<{ id: string; status?: string }> }>('engine::registered-triggers::list', {});
      return list.registered_triggers.some((t) => t.id === 'trace-b' && t.status === 'active');
    }, 30_000);
    const traceId = await newTraceWith('execute chain::b', async () => {
      const res = await fetch(`${httpUrl}/chain/trigger-me`);
      expect(res.status).toBe(200);
    });
    const tick = await listener.next(
      (f) => f.type === 'invokefunction' && f.function_id === 'obs::on_trace' && (f.data as any).trace_ids.includes(traceId),
      30_000,
    );
    expect((tick.data as { trace_ids: string[] }).trace_ids.length).toBeGreaterThanOrEqual(1);
    // the delivery itself is not traced (no feedback loop): no trace holds obs::on_trace
    await new Promise((r) => setTimeout(r, 500));
    const loops = await call<{ total: number }>('engine::traces::list', {
      search_all_spans: true,
      name: 'obs::on_trace',
      include_internal: true,
    });
    expect(loops.total).toBe(0);
  });
});
