import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failure, type Rig, startRig } from './helpers.ts';

// create, list, get, status, validate, claim, release and remove against real repositories.

let rig: Rig;
beforeAll(async () => {
  rig = await startRig({ config: { gates: { allow_force: true } } });
});
afterAll(async () => {
  await rig?.stop();
});

const call = <T = any>(fn: string, payload: unknown) => rig.client.call<T>(fn, payload, { timeoutMs: 20_000 });

describe('create', () => {
  it('makes a locked worktree on a new eng/ branch from HEAD, under the root', async () => {
    const { repos } = rig;
    const created = await call('worktree::create', { repo_path: repos.repo });
    expect(created.worktree_id).toMatch(/^wt_[0-9a-f]{12}$/);
    expect(created.branch).toBe(`eng/${created.worktree_id}`);
    expect(created.base_ref).toBe('main');
    expect(created.base_sha).toBe(repos.head(repos.repo));
    expect(created.path.startsWith(`${repos.root}/`)).toBe(true);
    expect(created.repo_path).toBe(repos.repo);
    expect(created.dev_port).toBeGreaterThanOrEqual(10000);
    expect(created.dev_port).toBeLessThan(20000);
    expect(existsSync(join(created.path, 'README.md'))).toBe(true);
    expect(repos.git(created.path, 'symbolic-ref', '--short', 'HEAD')).toBe(created.branch);
    // created with --lock, so `git worktree prune` elsewhere cannot drop it
    expect(repos.git(repos.repo, 'worktree', 'list', '--porcelain')).toContain(
      `worktree ${created.path}\nHEAD ${created.base_sha}\nbranch refs/heads/${created.branch}\nlocked`,
    );
  });

  it('takes a base ref, a branch name and a session (auto-claim)', async () => {
    const { repos } = rig;
    repos.git(repos.repo, 'branch', 'release', 'main');
    const created = await call('worktree::create', {
      repo_path: repos.repo,
      base_ref: 'release',
      branch: 'feature/login',
      session_id: 'sess-a',
    });
    expect(created).toMatchObject({ branch: 'feature/login', base_ref: 'release', session_id: 'sess-a' });
    const info = await call('worktree::get', { worktree_id: created.worktree_id });
    expect(info).toMatchObject({ lifecycle: 'claimed', session_id: 'sess-a', branch: 'feature/login', base_ref: 'release' });
    expect(info.status).toMatchObject({ clean: true, ahead: 0, behind: 0, integrated: false });
  });

  it('checks out refs/pull/<n>/head when the remote has it, and says so when it does not', async () => {
    const { repos } = rig;
    // a pull request head on the remote, as a forge publishes it
    const side = join(repos.dir, 'contributor');
    repos.git(repos.dir, 'clone', '--quiet', repos.origin, side);
    const prHead = repos.commit(side, { 'pr.txt': 'from a contributor\n' }, 'pr work');
    repos.git(side, 'push', '--quiet', 'origin', 'HEAD:refs/pull/7/head');
    const created = await call('worktree::create', { repo_path: repos.repo, pr: 7 });
    expect(created).toMatchObject({ branch: 'eng/pr-7', base_ref: 'refs/pull/7/head', base_sha: prHead });
    expect(existsSync(join(created.path, 'pr.txt'))).toBe(true);
    const missing = await failure(call('worktree::create', { repo_path: repos.repo, pr: 99 }));
    expect(missing.code).toBe('W204');
    expect(missing.message).toContain('refs/pull/99/head');
  });

  it('refuses an existing branch, an unknown base ref, and what is not a repository', async () => {
    const { repos } = rig;
    expect((await failure(call('worktree::create', { repo_path: repos.repo, branch: 'main' }))).code).toBe('W203');
    const base = await failure(call('worktree::create', { repo_path: repos.repo, base_ref: 'no-such-branch' }));
    expect(base.code).toBe('W202');
    expect(base.message).toContain('no-such-branch');
    const plain = join(repos.dir, 'plain');
    mkdirSync(plain, { recursive: true });
    expect((await failure(call('worktree::create', { repo_path: plain }))).code).toBe('W201');
    const bad = await failure(call('worktree::create', { repo_path: repos.repo, pr: -1 }));
    expect(bad.code).toBe('W100');
    expect(bad.message).toContain('pr');
  });
});

