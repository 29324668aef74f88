/**
 * bench/state — state::set and state::get through the engine (an @eng/sdk client in this process,
 * the engine in its own, 100 calls in flight) against the engine's own worker→engine→worker call
 * throughput in the same run: the same client calling a function served by a bare WebSocket worker
 * in a third process, answered as soon as it arrives. A state operation is answered inside the
 * engine (one hop), so the budget (ARCHITECTURE.md) is ≥ 100% of the call's throughput, and
 * file_based (SQLite WAL, synchronous=FULL, group commit) ≥ 80% of in_memory. The same operations
 * made directly on the store adapter in this process are printed for information. Rounds
 * alternate the targets; medians. Each target's engine CPU per operation (from /proc, over the
 * same window) is printed too: on a shared machine it moves far less than throughput does.
 * Exits 1 when a budget is missed.
 *
 *   node --import tsx bench/state.ts [--rounds 3] [--seconds 2]
 *
 * BENCH_PROFILE_DIR=<dir> writes CPU profiles of the engine and the echo worker (bench/lib.ts).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@eng/sdk';
import WebSocket from 'ws';
import { MemoryKvStore } from '../packages/engine/src/stores/memory.ts';
import { SqliteKvStore } from '../packages/engine/src/stores/sqlite.ts';
import type { KvStore } from '../packages/engine/src/stores/types.ts';
import { ENG_CLI } from '../test/harness.ts';
import { fmt, median, spawnTs, stopChild, table } from './lib.ts';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set((process.argv[i] as string).replace(/^--/, ''), process.argv[i + 1] ?? '');
const ROUNDS = Number(args.get('rounds') ?? 3);
const SECONDS = Number(args.get('seconds') ?? 2);
const IN_FLIGHT = 100;
const KEYS = 10_000;
const SCOPE = 'bench';
const value = (i: number) => ({ i, name: `item-${i}`, tags: ['a', 'b'], note: 'x'.repeat(48) });
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * `--role echo --url <bus>`: the worker side of the call baseline, in its own process: a bare
 * WebSocket client answering each call with its input, so the baseline measures the engine's
 * relay, not a worker SDK (as bench/invoke does).
 */
