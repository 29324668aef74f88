import { randomBytes } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import { deleteBranch, removeWorktreeFolder } from './cleanup.ts';
import { type Ctx, checkRepoAllowed, gitTimeout, registerFunction, rootOf, SessionId } from './context.ts';
import { W, worktreeError } from './errors.ts';
import { git } from './git.ts';
import { isInside, type Repo, resolveRepo, worktreeDir } from './paths.ts';
import { branchSha, checkBranchName, currentBranch, resolveCommit } from './refs.ts';
import { devPort, type WorktreeRecord } from './types.ts';

const CreateSchema = z
  .object({
    repo_path: z.string().min(1),
    base_ref: z.string().min(1).max(512).optional(),
    branch: z.string().min(1).max(200).optional(),
    session_id: SessionId.optional(),
    pr: z.number().int().positive().optional(),
    remote: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'must be a remote name')
      .optional(),
  })
  .strict();

/** `worktree::create` (console-worker.md §4.1): a new branch from a base ref, checked out in its own locked worktree. */
export function registerCreate(ctx: Ctx): void {
  registerFunction(
    ctx,
    'worktree::create',
    'Create a managed git worktree on a new branch: {repo_path, base_ref? (HEAD), branch?, session_id? (claims it), pr? (from refs/pull/<n>/head of the remote)}',
    CreateSchema,
    async (input) => {
      if (input.pr !== undefined && input.base_ref !== undefined) {
        throw worktreeError(W.InvalidRequest, 'worktree::create: give either pr or base_ref, not both');
      }
      const timeoutMs = gitTimeout(ctx);
      const repo = await resolveRepo(input.repo_path, timeoutMs);
      checkRepoAllowed(ctx, repo);
      // the root as the filesystem names it, so recorded paths match what git lists
      await mkdir(rootOf(ctx), { recursive: true });
      const root = realpathSync(rootOf(ctx));
      if (isInside(root, repo.path)) throw worktreeError(W.PathRefused, `repository ${repo.path} lies inside the worktree root ${root}`);
      return ctx.locks.with(`repo:${repo.key}`, () => create(ctx, repo, root, input));
    },
  );
}

async function create(ctx: Ctx, repo: Repo, root: string, input: z.infer<typeof CreateSchema>) {
  const config = ctx.config();
  const timeoutMs = config.git_timeout_ms;
  const max = config.gates.max_worktrees_per_repo;
  if (max > 0 && ctx.store.countOfRepo(repo.key) >= max) {
    throw worktreeError(W.BudgetExceeded, `repository ${repo.path} already has ${max} managed worktrees (gates.max_worktrees_per_repo)`);
  }
  const id = `wt_${randomBytes(6).toString('hex')}`;
  const opts = { cwd: repo.path, timeoutMs };

  let baseRef: string;
  let baseSha: string;
  if (input.pr !== undefined) {
    ({ baseRef, baseSha } = await fetchPullRequest(repo, input.pr, input.remote ?? 'origin', timeoutMs));
  } else {
    const requested = input.base_ref ?? 'HEAD';
    baseSha = await resolveCommit('base_ref', requested, repo.path, timeoutMs);
    // HEAD is remembered as the branch it named, so ahead/behind follow that branch later
    baseRef = requested === 'HEAD' ? ((await currentBranch(repo.path, timeoutMs)) ?? baseSha) : requested;
  }
  const branch = await checkBranchName(
    'branch',
    input.branch ?? (input.pr !== undefined ? `${config.branch_prefix}pr-${input.pr}` : `${config.branch_prefix}${id}`),
    repo.path,
    timeoutMs,
  );
  if (await branchSha(branch, repo.path, timeoutMs)) {
    throw worktreeError(W.BranchExists, `branch ${branch} already exists in ${repo.path}; pick another name`);
  }

  const path = worktreeDir(root, repo.key, id);
  await mkdir(dirname(path), { recursive: true });
  await git(['worktree', 'add', '--quiet', '--lock', '--reason', `eng worktree ${id}`, '-b', branch, '--', path, baseSha], opts);

  const now = Date.now();
  const record: WorktreeRecord = {
    worktree_id: id,
    repo_path: repo.path,
    repo_key: repo.key,
    root,
    path,
    branch,
    base_ref: baseRef,
    base_sha: baseSha,
    branch_created: true,
    ...(input.pr !== undefined ? { pr: input.pr } : {}),
    ...(input.session_id ? { session_id: input.session_id } : {}),
    lifecycle: input.session_id ? 'claimed' : 'active',
    created_at: now,
    updated_at: now,
  };
  try {
    await ctx.store.put(record);
  } catch (err) {
    // nothing half-made stays behind: no record means no folder and no branch
    await removeWorktreeFolder(record, timeoutMs).catch(() => undefined);
    await deleteBranch(repo.path, branch, timeoutMs).catch(() => undefined);
    throw err;
  }
  ctx.events.emit('worktree::created', {
    worktree_id: id,
    repo_path: repo.path,
    path,
    branch,
    base_ref: baseRef,
    base_sha: baseSha,
    ...(input.session_id ? { session_id: input.session_id } : {}),
    timestamp: now,
  });
  if (input.session_id) {
    ctx.events.emit('worktree::claimed', { worktree_id: id, repo_path: repo.path, session_id: input.session_id, timestamp: now });
  }
  return {
    worktree_id: id,
    path,
    branch,
    base_ref: baseRef,
    base_sha: baseSha,
    repo_key: repo.key,
    repo_path: repo.path,
    dev_port: devPort(id),
    ...(input.session_id ? { session_id: input.session_id } : {}),
    created_at: now,
  };
}

/** Fetch `refs/pull/<n>/head` of a remote into a private ref; W204 when the remote has no such PR. */
async function fetchPullRequest(repo: Repo, pr: number, remote: string, timeoutMs: number): Promise<{ baseRef: string; baseSha: string }> {
  const opts = { cwd: repo.path, timeoutMs };
  const remotes = (await git(['remote'], opts)).stdout.split('\n').map((r) => r.trim());
  if (!remotes.includes(remote)) throw worktreeError(W.RefNotFound, `repository ${repo.path} has no remote named ${remote}`);
  const local = `refs/eng-worktree/pull/${pr}`;
  const res = await git(['fetch', '--no-tags', '--no-recurse-submodules', '--quiet', '--', remote, `+refs/pull/${pr}/head:${local}`], {
    ...opts,
    allowFail: true,
  });
  if (res.code !== 0) {
    throw worktreeError(
      W.PullRequestNotFound,
      `remote ${remote} of ${repo.path} has no refs/pull/${pr}/head (${res.stderr.trim().split('\n')[0]})`,
    );
  }
  return { baseRef: `refs/pull/${pr}/head`, baseSha: await resolveCommit('pr', local, repo.path, timeoutMs) };
}
