/**
 * bench/http — an HTTP trigger answered by a worker (engine process + worker process) against
 * plain node:http answering the same JSON, measured in the same run with autocannon (keep-alive,
 * warm-up first, rounds in random order, medians). Budgets (ARCHITECTURE.md): the engine's CPU per
 * request with observability on ≤ 2× node:http's CPU per request, and the engine's spans for one
 * request (CPU with observability on minus off) ≤ 5 µs. Throughput is printed for information: the
 * load generator, the engine and the worker share the machine's cores.
 *
 *   node --import tsx bench/http.ts [--rounds 3] [--seconds 5] [--connections 50] [--worker iii|eng|raw]
 *                                   [--observability both|on|off]
 *
 * `--worker iii` (default) answers with the published iii-sdk 0.22.1, as a user's worker would;
 * `--worker eng` answers with @eng/sdk; `--worker raw` with a bare WebSocket client, to see the
 * engine's own share.
 * `--observability both` (default) runs two engines, one with eng-observability on (as a default
 * engine) and one with it off, so the spans' cost is the difference measured in the same run.
 * The floor (printed for reference, measured in the same rounds): the least any engine built this
 * way can do per request — a minimal node:http server that relays each request as one
 * `invokefunction` WebSocket frame (the §5.2 request fields) to the same bare worker and answers
 * with its result (`--role floor`). What the engine spends above it is its own routing, channels,
 * spans and bookkeeping; a budget below the floor cannot be met by the engine code. A second floor
 * process keeps one span per request the least any engine can (bench/floor-spans.ts): its CPU above
 * the first is the floor under the spans' budget.
 * The same file is the plain server, the floor and the worker when started with `--role plain|floor|worker`.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket, { WebSocketServer } from 'ws';
import { ENG_CLI } from '../test/harness.ts';
import { type FloorRecord, FloorSpanStore } from './floor-spans.ts';
import { fmt, median, spawnTs, stopChild, table } from './lib.ts';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set((process.argv[i] as string).replace(/^--/, ''), process.argv[i + 1] ?? '');
const ROUNDS = Number(args.get('rounds') ?? 3);
const SECONDS = Number(args.get('seconds') ?? 5);
const CONNECTIONS = Number(args.get('connections') ?? 50);
const WORKER = args.get('worker') ?? 'iii';
const OBSERVABILITY = args.get('observability') ?? 'both';
/** Offered load, requests/s over all connections; 0 saturates (each target then runs as fast as it can). */
const RATE = Number(args.get('rate') ?? 0);
const PATH = '/bench/items/42';

interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  errors: number;
  non2xx: number;
  timeouts: number;
}
// autocannon ships no type declarations; this is the part of its API used here
const autocannon = createRequire(import.meta.url)('autocannon') as (options: {
  url: string;
  connections: number;
  duration: number;
  pipelining: number;
  overallRate?: number;
}) => Promise<AutocannonResult>;

/** What both servers answer: the same JSON body. */
const answer = (id: string) => ({ ok: true, id, items: [1, 2, 3] });

async function runPlain(): Promise<void> {
  const server = createServer((req, res) => {
    const id = (req.url ?? '').split('?')[0]?.split('/').pop() ?? '';
    const text = JSON.stringify(answer(id));
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  });
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.stdout.write(`plain: ready ${typeof address === 'object' && address ? address.port : 0}\n`);
  });
}

/**
 * The floor: node:http + one WebSocket frame each way per request, nothing else. With `spans`,
 * it also keeps one span per request the least any engine can (bench/floor-spans.ts: ids, the
 * traceparent sent with the call, one record in a ring of 100,000 and a Map by trace id), so the
 * floor's own on − off difference is the floor under the engine's span budget.
 */
