/**
 * bench/worktree — `worktree::list {include_status: true}` over N worktrees of one repository
 * (the console's graph page makes this call), against its floor measured in the same run: the
 * same number of plain `git status --porcelain` calls, one after another. Then create and remove
 * throughput. A real engine, the worker as its own process, real repositories in a temp folder.
 *
 *   node --import tsx bench/worktree.ts [--worktrees 50] [--rounds 15]
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { connect } from '@eng/sdk';
import { makeRepos, startWorker } from '../packages/worktree/test/helpers.ts';
import { startEngine } from '../test/harness.ts';
import { fmt, median, percentile, table } from './lib.ts';

const run = promisify(execFile);
const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set((process.argv[i] as string).replace(/^--/, ''), process.argv[i + 1] ?? '');
const N = Number(args.get('worktrees') ?? 50);
const ROUNDS = Number(args.get('rounds') ?? 15);
const BUDGET_MS = 500;

const repos = makeRepos();
const engine = await startEngine({
  workersYaml: [
    '  - name: eng-state',
    '    config: { adapter: { name: kv, config: { store_method: in_memory } } }',
    '  - name: eng-queue',
    '    config: { adapter: { name: memory } }',
    '',
  ].join('\n'),
  env: { ENG_LOG_LEVEL: 'warn' },
});
const worker = startWorker(engine.busUrl, {
  ...repos.env,
  ENG_WORKER_CONFIG: JSON.stringify({ worktree_root: repos.root, prune_schedule: '' }),
});
try {
  await worker.ready;
  const client = connect(engine.busUrl, { name: 'bench-worktree', tracing: false });
  await client.ready({ timeoutMs: 10_000 });
  const call = <T = any>(fn: string, payload: unknown) => client.call<T>(fn, payload, { timeoutMs: 120_000 });

  // create N worktrees, one after another (creates of one repository are serialised by the worker)
  const created: Array<{ worktree_id: string; path: string }> = [];
  const createStart = performance.now();
  for (let i = 0; i < N; i++) created.push(await call('worktree::create', { repo_path: repos.repo }));
  const createMs = performance.now() - createStart;

  // a realistic mix: a third with a commit of their own, a third with uncommitted work
  created.forEach((wt, i) => {
    if (i % 3 === 1) repos.commit(wt.path, { [`work-${i}.txt`]: `${i}\n` }, `work ${i}`);
    if (i % 3 === 2) writeFileSync(join(wt.path, 'src/app.txt'), `edited ${i}\n`);
  });

  const env = { ...process.env, ...repos.env, GIT_OPTIONAL_LOCKS: '0' };
  const plainStatus = async () => {
    const t = performance.now();
    for (const wt of created) await run('git', ['status', '--porcelain'], { cwd: wt.path, env });
    return performance.now() - t;
  };
  const list = async () => {
    const t = performance.now();
    const res = await call<{ worktrees: Array<{ status?: unknown }> }>('worktree::list', { repo_path: repos.repo, include_status: true });
    if (res.worktrees.length !== N || res.worktrees.some((w) => !w.status))
      throw new Error('list did not return a status for every worktree');
    return performance.now() - t;
  };

  const cold = await list(); // the first listing fills the commit-derived cache
  const listMs: number[] = [];
  const plainMs: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    // alternate which goes first so neither always runs on a warmer page cache
    if (r % 2 === 0) {
      listMs.push(await list());
      plainMs.push(await plainStatus());
    } else {
      plainMs.push(await plainStatus());
      listMs.push(await list());
    }
  }
  listMs.sort((a, b) => a - b);
  const p50 = percentile(listMs, 50);
  const floor = median(plainMs);

  const removeStart = performance.now();
  // the third with uncommitted work is refused (W220) and stays: only clean removals are timed
  for (const wt of created) await call('worktree::remove', { worktree_id: wt.worktree_id, delete_branch: false }).catch(() => undefined);
  const left = (await call<{ worktrees: Array<{ worktree_id: string }> }>('worktree::list', {})).worktrees;
  const removedCount = N - left.length;
  const removeMs = performance.now() - removeStart;

  console.log(
    table([
      {
        measure: `worktree::list include_status (${N} worktrees)`,
        p50: `${fmt(p50)} ms`,
        p90: `${fmt(percentile(listMs, 90))} ms`,
        baseline: `${fmt(floor)} ms (${N} sequential git status --porcelain)`,
        ratio: `${fmt(p50 / floor, 2)}×`,
      },
      { measure: 'first listing (cold cache)', p50: `${fmt(cold)} ms`, p90: '', baseline: '', ratio: `${fmt(cold / floor, 2)}×` },
      { measure: `create ×${N}`, p50: `${fmt(createMs / N)} ms each`, p90: '', baseline: '', ratio: `${fmt((N / createMs) * 1000)} /s` },
      {
        measure: `remove ×${removedCount} (clean ones)`,
        p50: `${fmt(removeMs / Math.max(1, removedCount))} ms each`,
        p90: '',
        baseline: '',
        ratio: `${fmt((removedCount / removeMs) * 1000)} /s`,
      },
    ]),
  );
  const ok = p50 <= BUDGET_MS;
  console.log(`\nbudget: list p50 ${fmt(p50)} ms ${ok ? '≤' : '>'} ${BUDGET_MS} ms — ${ok ? 'ok' : 'OVER BUDGET'}`);
  await client.close();
  process.exitCode = ok ? 0 : 1;
} finally {
  await worker.stop();
  await engine.stop();
}
