/**
 * bench/state — state::set and state::get through the engine (an @eng/sdk client in this process,
 * the engine in its own, 100 calls in flight) against the engine's own worker→engine→worker call
 * throughput in the same run: the same client calling a function served by a bare WebSocket worker
 * in a third process, answered as soon as it arrives. A state operation is answered inside the
 * engine (one hop), so the budget (ARCHITECTURE.md) is ≥ 100% of the call's throughput, and
 * file_based (SQLite WAL, synchronous=FULL, group commit) ≥ 80% of in_memory. Both engines run
 * side by side; each round measures every engine's call, set and get back to back (order
 * rotating), and a ratio is the median of the rounds' ratios, so both sides of a ratio saw the
 * same load from whatever else shares the machine. The same operations made directly on the
 * store adapter in this process are printed for information. Each target's engine CPU per
 * operation (from /proc, over the same window) is printed too: on a shared machine it moves far
 * less than throughput does. Exits 1 when a budget is missed.
 *
 *   node --import tsx bench/state.ts [--rounds 6] [--seconds 1]
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
const ROUNDS = Number(args.get('rounds') ?? 6);
const SECONDS = Number(args.get('seconds') ?? 1);
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

type Method = 'in_memory' | 'file_based';
type Op = 'call' | 'set' | 'get';
const OPS: Op[] = ['call', 'set', 'get'];

/** One engine (with its echo worker, its client and a direct store of the same kind), warmed up. */
interface Setup {
  method: Method;
  pid: number | undefined;
  ops: Record<Op, (i: number) => Promise<unknown>>;
  direct: Target;
  close(): Promise<void>;
}

async function setUp(method: Method): Promise<Setup> {
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
  // fill every key both ways and warm up the JIT on every path
  for (const target of [viaEngine, direct]) {
    await throughput(target.set, 1);
    await Promise.all(Array.from({ length: KEYS }, (_, i) => target.set(i)));
    await throughput(target.get, 0.5);
  }
  await throughput(call, 1);
  return {
    method,
    pid: engine.child.pid,
    ops: { call, set: viaEngine.set, get: viaEngine.get },
    direct,
    async close() {
      await client.close();
      await stopChild(echo.child);
      await stopChild(engine.child);
      await store.close();
    },
  };
}

/**
 * Both engines run side by side and every round measures, back to back, each engine's call
 * baseline, state::set and state::get (their order rotating from round to round): on a machine
 * other work shares, each ratio is then taken between windows that saw the same load, and the
 * verdict is the median of the per-round ratios.
 */
const setups = [await setUp('in_memory'), await setUp('file_based')];
const runs = new Map<string, Run[]>();
const runsOf = (method: Method, op: Op) => runs.get(`${method} ${op}`) ?? [];
const direct = new Map<string, number[]>();
try {
  for (let round = 0; round < ROUNDS; round++) {
    process.stderr.write(`round ${round + 1}/${ROUNDS}… `);
    const order = [...OPS.slice(round % 3), ...OPS.slice(0, round % 3)];
    for (const setup of round % 2 ? [...setups].reverse() : setups) {
      for (const op of order) {
        const key = `${setup.method} ${op}`;
        runs.set(key, [...(runs.get(key) ?? []), await measured(setup.ops[op], setup.pid)]);
      }
    }
  }
  // the store adapters alone, in this process, for information
  for (const setup of setups) {
    direct.set(`${setup.method} set`, [await throughput(setup.direct.set, SECONDS)]);
    direct.set(`${setup.method} get`, [await throughput(setup.direct.get, SECONDS)]);
  }
  process.stderr.write('\n');
} finally {
  for (const setup of setups) await setup.close();
}

const rows: Array<Record<string, string>> = [];
let over = false;
const verdicts: string[] = [];
const rate = (list: Run[]) => median(list.map((r) => r.rate));
const cpu = (list: Run[]) => median(list.map((r) => r.engineUs));
/** Median over rounds of a/b, each round's two windows measured back to back. */
const ratio = (a: Run[], b: Run[]) => median(a.map((r, i) => r.rate / (b[i] as Run).rate));
for (const method of ['in_memory', 'file_based'] as const) {
  const call = runsOf(method, 'call');
  rows.push({
    store: method,
    op: 'call bench::echo (worker→engine→worker, baseline)',
    'engine ops/s': fmt(rate(call), 0),
    'vs call': '100%',
    'engine CPU µs/op': fmt(cpu(call), 1),
    'CPU vs call': '1.00×',
    'direct ops/s': '',
    'engine runs': call.map((r) => fmt(r.rate, 0)).join(' '),
  });
  for (const op of ['set', 'get'] as const) {
    const list = runsOf(method, op);
    const vsCall = ratio(list, call);
    rows.push({
      store: method,
      op: `state::${op}`,
      'engine ops/s': fmt(rate(list), 0),
      'vs call': `${fmt(vsCall * 100, 0)}%`,
      'engine CPU µs/op': fmt(cpu(list), 1),
      'CPU vs call': `${fmt(cpu(list) / cpu(call), 2)}×`,
      'direct ops/s': fmt(median(direct.get(`${method} ${op}`) ?? []), 0),
      'engine runs': list.map((r) => fmt(r.rate, 0)).join(' '),
    });
    if (method === 'in_memory') {
      const ok = vsCall >= 1;
      over ||= !ok;
      verdicts.push(
        `in_memory state::${op}: ${fmt(vsCall * 100, 0)}% of the call's throughput   budget ≥ 100% ${ok ? 'OK' : 'UNDER budget'}   (engine CPU per op ${fmt(cpu(list) / cpu(call), 2)}× the call's)`,
      );
    } else {
      const vsMemory = ratio(list, runsOf('in_memory', op));
      over ||= vsMemory < 0.8;
      verdicts.push(
        `file_based state::${op}: ${fmt(vsMemory * 100, 0)}% of in_memory's   budget ≥ 80% ${vsMemory >= 0.8 ? 'OK' : 'UNDER budget'}   (${fmt(vsCall * 100, 0)}% of its engine's call)`,
      );
    }
  }
}
console.log(
  `\nbench/state — through the engine (@eng/sdk, ${IN_FLIGHT} in flight) vs the engine's own worker→engine→worker call; ${ROUNDS} rounds × ${SECONDS}s, rates and CPU are medians, ratios the median of each round's back-to-back ratio (direct: the store adapter in this process, for information); load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}\n`,
);
console.log(table(rows));
console.log('');
for (const line of verdicts) console.log(line);
if (over) process.exitCode = 1;