if (args.get('role') === 'echo') {
  const ws = new WebSocket(args.get('url') as string, { perMessageDeflate: false });
  ws.on('message', (raw) => {
    const frame = JSON.parse(raw.toString());
    if (frame.type !== 'invokefunction') return;
    ws.send(
      JSON.stringify({ type: 'invocationresult', invocation_id: frame.invocation_id, function_id: frame.function_id, result: frame.data }),
    );
  });
  await new Promise((resolve) => ws.once('open', resolve));
  ws.send(JSON.stringify({ type: 'registerfunction', id: 'bench::echo' }));
  await new Promise((r) => setTimeout(r, 200));
  process.stdout.write('echo: ready\n');
  await new Promise(() => {});
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

interface Run {
  /** Operations per second. */
  rate: number;
  /** Engine CPU per operation, µs: what the engine itself spends, whatever else loads the machine. */
  engineUs: number;
}

/** `throughput`, with the engine's CPU per operation over the same window. */
async function measured(op: (i: number) => Promise<unknown>, enginePid: number | undefined): Promise<Run> {
  const cpu0 = cpuMs(enginePid);
  const started = performance.now();
  let ops = 0;
  const rate = await throughput(async (i) => {
    await op(i);
    ops++;
  });
  const elapsed = (performance.now() - started) / 1000;
  return { rate: rate || ops / elapsed, engineUs: ((cpuMs(enginePid) - cpu0) * 1000) / Math.max(1, ops) };
}

/** Run `op` with IN_FLIGHT calls outstanding for SECONDS; operations per second. */
async function throughput(op: (i: number) => Promise<unknown>, seconds = SECONDS): Promise<number> {
  let next = 0;
  let done = 0;
  const deadline = performance.now() + seconds * 1000;
  const lane = async () => {
    while (performance.now() < deadline) {
      await op(next++ % KEYS);
      done++;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
  return done / ((performance.now() - started) / 1000);
}

type Target = { set(i: number): Promise<unknown>; get(i: number): Promise<unknown> };

function directTarget(store: KvStore): Target {
  return { set: (i) => store.set(SCOPE, `k${i}`, value(i)), get: (i) => store.get(SCOPE, `k${(i * 7919) % KEYS}`) };
}

function engineTarget(client: ReturnType<typeof connect>): Target {
  return {
    set: (i) => client.trigger({ function_id: 'state::set', payload: { scope: SCOPE, key: `k${i}`, value: value(i) } }),
    get: (i) => client.trigger({ function_id: 'state::get', payload: { scope: SCOPE, key: `k${(i * 7919) % KEYS}` } }),
  };
}

interface Measured {
  method: 'in_memory' | 'file_based';
  engineSet: Run[];
  engineGet: Run[];
  directSet: number[];
  directGet: number[];
  /** The worker→engine→worker call, same client, same payloads as set. */
  call: Run[];
}

async function measure(method: 'in_memory' | 'file_based'): Promise<Measured> {
  const dir = mkdtempSync(join(tmpdir(), 'eng-bench-state-'));
  const config = join(dir, 'config.yaml');
  writeFileSync(
    config,
    `workers:\n  - name: eng-worker-manager\n    config:\n      port: 0\n  - name: eng-state\n    config:\n      adapter: { name: kv, config: { store_method: ${method} } }\n`,
  );
  const engine = await spawnTs(ENG_CLI, ['start', '-c', config, '--data-dir', join(dir, 'data')], /eng: ready (.*)\n/);
  const busUrl = (JSON.parse(engine.match[1] as string) as { bus: { url: string } }).bus.url;
  const echo = await spawnTs('bench/state.ts', ['--role', 'echo', '--url', busUrl], /echo: ready/);
  const client = connect(busUrl, { name: 'bench-state', logger: quiet });
  await client.ready({ timeoutMs: 10_000 });
  const store: KvStore = method === 'in_memory' ? new MemoryKvStore() : new SqliteKvStore(join(dir, 'direct.db'), { table: 'state_kv' });
  const viaEngine = engineTarget(client);
  const direct = directTarget(store);
  const call = (i: number) => client.trigger({ function_id: 'bench::echo', payload: { scope: SCOPE, key: `k${i}`, value: value(i) } });

  try {
    // fill every key both ways and warm up the JIT on every path
    for (const target of [viaEngine, direct]) {
      await throughput(target.set, 1);
      await Promise.all(Array.from({ length: KEYS }, (_, i) => target.set(i)));
      await throughput(target.get, 0.5);
    }
    await throughput(call, 1);
    const m: Measured = { method, engineSet: [], engineGet: [], directSet: [], directGet: [], call: [] };
    for (let round = 0; round < ROUNDS; round++) {
      process.stderr.write(`${method} round ${round + 1}/${ROUNDS}… `);
      const pid = engine.child.pid;
      m.call.push(await measured(call, pid));
      m.engineSet.push(await measured(viaEngine.set, pid));
      m.directSet.push(await throughput(direct.set));
      m.engineGet.push(await measured(viaEngine.get, pid));
      m.directGet.push(await throughput(direct.get));
    }
    process.stderr.write('\n');
    return m;
  } finally {
    await client.close();
    await stopChild(echo.child);
    await stopChild(engine.child);
    await store.close();
  }
}

const results = [await measure('in_memory'), await measure('file_based')];
const memory = results[0] as Measured;
const rows: Array<Record<string, string>> = [];
let over = false;
const verdicts: string[] = [];
const rate = (runs: Run[]) => median(runs.map((r) => r.rate));
const cpu = (runs: Run[]) => median(runs.map((r) => r.engineUs));
for (const m of results) {
  const call = rate(m.call);
  const callCpu = cpu(m.call);
  rows.push({
    store: m.method,
    op: 'call bench::echo (worker→engine→worker, baseline)',
    'engine ops/s': fmt(call, 0),
    'vs call': '100%',
    'engine CPU µs/op': fmt(callCpu, 1),
    'CPU vs call': '1.00×',
    'direct ops/s': '',
    'engine runs': m.call.map((r) => fmt(r.rate, 0)).join(' '),
  });
  for (const [op, runs, direct] of [
    ['state::set', m.engineSet, m.directSet],
    ['state::get', m.engineGet, m.directGet],
  ] as const) {
    const e = rate(runs);
    rows.push({
      store: m.method,
      op,
      'engine ops/s': fmt(e, 0),
      'vs call': `${fmt((e / call) * 100, 0)}%`,
      'engine CPU µs/op': fmt(cpu(runs), 1),
      'CPU vs call': `${fmt(cpu(runs) / callCpu, 2)}×`,
      'direct ops/s': fmt(median(direct), 0),
      'engine runs': runs.map((r) => fmt(r.rate, 0)).join(' '),
    });
    if (m.method === 'in_memory') {
      const ok = e >= call;
      over ||= !ok;
      verdicts.push(
        `in_memory ${op}: ${fmt((e / call) * 100, 0)}% of the call's throughput   budget ≥ 100% ${ok ? 'OK' : 'UNDER budget'}   (engine CPU per op ${fmt(cpu(runs) / callCpu, 2)}× the call's)`,
      );
    } else {
      const base = rate(op === 'state::set' ? memory.engineSet : memory.engineGet);
      const ratio = e / base;
      over ||= ratio < 0.8;
      verdicts.push(`file_based ${op}: ${fmt(ratio * 100, 0)}% of in_memory's   budget ≥ 80% ${ratio >= 0.8 ? 'OK' : 'UNDER budget'}`);
    }
  }
}
console.log(
  `\nbench/state — through the engine (@eng/sdk, ${IN_FLIGHT} in flight) vs the engine's own worker→engine→worker call; medians of ${ROUNDS} × ${SECONDS}s (direct: the store adapter in this process, for information)\n`,
);
console.log(table(rows));
console.log('');
for (const line of verdicts) console.log(line);
if (over) process.exitCode = 1;
