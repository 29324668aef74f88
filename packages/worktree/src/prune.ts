import { existsSync } from 'node:fs';
import type { TriggerRef } from '@eng/sdk';
import { z } from 'zod';
import { type Ctx, checkGate, gitTimeout, registerFunction } from './context.ts';
import { git } from './git.ts';
import { confined } from './paths.ts';
import { withStatus } from './queries.ts';
import { removeManaged } from './remove.ts';
import type { WorktreeInfo } from './types.ts';

// `worktree::prune` (console-worker.md §4.1): the sweep an engine cron trigger fires on
// `prune_schedule`. It removes worktrees whose work is integrated upstream and worktrees
// untouched for `prune_expire_hours`, never one that is landing, dirty or mid-rebase, and forgets
// records whose folder vanished. A claimed worktree is kept until it expires (the console's
// best-effort release may never come; prune is the backstop).

const PruneSchema = z
  .object({
    dry_run: z.boolean().optional(),
    // what the cron trigger sends along (cron README "Payload")
    trigger: z.string().optional(),
    job_id: z.string().optional(),
    scheduled_time: z.string().optional(),
    actual_time: z.string().optional(),
    manual: z.boolean().optional(),
  })
  .strict();

type Verdict = { worktree_id: string; reason: 'integrated' | 'expired' | 'orphaned'; branch_deleted: boolean };

export function registerPrune(ctx: Ctx): void {
  registerFunction(
    ctx,
    'worktree::prune',
    'Remove integrated and expired worktrees and forget vanished ones (run by the prune_schedule cron trigger): {dry_run?} → {removed, kept}',
    PruneSchema,
    async (input) => {
      checkGate(ctx, 'allow_prune', 'worktree::prune');
      return prune(ctx, input.dry_run === true);
    },
  );
}

async function prune(ctx: Ctx, dryRun: boolean): Promise<{ removed: Verdict[]; kept: number; dry_run: boolean }> {
  const config = ctx.config();
  const expireMs = config.prune_expire_hours * 3_600_000;
  const now = Date.now();
  const candidates = ctx.store.all().filter((r) => r.lifecycle !== 'landing');
  const infos = await withStatus(ctx, candidates);
  const removed: Verdict[] = [];
  const repos = new Set<string>();
  for (const info of infos) {
    const verdict = judge(info, now, expireMs);
    if (!verdict) continue;
    const outcome = await ctx.locks.with(`wt:${info.worktree_id}`, async () => {
      const record = ctx.store.get(info.worktree_id);
      // changed since the status was read (claimed, landing, touched): leave it for the next sweep
      if (!record || record.updated_at !== info.updated_at || record.lifecycle === 'landing') return undefined;
      if (!confined(record.root, record.path)) return undefined;
      const deleteBranch =
        record.branch_created &&
        config.gates.allow_branch_delete &&
        verdict !== 'orphaned' &&
        (info.status?.ahead === 0 || info.status?.integrated === true);
      if (dryRun) return { worktree_id: record.worktree_id, reason: verdict, branch_deleted: deleteBranch };
      repos.add(record.repo_path);
      const done = await removeManaged(ctx, record, { deleteBranch });
      return { worktree_id: record.worktree_id, reason: verdict, branch_deleted: done.branch_deleted };
    });
    if (outcome) removed.push(outcome);
  }
  if (!dryRun) {
    for (const repo of repos) await git(['worktree', 'prune'], { cwd: repo, timeoutMs: gitTimeout(ctx), allowFail: true });
    await ctx.store.dropFinishedJobs(24 * 3_600_000);
  }
  if (removed.length && !dryRun) ctx.log(`prune removed ${removed.map((r) => `${r.worktree_id} (${r.reason})`).join(', ')}`);
  return { removed, kept: ctx.store.all().length - (dryRun ? removed.length : 0), dry_run: dryRun };
}

function judge(info: WorktreeInfo, now: number, expireMs: number): Verdict['reason'] | undefined {
  if (info.lifecycle === 'orphaned' || !existsSync(info.path)) return 'orphaned';
  const status = info.status;
  if (!status?.clean || status.in_rebase) return undefined;
  if (status.integrated && !info.session_id) return 'integrated';
  if (now - info.updated_at >= expireMs) return 'expired';
  return undefined;
}

/** The cron binding of the sweep, re-bound when `prune_schedule` changes (empty or allow_prune off: none). */
export class PruneSchedule {
  private binding: TriggerRef | undefined;
  private expression = '';

  constructor(private readonly ctx: Ctx) {}

  apply(): void {
    const config = this.ctx.config();
    const wanted = config.gates.allow_prune ? config.prune_schedule.trim() : '';
    if (wanted === this.expression) return;
    this.binding?.unregister();
    this.binding = undefined;
    this.expression = wanted;
    if (!wanted) return;
    this.binding = this.ctx.client.registerTrigger({ type: 'cron', function_id: 'worktree::prune', config: { expression: wanted } });
    this.ctx.log(`prune sweep scheduled: ${wanted}`);
  }
}
