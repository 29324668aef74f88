import { existsSync } from 'node:fs';
import { configuredTestCommand } from './config.ts';
import { type Ctx, gitTimeout } from './context.ts';
import { isEngError, W, type WorktreeErrorCode } from './errors.ts';
import { firstLines, git, gitOut } from './git.ts';
import { confined, rebaseInProgress } from './paths.ts';
import { branchSha } from './refs.ts';
import { removeManaged } from './remove.ts';
import { parsePorcelain } from './status.ts';
import { runTestCommand } from './test-command.ts';
import type { BlockReason, LandJob, LandSummary, WorktreeRecord } from './types.ts';

// One land (console-worker.md §4.1 `worktree::land`): rebase the worktree's branch onto the
// target, run the optional test gate, then move the target with one compare-and-swap
// (`git update-ref <ref> <new> <old>`), so the target is either untouched or fully advanced.
// Every phase is written to the job before it starts: a worker killed mid-land resumes from it.

interface Blocked {
  reason: BlockReason;
  code: WorktreeErrorCode;
  message: string;
  conflict_files?: string[];
  exit_code?: number;
}

class LandBlocked extends Error {
  constructor(readonly info: Blocked) {
    super(info.message);
  }
}

const block = (info: Blocked): never => {
  throw new LandBlocked(info);
};

/** Test hook: `ENG_WORKTREE_FAILPOINT=<phase>` kills the worker there (durability tests). */
function failpoint(name: string): void {
  if (process.env.ENG_WORKTREE_FAILPOINT === name) process.kill(process.pid, 'SIGKILL');
}

export async function runLand(ctx: Ctx, jobId: string): Promise<void> {
  let job = ctx.store.job(jobId);
  if (!job || job.state === 'landed' || job.state === 'blocked') return;
  const record = ctx.store.get(job.worktree_id);
  if (!record) {
    ctx.log(`land ${jobId}: worktree ${job.worktree_id} no longer exists; dropping the job`);
    await ctx.store.updateJob(jobId, { state: 'blocked', phase: 'done' });
    return;
  }
  const resumed = job.state === 'running';
  job = await ctx.store.updateJob(jobId, { state: 'running', attempts: job.attempts + 1 });
  await setSummary(ctx, record.worktree_id, job, { state: 'running' });
  try {
    // killed after the compare-and-swap: the target already carries the land, finish it
    if (job.new_sha && job.old_sha && (job.phase === 'cas' || job.phase === 'cleanup')) {
      if ((await branchSha(job.target_branch, record.repo_path, gitTimeout(ctx))) === job.new_sha) return await finish(ctx, job, record);
    }
    const landed = await attempt(ctx, job, record, resumed);
    await finish(ctx, landed, record);
  } catch (err) {
    if (err instanceof LandBlocked) return blocked(ctx, job, record, err.info);
    if (isEngError(err) && (err.code === W.GitFailed || err.code === W.GitTimeout)) {
      return blocked(ctx, job, record, { reason: 'rebase_conflict', code: err.code, message: err.message });
    }
    throw err; // state unavailable and the like: the queue retries the delivery
  }
}

