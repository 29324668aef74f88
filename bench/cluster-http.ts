/**
 * bench/cluster-http — aggregate HTTP-trigger throughput of 1, 2 and 3 engines (eng-cluster on one
 * redis-server) behind a round-robin client, against one plain engine (no cluster) measured in the
 * same run (issue 27, the scale figure). Each configuration is started, warmed up and loaded in
 * turn; rounds repeat the whole set in a fresh random order and the table shows medians.
 *
 *   node --import tsx bench/cluster-http.ts [--rounds 3] [--seconds 5] [--connections 48] [--engines 1,2,3]
 *
 * Configurations:
 * - `plain engine` (baseline): one engine without eng-cluster and its iii-sdk worker;
 * - `N engines, local workers`: N cluster engines, each with its own iii-sdk worker serving the
 *   route (the scale-out layout: a replica of the worker per engine; no request touches Redis);
 * - `3 engines, worker on e1 only`: the route is served by e1's worker alone; the requests the
 *   load balancer sends to e2 and e3 are routed to e1 over Redis (the routing hop's cost).
 * The round-robin client is one autocannon per engine in this process, the connections split
 * evenly: each connection stays on one engine, as behind an L4 load balancer.
 * Printed per configuration: aggregate req/s, p50/p99, and the CPU per request of every server
 * process (engines, workers, redis-server), from /proc. On this machine the load generator, every
 * engine and every worker share 2 cores, so aggregate req/s cannot grow with the engines: the
 * CPU per request is the figure that carries to a bigger machine, and the 16-core projection is
 * derived from it (printed with its formula).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ENG_CLI } from '../test/harness.ts';
import { type RedisProcess, startRedis } from '../test/redis.ts';
import { fmt, median, spawnTs, stopChild, table } from './lib.ts';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set((process.argv[i] as string).replace(/^--/, ''), process.argv[i + 1] ?? '');
const ROUNDS = Number(args.get('rounds') ?? 3);
const SECONDS = Number(args.get('seconds') ?? 5);
const CONNECTIONS = Number(args.get('connections') ?? 48);
const ENGINE_COUNTS = (args.get('engines') ?? '1,2,3').split(',').map(Number);
const PATH = '/bench/items/42';

interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  errors: number;
  non2xx: number;
  timeouts: number;
}
const autocannon = createRequire(import.meta.url)('autocannon') as (options: {
  url: string;
  connections: number;
  duration: number;
  pipelining: number;
}) => Promise<AutocannonResult>;

const answer = (id: string) => ({ ok: true, id, items: [1, 2, 3] });

async function runWorker(url: string): Promise<void> {
  const { registerWorker } = await import('iii-sdk-0.22.1');
  const iii = registerWorker(url, { workerName: 'bench-cluster', otel: { enabled: false }, enableMetricsReporting: false } as never);
  iii.registerFunction('bench::item', async (req: { path_params: { id: string } }) => ({
    status_code: 200,
    body: answer(req.path_params.id),
  }));
  iii.registerTrigger({ type: 'http', function_id: 'bench::item', config: { api_path: 'bench/items/:id', http_method: 'GET' } });
  process.stdout.write('worker: ready\n');
}

function cpuMs(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

type Proc = Awaited<ReturnType<typeof spawnTs>>;

interface Setup {
  label: string;
  engines: Proc[];
  workers: Proc[];
  urls: string[];
  /** redis-server's pid, when the setup uses it. */
  redisPid?: number;
  runs: Figures[];
}

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  engineUs: number;
  workerUs: number;
  redisUs: number;
}

async function startEngine(clusterYaml: string): Promise<{ proc: Proc; bus: string; http: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'eng-bench-cluster-'));
  const config = join(dir, 'config.yaml');
  writeFileSync(
    config,
    `workers:\n  - name: eng-worker-manager\n    config:\n      port: 0\n  - name: eng-http\n    config:\n      port: 0\n${clusterYaml}`,
  );
  const proc = await spawnTs(ENG_CLI, ['start', '-c', config, '--data-dir', join(dir, 'data')], /eng: ready (.*)\n/);
  const addresses = JSON.parse(proc.match[1] as string) as { bus: { url: string }; http: { url: string } };
  return { proc, bus: addresses.bus.url, http: `${addresses.http.url}${PATH}` };
}

