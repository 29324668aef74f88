// @eng/worktree: the worktree worker as a library (tests, embedding); `eng-worktree` runs it.
export { CONFIG_JSON_SCHEMA, DEFAULT_CONFIG, type WorktreeConfig } from './config.ts';
export { W, type WorktreeErrorCode } from './errors.ts';
export { EVENT_TYPES, type EventPayloads, type EventType } from './events.ts';
export type { BlockReason, IntegrationReason, LandSummary, Lifecycle, WorktreeInfo, WorktreeStatus } from './types.ts';
export { type StartedWorktreeWorker, startWorktreeWorker } from './worker.ts';
