import { existsSync, realpathSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { findByPath } from './claims.ts';
import { type Ctx, checkConfined, gitTimeout, registerFunction, SessionId, toInfo, WorktreeId } from './context.ts';
import { isEngError, W, worktreeError } from './errors.ts';
import { git } from './git.ts';
import { checkPathInput, resolveRepo } from './paths.ts';
import type { RepoSnapshot } from './status.ts';
import type { WorktreeInfo, WorktreeRecord } from './types.ts';

const ListSchema = z
  .object({ repo_path: z.string().min(1).optional(), session_id: SessionId.optional(), include_status: z.boolean().optional() })
  .strict();
const GetSchema = z.object({ worktree_id: WorktreeId }).strict();
const StatusSchema = z
  .object({ worktree_id: WorktreeId.optional(), path: z.string().min(1).optional() })
  .strict()
  .refine((v) => (v.worktree_id === undefined) !== (v.path === undefined), 'give exactly one of worktree_id and path');

// git status is mostly waiting on the filesystem: a few more than the cores keeps them busy
const STATUS_CONCURRENCY = Math.max(4, availableParallelism() * 3);

/** `worktree::list`, `worktree::get`, `worktree::status` (console-worker.md §4.1). */
export function registerQueries(ctx: Ctx): void {
  registerFunction(
    ctx,
    'worktree::list',
    'Managed worktrees, oldest first: {repo_path?, session_id?, include_status? (slower)} → {worktrees, unmanaged (other worktrees of repo_path)}',
    ListSchema,
    async (input) => {
      let records = ctx.store.all();
      let repoPath: string | undefined;
      if (input.repo_path !== undefined) {
        repoPath = (await resolveRepo(input.repo_path, gitTimeout(ctx))).path;
        records = records.filter((r) => r.repo_path === repoPath);
      }
      if (input.session_id !== undefined) records = records.filter((r) => r.session_id === input.session_id);
      const worktrees = input.include_status
        ? await withStatus(ctx, records)
        : records.map((r) => toInfo(r, undefined, undefined, !existsSync(r.path)));
      return { worktrees, ...(repoPath ? { unmanaged: await unmanagedOf(ctx, repoPath) } : {}) };
    },
  );

  registerFunction(ctx, 'worktree::get', 'One managed worktree with its status: {worktree_id} → WorktreeInfo', GetSchema, async (input) => {
    const [info] = await withStatus(ctx, [ctx.store.require(input.worktree_id)]);
    return info;
  });

  registerFunction(
    ctx,
    'worktree::status',
    'Status of a managed worktree: {worktree_id} or {path} → {clean, ahead, behind, staged, unstaged, untracked, conflicted, unpushed, in_rebase, diffstat, head_sha, integrated, integration_reason?}',
    StatusSchema,
    async (input) => {
      let record: WorktreeRecord | undefined;
      if (input.worktree_id) record = ctx.store.require(input.worktree_id);
      else {
        const path = checkPathInput('path', input.path as string);
        record = existsSync(path) ? findByPath(ctx, realpathSync(path)) : undefined;
        if (!record) throw worktreeError(W.NotFound, `${path} is not inside a managed worktree`);
      }
      checkConfined(record);
      const snapshot = await ctx.status.snapshot(record.repo_path, [record.base_ref]);
      return ctx.status.status(record, snapshot);
    },
  );
}

/** Infos with status, one snapshot per repository, statuses read a few at a time. */
export async function withStatus(ctx: Ctx, records: WorktreeRecord[]): Promise<WorktreeInfo[]> {
  const byRepo = new Map<string, WorktreeRecord[]>();
  for (const r of records) byRepo.set(r.repo_path, [...(byRepo.get(r.repo_path) ?? []), r]);
  const snapshots = new Map<string, RepoSnapshot | Error>(
    await Promise.all(
      [...byRepo].map(async ([repo, rs]) => {
        try {
          return [
            repo,
            await ctx.status.snapshot(
              repo,
              rs.map((r) => r.base_ref),
            ),
          ] as const;
        } catch (err) {
          return [repo, err as Error] as const;
        }
      }),
    ),
  );
  return mapLimit(records, STATUS_CONCURRENCY, async (record) => {
    const missing = !existsSync(record.path);
    if (missing) return toInfo(record, undefined, `the folder ${record.path} is gone`, true);
    const snapshot = snapshots.get(record.repo_path);
    if (!snapshot || snapshot instanceof Error)
      return toInfo(record, undefined, `repository ${record.repo_path}: ${snapshot?.message ?? 'unreadable'}`);
    try {
      checkConfined(record);
      return toInfo(record, await ctx.status.status(record, snapshot));
    } catch (err) {
      if (!isEngError(err)) throw err;
      return toInfo(record, undefined, err.message);
    }
  });
}

/** Linked worktrees of a repository that the worker does not manage (`git worktree list`). */
async function unmanagedOf(ctx: Ctx, repoPath: string): Promise<Array<{ path: string; branch?: string }>> {
  const out = (await git(['worktree', 'list', '--porcelain'], { cwd: repoPath, timeoutMs: gitTimeout(ctx) })).stdout;
  const managed = new Set(ctx.store.all().map((r) => r.path));
  const entries: Array<{ path: string; branch?: string; bare?: boolean }> = [];
  for (const block of out.split('\n\n')) {
    const lines = block.split('\n');
    const path = lines.find((l) => l.startsWith('worktree '))?.slice('worktree '.length);
    if (!path) continue;
    const branch = lines.find((l) => l.startsWith('branch '))?.slice('branch refs/heads/'.length);
    entries.push({ path, ...(branch ? { branch } : {}), bare: lines.includes('bare') });
  }
  // the first entry is the main worktree (the repository itself)
  return entries
    .slice(1)
    .filter((e) => !e.bare && !managed.has(e.path))
    .map(({ path, branch }) => ({ path, ...(branch ? { branch } : {}) }));
}

export async function mapLimit<T, R>(items: readonly T[], limit: number, run: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await run(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return out;
}