async function runFloor(spans: boolean): Promise<void> {
  const store = spans ? new FloorSpanStore(100_000) : undefined;
  const open = new Map<string, FloorRecord>();
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
  await new Promise((resolve) => wss.once('listening', resolve));
  let worker: WebSocket | undefined;
  const pending = new Map<string, import('node:http').ServerResponse>();
  let next = 0;
  let corked = false;
  wss.on('connection', (ws) => {
    worker = ws;
    ws.on('message', (raw) => {
      const frame = JSON.parse(raw.toString());
      if (frame.type !== 'invocationresult') return;
      const res = pending.get(frame.invocation_id);
      if (!res) return;
      pending.delete(frame.invocation_id);
      const record = open.get(frame.invocation_id);
      if (record && store) {
        open.delete(frame.invocation_id);
        record.attrs.push('http.response.status_code', String(frame.result.status_code));
        store.close(record, 1);
      }
      const text = JSON.stringify(frame.result.body);
      res.writeHead(frame.result.status_code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    });
  });
  const server = createServer((req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const headers: Record<string, string> = {};
    for (const [key, value] of Object.entries(req.headers)) headers[key] = Array.isArray(value) ? value.join(', ') : (value ?? '');
    const invocation_id = String(++next);
    pending.set(invocation_id, res);
    const data = {
      query_params: {},
      path_params: { id: path.slice(path.lastIndexOf('/') + 1) },
      headers,
      path: 'bench/items/:id',
      method: req.method,
      body: null,
      trigger: { type: 'http', path: 'bench/items/:id', method: req.method },
    };
    if (!worker) return;
    // frames of one event-loop turn leave in one write, as the engine sends them (bus/connection.ts)
    if (!corked) {
      corked = true;
      const socket = (worker as unknown as { _socket: import('node:net').Socket })._socket;
      socket.cork();
      setImmediate(() => {
        corked = false;
        socket.uncork();
      });
    }
    let traceparent: string | undefined;
    if (store) {
      const span = store.open(`${req.method} /bench/items/:id`, [
        'http.request.method',
        req.method ?? '',
        'http.route',
        '/bench/items/:id',
        'url.path',
        url,
        'function_id',
        'bench::item',
      ]);
      open.set(invocation_id, span.record);
      traceparent = span.traceparent;
    }
    worker.send(JSON.stringify({ type: 'invokefunction', invocation_id, function_id: 'bench::item', data, traceparent }));
  });
  server.listen(0, '127.0.0.1', () => {
    const http = server.address();
    const ws = wss.address();
    const port = (a: unknown) => (typeof a === 'object' && a ? (a as { port: number }).port : 0);
    process.stdout.write(`floor: ready ${port(http)} ${port(ws)}\n`);
  });
}

async function runWorker(url: string, kind: string): Promise<void> {
  if (kind === 'raw') {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    ws.on('message', (raw) => {
      const frame = JSON.parse(raw.toString());
      if (frame.type !== 'invokefunction') return;
      const result = { status_code: 200, body: answer(frame.data.path_params.id) };
      ws.send(JSON.stringify({ type: 'invocationresult', invocation_id: frame.invocation_id, function_id: frame.function_id, result }));
    });
    await new Promise((resolve) => ws.once('open', resolve));
    ws.send(JSON.stringify({ type: 'registerfunction', id: 'bench::item' }));
    ws.send(
      JSON.stringify({
        type: 'registertrigger',
        id: 'bench-route',
        trigger_type: 'http',
        function_id: 'bench::item',
        config: { api_path: 'bench/items/:id', http_method: 'GET' },
      }),
    );
  } else if (kind === 'eng') {
    const { connect } = await import('@eng/sdk');
    const client = connect(url, { name: 'bench-http' });
    client.registerFunction('bench::item', (req: { path_params: { id: string } }) => ({
      status_code: 200,
      body: answer(req.path_params.id),
    }));
    client.registerTrigger({ type: 'http', function_id: 'bench::item', config: { api_path: 'bench/items/:id', http_method: 'GET' } });
    await client.ready();
  } else {
    const { registerWorker } = await import('iii-sdk-0.22.1');
    const iii = registerWorker(url, { workerName: 'bench-http', otel: { enabled: false }, enableMetricsReporting: false } as never);
    iii.registerFunction('bench::item', async (req: { path_params: { id: string } }) => ({
      status_code: 200,
      body: answer(req.path_params.id),
    }));
    iii.registerTrigger({ type: 'http', function_id: 'bench::item', config: { api_path: 'bench/items/:id', http_method: 'GET' } });
  }
  process.stdout.write('worker: ready\n');
}

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** CPU the server side (the listed processes) spent per request, µs. */
  cpuUs: number;
  /** The same, per listed process. */
  cpuUsEach: number[];
}

