/**
 * bench/http — an HTTP trigger answered by a worker (engine process + worker process) against
 * plain node:http answering the same JSON, measured in the same run with autocannon (keep-alive,
 * warm-up first, alternating rounds, medians). Budget (ARCHITECTURE.md): ≥ 50% of node:http's
 * requests/s.
 *
 *   node --import tsx bench/http.ts [--rounds 3] [--seconds 5] [--connections 50] [--worker iii|eng|raw]
 *                                   [--observability on|off]
 *
 * `--worker iii` (default) answers with the published iii-sdk 0.22.1, as a user's worker would;
 * `--worker eng` answers with @eng/sdk; `--worker raw` with a bare WebSocket client, to see the
 * engine's own share.
 * `--observability off` disables eng-observability (on by default, as in a default engine): its
 * engine span per HTTP request is a large share of the engine's CPU per request.
 * The same file is the plain server and the worker when started with `--role plain|worker`.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { ENG_CLI } from '../test/harness.ts';
import { fmt, median, spawnTs, stopChild, table } from './lib.ts';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set((process.argv[i] as string).replace(/^--/, ''), process.argv[i + 1] ?? '');
const ROUNDS = Number(args.get('rounds') ?? 3);
const SECONDS = Number(args.get('seconds') ?? 5);
const CONNECTIONS = Number(args.get('connections') ?? 50);
const WORKER = args.get('worker') ?? 'iii';
const OBSERVABILITY = args.get('observability') ?? 'on';
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
  const result = await autocannon({ url, connections: CONNECTIONS, duration: seconds, pipelining: 1 });
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

async function main(): Promise<void> {
  const role = args.get('role');
  if (role === 'plain') return runPlain();
  if (role === 'worker') return runWorker(args.get('url') as string, args.get('kind') ?? 'iii');

  const plain = await spawnTs('bench/http.ts', ['--role', 'plain'], /plain: ready (\d+)/);
  const plainUrl = `http://127.0.0.1:${plain.match[1]}${PATH}`;

  const dir = mkdtempSync(join(tmpdir(), 'eng-bench-http-'));
  const config = join(dir, 'config.yaml');
  const observability = OBSERVABILITY === 'off' ? '  - name: eng-observability\n    config:\n      enabled: false\n' : '';
  writeFileSync(
    config,
    `workers:\n  - name: eng-worker-manager\n    config:\n      port: 0\n  - name: eng-http\n    config:\n      port: 0\n${observability}`,
  );
  const engine = await spawnTs(ENG_CLI, ['start', '-c', config, '--data-dir', join(dir, 'data')], /eng: ready (.*)\n/);
  const addresses = JSON.parse(engine.match[1] as string) as { bus: { url: string }; http: { url: string } };
  const worker = await spawnTs('bench/http.ts', ['--role', 'worker', '--url', addresses.bus.url, '--kind', WORKER], /worker: ready/, {
    OTEL_ENABLED: 'false',
  });
  const engineUrl = `${addresses.http.url}${PATH}`;

  try {
    await waitForRoute(engineUrl);
    const same = JSON.stringify(await (await fetch(engineUrl)).json()) === JSON.stringify(await (await fetch(plainUrl)).json());
    if (!same) throw new Error('the two servers do not answer the same JSON');
    process.stderr.write('warm-up… ');
    await load(plainUrl, 2);
    await load(engineUrl, 2);
    const plainRuns: Figures[] = [];
    const engineRuns: Figures[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      process.stderr.write(`round ${round}/${ROUNDS}: node:http… `);
      plainRuns.push(await load(plainUrl, SECONDS, [plain.child.pid]));
      process.stderr.write('engine… ');
      engineRuns.push(await load(engineUrl, SECONDS, [engine.child.pid, worker.child.pid]));
    }
    process.stderr.write('done\n');
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
    const e = summary(engineRuns);
    const ratio = e.rps / p.rps;
    const workerName = { raw: 'bare WebSocket worker', eng: '@eng/sdk worker' }[WORKER] ?? 'iii-sdk 0.22.1 worker';
    console.log(
      `\nbench/http — GET ${PATH} (medians of ${ROUNDS} rounds × ${SECONDS}s, ${CONNECTIONS} keep-alive connections, autocannon; observability ${OBSERVABILITY})\n`,
    );
    console.log(
      table([
        {
          target: 'plain node:http (baseline)',
          'req/s': fmt(p.rps, 0),
          'p50 ms': fmt(p.p50, 1),
          'p99 ms': fmt(p.p99, 1),
          'server CPU µs/req': fmt(p.cpuUs, 0),
          errors: p.errors,
        },
        {
          target: `eng-http → ${workerName}`,
          'req/s': fmt(e.rps, 0),
          'p50 ms': fmt(e.p50, 1),
          'p99 ms': fmt(e.p99, 1),
          'server CPU µs/req': `${fmt(e.cpuUs, 0)} (engine ${fmt(e.engineUs, 0)} + worker ${fmt(e.workerUs, 0)})`,
          errors: e.errors,
        },
      ]),
    );
    console.log(`\nthroughput ratio (engine/node:http): ${fmt(ratio * 100, 0)}%   budget ≥ 50% ${ratio >= 0.5 ? 'OK' : 'UNDER'}`);
    console.log(
      `load average during the run: ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')} on ${availableParallelism()} cores`,
    );
  } finally {
    await stopChild(worker.child);
    await stopChild(engine.child);
    await stopChild(plain.child);
  }
}

await main();
