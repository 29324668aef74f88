import { existsSync, realpathSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { type Ctx, checkForce, registerFunction, rootOf, SessionId, WorktreeId } from './context.ts';
import { W, worktreeError } from './errors.ts';
import { confined, isInside } from './paths.ts';
import type { WorktreeRecord } from './types.ts';

const ClaimSchema = z.object({ worktree_id: WorktreeId, session_id: SessionId, force: z.boolean().optional() }).strict();
const ValidateSchema = z.object({ path: z.string().min(1).max(4096) }).strict();

/** `worktree::claim`, `worktree::release`, `worktree::validate`: session ownership (console-worker.md §4.1, §4.3 picker). */
export function registerClaims(ctx: Ctx): void {
  registerFunction(
    ctx,
    'worktree::claim',
    'Claim a worktree for a session: {worktree_id, session_id, force?}; W210 when another session holds it (force takes it over), W222 while it lands',
    ClaimSchema,
    (input) =>
      ctx.locks.with(`wt:${input.worktree_id}`, async () => {
        const record = ctx.store.require(input.worktree_id);
        if (record.lifecycle === 'landing')
          throw worktreeError(W.Busy, `worktree ${record.worktree_id} has a land in progress; it cannot be claimed now`);
        const previous = record.session_id;
        if (previous === input.session_id) return { claimed: true, session_id: input.session_id, worktree_id: record.worktree_id };
        if (previous && !input.force) {
          throw worktreeError(
            W.ClaimedByOther,
            `worktree ${record.worktree_id} is claimed by session ${previous}; release it first or pass force`,
          );
        }
        if (previous) checkForce(ctx, 'worktree::claim');
        await ctx.store.update(record.worktree_id, {
          session_id: input.session_id,
          lifecycle: record.lifecycle === 'active' ? 'claimed' : record.lifecycle,
        });
        ctx.events.emit('worktree::claimed', {
          worktree_id: record.worktree_id,
          repo_path: record.repo_path,
          session_id: input.session_id,
          ...(previous ? { previous_session_id: previous } : {}),
          timestamp: Date.now(),
        });
        return {
          claimed: true,
          session_id: input.session_id,
          worktree_id: record.worktree_id,
          ...(previous ? { previous_session_id: previous } : {}),
        };
      }),
  );

  registerFunction(
    ctx,
    'worktree::release',
    "Release a session's claim: {worktree_id, session_id, force?}; W211 when another session holds it",
    ClaimSchema,
    (input) =>
      ctx.locks.with(`wt:${input.worktree_id}`, async () => {
        const record = ctx.store.require(input.worktree_id);
        const holder = record.session_id;
        if (!holder) return { released: false, worktree_id: record.worktree_id };
        if (holder !== input.session_id) {
          if (!input.force) {
            throw worktreeError(W.NotClaimOwner, `worktree ${record.worktree_id} is claimed by session ${holder}, not ${input.session_id}`);
          }
          checkForce(ctx, 'worktree::release');
        }
        await ctx.store.update(record.worktree_id, {
          session_id: undefined,
          lifecycle: record.lifecycle === 'claimed' ? 'active' : record.lifecycle,
        });
        ctx.events.emit('worktree::released', {
          worktree_id: record.worktree_id,
          repo_path: record.repo_path,
          session_id: holder,
          timestamp: Date.now(),
        });
        return { released: true, worktree_id: record.worktree_id };
      }),
  );

  registerFunction(
    ctx,
    'worktree::validate',
    'Whether a path is (inside) a managed worktree that may be used as a working directory: {path} → {valid, managed, worktree_id?, reason?}',
    ValidateSchema,
    async (input) => validatePath(ctx, input.path),
  );
}

export function validatePath(ctx: Ctx, path: string) {
  if (path.includes('\0')) return { valid: false, managed: false, reason: 'the path contains a NUL byte' };
  if (!isAbsolute(path)) return { valid: false, managed: false, reason: 'the path must be absolute' };
  if (!existsSync(path)) return { valid: false, managed: false, reason: `${resolve(path)} does not exist` };
  const real = realpathSync(path);
  const record = findByPath(ctx, real);
  if (!record) {
    const inRoot = existsSync(rootOf(ctx)) && isInside(realpathSync(rootOf(ctx)), real);
    return {
      valid: false,
      managed: false,
      reason: inRoot ? 'inside the worktree root but not a managed worktree' : 'not inside a managed worktree',
    };
  }
  const base = { managed: true, worktree_id: record.worktree_id, path: record.path, branch: record.branch, lifecycle: record.lifecycle };
  if (!confined(record.root, record.path)) return { valid: false, ...base, reason: 'the worktree folder is not inside its worktree root' };
  if (record.lifecycle === 'landing') return { valid: false, ...base, reason: 'a land is in progress' };
  return { valid: true, ...base };
}

/** The managed worktree whose folder is `real` or contains it. */
export function findByPath(ctx: Ctx, real: string): WorktreeRecord | undefined {
  for (const record of ctx.store.all()) {
    if (!existsSync(record.path)) continue;
    let dir: string;
    try {
      dir = realpathSync(record.path);
    } catch {
      continue;
    }
    if (isInside(dir, real)) return record;
  }
  return undefined;
}