async function attempt(ctx: Ctx, job: LandJob, record: WorktreeRecord, resumed: boolean): Promise<LandJob> {
  const config = ctx.config();
  const timeoutMs = config.git_timeout_ms;
  const wt = { cwd: record.path, timeoutMs };
  const repo = { cwd: record.repo_path, timeoutMs };
  const target = job.target_branch;
  // the committer of the rebased commits: the configured one, else git's own identity
  const identity = config.committer
    ? { GIT_COMMITTER_NAME: config.committer.name, GIT_COMMITTER_EMAIL: config.committer.email }
    : undefined;

  // a caller's command stored before the gate was closed (or by an older worker) does not run either
  if (job.test_cmd !== undefined && !config.gates.allow_caller_test_cmd) {
    block({
      reason: 'test_failed',
      code: W.Disabled,
      message: `the land's test_cmd came from its caller and gates.allow_caller_test_cmd is off; land again without it (the repository's test_commands entry runs)`,
    });
  }
  if (!existsSync(record.path) || !confined(record.root, record.path)) {
    block({ reason: 'worktree_path_missing', code: W.PathMissing, message: `the folder ${record.path} of ${record.worktree_id} is gone` });
  }
  if (rebaseInProgress(record.path)) {
    // our own rebase, cut short by a crash: start it over; anyone else's is the owner's to finish
    if (resumed && job.phase === 'rebase') await git(['rebase', '--abort'], { ...wt, allowFail: true });
    else
      block({
        reason: 'rebase_in_progress',
        code: W.RebaseUnresolved,
        message: `a rebase is in progress in ${record.path}; resolve it (git rebase --continue or --abort) and land again`,
      });
  }
  const counts = parsePorcelain(
    await gitOut(['status', '--porcelain=v2', '--branch', '--untracked-files=normal', '--ignore-submodules=dirty'], wt),
  );
  if (counts.staged + counts.unstaged + counts.untracked + counts.conflicted > 0) {
    block({
      reason: 'dirty',
      code: W.Dirty,
      message: `worktree ${record.worktree_id} has uncommitted changes; commit or discard them first`,
    });
  }
  let old = await branchSha(target, record.repo_path, timeoutMs);
  if (!old)
    block({
      reason: 'target_ref_not_found',
      code: W.TargetNotFound,
      message: `target branch ${target} does not exist in ${record.repo_path}`,
    });

  for (let round = 0; round <= config.max_land_retries; round++) {
    job = await ctx.store.updateJob(job.job_id, { phase: 'rebase', old_sha: old, new_sha: undefined });
    const rebase = await git(['rebase', '--quiet', '--no-autosquash', '--no-autostash', old as string], {
      ...wt,
      allowFail: true,
      env: identity,
    });
    if (rebase.code !== 0) {
      const stopped = rebaseInProgress(record.path);
      const files = stopped ? (await gitOut(['diff', '--name-only', '--diff-filter=U'], wt)).split('\n').filter(Boolean) : [];
      if (files.length > 0) {
        block({
          reason: 'rebase_conflict',
          code: W.RebaseConflict,
          message: `rebasing ${record.branch} onto ${target} stopped on conflicts in ${files.length} file(s); the rebase is left in progress in ${record.path}`,
          conflict_files: files,
        });
      }
      // nothing for the owner to resolve: put the worktree back as it was before saying why
      if (stopped) await git(['rebase', '--abort'], { ...wt, allowFail: true });
      const ident = await git(['var', 'GIT_COMMITTER_IDENT'], { ...wt, allowFail: true, env: identity });
      if (ident.code !== 0) {
        const why = ident.stderr.split('\n').find((l) => l.startsWith('fatal:')) ?? firstLines(ident.stderr, 1);
        block({
          reason: 'git_identity_missing',
          code: W.GitIdentityMissing,
          message: `git has no committer identity (user.name/user.email) for the worker in ${record.path} (${why}); set them with git config --global user.name "…" and git config --global user.email "…" for the user the worker runs as, or set committer: {name, email} in the worktree configuration entry. The rebase was aborted; the worktree is as it was`,
        });
      }
      block({
        reason: 'rebase_conflict',
        code: W.GitFailed,
        message: `rebasing onto ${target} failed: ${firstLines(rebase.stderr || rebase.stdout)}${stopped ? '; the rebase was aborted' : ''}`,
      });
    }
    failpoint('after-rebase');
    const head = await gitOut(['rev-parse', 'HEAD'], wt);

    // the caller's command only when the operator allows it (checked above), else the repository's
    const testCmd = job.test_cmd ?? configuredTestCommand(config, record.repo_path);
    if (testCmd) {
      job = await ctx.store.updateJob(job.job_id, { phase: 'test' });
      const outcome = await runTestCommand(testCmd, record.path, config.test_timeout_ms, {
        env: { ENG_WORKTREE_ID: record.worktree_id, ENG_WORKTREE_PATH: record.path },
        pass: config.test_env,
      });
      if (outcome.misconfigured || (typeof testCmd === 'string' && (outcome.code === 126 || outcome.code === 127))) {
        block({
          reason: 'test_failed',
          code: W.TestGateMisconfigured,
          message: outcome.misconfigured ?? `test command could not run (exit ${outcome.code}): ${outcome.tail.trim().slice(-300)}`,
          ...(outcome.code !== null ? { exit_code: outcome.code } : {}),
        });
      }
      if (outcome.code !== 0) {
        block({
          reason: 'test_failed',
          code: W.TestFailed,
          message: outcome.timedOut
            ? `tests did not finish within ${config.test_timeout_ms} ms`
            : `tests failed with exit code ${outcome.code}: ${outcome.tail.trim().slice(-300)}`,
          ...(outcome.code !== null ? { exit_code: outcome.code } : {}),
        });
      }
    }

    const checkedOut = await checkoutOf(target, record, timeoutMs);
    if (checkedOut) {
      const c = parsePorcelain(
        await gitOut(['status', '--porcelain=v2', '--untracked-files=no', '--ignore-submodules=dirty'], { cwd: checkedOut, timeoutMs }),
      );
      if (c.staged + c.unstaged + c.conflicted > 0) {
        block({
          reason: 'target_checked_out_dirty',
          code: W.TargetCheckedOutDirty,
          message: `${target} is checked out in ${checkedOut} with uncommitted changes; commit or stash them there`,
        });
      }
    }
    job = await ctx.store.updateJob(job.job_id, { phase: 'cas', old_sha: old, new_sha: head, checked_out: checkedOut });
    const cas = await git(
      ['update-ref', '-m', `eng worktree: land ${record.branch} (${job.job_id})`, `refs/heads/${target}`, head, old as string],
      {
        ...repo,
        allowFail: true,
      },
    );
    if (cas.code === 0) {
      failpoint('after-cas');
      return job;
    }
    const now = await branchSha(target, record.repo_path, timeoutMs);
    if (!now)
      block({ reason: 'target_ref_not_found', code: W.TargetNotFound, message: `target branch ${target} was deleted during the land` });
    if (now === head) return job;
    ctx.log(`land ${job.job_id}: ${target} moved from ${old?.slice(0, 8)} to ${now?.slice(0, 8)}; rebasing again`);
    old = now;
  }
  return block({
    reason: 'target_moved_exhausted',
    code: W.TargetMovedExhausted,
    message: `${target} kept moving; gave up after ${config.max_land_retries + 1} attempts`,
  });
}

