// Shapes of console-worker.md §4.1: what the worker stores per worktree and per land, and what
// its functions answer (WorktreeInfo, WorktreeStatus).

/** `landing` = a land job is queued or running; `orphaned` = the folder is gone (derived, never stored). */
export type Lifecycle = 'active' | 'claimed' | 'landing' | 'land-blocked' | 'orphaned';

export type IntegrationReason = 'same_commit' | 'ancestor' | 'no_added_changes' | 'trees_match' | 'merge_adds_nothing' | 'patch_id_match';

export type BlockReason =
  | 'rebase_conflict'
  | 'test_failed'
  | 'dirty'
  | 'worktree_path_missing'
  | 'rebase_in_progress'
  | 'target_ref_not_found'
  | 'target_moved_exhausted'
  | 'target_checked_out_dirty'
  | 'git_identity_missing';

/** The last land of a worktree, as the detail panel and the chat notices show it. */
export interface LandSummary {
  job_id: string;
  target_branch: string;
  state: 'queued' | 'running' | 'landed' | 'blocked';
  reason?: BlockReason;
  code?: string;
  message?: string;
  conflict_files?: string[];
  exit_code?: number;
  merged_sha?: string;
  updated_at: number;
}

/** What the state store keeps per managed worktree (scope `worktree`, key = worktree id). */
export interface WorktreeRecord {
  worktree_id: string;
  repo_path: string;
  repo_key: string;
  /** The worktree root the folder was created under (confinement is checked against it). */
  root: string;
  path: string;
  branch: string;
  base_ref: string;
  base_sha: string;
  /** True when create made the branch (remove may delete it). */
  branch_created: boolean;
  pr?: number;
  session_id?: string;
  lifecycle: Exclude<Lifecycle, 'orphaned'>;
  land?: LandSummary;
  created_at: number;
  updated_at: number;
}

export interface WorktreeStatus {
  clean: boolean;
  ahead: number;
  behind: number;
  staged: number;
  unstaged: number;
  untracked: number;
  conflicted: number;
  unpushed: number;
  in_rebase: boolean;
  /** `git diff --shortstat` since base_sha (working tree included), empty when nothing changed. */
  diffstat: string;
  head_sha: string;
  integrated: boolean;
  integration_reason?: IntegrationReason;
}

export interface WorktreeInfo {
  worktree_id: string;
  repo_path: string;
  repo_key: string;
  path: string;
  branch: string;
  base_ref: string;
  base_sha: string;
  dev_port: number;
  lifecycle: Lifecycle;
  session_id?: string;
  pr?: number;
  land?: LandSummary;
  status?: WorktreeStatus;
  /** Why the status is missing although it was asked for (folder gone, git failed). */
  status_error?: string;
  created_at: number;
  updated_at: number;
}

/** A queued or running land (scope `worktree-land`, key = job id). */
export interface LandJob {
  job_id: string;
  /** Orders the jobs of one repository (FIFO). */
  seq: number;
  worktree_id: string;
  repo_key: string;
  target_branch: string;
  test_cmd?: string | string[];
  keep: boolean;
  state: 'queued' | 'running' | 'landed' | 'blocked';
  /** Where a running land got to; a restart resumes from it. */
  phase: 'queued' | 'rebase' | 'test' | 'cas' | 'cleanup' | 'done';
  old_sha?: string;
  new_sha?: string;
  /** The worktree that has the target branch checked out, synced after the ref moves. */
  checked_out?: string;
  attempts: number;
  session_id?: string;
  created_at: number;
  updated_at: number;
}

/** Advisory dev port: 10000 + hash(id) mod 10000, never reserved (console-worker.md §4.1). */
export function devPort(worktreeId: string): number {
  let hash = 2166136261;
  for (let i = 0; i < worktreeId.length; i++) {
    hash ^= worktreeId.charCodeAt(i);
    hash = Math.imul(hash, 16777619);
  }
  return 10000 + ((hash >>> 0) % 10000);
}
