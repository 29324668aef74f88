import { existsSync } from 'node:fs';
import { z } from 'zod';
import { deleteBranch, removeWorktreeFolder } from './cleanup.ts';
import { type Ctx, checkConfined, checkForce, checkGate, gitTimeout, registerFunction, SessionId, WorktreeId } from './context.ts';
import { W, worktreeError } from './errors.ts';
import type { WorktreeRecord, WorktreeStatus } from './types.ts';

const RemoveSchema = z
  .object({
    worktree_id: WorktreeId,
    force: z.boolean().optional(),
    delete_branch: z.boolean().optional(),
    session_id: SessionId.optional(),
  })
  .strict();

/**
 * `worktree::remove`, guarded: a land in progress (W222) always refuses; uncommitted work (W220)
 * and, when the branch goes too, commits not yet in the base (W221) refuse unless `force`
 * (which needs gates.allow_force). The branch is deleted when the worker created it, unless
 * `delete_branch: false` or gates.allow_branch_delete is off.
 */
export function registerRemove(ctx: Ctx): void {
  registerFunction(
    ctx,
    'worktree::remove',
    'Remove a managed worktree (and the branch it created): {worktree_id, force?, delete_branch? (true), session_id?}; refuses dirty (W220), unmerged (W221) and landing (W222) worktrees',
    RemoveSchema,
    async (input) => {
      checkGate(ctx, 'allow_remove', 'worktree::remove');
      if (input.force) checkForce(ctx, 'worktree::remove');
      if (input.delete_branch === true) checkGate(ctx, 'allow_branch_delete', 'deleting the branch');
      return ctx.locks.with(`wt:${input.worktree_id}`, async () => {
        const record = ctx.store.require(input.worktree_id);
        if (record.lifecycle === 'landing') {
          throw worktreeError(W.Busy, `worktree ${record.worktree_id} has a land in progress (job ${record.land?.job_id}); wait for it`);
        }
        if (input.session_id && record.session_id && record.session_id !== input.session_id && !input.force) {
          throw worktreeError(W.ClaimedByOther, `worktree ${record.worktree_id} is claimed by session ${record.session_id}`);
        }
        checkConfined(record);
        const wantsBranchGone = record.branch_created && ctx.config().gates.allow_branch_delete && input.delete_branch !== false;
        let status: WorktreeStatus | undefined;
        if (existsSync(record.path)) {
          const snapshot = await ctx.status.snapshot(record.repo_path, [record.base_ref]);
          status = await ctx.status.status(record, snapshot);
          if (!input.force) guard(record, status, wantsBranchGone);
        }
        return removeManaged(ctx, record, { deleteBranch: wantsBranchGone && (status !== undefined || input.force === true) });
      });
    },
  );
}

function guard(record: WorktreeRecord, status: WorktreeStatus, branchGoes: boolean): void {
  if (status.in_rebase || !status.clean) {
    const parts = [
      status.in_rebase ? 'a rebase in progress' : '',
      status.staged ? `${status.staged} staged` : '',
      status.unstaged ? `${status.unstaged} modified` : '',
      status.untracked ? `${status.untracked} untracked` : '',
      status.conflicted ? `${status.conflicted} conflicted` : '',
    ].filter(Boolean);
    throw worktreeError(
      W.Dirty,
      `worktree ${record.worktree_id} has uncommitted work (${parts.join(', ')}); commit or discard it, or pass force`,
    );
  }
  if (branchGoes && status.ahead > 0 && !status.integrated) {
    throw worktreeError(
      W.Unmerged,
      `branch ${record.branch} of ${record.worktree_id} has ${status.ahead} commit(s) not in ${record.base_ref}; land them, pass delete_branch: false to keep the branch, or force`,
    );
  }
}

/** Take a managed worktree away (folder, record, optionally its branch) and say so with `removed`. */
export async function removeManaged(
  ctx: Ctx,
  record: WorktreeRecord,
  options: { deleteBranch: boolean },
): Promise<{ removed: true; worktree_id: string; branch: string; branch_deleted: boolean }> {
  const timeoutMs = gitTimeout(ctx);
  await removeWorktreeFolder(record, timeoutMs);
  const branchDeleted = options.deleteBranch ? await deleteBranch(record.repo_path, record.branch, timeoutMs) : false;
  await ctx.store.delete(record.worktree_id);
  ctx.events.emit('worktree::removed', {
    worktree_id: record.worktree_id,
    repo_path: record.repo_path,
    branch: record.branch,
    branch_deleted: branchDeleted,
    timestamp: Date.now(),
  });
  return { removed: true, worktree_id: record.worktree_id, branch: record.branch, branch_deleted: branchDeleted };
}
