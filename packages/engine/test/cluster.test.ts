/**
 * Several engines on one Redis act as one (issue 27 item 3): a real redis-server and three engines
 * (eng-cluster) on loopback, iii-sdk 0.22.1 and @eng/sdk workers spread over them. A worker on one
 * engine calls a function whose only worker is on another and gets its result or its error as a
 * local call would; the trace id crosses the hop; every engine lists the cluster's functions with
 * where they run; an HTTP route registered on one engine answers on all three; a cron trigger bound
 * on every engine fires once per tick; `kill -9` of an engine ends its calls in flight at once with
 * invocation_stopped and the next call goes to another engine serving the function (or fails
 * naming it).
 */

import { connect, type EngClient } from '@eng/sdk';
import { http } from '@iii-dev/helpers/http';
import { registerWorker } from 'iii-sdk-0.22.1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import { type RedisProcess, startRedis } from '../../../test/redis.ts';

type IiiWorker = ReturnType<typeof registerWorker>;
type FunctionRow = { function_id: string; engine_id?: string; engines?: string[]; remote?: boolean; worker_name: string };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const iiiWorker = (url: string, name: string): IiiWorker =>
  registerWorker(url, { workerName: name, otel: { enabled: false }, enableMetricsReporting: false } as never);

const ENGINE_IDS = ['e1', 'e2', 'e3'] as const;

/** e1 also has an RBAC bus: its callers may call what its rules expose, wherever it runs. */
const RBAC_BUS = [
  '  - name: eng-worker-manager#rbac',
  '    config:',
  '      port: {{RBAC_PORT}}',
  '      rbac:',
  '        expose_functions:',
  '          - match("math::add")',
  '          - metadata:',
  '              cluster_public: true',
  '',
].join('\n');

function clusterYaml(redisUrl: string, engineId: string): string {
  return [
    ...(engineId === 'e1' ? [RBAC_BUS] : []),
    '  - name: eng-http',
    '    config:',
    '      port: {{HTTP_PORT}}',
    // e1's requests end after 3 s: the deadline test below waits for it
    ...(engineId === 'e1' ? ['      default_timeout: 3000'] : []),
    '  - name: eng-cron',
    '    config:',
    '      adapter:',
    '        name: redis',
    '        config:',
    `          redis_url: ${redisUrl}`,
    '  - name: eng-observability',
    '    config:',
    '      logs_console_output: false',
    '  - name: eng-cluster',
    '    config:',
    `      redis_url: ${redisUrl}`,
    `      engine_id: ${engineId}`,
    '      heartbeat_ms: 200',
    '      ttl_ms: 1000',
    '      check_ms: 100',
    '',
  ].join('\n');
}

let redis: RedisProcess;
const engines: Record<string, EngineProcess> = {};
const iii: IiiWorker[] = [];
let caller: EngClient; // @eng/sdk on e1
let tracer2: EngClient; // @eng/sdk on e2
let w2: IiiWorker; // iii-sdk on e2
let w3: IiiWorker; // iii-sdk on e3
/** Calls of job::hold that reached e3's worker (they never answer). */
let held = 0;
/** What slow::wait on e2 saw: started, and the reason its signal aborted with. */
const waits: Array<{ started: number; aborted?: string }> = [];

const httpUrl = (id: string, path: string) => `http://127.0.0.1:${engines[id]?.ports.HTTP}/${path}`;
const list = (client: EngClient) =>
  client.call<{ functions: FunctionRow[] }>('engine::functions::list', {}).then((r) => new Map(r.functions.map((f) => [f.function_id, f])));

