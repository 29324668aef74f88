import { describeZodError, EngError } from '@eng/protocol';
import type { z } from 'zod';

/**
 * The worktree worker's stable error codes (console-worker.md §4.1). A caller matches on `code`;
 * the message starts with the code and names the problem, so a log line alone says what went wrong.
 * The reference fixes W210/W211/W220/W221/W222/W402/W411/W500–W504; the others fill the same ranges:
 * W1xx bad input, W2xx worktree state, W3xx git itself, W4xx landing, W5xx configuration gates, W900 a bug (an unexpected exception).
 */
export const W = {
  InvalidRequest: 'W100',
  InvalidRef: 'W101',
  PathRefused: 'W102',
  NotFound: 'W200',
  NotARepository: 'W201',
  RefNotFound: 'W202',
  BranchExists: 'W203',
  PullRequestNotFound: 'W204',
  ClaimedByOther: 'W210',
  NotClaimOwner: 'W211',
  Dirty: 'W220',
  Unmerged: 'W221',
  Busy: 'W222',
  GitFailed: 'W300',
  GitTimeout: 'W301',
  StateUnavailable: 'W310',
  TargetNotFound: 'W400',
  RebaseConflict: 'W401',
  RebaseUnresolved: 'W402',
  TargetMovedExhausted: 'W403',
  TargetCheckedOutDirty: 'W404',
  PathMissing: 'W405',
  GitIdentityMissing: 'W406',
  TestFailed: 'W410',
  TestGateMisconfigured: 'W411',
  Disabled: 'W500',
  ForceDisabled: 'W501',
  TargetNotAllowed: 'W502',
  RepoNotAllowed: 'W503',
  BudgetExceeded: 'W504',
  Internal: 'W900',
} as const;
export type WorktreeErrorCode = (typeof W)[keyof typeof W];

export function worktreeError(code: WorktreeErrorCode, message: string, details?: unknown): EngError {
  return new EngError(code, `${code}: ${message}`, details === undefined ? undefined : { details });
}

export function isEngError(err: unknown): err is EngError {
  return err instanceof EngError || (typeof err === 'object' && err !== null && (err as { name?: string }).name === 'EngError');
}

/** Parse a function's input; a mismatch is W100 naming the field (a null payload reads as `{}`). */
export function parseInput<T>(functionId: string, schema: z.ZodType<T>, input: unknown): T {
  let value = input === null || input === undefined ? {} : input;
  if (typeof value === 'object' && !Array.isArray(value) && '_caller_worker_id' in value) {
    // the engine stamps worker-to-worker payloads with the caller (engine-protocol §2.3.9)
    const { _caller_worker_id: _, ...rest } = value as Record<string, unknown>;
    value = rest;
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw worktreeError(W.InvalidRequest, `${functionId}: ${describeZodError(parsed.error)}`);
  return parsed.data;
}
