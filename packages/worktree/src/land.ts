import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { TriggerAction } from '@eng/sdk';
import { z } from 'zod';
import { TestCommandSchema } from './config.ts';
import { type Ctx, checkCallerTestCommand, checkGate, gitTimeout, registerFunction, SessionId, WorktreeId } from './context.ts';
import { W, worktreeError } from './errors.ts';
import { globMatch } from './glob.ts';
import { runLand } from './land-run.ts';
import { checkBranchName } from './refs.ts';
import type { LandJob } from './types.ts';

export const LAND_STEP = 'worktree::land-step';

const LandSchema = z
  .object({
    worktree_id: WorktreeId,
    target_branch: z.string().min(1).max(200),
    test_cmd: TestCommandSchema.optional(),
    keep: z.boolean().optional(),
    session_id: SessionId.optional(),
  })
  .strict();
const StepSchema = z
  .object({ job_id: z.string().regex(/^land_[0-9a-f]+$/, 'must be a land job id'), repo_key: z.string().optional() })
  .strict();

/**
 * `worktree::land` queues a land and answers at once with its job id; the land itself runs from
 * the engine queue (`land_queue`, the internal consumer `worktree::land-step`), one at a time per
 * repository in the order they were asked for. Its outcome arrives as `worktree::landed` or
 * `worktree::land-blocked`, and on the worktree record (`land`).
 */
export function registerLand(ctx: Ctx): { recover(): void } {
  const process = (jobId: string) => {
    const job = ctx.store.job(jobId);
    if (!job) return Promise.resolve();
    return ctx.locks.with(`land:${job.repo_key}`, async () => {
      // FIFO per repository even when the queue hands messages over out of order (retries)
      for (const earlier of ctx.store.pendingJobs(job.repo_key)) {
        if (earlier.seq >= job.seq) break;
        await runLand(ctx, earlier.job_id);
      }
      await runLand(ctx, jobId);
    });
  };

  registerFunction(
    ctx,
    'worktree::land',
    "Land a worktree: rebase onto target_branch, run the repository's configured test command, fast-forward the target atomically and remove the worktree (keep: true keeps it). test_cmd (a shell line or an argv array) is refused unless gates.allow_caller_test_cmd. Asynchronous: {worktree_id, target_branch, test_cmd?, keep?, session_id?} → {job_id, queued}",
    LandSchema,
    async (input) => {
      checkGate(ctx, 'allow_land', 'worktree::land');
      if (input.test_cmd !== undefined) checkCallerTestCommand(ctx);
      // check-ref-format needs no repository: any folder will do as its cwd
      const target = await checkBranchName('target_branch', input.target_branch, tmpdir(), gitTimeout(ctx));
      if (!ctx.config().gates.land_targets.some((p) => globMatch(p, target))) {
        throw worktreeError(
          W.TargetNotAllowed,
          `landing onto ${target} is not allowed (gates.land_targets of the worktree configuration entry)`,
        );
      }
      const job = await ctx.locks.with(`wt:${input.worktree_id}`, async () => {
        const record = ctx.store.require(input.worktree_id);
        if (target === record.branch) throw worktreeError(W.InvalidRequest, `worktree::land: ${target} is the worktree's own branch`);
        if (record.lifecycle === 'landing') {
          throw worktreeError(W.Busy, `worktree ${record.worktree_id} already has a land in progress (job ${record.land?.job_id})`);
        }
        if (input.session_id && record.session_id && record.session_id !== input.session_id) {
          throw worktreeError(W.ClaimedByOther, `worktree ${record.worktree_id} is claimed by session ${record.session_id}`);
        }
        const now = Date.now();
        const created: LandJob = {
          job_id: `land_${randomBytes(8).toString('hex')}`,
          seq: ctx.store.nextSeq(),
          worktree_id: record.worktree_id,
          repo_key: record.repo_key,
          target_branch: target,
          ...(input.test_cmd !== undefined ? { test_cmd: input.test_cmd } : {}),
          keep: input.keep === true,
          state: 'queued',
          phase: 'queued',
          attempts: 0,
          ...(record.session_id ? { session_id: record.session_id } : {}),
          created_at: now,
          updated_at: now,
        };
        await ctx.store.putJob(created);
        await ctx.store.update(record.worktree_id, {
          lifecycle: 'landing',
          land: { job_id: created.job_id, target_branch: target, state: 'queued', updated_at: now },
        });
        return created;
      });
      try {
        await ctx.client.trigger({
          function_id: LAND_STEP,
          payload: { job_id: job.job_id, repo_key: job.repo_key },
          action: TriggerAction.Enqueue({ queue: ctx.config().land_queue }),
          timeoutMs: 10_000,
        });
      } catch (err) {
        // an engine without a queue module: the job is stored, run it here
        ctx.log(`enqueueing land ${job.job_id} on ${ctx.config().land_queue} failed (${(err as Error).message}); running it in the worker`);
        void process(job.job_id).catch((e) => ctx.log(`land ${job.job_id} failed: ${(e as Error).message}`));
      }
      return { job_id: job.job_id, queued: true, worktree_id: job.worktree_id, target_branch: job.target_branch };
    },
  );

  registerFunction(
    ctx,
    LAND_STEP,
    'Queue consumer of worktree::land (internal): runs one queued land job',
    StepSchema,
    async (input) => {
      await process(input.job_id);
      return { job_id: input.job_id, state: ctx.store.job(input.job_id)?.state ?? 'unknown' };
    },
    { internal: true },
  );

  return {
    /** After a restart: finish or report every land that was queued or running. */
    recover() {
      // a record left "landing" by a job that is gone or finished: show where it really is
      for (const record of ctx.store.all()) {
        const job = record.land ? ctx.store.job(record.land.job_id) : undefined;
        if (record.lifecycle !== 'landing' || (job && (job.state === 'queued' || job.state === 'running'))) continue;
        void ctx.locks
          .with(`wt:${record.worktree_id}`, () =>
            ctx.store.update(record.worktree_id, {
              lifecycle: job?.state === 'blocked' ? 'land-blocked' : record.session_id ? 'claimed' : 'active',
            }),
          )
          .catch((e) => ctx.log(`repairing ${record.worktree_id} failed: ${(e as Error).message}`));
      }
      for (const job of ctx.store.pendingJobs()) {
        void process(job.job_id).catch((e) => ctx.log(`resuming land ${job.job_id} failed: ${(e as Error).message}`));
      }
    },
  };
}