beforeAll(async () => {
  redis = await startRedis();
  const started = await Promise.all(ENGINE_IDS.map((id) => startEngine({ workersYaml: clusterYaml(redis.url, id) })));
  ENGINE_IDS.forEach((id, i) => {
    engines[id] = started[i] as EngineProcess;
  });

  w2 = iiiWorker(engines.e2!.busUrl, 'math-e2');
  iii.push(w2);
  w2.registerFunction('math::add', async (input: { a: number; b: number }) => ({ c: input.a + input.b }));
  w2.registerFunction('math::fail', async () => {
    throw new Error('sku ABC-1 is out of stock');
  });
  w2.registerFunction('dup::where', async () => ({ engine: 'e2' }));
  w2.registerFunction('pub::echo', async (input: unknown) => ({ echoed: input }), { metadata: { cluster_public: true } });
  w2.registerFunction('greet::hello', async (req: { path_params: { name: string } }) => ({
    status_code: 200,
    headers: { 'x-served-by': 'e2' },
    body: { hello: req.path_params.name },
  }));
  w2.registerTrigger({ type: 'http', function_id: 'greet::hello', config: { api_path: 'hello/:name', http_method: 'GET' } });
  // a handler that streams its answer, and one that reads a raw body: through the request's channels
  w2.registerFunction(
    'stream::download',
    http(async (_req: unknown, res: any) => {
      res.status(201);
      res.headers({ 'content-type': 'text/plain', 'x-streamed': 'yes' });
      res.stream.write(Buffer.from('hello '));
      await sleep(50);
      res.stream.end(Buffer.from('world'));
    }) as never,
  );
  w2.registerTrigger({ type: 'http', function_id: 'stream::download', config: { api_path: 'download', http_method: 'GET' } });
  w2.registerFunction('items::upload', async (req: any) => {
    const raw = (await req.request_body.readAll()) as Buffer;
    return { status_code: 201, body: { bytes: raw.length, head: raw.subarray(0, 5).toString('utf8') } };
  });
  w2.registerTrigger({ type: 'http', function_id: 'items::upload', config: { api_path: 'upload', http_method: 'POST' } });

  w3 = iiiWorker(engines.e3!.busUrl, 'jobs-e3');
  iii.push(w3);
  w3.registerFunction('dup::where', async () => ({ engine: 'e3' }));
  w3.registerFunction('job::hold', () => {
    held++;
    return new Promise(() => {}); // runs until its engine dies
  });

  tracer2 = connect(engines.e2!.busUrl, { name: 'tracer-e2' });
  tracer2.registerFunction('trace::probe', (_input, ctx) => ({ traceparent: ctx.traceparent }));
  tracer2.registerFunction('trace::route', (_input, ctx) => ({ status_code: 200, body: { traceparent: ctx.traceparent } }));
  tracer2.registerTrigger({ type: 'http', function_id: 'trace::route', config: { api_path: 'trace/probe', http_method: 'GET' } });
  // runs until its call is cancelled (ctx.signal), or for a minute
  tracer2.registerFunction('slow::wait', (_input, ctx) => {
    const seen: { started: number; aborted?: string } = { started: Date.now() };
    waits.push(seen);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve({ finished: true }), 60_000);
      ctx.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        seen.aborted = String(ctx.signal.reason?.message ?? ctx.signal.reason);
        resolve({ finished: false });
      });
    });
  });
  tracer2.registerTrigger({ type: 'http', function_id: 'slow::wait', config: { api_path: 'slow', http_method: 'GET' } });
  await tracer2.ready();

  caller = connect(engines.e1!.busUrl, { name: 'caller-e1' });
  await caller.ready();
  // every function and route of e2 and e3 has reached e1
  await waitFor(async () => {
    const fns = await list(caller);
    return [
      'math::add',
      'math::fail',
      'pub::echo',
      'stream::download',
      'items::upload',
      'greet::hello',
      'trace::route',
      'job::hold',
      'slow::wait',
    ].every((id) => fns.has(id)) && fns.get('dup::where')?.engines?.length === 2
      ? fns
      : null;
  }, 15_000);
}, 90_000);

afterAll(async () => {
  for (const w of iii) await w.shutdown().catch(() => {});
  await caller?.close();
  await tracer2?.close();
  for (const engine of Object.values(engines)) await engine.stop();
  await redis?.stop();
});

