import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failure, type Rig, recordEvents, startRig, waitFor } from './helpers.ts';

// The worker killed (SIGKILL) in the middle of a land, then started again: the target branch is
// either untouched or advanced exactly once, never half-applied, and the land finishes with
// one `landed` event; claims and records survive a restart (state and queue on SQLite files).

let rig: Rig;
let landed: { events: any[] };
beforeAll(async () => {
  rig = await startRig({ durable: true, config: { gates: { allow_caller_test_cmd: true } } });
  landed = await recordEvents(rig.client, 'worktree::landed');
});
afterAll(async () => {
  await rig?.stop();
});

const call = <T = any>(fn: string, payload: unknown) => rig.client.call<T>(fn, payload, { timeoutMs: 20_000 });
const workerDied = () => waitFor(() => rig.worker.child.exitCode !== null || rig.worker.child.signalCode !== null, 30_000);

async function worktreeWith(file: string) {
  const wt = await call('worktree::create', { repo_path: rig.repos.repo, session_id: 'agent-1' });
  rig.repos.commit(wt.path, { [file]: `${file}\n` }, file);
  return wt;
}

/** After a restart: the land finished once, the target carries it once, the worktree is gone. */
async function expectLandedOnce(wt: { worktree_id: string; path: string; branch: string }, mainBefore: string, file: string) {
  const { repos } = rig;
  const event = await waitFor(() => landed.events.find((e) => e.worktree_id === wt.worktree_id), 30_000);
  await waitFor(async () => (await failure(call('worktree::get', { worktree_id: wt.worktree_id }))).code === 'W200', 10_000);
  await new Promise((r) => setTimeout(r, 500)); // a second delivery of the job would have landed by now
  expect(landed.events.filter((e) => e.worktree_id === wt.worktree_id)).toHaveLength(1);
  expect(event).toMatchObject({ target_branch: 'main', session_id: 'agent-1', merged_sha: repos.head(repos.repo, 'main') });
  expect(repos.head(repos.repo, 'main^')).toBe(mainBefore);
  expect(repos.git(repos.repo, 'log', '-1', '--format=%s', 'main')).toBe(file);
  // the checkout of main caught up, and nothing is left half-done anywhere
  expect(existsSync(join(repos.repo, file))).toBe(true);
  expect(repos.git(repos.repo, 'status', '--porcelain')).toBe('');
  expect(existsSync(wt.path)).toBe(false);
  expect(repos.git(repos.repo, 'branch', '--list', wt.branch)).toBe('');
}

describe('a worker killed during a land', () => {
  it('while the test command runs: the target is untouched, and the restarted worker lands it', async () => {
    const { repos } = rig;
    const wt = await worktreeWith('during-test.txt');
    const mainBefore = repos.head(repos.repo, 'main');
    const started = join(repos.dir, 'test-started');
    // first run: note that it started, then take long enough to be killed; later runs pass at once
    const testCmd = `if [ -e ${started} ]; then exit 0; fi; touch ${started}; sleep 5`;
    await call('worktree::land', { worktree_id: wt.worktree_id, target_branch: 'main', test_cmd: testCmd });
    await waitFor(() => existsSync(started), 30_000);
    await rig.worker.kill();
    expect(repos.head(repos.repo, 'main')).toBe(mainBefore);
    await rig.restartWorker();
    await expectLandedOnce(wt, mainBefore, 'during-test.txt');
  });

  it('right after the rebase: the target is untouched, and the land resumes', async () => {
    const { repos } = rig;
    const wt = await worktreeWith('after-rebase.txt');
    const mainBefore = repos.commit(repos.repo, { 'upstream-1.txt': 'u\n' }, 'upstream 1');
    await rig.restartWorker({ ENG_WORKTREE_FAILPOINT: 'after-rebase' });
    await call('worktree::land', { worktree_id: wt.worktree_id, target_branch: 'main' });
    await workerDied();
    expect(repos.head(repos.repo, 'main')).toBe(mainBefore);
    await rig.restartWorker();
    await expectLandedOnce(wt, mainBefore, 'after-rebase.txt');
  });

  it('right after the compare-and-swap: the target advanced once, and the restart finishes the cleanup', async () => {
    const { repos } = rig;
    const wt = await worktreeWith('after-cas.txt');
    const mainBefore = repos.head(repos.repo, 'main');
    await rig.restartWorker({ ENG_WORKTREE_FAILPOINT: 'after-cas' });
    await call('worktree::land', { worktree_id: wt.worktree_id, target_branch: 'main' });
    await workerDied();
    // the ref moved in one step: main is the branch's commit on top of the old main
    expect(repos.head(repos.repo, 'main^')).toBe(mainBefore);
    const advanced = repos.head(repos.repo, 'main');
    await rig.restartWorker();
    await expectLandedOnce(wt, mainBefore, 'after-cas.txt');
    expect(repos.head(repos.repo, 'main')).toBe(advanced);
  });
});

describe('restart', () => {
  it('keeps records, claims and lifecycles across a worker restart', async () => {
    const a = await call('worktree::create', { repo_path: rig.repos.repo, session_id: 'keeper' });
    const b = await call('worktree::create', { repo_path: rig.repos.repo });
    await rig.restartWorker();
    const list = await call('worktree::list', { include_status: true });
    const byId = Object.fromEntries(list.worktrees.map((w: any) => [w.worktree_id, w]));
    expect(byId[a.worktree_id]).toMatchObject({ session_id: 'keeper', lifecycle: 'claimed', path: a.path, status: { clean: true } });
    expect(byId[b.worktree_id]).toMatchObject({ lifecycle: 'active', branch: b.branch });
    expect((await failure(call('worktree::claim', { worktree_id: a.worktree_id, session_id: 'other' }))).code).toBe('W210');
  });
});
