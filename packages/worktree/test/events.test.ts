import { join } from 'node:path';
import type { EngError } from '@eng/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Rig, recordEvents, startRig, waitFor } from './helpers.ts';

// The six lifecycle trigger types: each fires once per change with the reference payload, and
// the repo_path / worktree_id / session_id filters pick what a binding receives.

const TYPES = ['created', 'claimed', 'released', 'removed', 'landed', 'land-blocked'] as const;
type Recorded = Record<(typeof TYPES)[number], any[]>;

let rig: Rig;
beforeAll(async () => {
  rig = await startRig();
});
afterAll(async () => {
  await rig?.stop();
});

const call = <T = any>(fn: string, payload: unknown) => rig.client.call<T>(fn, payload, { timeoutMs: 20_000 });

async function bindAll(config: Record<string, unknown>): Promise<Recorded> {
  const out = {} as Recorded;
  for (const type of TYPES) out[type] = (await recordEvents(rig.client, `worktree::${type}`, config)).events;
  return out;
}

const ids = (events: any[]) => events.map((e) => e.worktree_id);

describe('lifecycle trigger types', () => {
  it('fire once each with their payloads, filtered by repo_path, worktree_id and session_id', async () => {
    const { repos } = rig;
    const other = join(repos.dir, 'other');
    repos.git(repos.dir, 'clone', '--quiet', repos.origin, other);

    const all = await bindAll({});
    const session = await bindAll({ session_id: 'sess-ev' });
    const ofRepo = await bindAll({ repo_path: repos.repo });
    const ofOther = await bindAll({ repo_path: other });

    const wt1 = await call('worktree::create', { repo_path: repos.repo, session_id: 'sess-ev' });
    const wt2 = await call('worktree::create', { repo_path: repos.repo });
    const ofWt2 = await bindAll({ worktree_id: wt2.worktree_id });
    await call('worktree::release', { worktree_id: wt1.worktree_id, session_id: 'sess-ev' });
    await call('worktree::claim', { worktree_id: wt1.worktree_id, session_id: 'sess-other' });
    rig.repos.commit(wt1.path, { 'one.txt': '1\n' }, 'one');
    await call('worktree::land', { worktree_id: wt1.worktree_id, target_branch: 'main' });
    await call('worktree::land', { worktree_id: wt2.worktree_id, target_branch: 'no-such-target' });
    await waitFor(() => all.landed.length === 1 && all['land-blocked'].length === 1 && all.removed.length === 1, 30_000);
    await call('worktree::remove', { worktree_id: wt2.worktree_id });
    const wt3 = await call('worktree::create', { repo_path: other });
    await waitFor(() => all.removed.length === 2 && all.created.length === 3, 10_000);
    // anything fired twice would have arrived by now
    await new Promise((r) => setTimeout(r, 750));

    const t = expect.any(Number);
    expect(all.created).toEqual([
      {
        worktree_id: wt1.worktree_id,
        repo_path: repos.repo,
        path: wt1.path,
        branch: wt1.branch,
        base_ref: 'main',
        base_sha: wt1.base_sha,
        session_id: 'sess-ev',
        timestamp: t,
      },
      {
        worktree_id: wt2.worktree_id,
        repo_path: repos.repo,
        path: wt2.path,
        branch: wt2.branch,
        base_ref: 'main',
        base_sha: wt2.base_sha,
        timestamp: t,
      },
      {
        worktree_id: wt3.worktree_id,
        repo_path: other,
        path: wt3.path,
        branch: wt3.branch,
        base_ref: 'main',
        base_sha: wt3.base_sha,
        timestamp: t,
      },
    ]);
    expect(all.claimed).toEqual([
      { worktree_id: wt1.worktree_id, repo_path: repos.repo, session_id: 'sess-ev', timestamp: t },
      { worktree_id: wt1.worktree_id, repo_path: repos.repo, session_id: 'sess-other', timestamp: t },
    ]);
    expect(all.released).toEqual([{ worktree_id: wt1.worktree_id, repo_path: repos.repo, session_id: 'sess-ev', timestamp: t }]);
    expect(all.landed).toEqual([
      {
        worktree_id: wt1.worktree_id,
        repo_path: repos.repo,
        branch: wt1.branch,
        target_branch: 'main',
        merged_sha: repos.head(repos.repo, 'main'),
        session_id: 'sess-other',
        timestamp: t,
      },
    ]);
    expect(all['land-blocked']).toEqual([
      {
        worktree_id: wt2.worktree_id,
        repo_path: repos.repo,
        target_branch: 'no-such-target',
        reason: 'target_ref_not_found',
        code: 'W400',
        message: expect.stringContaining('no-such-target'),
        timestamp: t,
      },
    ]);
    expect(all.removed).toEqual([
      { worktree_id: wt1.worktree_id, repo_path: repos.repo, branch: wt1.branch, branch_deleted: true, timestamp: t },
      { worktree_id: wt2.worktree_id, repo_path: repos.repo, branch: wt2.branch, branch_deleted: true, timestamp: t },
    ]);

    // session filter: only what carries that session
    expect(ids(session.created)).toEqual([wt1.worktree_id]);
    expect(session.claimed.map((e) => e.session_id)).toEqual(['sess-ev']);
    expect(ids(session.released)).toEqual([wt1.worktree_id]);
    expect([session.landed, session['land-blocked'], session.removed]).toEqual([[], [], []]);
    // repo filter
    expect(ids(ofRepo.created)).toEqual([wt1.worktree_id, wt2.worktree_id]);
    expect(ids(ofRepo.removed)).toEqual([wt1.worktree_id, wt2.worktree_id]);
    expect(ids(ofOther.created)).toEqual([wt3.worktree_id]);
    expect([ofOther.claimed, ofOther.released, ofOther.removed, ofOther.landed, ofOther['land-blocked']]).toEqual([[], [], [], [], []]);
    // worktree filter
    expect(ids(ofWt2['land-blocked'])).toEqual([wt2.worktree_id]);
    expect(ids(ofWt2.removed)).toEqual([wt2.worktree_id]);
    expect([ofWt2.created, ofWt2.claimed, ofWt2.released, ofWt2.landed]).toEqual([[], [], [], []]);
  });

  it('refuses a binding with an unknown or mistyped filter field, naming it', async () => {
    const errors: EngError[] = [];
    const off = rig.client.on('error', (e) => errors.push(e));
    const fn = rig.client.registerFunction('test::never', () => ({}));
    rig.client.registerTrigger({ type: 'worktree::created', function_id: 'test::never', config: { repo: '/tmp' } });
    rig.client.registerTrigger({ type: 'worktree::landed', function_id: 'test::never', config: { session_id: 42 } });
    await waitFor(() => errors.length >= 2, 10_000);
    expect(errors.map((e) => e.message).join('\n')).toMatch(/invalid worktree::created trigger config: .*repo/);
    expect(errors.map((e) => e.message).join('\n')).toMatch(/invalid worktree::landed trigger config: session_id/);
    off();
    fn.unregister();
  });
});
