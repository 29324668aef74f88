import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failure, type Rig, recordEvents, startRig, waitFor } from './helpers.ts';

// worktree::land end to end: the queue, the rebase, the test gate, the compare-and-swap and the
// cleanup, against a clone whose main is checked out (the common case: the target moves under
// a working copy, which must follow).

let rig: Rig;
let landed: { events: any[] };
let blocked: { events: any[] };
beforeAll(async () => {
  // these tests give each land its own command; the CAS test's command commits, so it needs the rig's git identity
  rig = await startRig({
    config: { gates: { allow_caller_test_cmd: true }, test_env: ['GIT_AUTHOR_*', 'GIT_COMMITTER_*', 'GIT_CONFIG_*'] },
  });
  landed = await recordEvents(rig.client, 'worktree::landed');
  blocked = await recordEvents(rig.client, 'worktree::land-blocked');
});
afterAll(async () => {
  await rig?.stop();
});

const call = <T = any>(fn: string, payload: unknown) => rig.client.call<T>(fn, payload, { timeoutMs: 20_000 });
const outcomeOf = (worktreeId: string, after = 0) =>
  waitFor(
    () =>
      landed.events.slice(after).find((e) => e.worktree_id === worktreeId) ??
      blocked.events.slice(after).find((e) => e.worktree_id === worktreeId),
    30_000,
  );

async function worktreeWith(files: Record<string, string>, message = 'feature') {
  const wt = await call('worktree::create', { repo_path: rig.repos.repo });
  const head = rig.repos.commit(wt.path, files, message);
  return { ...wt, head };
}