const startWorker = (bus: string) =>
  spawnTs('bench/cluster-http.ts', ['--role', 'worker', '--url', bus], /worker: ready/, { OTEL_ENABLED: 'false' });

const clusterYaml = (redis: RedisProcess, id: string) =>
  `  - name: eng-cluster\n    config:\n      redis_url: ${redis.url}\n      namespace: bench\n      engine_id: ${id}\n`;

async function startSetup(label: string, count: number, redis: RedisProcess | null, workersOn: number[]): Promise<Setup> {
  const engines = await Promise.all(
    Array.from({ length: count }, (_, i) => startEngine(redis ? clusterYaml(redis, `${label.replace(/\W+/g, '-')}-e${i + 1}`) : '')),
  );
  const workers: Proc[] = [];
  for (const i of workersOn) workers.push(await startWorker((engines[i] as { bus: string }).bus));
  return {
    label,
    engines: engines.map((e) => e.proc),
    workers,
    urls: engines.map((e) => e.http),
    ...(redis ? { redisPid: redis.process.pid } : {}),
    runs: [],
  };
}

async function waitForRoute(url: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const res = await fetch(url).catch(() => null);
    if (res?.status === 200) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`route ${url} never answered 200`);
}

/** The round-robin client: the connections split evenly over the engines, all loaded at once. */
async function load(setup: Setup, seconds: number): Promise<Figures> {
  const pidsOf = (procs: Proc[]) => procs.map((p) => p.child.pid);
  const engines = pidsOf(setup.engines);
  const workers = pidsOf(setup.workers);
  const sum = (pids: Array<number | undefined>) => pids.reduce<number>((n, pid) => n + cpuMs(pid), 0);
  const before = { e: sum(engines), w: sum(workers), r: cpuMs(setup.redisPid) };
  const per = Math.max(1, Math.floor(CONNECTIONS / setup.urls.length));
  const results = await Promise.all(setup.urls.map((url) => autocannon({ url, connections: per, duration: seconds, pipelining: 1 })));
  const spent = { e: sum(engines) - before.e, w: sum(workers) - before.w, r: cpuMs(setup.redisPid) - before.r };
  const total = results.reduce((n, r) => n + r.requests.total, 0);
  const us = (ms: number) => (total > 0 ? (ms * 1000) / total : Number.NaN);
  return {
    rps: results.reduce((n, r) => n + r.requests.average, 0),
    p50: median(results.map((r) => r.latency.p50)),
    p99: Math.max(...results.map((r) => r.latency.p99)),
    errors: results.reduce((n, r) => n + r.errors + r.non2xx + r.timeouts, 0),
    engineUs: us(spent.e),
    workerUs: us(spent.w),
    redisUs: us(spent.r),
  };
}

async function stopSetup(setup: Setup): Promise<void> {
  for (const w of setup.workers) await stopChild(w.child);
  for (const e of setup.engines) await stopChild(e.child);
}

