import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failure, type Rig, recordEvents, startRig, waitFor } from './helpers.ts';

// worktree::prune: integrated and expired worktrees go, vanished folders are forgotten, anything
// dirty, claimed-and-fresh or landing stays; the engine's cron fires it on prune_schedule.

let rig: Rig;
beforeAll(async () => {
  rig = await startRig();
});
afterAll(async () => {
  await rig?.stop();
});

const call = <T = any>(fn: string, payload: unknown) => rig.client.call<T>(fn, payload, { timeoutMs: 20_000 });

/** Change fields of the worktree configuration entry (the worker reloads it through its trigger). */
async function setConfig(change: Record<string, unknown>) {
  const current = (await call<{ value: Record<string, any> }>('configuration::get', { id: 'worktree' })).value;
  const gates = { ...current.gates, ...((change.gates as object) ?? {}) };
  await call('configuration::set', { id: 'worktree', value: { ...current, ...change, gates } });
}

async function integratedWorktree(session?: string) {
  const wt = await call('worktree::create', { repo_path: rig.repos.repo, ...(session ? { session_id: session } : {}) });
  rig.repos.commit(wt.path, { [`${wt.worktree_id}.txt`]: 'done\n' }, 'work');
  rig.repos.git(rig.repos.repo, 'merge', '--quiet', '--ff-only', wt.branch);
  return wt;
}

describe('prune', () => {
  it('removes integrated worktrees and forgets vanished ones, keeps fresh, dirty and claimed ones', async () => {
    const integrated = await integratedWorktree();
    const claimedIntegrated = await integratedWorktree('sess-keep');
    const fresh = await call('worktree::create', { repo_path: rig.repos.repo });
    const dirty = await integratedWorktree();
    writeFileSync(join(dirty.path, 'wip.txt'), 'wip\n');
    const vanished = await call('worktree::create', { repo_path: rig.repos.repo });
    rmSync(vanished.path, { recursive: true, force: true });

    const dry = await call('worktree::prune', { dry_run: true });
    expect(dry.dry_run).toBe(true);
    expect(existsSync(integrated.path)).toBe(true);

    const result = await call('worktree::prune', {});
    const byId = Object.fromEntries(result.removed.map((r: any) => [r.worktree_id, r]));
    expect(byId[integrated.worktree_id]).toEqual({ worktree_id: integrated.worktree_id, reason: 'integrated', branch_deleted: true });
    expect(byId[vanished.worktree_id]).toMatchObject({ reason: 'orphaned', branch_deleted: false });
    expect(Object.keys(byId).sort()).toEqual([integrated.worktree_id, vanished.worktree_id].sort());
    expect(dry.removed.map((r: any) => r.worktree_id).sort()).toEqual(Object.keys(byId).sort());
    expect(existsSync(integrated.path)).toBe(false);
    expect(rig.repos.git(rig.repos.repo, 'branch', '--list', integrated.branch)).toBe('');
    const left = (await call('worktree::list', {})).worktrees.map((w: any) => w.worktree_id);
    expect(left).toEqual([claimedIntegrated.worktree_id, fresh.worktree_id, dirty.worktree_id]);
    expect(rig.repos.git(rig.repos.repo, 'worktree', 'list')).not.toContain(vanished.path);
  });

  it('removes what expired (claimed or not), never what is dirty', async () => {
    await setConfig({ prune_expire_hours: 0.0001 }); // 0.36 s
    // the worker reloads the entry through its configuration trigger: a dry run shows when it did
    await waitFor(async () => (await call('worktree::prune', { dry_run: true })).removed.length === 2, 10_000, 100);
    const result = await call('worktree::prune', {});
    const reasons = result.removed.map((r: any) => r.reason);
    expect(reasons).toEqual(['expired', 'expired']);
    const left = (await call('worktree::list', { include_status: true })).worktrees;
    expect(left).toHaveLength(1);
    expect(left[0].status.clean).toBe(false);
    await setConfig({ prune_expire_hours: 72 });
  });

  it('runs on the engine cron schedule from the configuration entry, and its gate turns it off', async () => {
    const removed = await recordEvents(rig.client, 'worktree::removed');
    const wt = await integratedWorktree();
    await setConfig({ prune_schedule: '* * * * * *' });
    await waitFor(() => removed.events.some((e) => e.worktree_id === wt.worktree_id), 10_000);
    expect(existsSync(wt.path)).toBe(false);
    await setConfig({ prune_schedule: '', gates: { allow_prune: false } });
    const refused = await waitFor(
      async () => {
        const e = await failure(call('worktree::prune', { dry_run: true })).catch(() => undefined);
        return e?.code === 'W500' ? e : undefined;
      },
      10_000,
      100,
    );
    expect(refused.code).toBe('W500');
    expect(refused.message).toContain('gates.allow_prune');
    const bad = await failure(call('worktree::prune', { dry_run: 'yes' }));
    expect(bad.code).toBe('W100');
    await setConfig({ gates: { allow_prune: true } });
  });
});
