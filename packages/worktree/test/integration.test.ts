import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Rig, startRig } from './helpers.ts';

// `integrated` (console-worker.md §4.1): the branch's work already reached its base, however it
// got there — fast-forward, merge, rebase or squash — with the reason that proved it.

let rig: Rig;
beforeAll(async () => {
  rig = await startRig();
});
afterAll(async () => {
  await rig?.stop();
});

const call = <T = any>(fn: string, payload: unknown) => rig.client.call<T>(fn, payload, { timeoutMs: 20_000 });
const statusOf = async (id: string) => (await call('worktree::get', { worktree_id: id })).status;

async function branchWith(...commits: Array<Record<string, string>>) {
  const wt = await call('worktree::create', { repo_path: rig.repos.repo });
  const shas = commits.map((files, i) => rig.repos.commit(wt.path, files, `branch commit ${i + 1}`));
  return { ...wt, shas };
}

/** Run git in the clone that has main checked out (how upstream changes arrive here). */
const onMain = (...args: string[]) => rig.repos.git(rig.repos.repo, ...args);
const squashOntoMain = (branch: string, message: string) => {
  onMain('merge', '--quiet', '--squash', branch);
  onMain('commit', '--quiet', '-m', message);
};

describe('integration detection', () => {
  it('a fresh worktree and one with work of its own are not integrated', async () => {
    const fresh = await branchWith();
    expect(await statusOf(fresh.worktree_id)).toMatchObject({ integrated: false, ahead: 0 });
    const working = await branchWith({ 'own.txt': 'own\n' });
    const status = await statusOf(working.worktree_id);
    expect(status).toMatchObject({ integrated: false, ahead: 1 });
    expect(status.integration_reason).toBeUndefined();
  });

  it('same_commit and ancestor: fast-forwarded or merged as they are', async () => {
    const ff = await branchWith({ 'ff.txt': 'ff\n' });
    onMain('merge', '--quiet', '--ff-only', ff.branch);
    expect(await statusOf(ff.worktree_id)).toMatchObject({ integrated: true, integration_reason: 'same_commit', ahead: 0 });
    const merged = await branchWith({ 'merged.txt': 'm\n' });
    onMain('merge', '--quiet', '--no-ff', '-m', 'merge', merged.branch);
    expect(await statusOf(merged.worktree_id)).toMatchObject({ integrated: true, integration_reason: 'ancestor', behind: 1 });
  });

  it('no_added_changes: commits that cancel out', async () => {
    const wt = await branchWith({ 'tmp.txt': 'tmp\n' });
    rig.repos.git(wt.path, 'revert', '--no-edit', 'HEAD');
    expect(await statusOf(wt.worktree_id)).toMatchObject({ integrated: true, integration_reason: 'no_added_changes', ahead: 2 });
  });

  it('squash-landed: trees_match, then merge_adds_nothing once upstream moved on', async () => {
    const wt = await branchWith({ 'sq1.txt': '1\n' }, { 'sq2.txt': '2\n' });
    squashOntoMain(wt.branch, 'squashed');
    expect(await statusOf(wt.worktree_id)).toMatchObject({ integrated: true, integration_reason: 'trees_match', ahead: 2, behind: 1 });
    rig.repos.commit(rig.repos.repo, { 'later.txt': 'later\n' }, 'unrelated later work');
    expect(await statusOf(wt.worktree_id)).toMatchObject({ integrated: true, integration_reason: 'merge_adds_nothing', behind: 2 });
  });

  it('rebase-landed: merge_adds_nothing, and patch_id_match when upstream later rewrote the same lines', async () => {
    const clean = await branchWith({ 'rb.txt': 'rb\n' });
    rig.repos.commit(rig.repos.repo, { 'before.txt': 'x\n' }, 'upstream first');
    onMain('cherry-pick', clean.shas[0] as string);
    expect(await statusOf(clean.worktree_id)).toMatchObject({ integrated: true, integration_reason: 'merge_adds_nothing' });

    const edited = await branchWith({ 'src/app.txt': 'line 1\nline 2 by the branch\nline 3\n' });
    // upstream moved first, so the cherry-pick is a new commit (not the branch's own, byte for byte)
    rig.repos.commit(rig.repos.repo, { 'before-2.txt': 'y\n' }, 'upstream second');
    onMain('cherry-pick', edited.shas[0] as string);
    rig.repos.commit(rig.repos.repo, { 'src/app.txt': 'line 1\nline 2 rewritten upstream\nline 3\n' }, 'rewrite');
    expect(await statusOf(edited.worktree_id)).toMatchObject({ integrated: true, integration_reason: 'patch_id_match' });
  });

  it('squash-landed and then rewritten upstream: the whole diff matches one upstream commit (patch_id_match)', async () => {
    const wt = await branchWith(
      { 'src/app.txt': 'line 1\nline 2 squash a\nline 3\n' },
      { 'src/app.txt': 'line 1\nline 2 squash a\nline 3 squash b\n' },
    );
    squashOntoMain(wt.branch, 'squash of two');
    rig.repos.commit(rig.repos.repo, { 'src/app.txt': 'line 1\nline 2 changed after\nline 3 squash b\n' }, 'after the squash');
    expect(await statusOf(wt.worktree_id)).toMatchObject({ integrated: true, integration_reason: 'patch_id_match' });
    // and a branch whose change upstream never took stays unintegrated
    const other = await branchWith({ 'src/app.txt': 'line 1\nline 2 changed after\nline 3 mine\n' });
    rig.repos.commit(rig.repos.repo, { 'src/app.txt': 'line 1\nline 2 changed again\nline 3 squash b\n' }, 'conflicting');
    expect(await statusOf(other.worktree_id)).toMatchObject({ integrated: false });
  });
});