describe('calls routed between engines', () => {
  it('a worker on e1 calls a function whose only worker is on e2 and gets its result', async () => {
    await expect(caller.call('math::add', { a: 2, b: 3 })).resolves.toEqual({ c: 5 });
    const many = await Promise.all(Array.from({ length: 50 }, (_, i) => caller.call<{ c: number }>('math::add', { a: i, b: 1 })));
    expect(many.map((r) => r.c)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
  });

  it('an error comes back with the code, message and stack a local caller gets', async () => {
    const w1 = iiiWorker(engines.e1!.busUrl, 'iii-caller-e1');
    iii.push(w1);
    const remote = await w1.trigger({ function_id: 'math::fail', payload: {} }).catch((e: unknown) => e);
    const local = await w2.trigger({ function_id: 'math::fail', payload: {} }).catch((e: unknown) => e);
    expect(remote).toMatchObject({ code: 'invocation_failed', message: 'invocation_failed: sku ABC-1 is out of stock' });
    expect(remote).toMatchObject({ code: (local as { code: string }).code, message: (local as { message: string }).message });
    expect((remote as { stacktrace?: string }).stacktrace).toContain('sku ABC-1 is out of stock');
    // a function no engine serves: the usual not-found, naming it
    await expect(w1.trigger({ function_id: 'nobody::home', payload: {} })).rejects.toMatchObject({
      code: 'function_not_found',
      message: 'function_not_found: Function nobody::home not found',
    });
  });

  it('the trace id crosses the hop: the function on e2 runs in the caller trace', async () => {
    const trace = 'ab'.repeat(16);
    const { traceparent } = await caller.call<{ traceparent: string }>(
      'trace::probe',
      {},
      { traceparent: `00-${trace}-${'01'.repeat(8)}-01` },
    );
    expect(traceparent.split('-')[1]).toBe(trace);

    // and an HTTP request on e1 for e2's route: e1's server span and e2's handler share one trace
    const httpTrace = 'cd'.repeat(16);
    const res = await fetch(httpUrl('e1', 'trace/probe'), { headers: { traceparent: `00-${httpTrace}-${'02'.repeat(8)}-01` } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { traceparent: string }).traceparent.split('-')[1]).toBe(httpTrace);
    const spans = await waitFor(async () => {
      const r = await caller.call<{ spans: Array<{ trace_id: string; name: string }> }>('engine::traces::list', { trace_id: httpTrace });
      return r.spans.length ? r.spans : null;
    });
    expect(spans.map((s) => s.name)).toContain('GET /trace/probe');
  });

  it('an RBAC bus decides what its callers may call on other engines as it does locally: no wider, no narrower', async () => {
    const limited = connect(`ws://127.0.0.1:${engines.e1!.ports.RBAC}`, { name: 'rbac-caller-e1' });
    try {
      await limited.ready();
      // exposed by name, and by the metadata e2's worker registered (the rule reads it across the hop)
      await expect(limited.call('math::add', { a: 1, b: 1 })).resolves.toEqual({ c: 2 });
      await expect(limited.call('pub::echo', { x: 1 })).resolves.toMatchObject({ echoed: { x: 1 } });
      // not exposed here: refused on e1, whichever engine serves it
      await expect(limited.call('dup::where', {})).rejects.toMatchObject({ code: 'FORBIDDEN' });
      await expect(limited.call('math::fail', {})).rejects.toMatchObject({ code: 'FORBIDDEN' });
    } finally {
      await limited.close();
    }
  });

  it("every engine's function list shows the cluster's functions and where they run", async () => {
    for (const id of ENGINE_IDS) {
      const client = connect(engines[id]!.busUrl, { name: `lister-${id}` });
      await client.ready();
      const fns = await list(client);
      await client.close();
      const add = fns.get('math::add');
      expect(add).toMatchObject({ engine_id: 'e2', remote: id !== 'e2', worker_name: 'math-e2' });
      expect(fns.get('job::hold')).toMatchObject({ engine_id: 'e3', remote: id !== 'e3' });
      if (id === 'e1') expect(fns.get('dup::where')).toMatchObject({ remote: true, engines: ['e2', 'e3'] });
    }
  });

  it('an HTTP route registered on e2 answers on every engine', async () => {
    for (const id of ENGINE_IDS) {
      const res = await waitFor(async () => {
        const r = await fetch(httpUrl(id, 'hello/ann'));
        return r.status === 200 ? r : null;
      }, 10_000);
      expect(res.headers.get('x-served-by')).toBe('e2');
      expect(await res.json()).toEqual({ hello: 'ann' });
    }
  });

  it("a handler on e2 streams its answer, and reads a raw body, for a request e1 took (the request's channels are relayed)", async () => {
    await waitFor(async () => (await fetch(httpUrl('e1', 'download'))).status === 201, 10_000);
    const streamed = await fetch(httpUrl('e1', 'download'));
    expect(streamed.status).toBe(201);
    expect(streamed.headers.get('x-streamed')).toBe('yes');
    expect(await streamed.text()).toBe('hello world');

    const body = Buffer.alloc(300_000, 'x');
    body.write('start', 0);
    const uploaded = await fetch(httpUrl('e1', 'upload'), { method: 'POST', headers: { 'content-type': 'text/plain' }, body });
    expect(uploaded.status).toBe(201);
    expect(await uploaded.json()).toEqual({ bytes: 300_000, head: 'start' });
  });
});

describe('cancels and deadlines cross the hop', () => {
  const busy = async (client: EngClient) => {
    const r = await client.call<{ workers: Array<{ name?: string; active_invocations: number }> }>('engine::workers::list', {});
    return r.workers.find((w) => w.name === 'tracer-e2')?.active_invocations;
  };

  it("a caller on e1 cancels a call running on e2: it ends at once, and e2's worker sees its signal abort", async () => {
    waits.length = 0;
    const controller = new AbortController();
    const call = caller.call('slow::wait', {}, { signal: controller.signal, timeoutMs: 30_000 }).catch((e: unknown) => e);
    await waitFor(() => waits.length > 0, 5000);
    const cancelledAt = Date.now();
    controller.abort(new Error('user pressed stop'));
    expect(await call).toMatchObject({ code: 'invocation_cancelled' });
    // the function on the other engine stops too: its ctx.signal aborts with the caller's reason
    await waitFor(() => waits[0]?.aborted !== undefined, 5000);
    expect(Date.now() - cancelledAt).toBeLessThan(3000);
    expect(waits[0]?.aborted).toContain('user pressed stop');
    expect(await busy(tracer2)).toBe(0);
  });

  it("a request's deadline on e1 ends the call on e2 too: its worker is not left busy", async () => {
    waits.length = 0;
    await waitFor(async () => {
      const r = await fetch(httpUrl('e1', 'hello/x'));
      return r.status === 200;
    }, 10_000);
    const started = Date.now();
    const res = await fetch(httpUrl('e1', 'slow'));
    expect(res.status).toBe(504); // e1's default_timeout: 3 s
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(waits).toHaveLength(1);
    // e2 ran the call under the deadline e1 gave it: the call is over there as well (before this
    // change e2 waited on its worker forever and the worker stayed busy)
    expect(await waitFor(async () => ((await busy(tracer2)) === 0 ? true : null), 5000)).toBe(true);
  });
});

describe('cron across the cluster', () => {
  it('a cron trigger bound on all three engines fires once per tick', async () => {
    const fired: Array<{ engine: string; scheduled: string }> = [];
    for (const id of ENGINE_IDS) {
      const w = iiiWorker(engines[id]!.busUrl, `cron-${id}`);
      iii.push(w);
      w.registerFunction('tick::count', async (input: { scheduled_time: string }) => {
        fired.push({ engine: id, scheduled: input.scheduled_time });
        return null;
      });
      w.registerTrigger({ type: 'cron', function_id: 'tick::count', config: { expression: '* * * * * *' } });
    }
    // let all three bindings settle, then count over a few seconds
    await sleep(1500);
    fired.length = 0;
    await sleep(4200);
    const snapshot = [...fired];
    const ticks = new Set(snapshot.map((f) => f.scheduled));
    expect(ticks.size).toBeGreaterThanOrEqual(3);
    expect(snapshot).toHaveLength(ticks.size); // no tick fired twice
  }, 20_000);
});

describe('an engine dies', () => {
  it('kill -9: its calls in flight fail at once with invocation_stopped; the next call goes to another engine or names the function', async () => {
    // the other engines' route round robin spreads dup::where over e2 and e3 while both live
    const before = new Set<string>();
    for (let i = 0; i < 6; i++) before.add((await caller.call<{ engine: string }>('dup::where', {})).engine);
    expect(before).toEqual(new Set(['e2', 'e3']));

    const inFlight = caller.call('job::hold', {}, { timeoutMs: 20_000 }).catch((e: unknown) => e);
    await waitFor(() => held > 0, 5000);
    const killedAt = Date.now();
    await engines.e3!.kill('SIGKILL');
    const err = await inFlight;
    const after = Date.now() - killedAt;
    expect(err).toMatchObject({ code: 'invocation_stopped' });
    expect(after).toBeLessThan(1500); // the check runs every 100 ms here; SDK timeout would be 20 s

    for (let i = 0; i < 6; i++) await expect(caller.call('dup::where', {})).resolves.toEqual({ engine: 'e2' });
    const gone = await caller.call('job::hold', {}).catch((e: unknown) => e);
    expect(gone).toMatchObject({ code: 'function_not_found' });
    expect(String((gone as Error).message)).toContain('job::hold');
    const fns = await list(caller);
    expect(fns.get('dup::where')).toMatchObject({ engine_id: 'e2', engines: ['e2'] });
    expect(fns.has('job::hold')).toBe(false);
  }, 30_000);
});