describe('list, get, status', () => {
  it('lists oldest first, filters by repo and session, and reports unmanaged worktrees of a repo', async () => {
    const { repos } = rig;
    const a = await call('worktree::create', { repo_path: repos.repo, session_id: 'sess-list' });
    const b = await call('worktree::create', { repo_path: repos.repo });
    const unmanaged = join(repos.dir, 'by-hand');
    repos.git(repos.repo, 'worktree', 'add', '--quiet', '-b', 'by-hand', unmanaged);
    const all = await call('worktree::list', {});
    const ids = all.worktrees.map((w: any) => w.worktree_id);
    expect(ids.indexOf(a.worktree_id)).toBeLessThan(ids.indexOf(b.worktree_id));
    expect(all.unmanaged).toBeUndefined();
    expect(all.worktrees[0].status).toBeUndefined();
    const mine = await call('worktree::list', { session_id: 'sess-list' });
    expect(mine.worktrees.map((w: any) => w.worktree_id)).toEqual([a.worktree_id]);
    const ofRepo = await call('worktree::list', { repo_path: join(repos.repo, 'src'), include_status: true });
    expect(ofRepo.worktrees.length).toBe(all.worktrees.length);
    expect(ofRepo.unmanaged).toEqual([{ path: unmanaged, branch: 'by-hand' }]);
    expect(ofRepo.worktrees.every((w: any) => typeof w.status?.clean === 'boolean')).toBe(true);
  });

  it('status counts staged, modified, untracked work and the diffstat since the base', async () => {
    const { repos } = rig;
    const wt = await call('worktree::create', { repo_path: repos.repo });
    repos.commit(wt.path, { 'src/app.txt': 'line 1\nline two\nline 3\nline 4\n' }, 'edit app');
    writeFileSync(join(wt.path, 'README.md'), '# changed\n');
    writeFileSync(join(wt.path, 'new.txt'), 'new\n');
    writeFileSync(join(wt.path, 'staged.txt'), 'staged\n');
    repos.git(wt.path, 'add', 'staged.txt');
    const status = await call('worktree::status', { worktree_id: wt.worktree_id });
    expect(status).toMatchObject({
      clean: false,
      ahead: 1,
      behind: 0,
      staged: 1,
      unstaged: 1,
      untracked: 1,
      conflicted: 0,
      unpushed: 1,
      in_rebase: false,
      integrated: false,
    });
    expect(status.head_sha).toBe(repos.head(wt.path));
    expect(status.diffstat).toMatch(/3 files changed, 4 insertions\(\+\), 2 deletions\(-\)/);
    const byPath = await call('worktree::status', { path: join(wt.path, 'src') });
    expect(byPath.head_sha).toBe(status.head_sha);
    // the base moving on shows as behind
    repos.commit(repos.repo, { 'other.txt': 'upstream\n' }, 'upstream work');
    expect((await call('worktree::status', { worktree_id: wt.worktree_id })).behind).toBe(1);
  });

  it('answers unknown ids and bad input with a code naming the problem', async () => {
    expect((await failure(call('worktree::get', { worktree_id: 'wt_000000000000' }))).code).toBe('W200');
    const bad = await failure(call('worktree::get', { worktree_id: '../../etc' }));
    expect(bad.code).toBe('W100');
    expect(bad.message).toContain('worktree_id');
    const both = await failure(call('worktree::status', {}));
    expect(both.message).toContain('exactly one of worktree_id and path');
    expect((await failure(call('worktree::list', { include_status: 'yes' }))).message).toContain('include_status');
    expect((await failure(call('worktree::list', { bogus: 1 }))).message).toContain('bogus');
  });
});