/** User+system CPU of a process so far, ms (Linux /proc; 0 elsewhere). */
function cpuMs(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) * 10; // utime + stime, in 100 Hz ticks
  } catch {
    return 0;
  }
}

async function load(url: string, seconds: number, pids: Array<number | undefined> = []): Promise<Figures> {
  const before = pids.map(cpuMs);
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: seconds,
    pipelining: 1,
    ...(RATE > 0 ? { overallRate: RATE } : {}),
  });
  const spentEach = pids.map((pid, i) => cpuMs(pid) - (before[i] as number));
  const spent = spentEach.reduce((a, b) => a + b, 0);
  const perRequest = (ms: number) => (result.requests.total > 0 ? (ms * 1000) / result.requests.total : Number.NaN);
  return {
    cpuUsEach: spentEach.map(perRequest),
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx + result.timeouts,
    cpuUs: perRequest(spent),
  };
}

async function waitForRoute(url: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const res = await fetch(url).catch(() => null);
    if (res?.status === 200) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`route ${url} never answered 200`);
}

interface Stack {
  label: string;
  observability: 'on' | 'off';
  engine: Awaited<ReturnType<typeof spawnTs>>;
  worker: Awaited<ReturnType<typeof spawnTs>>;
  url: string;
  runs: Figures[];
}

/** An engine (observability on or off) with its worker answering the route. */
async function startStack(observability: 'on' | 'off'): Promise<Stack> {
  const dir = mkdtempSync(join(tmpdir(), 'eng-bench-http-'));
  const config = join(dir, 'config.yaml');
  const obs = observability === 'off' ? '  - name: eng-observability\n    config:\n      enabled: false\n' : '';
  writeFileSync(
    config,
    `workers:\n  - name: eng-worker-manager\n    config:\n      port: 0\n  - name: eng-http\n    config:\n      port: 0\n${obs}`,
  );
  const engine = await spawnTs(ENG_CLI, ['start', '-c', config, '--data-dir', join(dir, 'data')], /eng: ready (.*)\n/);
  const addresses = JSON.parse(engine.match[1] as string) as { bus: { url: string }; http: { url: string } };
  const worker = await spawnTs('bench/http.ts', ['--role', 'worker', '--url', addresses.bus.url, '--kind', WORKER], /worker: ready/, {
    OTEL_ENABLED: 'false',
  });
  return { label: `observability ${observability}`, observability, engine, worker, url: `${addresses.http.url}${PATH}`, runs: [] };
}

