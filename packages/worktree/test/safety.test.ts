import { existsSync, mkdirSync, renameSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failure, type Rig, startRig, startWorker, waitFor } from './helpers.ts';

// What the worker refuses: option injection through names, paths that leave the root, and every
// gate of the `worktree` configuration entry (hot-reloaded through configuration::set).

let rig: Rig;
beforeAll(async () => {
  rig = await startRig();
});
afterAll(async () => {
  await rig?.stop();
});

const NO_SUCH = 'wt_000000000000';
const call = <T = any>(fn: string, payload: unknown) => rig.client.call<T>(fn, payload, { timeoutMs: 20_000 });

async function setGates(gates: Record<string, unknown>) {
  const current = (await call<{ value: Record<string, any> }>('configuration::get', { id: 'worktree' })).value;
  await call('configuration::set', { id: 'worktree', value: { ...current, gates: { ...current.gates, ...gates } } });
}

/** The error `run` fails with once the worker has reloaded its configuration (it does so through a trigger). */
function untilRefused(code: string, run: () => Promise<unknown>) {
  return waitFor(
    async () => {
      const e = await failure(run()).catch(() => undefined);
      return e?.code === code ? e : undefined;
    },
    10_000,
    100,
  );
}

describe('option injection and path escapes', () => {
  it('never hands an option-looking name to git', async () => {
    const { repos } = rig;
    const marker = join(repos.dir, 'pwned');
    const branch = await failure(call('worktree::create', { repo_path: repos.repo, branch: `--upload-pack=touch ${marker}` }));
    expect(branch.code).toBe('W101');
    expect(branch.message).toContain('must not start with "-"');
    const base = await failure(call('worktree::create', { repo_path: repos.repo, base_ref: `--output=${marker}` }));
    expect(base.code).toBe('W101');
    const remote = await failure(call('worktree::create', { repo_path: repos.repo, pr: 1, remote: `--upload-pack=touch ${marker}` }));
    expect(remote.code).toBe('W100');
    expect(remote.message).toContain('remote');
    for (const name of ['a..b', 'HEAD', 'x@{-1}', 'refs/heads/main', 'bad name', 'trailing/', 'lock.lock']) {
      expect((await failure(call('worktree::create', { repo_path: repos.repo, branch: name }))).code, name).toBe('W101');
    }
    expect(existsSync(marker)).toBe(false);
    expect(repos.git(repos.repo, 'branch', '--list')).not.toContain('upload-pack');
    const wt = await call('worktree::create', { repo_path: repos.repo });
    expect(
      (await failure(call('worktree::land', { worktree_id: wt.worktree_id, target_branch: `--upload-pack=touch ${marker}` }))).code,
    ).toBe('W101');
    expect(existsSync(marker)).toBe(false);
  });

  it('refuses relative repo paths, ../ escapes and ids that are paths', async () => {
    const { repos } = rig;
    const relative = await failure(call('worktree::create', { repo_path: '../repo' }));
    expect(relative.code).toBe('W102');
    expect(relative.message).toContain('absolute');
    expect((await failure(call('worktree::create', { repo_path: '--git-dir=/tmp' }))).code).toBe('W102');
    expect((await failure(call('worktree::get', { worktree_id: 'wt_abc/../../etc' }))).code).toBe('W100');
    const wt = await call('worktree::create', { repo_path: repos.repo });
    const escaped = join(wt.path, '..', '..', '..', 'repo');
    expect(await call('worktree::validate', { path: escaped })).toMatchObject({ valid: false, managed: false });
    expect((await failure(call('worktree::status', { path: escaped }))).code).toBe('W200');
    expect((await failure(call('worktree::status', { path: 'relative' }))).code).toBe('W102');
    // the root itself holds no repositories of its own
    const inside = join(repos.root, 'nested-repo');
    mkdirSync(inside, { recursive: true });
    repos.git(inside, 'init', '--quiet');
    repos.commit(inside, { 'f.txt': 'f\n' });
    expect((await failure(call('worktree::create', { repo_path: inside }))).code).toBe('W102');
  });

  it('will not act on a worktree folder swapped for a symlink that leads outside the root', async () => {
    const { repos } = rig;
    const wt = await call('worktree::create', { repo_path: repos.repo });
    const outside = join(repos.dir, 'outside');
    renameSync(wt.path, outside);
    symlinkSync(outside, wt.path);
    const refused = await failure(call('worktree::remove', { worktree_id: wt.worktree_id, delete_branch: false }));
    expect(refused.code).toBe('W102');
    expect(existsSync(join(outside, 'README.md'))).toBe(true);
    expect((await failure(call('worktree::status', { worktree_id: wt.worktree_id }))).code).toBe('W102');
    expect((await call('worktree::get', { worktree_id: wt.worktree_id })).status_error).toContain('not inside its worktree root');
    expect(await call('worktree::validate', { path: outside })).toMatchObject({ valid: false });
  });
});

