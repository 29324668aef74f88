/**
 * bench/state — state::set and state::get through the engine (an @eng/sdk client in this process,
 * the engine in its own, 100 calls in flight) against the same operations made directly on the
 * store adapter in this process (100 promises in flight), for in_memory and file_based
 * (SQLite WAL, synchronous=FULL, group commit). Rounds alternate engine and direct; medians.
 *
 *   node --import tsx bench/state.ts [--rounds 3] [--seconds 2]
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@eng/sdk';
import { MemoryKvStore } from '../packages/engine/src/stores/memory.ts';
import { SqliteKvStore } from '../packages/engine/src/stores/sqlite.ts';
import type { KvStore } from '../packages/engine/src/stores/types.ts';
import { type EngineProcess, startEngine } from '../test/harness.ts';
import { fmt, median, table } from './lib.ts';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set((process.argv[i] as string).replace(/^--/, ''), process.argv[i + 1] ?? '');
const ROUNDS = Number(args.get('rounds') ?? 3);
const SECONDS = Number(args.get('seconds') ?? 2);
const IN_FLIGHT = 100;
const KEYS = 10_000;
const SCOPE = 'bench';
const value = (i: number) => ({ i, name: `item-${i}`, tags: ['a', 'b'], note: 'x'.repeat(48) });

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

async function measure(method: 'in_memory' | 'file_based'): Promise<Array<Record<string, string>>> {
  const dir = mkdtempSync(join(tmpdir(), 'eng-bench-state-'));
  const engine: EngineProcess = await startEngine({
    workersYaml: `  - name: eng-state\n    config:\n      adapter: { name: kv, config: { store_method: ${method} } }\n`,
    env: { ENG_LOG_LEVEL: 'warn' },
  });
  const client = connect(engine.busUrl, { name: 'bench-state' });
  await client.ready({ timeoutMs: 10_000 });
  const store: KvStore = method === 'in_memory' ? new MemoryKvStore() : new SqliteKvStore(join(dir, 'direct.db'), { table: 'state_kv' });
  const viaEngine = engineTarget(client);
  const direct = directTarget(store);

  // fill every key both ways and warm up the JIT on both paths
  for (const target of [viaEngine, direct]) {
    await throughput(target.set, 1);
    await Promise.all(Array.from({ length: KEYS }, (_, i) => target.set(i)));
    await throughput(target.get, 0.5);
  }
  const results = { engineSet: [] as number[], engineGet: [] as number[], directSet: [] as number[], directGet: [] as number[] };
  for (let round = 0; round < ROUNDS; round++) {
    results.engineSet.push(await throughput(viaEngine.set));
    results.directSet.push(await throughput(direct.set));
    results.engineGet.push(await throughput(viaEngine.get));
    results.directGet.push(await throughput(direct.get));
  }
  await client.close();
  await engine.stop();
  await store.close();

  const row = (op: string, viaEngineRuns: number[], directRuns: number[]) => {
    const e = median(viaEngineRuns);
    const d = median(directRuns);
    return {
      store: method,
      op,
      'engine ops/s': fmt(e, 0),
      'direct ops/s': fmt(d, 0),
      'engine / direct': `${fmt((e / d) * 100, 1)}%`,
      'engine runs': viaEngineRuns.map((r) => fmt(r, 0)).join(' '),
    };
  };
  return [row('state::set', results.engineSet, results.directSet), row('state::get', results.engineGet, results.directGet)];
}

const rows = [...(await measure('in_memory')), ...(await measure('file_based'))];
console.log(
  `state through the engine (@eng/sdk, ${IN_FLIGHT} in flight) vs the store adapter in-process; medians of ${ROUNDS} × ${SECONDS}s`,
);
console.log(table(rows));