describe('validate, claim, release', () => {
  it('validates managed paths and refuses others', async () => {
    const { repos } = rig;
    const wt = await call('worktree::create', { repo_path: repos.repo });
    expect(await call('worktree::validate', { path: join(wt.path, 'src') })).toMatchObject({
      valid: true,
      managed: true,
      worktree_id: wt.worktree_id,
    });
    expect(await call('worktree::validate', { path: repos.repo })).toMatchObject({ valid: false, managed: false });
    expect(await call('worktree::validate', { path: join(wt.path, '..', '..', '..') })).toMatchObject({ valid: false, managed: false });
    expect((await call('worktree::validate', { path: 'relative/dir' })).reason).toContain('absolute');
    expect((await call('worktree::validate', { path: join(repos.root, 'nope') })).reason).toContain('does not exist');
  });

  it('claims for one session, refuses another (W210) unless forced, and releases only for the owner (W211)', async () => {
    const { repos } = rig;
    const wt = await call('worktree::create', { repo_path: repos.repo });
    const id = wt.worktree_id;
    expect(await call('worktree::claim', { worktree_id: id, session_id: 's1' })).toEqual({
      claimed: true,
      session_id: 's1',
      worktree_id: id,
    });
    expect(await call('worktree::claim', { worktree_id: id, session_id: 's1' })).toMatchObject({ claimed: true });
    const taken = await failure(call('worktree::claim', { worktree_id: id, session_id: 's2' }));
    expect(taken.code).toBe('W210');
    expect(taken.message).toContain('s1');
    expect((await failure(call('worktree::release', { worktree_id: id, session_id: 's2' }))).code).toBe('W211');
    expect(await call('worktree::claim', { worktree_id: id, session_id: 's2', force: true })).toMatchObject({
      claimed: true,
      previous_session_id: 's1',
    });
    expect((await call('worktree::get', { worktree_id: id })).session_id).toBe('s2');
    expect(await call('worktree::release', { worktree_id: id, session_id: 's2' })).toEqual({ released: true, worktree_id: id });
    expect(await call('worktree::release', { worktree_id: id, session_id: 's2' })).toEqual({ released: false, worktree_id: id });
    expect((await call('worktree::get', { worktree_id: id })).lifecycle).toBe('active');
  });
});

describe('remove', () => {
  it('refuses a dirty worktree (W220) and unmerged commits (W221), then removes folder and branch', async () => {
    const { repos } = rig;
    const wt = await call('worktree::create', { repo_path: repos.repo });
    writeFileSync(join(wt.path, 'scratch.txt'), 'wip\n');
    const dirty = await failure(call('worktree::remove', { worktree_id: wt.worktree_id }));
    expect(dirty.code).toBe('W220');
    expect(dirty.message).toContain('1 untracked');
    repos.git(wt.path, 'add', 'scratch.txt');
    repos.git(wt.path, 'commit', '--quiet', '-m', 'wip');
    const unmerged = await failure(call('worktree::remove', { worktree_id: wt.worktree_id }));
    expect(unmerged.code).toBe('W221');
    expect(unmerged.message).toContain('1 commit');
    expect(existsSync(wt.path)).toBe(true);
    // keeping the branch loses nothing, so that is allowed
    const kept = await call('worktree::remove', { worktree_id: wt.worktree_id, delete_branch: false });
    expect(kept).toEqual({ removed: true, worktree_id: wt.worktree_id, branch: wt.branch, branch_deleted: false });
    expect(existsSync(wt.path)).toBe(false);
    expect(repos.git(repos.repo, 'branch', '--list', wt.branch)).toContain(wt.branch);
    expect(repos.git(repos.repo, 'worktree', 'list')).not.toContain(wt.path);
    expect((await failure(call('worktree::get', { worktree_id: wt.worktree_id }))).code).toBe('W200');
  });

  it('removes a clean worktree with its branch, and force removes a dirty one', async () => {
    const { repos } = rig;
    const clean = await call('worktree::create', { repo_path: repos.repo });
    expect(await call('worktree::remove', { worktree_id: clean.worktree_id })).toMatchObject({ branch_deleted: true });
    expect(repos.git(repos.repo, 'branch', '--list', clean.branch)).toBe('');
    const dirty = await call('worktree::create', { repo_path: repos.repo });
    repos.commit(dirty.path, { 'x.txt': 'x\n' });
    writeFileSync(join(dirty.path, 'y.txt'), 'y\n');
    expect(await call('worktree::remove', { worktree_id: dirty.worktree_id, force: true })).toMatchObject({
      removed: true,
      branch_deleted: true,
    });
    expect(existsSync(dirty.path)).toBe(false);
  });
});