describe('gates of the configuration entry', () => {
  it('repos and the per-repo budget (W503, W504)', async () => {
    const { repos } = rig;
    await setGates({ repos: ['/nowhere/*'] });
    const e = await untilRefused('W503', () => call('worktree::create', { repo_path: repos.repo }));
    expect(e.message).toContain('gates.repos');
    await setGates({ repos: [`${repos.dir}/*`], max_worktrees_per_repo: 1 });
    const budget = await untilRefused('W504', () => call('worktree::create', { repo_path: repos.repo }));
    expect(budget.message).toContain('max_worktrees_per_repo');
    const other = join(repos.dir, 'second');
    repos.git(repos.dir, 'clone', '--quiet', repos.origin, other);
    const created = await call('worktree::create', { repo_path: other });
    expect((await failure(call('worktree::create', { repo_path: other }))).code).toBe('W504');
    await call('worktree::remove', { worktree_id: created.worktree_id });
    await setGates({ repos: ['*'], max_worktrees_per_repo: 0 });
    await waitFor(async () => (await call('worktree::create', { repo_path: other }).catch(() => undefined)) !== undefined, 10_000, 100);
  });

  it('force, remove, branch delete, land, land targets and caller test commands', async () => {
    const { repos } = rig;
    const wt = await call('worktree::create', { repo_path: repos.repo, session_id: 'owner' });
    const id = wt.worktree_id;
    expect((await failure(call('worktree::claim', { worktree_id: id, session_id: 'thief', force: true }))).code).toBe('W501');
    expect((await failure(call('worktree::release', { worktree_id: id, session_id: 'thief', force: true }))).code).toBe('W501');
    expect((await failure(call('worktree::remove', { worktree_id: id, force: true }))).code).toBe('W501');

    await setGates({ allow_land: false, allow_remove: false });
    // gates are checked before the worktree is looked up: an unknown id probes them without side effects
    await untilRefused('W500', () => call('worktree::land', { worktree_id: NO_SUCH, target_branch: 'main' }));
    expect((await failure(call('worktree::land', { worktree_id: id, target_branch: 'main' }))).message).toContain('gates.allow_land');
    expect((await failure(call('worktree::remove', { worktree_id: id }))).message).toContain('gates.allow_remove');

    await setGates({
      allow_land: true,
      allow_remove: true,
      land_targets: ['release/*'],
      allow_branch_delete: false,
    });
    await untilRefused('W502', () => call('worktree::land', { worktree_id: NO_SUCH, target_branch: 'main' }));
    expect((await failure(call('worktree::land', { worktree_id: id, target_branch: 'main' }))).message).toContain('gates.land_targets');
    expect((await failure(call('worktree::land', { worktree_id: NO_SUCH, target_branch: 'release/1' }))).code).toBe('W200');
    const tests = await failure(call('worktree::land', { worktree_id: id, target_branch: 'release/1', test_cmd: 'true' }));
    expect(tests.code).toBe('W500');
    expect(tests.message).toContain('gates.allow_caller_test_cmd');
    expect((await failure(call('worktree::remove', { worktree_id: id, delete_branch: true }))).code).toBe('W500');
    const removed = await call('worktree::remove', { worktree_id: id });
    expect(removed.branch_deleted).toBe(false);
    expect(repos.git(repos.repo, 'branch', '--list', wt.branch)).toContain(wt.branch);
    await setGates({ land_targets: ['*'], allow_branch_delete: true });
  });

  it('a malformed ENG_WORKER_CONFIG stops the worker with the field named', async () => {
    const bad = startWorker(rig.engine.busUrl, { ...rig.repos.env, ENG_WORKER_CONFIG: JSON.stringify({ gates: { allow_force: 'yes' } }) });
    const error = await bad.ready.then(
      () => undefined,
      (e: Error) => e,
    );
    await bad.stop();
    expect(error?.message).toMatch(/ENG_WORKER_CONFIG: gates\.allow_force/);
  });
});
