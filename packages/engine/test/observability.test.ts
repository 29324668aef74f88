import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import { RawClient } from '../../../test/raw-client.ts';
import { frame, hex, killAllWorkers, spawnChainWorker, type WorkerProcess } from './observability-helpers.ts';

// spec: engine-protocol §2.6, §4.3, §5.8, §5.9, §8, §11 item 17 — real engine, real iii-sdk workers.

interface Span {
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  name: string;
  service_name: string;
  start_time_unix_nano: number;
  end_time_unix_nano: number;
  status: string;
  status_description?: string;
  pending?: boolean;
  attributes: [string, string][];
  events: Array<{ name: string; attributes: [string, string][] }>;
  span_count?: number;
  duration_ms?: number;
}
type Node = Span & { children: Node[] };

let engine: EngineProcess;
let client: RawClient;
let workerA: WorkerProcess;
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
  [workerA] = await Promise.all([spawnChainWorker(engine.busUrl, 'a', 'svc-a'), spawnChainWorker(engine.busUrl, 'b', 'svc-b')]);
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
        s.events.some((e) => e.attributes.some(([k, v]) => k === 'iii.payload.json' && v.includes('"id":"42"'))),
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

    const engineSpan = all.find((s) => s.attributes.some(([k, v]) => k === 'function_id' && v === 'chain::a')) as Node;
    expect(engineSpan.service_name).toBe('eng');
    expect(Object.fromEntries(engineSpan.attributes)).toMatchObject({
      function_id: 'chain::a',
      'faas.invoked_name': 'chain::a',
      'eng.function.kind': 'user',
      'eng.worker.id': workerA.workerId,
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

describe('log and trace trigger types', () => {
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
    await new Promise((r) => setTimeout(r, 100));
    const traceId = await newTraceWith('execute chain::b', async () => {
      const res = await fetch(`${httpUrl}/chain/trigger-me`);
      expect(res.status).toBe(200);
    });
    const tick = await listener.next(
      (f) => f.type === 'invokefunction' && f.function_id === 'obs::on_trace' && (f.data as any).trace_ids.includes(traceId),
      5000,
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
    const health = await call<any>('engine::health::check', {});
    expect(health.status).toBe('healthy');
    expect(health.components.spans.status).toBe('healthy');
    expect(health.components.spans.details.stored_spans).toBeGreaterThan(0);
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