function shuffled<T>(items: T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

interface Plan {
  label: string;
  count: number;
  cluster: boolean;
  workersOn: number[];
}

async function main(): Promise<void> {
  if (args.get('role') === 'worker') return runWorker(args.get('url') as string);
  const redis = await startRedis();
  const plans: Plan[] = [{ label: 'plain engine (baseline)', count: 1, cluster: false, workersOn: [0] }];
  for (const n of ENGINE_COUNTS) {
    plans.push({
      label: `${n} engine${n > 1 ? 's' : ''}, local workers`,
      count: n,
      cluster: true,
      workersOn: Array.from({ length: n }, (_, i) => i),
    });
  }
  const maxN = Math.max(...ENGINE_COUNTS);
  if (maxN > 1) plans.push({ label: `${maxN} engines, worker on e1 only (routed)`, count: maxN, cluster: true, workersOn: [0] });
  const results = new Map<string, Figures[]>(plans.map((p) => [p.label, []]));
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      process.stderr.write(`round ${round}/${ROUNDS}: `);
      for (const plan of shuffled(plans)) {
        process.stderr.write(`${plan.label}… `);
        // one configuration runs at a time: the others' idle processes must not share the cores
        const setup = await startSetup(plan.label, plan.count, plan.cluster ? redis : null, plan.workersOn);
        try {
          for (const url of setup.urls) await waitForRoute(url);
          await load(setup, 2); // warm-up
          (results.get(plan.label) as Figures[]).push(await load(setup, SECONDS));
        } finally {
          await stopSetup(setup);
        }
      }
      process.stderr.write('\n');
    }
  } finally {
    await redis.stop();
  }

  const summary = (runs: Figures[]) => ({
    rps: median(runs.map((r) => r.rps)),
    p50: median(runs.map((r) => r.p50)),
    p99: median(runs.map((r) => r.p99)),
    errors: runs.reduce((n, r) => n + r.errors, 0),
    engineUs: median(runs.map((r) => r.engineUs)),
    workerUs: median(runs.map((r) => r.workerUs)),
    redisUs: median(runs.map((r) => r.redisUs)),
  });
  const base = summary(results.get(plans[0]?.label as string) as Figures[]);
  console.log(
    `\nbench/cluster-http — GET ${PATH} through N engines on one redis-server (medians of ${ROUNDS} rounds × ${SECONDS}s, ${CONNECTIONS} keep-alive connections split over the engines, autocannon, iii-sdk 0.22.1 workers)\n`,
  );
  const rows = plans.map((plan) => {
    const s = summary(results.get(plan.label) as Figures[]);
    const cpu = s.engineUs + s.workerUs + s.redisUs;
    return {
      configuration: plan.label,
      'req/s (all engines)': fmt(s.rps, 0),
      'vs baseline': `${fmt(s.rps / base.rps, 2)}×`,
      'p50 ms': fmt(s.p50, 1),
      'p99 ms': fmt(s.p99, 1),
      'server CPU µs/req': `${fmt(cpu, 0)} (engines ${fmt(s.engineUs, 0)} + workers ${fmt(s.workerUs, 0)} + redis ${fmt(s.redisUs, 0)})`,
      'CPU/req vs baseline': `${fmt(cpu / (base.engineUs + base.workerUs), 2)}×`,
      errors: s.errors,
    };
  });
  console.log(table(rows));
  console.log('');
  const cores = availableParallelism();
  console.log(
    `machine: ${cores} cores shared by the load generator (autocannon, this process), every engine, every worker and redis-server;`,
  );
  console.log('  aggregate req/s here is capped by the cores, not by the engines: more engines only split the same CPU.');
  // projection: with the load generator elsewhere, each core runs engine+worker work for one
  // request in `cpu` µs; the local-worker layout shares nothing per request (no Redis on the
  // path), so it adds up over cores; the routed layout adds the hop (both engines) and redis-server
  // (one process: it caps at 1e6 / redisUs requests/s).
  // the one-engine row: each engine of the local-worker layout does the same work per request and
  // shares nothing per request, so an engine with its worker on its own cores costs what one costs
  // here; the 2- and 3-engine rows on 2 cores measure the oversubscription (more processes than cores)
  const localN = plans.find((p) => p.cluster && p.workersOn.length === p.count);
  if (localN) {
    const s = summary(results.get(localN.label) as Figures[]);
    const cpu = s.engineUs + s.workerUs;
    const projected = (16 * 1e6) / cpu;
    console.log(
      `16-core projection, local workers: 16 cores × 1e6 / ${fmt(cpu, 0)} µs (engine + worker CPU per request, "${localN.label}") ≈ ${fmt(projected / 1000, 0)}k req/s, e.g. 8 engines each with its worker, the load balancer and load generator on other machines (no shared per-request state: linear in cores until the network or the balancer)`,
    );
  }
  const routed = plans.find((p) => p.label.includes('routed'));
  if (routed) {
    const s = summary(results.get(routed.label) as Figures[]);
    const cpu = s.engineUs + s.workerUs + s.redisUs;
    const redisCap = s.redisUs > 0 ? 1e6 / s.redisUs : Number.POSITIVE_INFINITY;
    console.log(
      `16-core projection, routed over Redis: min(16 × 1e6 / ${fmt(cpu, 0)} µs, redis-server's single thread 1e6 / ${fmt(s.redisUs, 1)} µs) ≈ ${fmt(Math.min((16 * 1e6) / cpu, redisCap) / 1000, 0)}k req/s (${Number.isFinite(redisCap) ? `redis caps at ≈ ${fmt(redisCap / 1000, 0)}k` : 'redis CPU not measurable'})`,
    );
  }
  console.log(
    `load average at the end: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} on ${cores} cores`,
  );
}

await main();