describe('land', () => {
  it('rebases onto the moved target, fast-forwards it, updates the checkout and removes the worktree', async () => {
    const { repos } = rig;
    const wt = await worktreeWith({ 'feature.txt': 'feature\n' });
    const upstream = repos.commit(repos.repo, { 'upstream.txt': 'meanwhile\n' }, 'upstream');
    const removed = await recordEvents(rig.client, 'worktree::removed', { worktree_id: wt.worktree_id });
    const queued = await call('worktree::land', { worktree_id: wt.worktree_id, target_branch: 'main' });
    expect(queued).toMatchObject({ queued: true, worktree_id: wt.worktree_id, target_branch: 'main' });
    expect(queued.job_id).toMatch(/^land_/);
    const event = await outcomeOf(wt.worktree_id);
    expect(event).toMatchObject({ worktree_id: wt.worktree_id, repo_path: repos.repo, branch: wt.branch, target_branch: 'main' });
    expect(event.merged_sha).toBe(repos.head(repos.repo, 'main'));
    // rebased: the feature commit sits on top of the upstream commit, linear history
    expect(repos.head(repos.repo, 'main^')).toBe(upstream);
    expect(repos.git(repos.repo, 'log', '-1', '--format=%s', 'main')).toBe('feature');
    // the clone that has main checked out followed: files present, nothing staged or modified
    expect(readFileSync(join(repos.repo, 'feature.txt'), 'utf8')).toBe('feature\n');
    expect(repos.git(repos.repo, 'status', '--porcelain')).toBe('');
    await waitFor(() => removed.events.length === 1, 10_000);
    expect(removed.events[0]).toMatchObject({ worktree_id: wt.worktree_id, branch: wt.branch, branch_deleted: true });
    expect(existsSync(wt.path)).toBe(false);
    expect(repos.git(repos.repo, 'branch', '--list', wt.branch)).toBe('');
    expect((await failure(call('worktree::get', { worktree_id: wt.worktree_id }))).code).toBe('W200');
    removed.unbind();
  });

  it('stops on a conflict with the rebase left in progress and the files named, then lands once resolved', async () => {
    const { repos } = rig;
    const wt = await worktreeWith({ 'src/app.txt': 'line 1\nline 2 from the branch\nline 3\n' });
    const before = repos.commit(repos.repo, { 'src/app.txt': 'line 1\nline 2 from main\nline 3\n' }, 'main edit');
    await call('worktree::land', { worktree_id: wt.worktree_id, target_branch: 'main' });
    const event = await outcomeOf(wt.worktree_id);
    expect(event).toMatchObject({ reason: 'rebase_conflict', code: 'W401', conflict_files: ['src/app.txt'], target_branch: 'main' });
    expect(repos.head(repos.repo, 'main')).toBe(before);
    const info = await call('worktree::get', { worktree_id: wt.worktree_id });
    expect(info.lifecycle).toBe('land-blocked');
    expect(info.land).toMatchObject({ state: 'blocked', reason: 'rebase_conflict', conflict_files: ['src/app.txt'] });
    // mid-rebase the branch's own commit still counts: ahead, not "integrated" because HEAD sits on main
    expect(info.status).toMatchObject({ in_rebase: true, conflicted: 1, ahead: 1, integrated: false });

    // landing again before the owner resolved it says so
    const count = blocked.events.length;
    await call('worktree::land', { worktree_id: wt.worktree_id, target_branch: 'main' });
    expect(await outcomeOf(wt.worktree_id, count)).toMatchObject({ reason: 'rebase_in_progress', code: 'W402' });

    writeFileSync(join(wt.path, 'src/app.txt'), 'line 1\nline 2 from both\nline 3\n');
    repos.git(wt.path, 'add', 'src/app.txt');
    repos.git(wt.path, '-c', 'core.editor=true', 'rebase', '--continue');
    const landedBefore = landed.events.length;
    await call('worktree::land', { worktree_id: wt.worktree_id, target_branch: 'main' });
    const done = await waitFor(() => landed.events.slice(landedBefore).find((e) => e.worktree_id === wt.worktree_id), 30_000);
    expect(readFileSync(join(repos.repo, 'src/app.txt'), 'utf8')).toBe('line 1\nline 2 from both\nline 3\n');
    expect(done.merged_sha).toBe(repos.head(repos.repo, 'main'));
  });

  it('gates on the test command: a failure blocks with its exit code, a pass lands', async () => {
    const { repos } = rig;
    const wt = await worktreeWith({ 'gated.txt': 'gated\n' });
    const before = repos.head(repos.repo, 'main');
    await call('worktree::land', {
      worktree_id: wt.worktree_id,
      target_branch: 'main',
      keep: true,
      test_cmd: 'echo "2 tests failed" >&2; exit 3',
    });
    const failed = await outcomeOf(wt.worktree_id);
    expect(failed).toMatchObject({ reason: 'test_failed', code: 'W410', exit_code: 3 });
    expect(failed.message).toContain('2 tests failed');
    expect(repos.head(repos.repo, 'main')).toBe(before);

    const count = blocked.events.length;
    await call('worktree::land', { worktree_id: wt.worktree_id, target_branch: 'main', keep: true, test_cmd: ['/no/such/test-runner'] });
    expect(await outcomeOf(wt.worktree_id, count)).toMatchObject({ reason: 'test_failed', code: 'W411' });

    // the test runs inside the rebased worktree: the file it checks is the branch's own
    const landedBefore = landed.events.length;
    await call('worktree::land', { worktree_id: wt.worktree_id, target_branch: 'main', keep: true, test_cmd: ['test', '-f', 'gated.txt'] });
    const ok = await waitFor(() => landed.events.slice(landedBefore).find((e) => e.worktree_id === wt.worktree_id), 30_000);
    expect(repos.head(repos.repo, 'main')).toBe(ok.merged_sha);
    // keep: the worktree stays, now level with its target
    const info = await call('worktree::get', { worktree_id: wt.worktree_id });
    expect(info).toMatchObject({ lifecycle: 'active', base_sha: ok.merged_sha, land: { state: 'landed', merged_sha: ok.merged_sha } });
    expect(info.status).toMatchObject({ ahead: 0, behind: 0, clean: true });
  });

  it('rebases and tests again when the target moves before the compare-and-swap', async () => {
    const { repos } = rig;
    const wt = await worktreeWith({ 'cas.txt': 'cas\n' });
    const runs = join(repos.dir, 'cas-runs.log');
    // the first test run moves main (another agent landing meanwhile); the second does not
    const script = [
      `echo run >> ${runs}`,
      `if [ "$(wc -l < ${runs})" -eq 1 ]; then echo moved > ${repos.repo}/moved.txt && git -C ${repos.repo} add moved.txt && git -C ${repos.repo} commit -qm moved-meanwhile; fi`,
    ].join('; ');
    await call('worktree::land', { worktree_id: wt.worktree_id, target_branch: 'main', test_cmd: script });
    const event = await outcomeOf(wt.worktree_id);
    expect(event.merged_sha).toBeDefined();
    expect(readFileSync(runs, 'utf8').trim().split('\n')).toHaveLength(2);
    expect(repos.git(repos.repo, 'log', '-2', '--format=%s', 'main').split('\n')).toEqual(['feature', 'moved-meanwhile']);
    expect(repos.head(repos.repo, 'main')).toBe(event.merged_sha);
    expect(existsSync(join(repos.repo, 'cas.txt'))).toBe(true);
    expect(repos.git(repos.repo, 'status', '--porcelain')).toBe('');
  });

  it('lands the worktrees of one repository one at a time, in the order asked', async () => {
    const first = await worktreeWith({ 'first.txt': '1\n' }, 'first');
    const second = await worktreeWith({ 'second.txt': '2\n' }, 'second');
    const before = landed.events.length;
    // the first holds the repository's land lane for a moment; the second queues behind it
    await call('worktree::land', { worktree_id: first.worktree_id, target_branch: 'main', test_cmd: 'sleep 1' });
    await call('worktree::land', { worktree_id: second.worktree_id, target_branch: 'main' });
    const busy = await failure(call('worktree::land', { worktree_id: second.worktree_id, target_branch: 'main' }));
    expect(busy.code).toBe('W222');
    expect((await failure(call('worktree::remove', { worktree_id: first.worktree_id }))).code).toBe('W222');
    expect((await call('worktree::validate', { path: first.path })).reason).toBe('a land is in progress');
    await waitFor(() => landed.events.length >= before + 2, 30_000);
    expect(landed.events.slice(before).map((e) => e.worktree_id)).toEqual([first.worktree_id, second.worktree_id]);
    expect(rig.repos.git(rig.repos.repo, 'log', '-2', '--format=%s', 'main').split('\n')).toEqual(['second', 'first']);
  });

  it('blocks on a dirty worktree, a missing target and a dirty checkout of the target', async () => {
    const { repos } = rig;
    const wt = await worktreeWith({ 'd.txt': 'd\n' });
    writeFileSync(join(wt.path, 'wip.txt'), 'wip\n');
    await call('worktree::land', { worktree_id: wt.worktree_id, target_branch: 'main' });
    expect(await outcomeOf(wt.worktree_id)).toMatchObject({ reason: 'dirty', code: 'W220' });
    repos.git(wt.path, 'clean', '-fq');

    let count = blocked.events.length;
    await call('worktree::land', { worktree_id: wt.worktree_id, target_branch: 'does-not-exist' });
    expect(await outcomeOf(wt.worktree_id, count)).toMatchObject({ reason: 'target_ref_not_found', code: 'W400' });

    const before = repos.head(repos.repo, 'main');
    writeFileSync(join(repos.repo, 'README.md'), '# edited in the main checkout\n');
    count = blocked.events.length;
    await call('worktree::land', { worktree_id: wt.worktree_id, target_branch: 'main' });
    expect(await outcomeOf(wt.worktree_id, count)).toMatchObject({ reason: 'target_checked_out_dirty', code: 'W404' });
    expect(repos.head(repos.repo, 'main')).toBe(before);
    repos.git(repos.repo, 'checkout', '--', 'README.md');
  });

  it('refuses bad land requests up front', async () => {
    const wt = await worktreeWith({ 'e.txt': 'e\n' });
    expect((await failure(call('worktree::land', { worktree_id: wt.worktree_id, target_branch: wt.branch }))).code).toBe('W100');
    expect((await failure(call('worktree::land', { worktree_id: wt.worktree_id, target_branch: '--force' }))).code).toBe('W101');
    expect((await failure(call('worktree::land', { worktree_id: wt.worktree_id, target_branch: 'a..b' }))).code).toBe('W101');
    expect((await failure(call('worktree::land', { worktree_id: wt.worktree_id }))).message).toContain('target_branch');
    expect((await failure(call('worktree::land', { worktree_id: wt.worktree_id, target_branch: 'main', test_cmd: [] }))).message).toContain(
      'test_cmd',
    );
  });
});