/** After the target moved: bring its checked-out folder along, report, clean up. */
async function finish(ctx: Ctx, job: LandJob, record: WorktreeRecord): Promise<void> {
  const timeoutMs = gitTimeout(ctx);
  const merged = job.new_sha as string;
  if (job.checked_out && job.old_sha && existsSync(job.checked_out)) {
    const synced = await syncCheckedOut(job.checked_out, job.old_sha, merged, timeoutMs);
    if (!synced.ok) {
      // put the target back rather than leave a checkout that disagrees with its branch
      await git(['update-ref', `refs/heads/${job.target_branch}`, job.old_sha, merged], {
        cwd: record.repo_path,
        timeoutMs,
        allowFail: true,
      });
      return blocked(ctx, job, record, {
        reason: 'target_checked_out_dirty',
        code: W.TargetCheckedOutDirty,
        message: `${job.target_branch} is checked out in ${job.checked_out} and could not be updated (${synced.error}); the target was left as it was`,
      });
    }
  }
  job = await ctx.store.updateJob(job.job_id, { phase: 'cleanup' });
  await setSummary(ctx, record.worktree_id, job, { state: 'landed', merged_sha: merged });
  const current = ctx.store.get(record.worktree_id) ?? record;
  ctx.events.emit('worktree::landed', {
    worktree_id: record.worktree_id,
    repo_path: record.repo_path,
    branch: record.branch,
    target_branch: job.target_branch,
    merged_sha: merged,
    ...(current.session_id ? { session_id: current.session_id } : {}),
    timestamp: Date.now(),
  });
  if (!job.keep) {
    if (ctx.store.get(record.worktree_id)) {
      await removeManaged(ctx, current, { deleteBranch: current.branch_created && ctx.config().gates.allow_branch_delete });
    }
  } else {
    await ctx.locks.with(`wt:${record.worktree_id}`, async () => {
      const now = ctx.store.get(record.worktree_id);
      if (now) await ctx.store.update(now.worktree_id, { lifecycle: now.session_id ? 'claimed' : 'active', base_sha: merged });
    });
  }
  await ctx.store.updateJob(job.job_id, { state: 'landed', phase: 'done' });
}