/** Fisher–Yates: each round visits the targets in a fresh random order, so none is always first. */
function shuffled<T>(items: T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

async function main(): Promise<void> {
  const role = args.get('role');
  if (role === 'plain') return runPlain();
  if (role === 'floor') return runFloor(args.get('spans') === '1');
  if (role === 'worker') return runWorker(args.get('url') as string, args.get('kind') ?? 'iii');

  const plain = await spawnTs('bench/http.ts', ['--role', 'plain'], /plain: ready (\d+)/);
  const plainUrl = `http://127.0.0.1:${plain.match[1]}${PATH}`;
  const floor = await spawnTs('bench/http.ts', ['--role', 'floor'], /floor: ready (\d+) (\d+)/);
  const floorWorker = await spawnTs(
    'bench/http.ts',
    ['--role', 'worker', '--url', `ws://127.0.0.1:${floor.match[2]}`, '--kind', 'raw'],
    /worker: ready/,
  );
  const floorUrl = `http://127.0.0.1:${floor.match[1]}${PATH}`;
  // the same floor keeping one span per request, for the floor of the spans' on − off difference
  const floorSpans = await spawnTs('bench/http.ts', ['--role', 'floor', '--spans', '1'], /floor: ready (\d+) (\d+)/);
  const floorSpansWorker = await spawnTs(
    'bench/http.ts',
    ['--role', 'worker', '--url', `ws://127.0.0.1:${floorSpans.match[2]}`, '--kind', 'raw'],
    /worker: ready/,
  );
  const floorSpansUrl = `http://127.0.0.1:${floorSpans.match[1]}${PATH}`;
  const floorSpansRuns: Figures[] = [];
  const modes: Array<'on' | 'off'> = OBSERVABILITY === 'both' ? ['on', 'off'] : [OBSERVABILITY === 'off' ? 'off' : 'on'];
  const stacks: Stack[] = [];
  for (const mode of modes) stacks.push(await startStack(mode));
  const plainRuns: Figures[] = [];
  const floorRuns: Figures[] = [];

  try {
    for (const stack of stacks) {
      await waitForRoute(stack.url);
      const same = JSON.stringify(await (await fetch(stack.url)).json()) === JSON.stringify(await (await fetch(plainUrl)).json());
      if (!same) throw new Error('the two servers do not answer the same JSON');
    }
    await waitForRoute(floorUrl);
    await waitForRoute(floorSpansUrl);
    process.stderr.write('warm-up… ');
    await load(plainUrl, 2);
    await load(floorUrl, 2);
    await load(floorSpansUrl, 2);
    for (const stack of stacks) await load(stack.url, 2);
    for (let round = 1; round <= ROUNDS; round++) {
      process.stderr.write(`round ${round}/${ROUNDS}: `);
      for (const target of shuffled<Stack | 'plain' | 'floor' | 'floorspans'>(['plain', 'floor', 'floorspans', ...stacks])) {
        if (target === 'floorspans') {
          process.stderr.write('floor with spans… ');
          floorSpansRuns.push(await load(floorSpansUrl, SECONDS, [floorSpans.child.pid, floorSpansWorker.child.pid]));
        } else if (target === 'plain') {
          process.stderr.write('node:http… ');
          plainRuns.push(await load(plainUrl, SECONDS, [plain.child.pid]));
        } else if (target === 'floor') {
          process.stderr.write('floor… ');
          floorRuns.push(await load(floorUrl, SECONDS, [floor.child.pid, floorWorker.child.pid]));
        } else {
          process.stderr.write(`${target.label}… `);
          target.runs.push(await load(target.url, SECONDS, [target.engine.child.pid, target.worker.child.pid]));
        }
      }
      process.stderr.write('\n');
    }
    const summary = (runs: Figures[]) => ({
      rps: median(runs.map((r) => r.rps)),
      p50: median(runs.map((r) => r.p50)),
      p99: median(runs.map((r) => r.p99)),
      errors: runs.reduce((n, r) => n + r.errors, 0),
      cpuUs: median(runs.map((r) => r.cpuUs)),
      engineUs: median(runs.map((r) => r.cpuUsEach[0] ?? Number.NaN)),
      workerUs: median(runs.map((r) => r.cpuUsEach[1] ?? Number.NaN)),
    });
    const p = summary(plainRuns);
    const workerName = { raw: 'bare WebSocket worker', eng: '@eng/sdk worker' }[WORKER] ?? 'iii-sdk 0.22.1 worker';
    console.log(
      `\nbench/http — GET ${PATH} (medians of ${ROUNDS} rounds × ${SECONDS}s, ${CONNECTIONS} keep-alive connections, autocannon, random order per round)\n`,
    );
    const rows = [
      {
        target: 'plain node:http (baseline)',
        'req/s': fmt(p.rps, 0),
        'p50 ms': fmt(p.p50, 1),
        'p99 ms': fmt(p.p99, 1),
        'server CPU µs/req': fmt(p.cpuUs, 0),
        'engine CPU µs/req': '',
        'engine/node:http CPU': '',
        errors: p.errors,
      },
    ];
    const f = summary(floorRuns);
    rows.push({
      target: 'floor: node:http + one ws frame each way → bare worker',
      'req/s': fmt(f.rps, 0),
      'p50 ms': fmt(f.p50, 1),
      'p99 ms': fmt(f.p99, 1),
      'server CPU µs/req': `${fmt(f.cpuUs, 0)} (relay ${fmt(f.engineUs, 0)} + worker ${fmt(f.workerUs, 0)})`,
      'engine CPU µs/req': fmt(f.engineUs, 1),
      'engine/node:http CPU': `${fmt(f.engineUs / p.cpuUs, 2)}×`,
      errors: f.errors,
    });
    const fs = summary(floorSpansRuns);
    rows.push({
      target: 'floor with spans: the same + one span per request kept (floor-spans.ts)',
      'req/s': fmt(fs.rps, 0),
      'p50 ms': fmt(fs.p50, 1),
      'p99 ms': fmt(fs.p99, 1),
      'server CPU µs/req': `${fmt(fs.cpuUs, 0)} (relay ${fmt(fs.engineUs, 0)} + worker ${fmt(fs.workerUs, 0)})`,
      'engine CPU µs/req': fmt(fs.engineUs, 1),
      'engine/node:http CPU': `${fmt(fs.engineUs / p.cpuUs, 2)}×`,
      errors: fs.errors,
    });
    const engineCpu: Record<string, number> = {};
    for (const stack of stacks) {
      const e = summary(stack.runs);
      engineCpu[stack.observability] = e.engineUs;
      rows.push({
        target: `eng-http → ${workerName}, ${stack.label}`,
        'req/s': fmt(e.rps, 0),
        'p50 ms': fmt(e.p50, 1),
        'p99 ms': fmt(e.p99, 1),
        'server CPU µs/req': `${fmt(e.cpuUs, 0)} (engine ${fmt(e.engineUs, 0)} + worker ${fmt(e.workerUs, 0)})`,
        'engine CPU µs/req': fmt(e.engineUs, 1),
        'engine/node:http CPU': `${fmt(e.engineUs / p.cpuUs, 2)}×`,
        errors: e.errors,
      });
    }
    console.log(table(rows));
    console.log('');
    let over = false;
    if (engineCpu.on !== undefined) {
      const ratio = engineCpu.on / p.cpuUs;
      over ||= ratio > 2;
      console.log(
        `engine CPU per request, observability on: ${fmt(ratio, 2)}× node:http's   budget ≤ 2× ${ratio <= 2 ? 'OK' : 'OVER budget'}`,
      );
      console.log(
        `  floor (node:http + a ws frame each way, measured alongside): ${fmt(f.engineUs / p.cpuUs, 2)}× node:http's; the engine spends ${fmt(engineCpu.on - f.engineUs, 1)} µs/request above it (${fmt(engineCpu.on / f.engineUs, 2)}× the floor)`,
      );
    }
    if (engineCpu.on !== undefined && engineCpu.off !== undefined) {
      const spans = engineCpu.on - engineCpu.off;
      over ||= spans > 5;
      console.log(`the engine's spans per request (on − off): ${fmt(spans, 1)} µs   budget ≤ 5 µs ${spans <= 5 ? 'OK' : 'OVER budget'}`);
      console.log(
        `  floor (the floor relay keeping one span per request, with − without): ${fmt(fs.engineUs - f.engineUs, 1)} µs; the engine's spans cost ${fmt(spans - (fs.engineUs - f.engineUs), 1)} µs above it`,
      );
    }
    if (over) process.exitCode = 1;
    for (const stack of stacks) {
      const ratio = summary(stack.runs).rps / p.rps;
      console.log(`throughput (for information), ${stack.label}: ${fmt(ratio * 100, 0)}% of node:http's requests/s`);
    }
    console.log(
      `load average during the run: ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')} on ${availableParallelism()} cores`,
    );
  } finally {
    for (const stack of stacks) {
      await stopChild(stack.worker.child);
      await stopChild(stack.engine.child);
    }
    await stopChild(floorSpansWorker.child);
    await stopChild(floorSpans.child);
    await stopChild(floorWorker.child);
    await stopChild(floor.child);
    await stopChild(plain.child);
  }
}

await main();
