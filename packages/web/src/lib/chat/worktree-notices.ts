/**
 * The chat's worktree pieces that need no engine (seed 2.9 "Worktrees", console-worker.md §4.3):
 * the notices a conversation shows when its worktree landed or its land was blocked, who owns such
 * an event, and the badge's short id.
 */

export interface WorktreeNotice {
  /** Stable per event (a land interrupted by a crash may be reported twice: shown once). */
  id: string;
  kind: 'landed' | 'land-blocked';
  worktreeId: string;
  title: string;
  /** The worker's own message (land-blocked), with its W### code. */
  detail?: string;
  at: number;
}

/** `wt_3f2a91c04b7e` → `3f2a91c0`: what the badge shows of a worktree id. */
export function shortWorktreeId(id: string): string {
  return id.replace(/^wt_/, '').slice(0, 8);
}

const REASONS: Record<string, string> = {
  dirty: 'the worktree has uncommitted changes',
  worktree_path_missing: 'the worktree folder is missing',
  rebase_in_progress: 'a rebase is still in progress in the worktree',
  target_ref_not_found: 'the target branch does not exist',
  target_moved_exhausted: 'the target kept moving (retries used up)',
  target_checked_out_dirty: 'the checkout of the target has uncommitted changes',
  git_identity_missing:
    "git has no identity (user.name / user.email) on the worker's machine: set one there, or the worker's committer setting",
};

const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);

/**
 * Why a land was blocked, in words: up to three conflicted files and "and N more", the tests' exit
 * code, a caller's test command refused (W500), a missing git identity (W406), …
 */
export function blockedReason(payload: Record<string, unknown>): string {
  const reason = str(payload.reason) ?? 'unknown';
  const files = Array.isArray(payload.conflict_files) ? payload.conflict_files.filter((f): f is string => typeof f === 'string') : [];
  if (reason === 'rebase_conflict') {
    if (!files.length) return 'the rebase hit conflicts';
    const more = files.length > 3 ? ` and ${files.length - 3} more` : '';
    return `conflicts in ${files.slice(0, 3).join(', ')}${more} (the rebase is left in progress to resolve)`;
  }
  if (reason === 'test_failed') {
    // a caller's command stored before the operator turned gates.allow_caller_test_cmd off: it never ran
    if (payload.code === 'W500')
      return "the caller's test command was refused (the worker's gates.allow_caller_test_cmd is off); land again without one";
    return typeof payload.exit_code === 'number' ? `the tests failed (exit ${payload.exit_code})` : 'the tests failed';
  }
  return REASONS[reason] ?? reason.replace(/_/g, ' ');
}

/**
 * The notice of a `worktree::landed` / `worktree::land-blocked` payload. `branch`: the worktree's
 * branch when the payload does not carry it (land-blocked does not).
 */
export function landNotice(type: 'landed' | 'land-blocked', payload: Record<string, unknown>, at: number, branch?: string): WorktreeNotice {
  const worktreeId = str(payload.worktree_id) ?? '';
  const name = str(payload.branch) ?? branch ?? worktreeId;
  const target = str(payload.target_branch) ?? '?';
  if (type === 'landed') {
    const sha = str(payload.merged_sha) ?? '';
    return {
      id: `landed:${worktreeId}:${sha}`,
      kind: 'landed',
      worktreeId,
      title: `Worktree ${name} landed onto ${target} (${sha.slice(0, 8)})`,
      at,
    };
  }
  const code = str(payload.code);
  const message = str(payload.message);
  return {
    id: `blocked:${worktreeId}:${str(payload.reason) ?? ''}:${typeof payload.timestamp === 'number' ? payload.timestamp : at}`,
    kind: 'land-blocked',
    worktreeId,
    title: `Land of ${name} onto ${target} blocked: ${blockedReason(payload)}`,
    ...(message || code ? { detail: code && message?.startsWith(code) ? message : [code, message].filter(Boolean).join(' · ') } : {}),
    at,
  };
}

/**
 * The conversation an event is about: the session it names when that is one of ours, else the
 * conversation this console claimed the worktree for.
 */
export function ownerOf(
  payload: Record<string, unknown>,
  conversations: readonly string[],
  claims: Readonly<Record<string, string>>,
): string | undefined {
  const session = str(payload.session_id);
  if (session && conversations.includes(session)) return session;
  const worktreeId = str(payload.worktree_id);
  if (!worktreeId) return undefined;
  return conversations.find((c) => claims[c] === worktreeId);
}
