import type { EngClient } from '@eng/sdk';
import { z } from 'zod';
import { resolveRoot, type WorktreeConfig } from './config.ts';
import { isEngError, parseInput, W, worktreeError } from './errors.ts';
import type { LifecycleEvents } from './events.ts';
import { globMatch } from './glob.ts';
import type { Locks } from './locks.ts';
import { confined, type Repo } from './paths.ts';
import type { StatusReader } from './status.ts';
import type { Store } from './store.ts';
import { devPort, type WorktreeInfo, type WorktreeRecord, type WorktreeStatus } from './types.ts';

/** What every function of the worker works with. */
export interface Ctx {
  client: EngClient;
  store: Store;
  events: LifecycleEvents;
  locks: Locks;
  status: StatusReader;
  config(): WorktreeConfig;
  log(line: string): void;
}

export function gitTimeout(ctx: Ctx): number {
  return ctx.config().git_timeout_ms;
}

export function rootOf(ctx: Ctx): string {
  return resolveRoot(ctx.config().worktree_root);
}

/** W503 unless `gates.repos` lets worktrees be made in this repository. */
export function checkRepoAllowed(ctx: Ctx, repo: Repo): void {
  const patterns = ctx.config().gates.repos;
  if (!patterns.some((p) => globMatch(p, repo.path))) {
    throw worktreeError(W.RepoNotAllowed, `repository ${repo.path} is not in gates.repos of the worktree configuration entry`);
  }
}

/** W500 unless the gate is on. */
export function checkGate(ctx: Ctx, gate: 'allow_remove' | 'allow_land' | 'allow_prune' | 'allow_branch_delete', what: string): void {
  if (!ctx.config().gates[gate])
    throw worktreeError(W.Disabled, `${what} is disabled (gates.${gate} is false in the worktree configuration entry)`);
}

/** W500 unless `gates.allow_caller_test_cmd`: a land's caller may not pick the test command by default. */
export function checkCallerTestCommand(ctx: Ctx): void {
  if (!ctx.config().gates.allow_caller_test_cmd) {
    throw worktreeError(
      W.Disabled,
      "test_cmd in a worktree::land call is refused: only the repository's configured test command (test_commands) runs; an operator allows per-call commands with gates.allow_caller_test_cmd: true in the worktree configuration entry",
    );
  }
}

/** W501 unless `gates.allow_force`. */
export function checkForce(ctx: Ctx, what: string): void {
  if (!ctx.config().gates.allow_force) {
    throw worktreeError(W.ForceDisabled, `${what} with force is disabled (gates.allow_force is false in the worktree configuration entry)`);
  }
}

/** Refuse to touch a record whose folder is no longer where the worker put it (moved, replaced by a symlink). */
export function checkConfined(record: WorktreeRecord): void {
  if (!confined(record.root, record.path)) {
    throw worktreeError(W.PathRefused, `worktree ${record.worktree_id}: ${record.path} is not inside its worktree root ${record.root}`);
  }
}

export function toInfo(record: WorktreeRecord, status?: WorktreeStatus, statusError?: string, orphaned = false): WorktreeInfo {
  return {
    worktree_id: record.worktree_id,
    repo_path: record.repo_path,
    repo_key: record.repo_key,
    path: record.path,
    branch: record.branch,
    base_ref: record.base_ref,
    base_sha: record.base_sha,
    dev_port: devPort(record.worktree_id),
    lifecycle: orphaned ? 'orphaned' : record.lifecycle,
    ...(record.session_id ? { session_id: record.session_id } : {}),
    ...(record.pr !== undefined ? { pr: record.pr } : {}),
    ...(record.land ? { land: record.land } : {}),
    ...(status ? { status } : {}),
    ...(statusError ? { status_error: statusError } : {}),
    created_at: record.created_at,
    updated_at: record.updated_at,
  };
}

/**
 * Register one of the worker's functions: input checked with `schema` (W100 naming the field),
 * unexpected exceptions answered as W900 with the function named instead of a bare stack.
 */
export function registerFunction<T>(
  ctx: Ctx,
  id: string,
  description: string,
  schema: z.ZodType<T>,
  handler: (input: T) => Promise<unknown>,
  metadata?: Record<string, unknown>,
): void {
  let requestFormat: unknown;
  try {
    requestFormat = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });
  } catch {
    requestFormat = undefined;
  }
  ctx.client.registerFunction(
    id,
    async (raw: unknown) => {
      const input = parseInput(id, schema, raw);
      try {
        return await handler(input);
      } catch (err) {
        if (isEngError(err)) throw err;
        ctx.log(`${id} failed unexpectedly: ${(err as Error).stack ?? String(err)}`);
        throw worktreeError(W.Internal, `${id}: ${(err as Error).message ?? String(err)}`);
      }
    },
    { description, request_format: requestFormat, metadata },
  );
}

// input pieces shared by several functions
export const WorktreeId = z.string().regex(/^wt_[0-9a-f]{6,32}$/, 'must be a worktree id (wt_ followed by hex digits)');
export const SessionId = z.string().min(1).max(256);
