import { connect, type EngClient } from '@eng/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Rig, startRig, waitFor } from './helpers.ts';

// An engine restarted under a running worker, with in-memory state (everything the engine held is
// gone): the worker reconnects, writes its records back, and a worker started afterwards finds them.

let rig: Rig;
let client: EngClient | undefined;
beforeAll(async () => {
  rig = await startRig();
});
afterAll(async () => {
  await client?.close();
  await rig?.stop();
});

describe('engine restart', () => {
  it('the worker reconnects and stores its records in the fresh engine again', async () => {
    const created = await rig.client.call<any>(
      'worktree::create',
      { repo_path: rig.repos.repo, session_id: 'survivor' },
      { timeoutMs: 20_000 },
    );
    await rig.engine.restart();
    client = connect(rig.engine.busUrl, { name: 'worktree-test-2', tracing: false });
    await client.ready({ timeoutMs: 10_000 });
    const c = client;
    // back in the engine's (new, empty) state store without any call to the worker
    const stored = await waitFor(() => c.call<any>('state::get', { scope: 'worktree', key: created.worktree_id }), 20_000, 100);
    expect(stored).toMatchObject({ worktree_id: created.worktree_id, session_id: 'survivor', lifecycle: 'claimed' });

    await rig.restartWorker();
    const list = await c.call<any>('worktree::list', { session_id: 'survivor' }, { timeoutMs: 20_000 });
    expect(list.worktrees.map((w: any) => w.worktree_id)).toEqual([created.worktree_id]);
  });
});