/** Move a clean checkout of the target from `old` to `merged` (index and files), unless it already is there. */
async function syncCheckedOut(dir: string, old: string, merged: string, timeoutMs: number): Promise<{ ok: boolean; error?: string }> {
  const opts = { cwd: dir, timeoutMs };
  if ((await git(['diff-index', '--quiet', '--cached', merged, '--'], { ...opts, allowFail: true })).code === 0) return { ok: true };
  const res = await git(['read-tree', '-m', '-u', old, merged], { ...opts, allowFail: true });
  return res.code === 0 ? { ok: true } : { ok: false, error: firstLines(res.stderr) };
}

/** The folder (other than the worktree itself) where the target branch is checked out, if any. */
async function checkoutOf(target: string, record: WorktreeRecord, timeoutMs: number): Promise<string | undefined> {
  const out = await gitOut(['worktree', 'list', '--porcelain'], { cwd: record.repo_path, timeoutMs });
  for (const entry of out.split('\n\n')) {
    const lines = entry.split('\n');
    if (!lines.includes(`branch refs/heads/${target}`)) continue;
    const path = lines.find((l) => l.startsWith('worktree '))?.slice('worktree '.length);
    if (path && path !== record.path) return path;
  }
  return undefined;
}

async function blocked(ctx: Ctx, job: LandJob, record: WorktreeRecord, info: Blocked): Promise<void> {
  // the record first: a crash in between leaves the job running, and the restart reports it again
  await setSummary(ctx, record.worktree_id, job, { state: 'blocked', ...info }, 'land-blocked');
  const current = ctx.store.get(record.worktree_id) ?? record;
  ctx.events.emit('worktree::land-blocked', {
    worktree_id: record.worktree_id,
    repo_path: record.repo_path,
    target_branch: job.target_branch,
    ...info,
    ...(current.session_id ? { session_id: current.session_id } : {}),
    timestamp: Date.now(),
  });
  await ctx.store.updateJob(job.job_id, { state: 'blocked', phase: 'done' });
}

/** Record the land's progress on the worktree (what list/get and the console show). */
async function setSummary(
  ctx: Ctx,
  worktreeId: string,
  job: LandJob,
  change: Partial<LandSummary> & { state: LandSummary['state'] },
  lifecycle?: WorktreeRecord['lifecycle'],
): Promise<void> {
  await ctx.locks.with(`wt:${worktreeId}`, async () => {
    const record = ctx.store.get(worktreeId);
    if (!record) return;
    const land: LandSummary = { job_id: job.job_id, target_branch: job.target_branch, ...change, updated_at: Date.now() };
    await ctx.store.update(worktreeId, { land, lifecycle: lifecycle ?? (change.state === 'landed' ? record.lifecycle : 'landing') });
  });
}
