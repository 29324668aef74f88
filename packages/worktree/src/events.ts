import { existsSync, realpathSync } from 'node:fs';
import { describeZodError } from '@eng/protocol';
import { type EngClient, TriggerAction } from '@eng/sdk';
import { z } from 'zod';
import type { BlockReason } from './types.ts';

// The six lifecycle trigger types (console-worker.md §4.2): payloads as the reference sends them,
// optional equality filters `repo_path`, `worktree_id`, `session_id`, unknown filter fields refused.

export interface CreatedEvent {
  worktree_id: string;
  repo_path: string;
  path: string;
  branch: string;
  base_ref: string;
  base_sha: string;
  session_id?: string;
  timestamp: number;
}
export interface ClaimedEvent {
  worktree_id: string;
  repo_path: string;
  session_id: string;
  previous_session_id?: string;
  timestamp: number;
}
export interface ReleasedEvent {
  worktree_id: string;
  repo_path: string;
  session_id: string;
  timestamp: number;
}
export interface RemovedEvent {
  worktree_id: string;
  repo_path: string;
  branch: string;
  branch_deleted: boolean;
  timestamp: number;
}
export interface LandedEvent {
  worktree_id: string;
  repo_path: string;
  branch: string;
  target_branch: string;
  merged_sha: string;
  session_id?: string;
  timestamp: number;
}
export interface LandBlockedEvent {
  worktree_id: string;
  repo_path: string;
  target_branch: string;
  reason: BlockReason;
  code: string;
  message?: string;
  conflict_files?: string[];
  exit_code?: number;
  session_id?: string;
  timestamp: number;
}

export interface EventPayloads {
  'worktree::created': CreatedEvent;
  'worktree::claimed': ClaimedEvent;
  'worktree::released': ReleasedEvent;
  'worktree::removed': RemovedEvent;
  'worktree::landed': LandedEvent;
  'worktree::land-blocked': LandBlockedEvent;
}
export type EventType = keyof EventPayloads;

const DESCRIPTIONS: Record<EventType, string> = {
  'worktree::created': 'a managed worktree was created',
  'worktree::claimed': 'a session claimed a worktree',
  'worktree::released': 'a session released its claim on a worktree',
  'worktree::removed': 'a managed worktree was removed (by remove, prune or a land cleanup)',
  'worktree::landed': 'a land advanced its target branch',
  'worktree::land-blocked': 'a land stopped: conflict, failed tests, dirty worktree, target moved …',
};
export const EVENT_TYPES = Object.keys(DESCRIPTIONS) as EventType[];

const FilterSchema = z
  .object({
    repo_path: z.string().min(1).optional(),
    worktree_id: z.string().min(1).optional(),
    session_id: z.string().min(1).optional(),
  })
  .strict();
type Filter = z.infer<typeof FilterSchema>;

interface Binding {
  functionId: string;
  filter: Filter;
  metadata: Record<string, unknown> | undefined;
}

export class LifecycleEvents {
  private readonly bindings = new Map<EventType, Map<string, Binding>>();

  constructor(private readonly client: EngClient) {
    for (const type of EVENT_TYPES) {
      const ofType = new Map<string, Binding>();
      this.bindings.set(type, ofType);
      client.registerTriggerType(
        { id: type, description: `${DESCRIPTIONS[type]}; config: {repo_path?, worktree_id?, session_id?} equality filters` },
        {
          registerTrigger: (binding) => {
            const parsed = FilterSchema.safeParse(binding.config ?? {});
            if (!parsed.success) throw new Error(`invalid ${type} trigger config: ${describeZodError(parsed.error)}`);
            const filter = { ...parsed.data };
            // a repo named through a symlink still matches the canonical path the events carry
            if (filter.repo_path && existsSync(filter.repo_path)) filter.repo_path = realpathSync(filter.repo_path);
            ofType.set(binding.id, { functionId: binding.function_id, filter, metadata: binding.metadata });
          },
          unregisterTrigger: (binding) => {
            ofType.delete(binding.id);
          },
        },
      );
    }
  }

  /** Fire every matching binding (fire-and-forget); returns how many were fired. */
  emit<T extends EventType>(type: T, payload: EventPayloads[T]): number {
    const event = payload as { repo_path: string; worktree_id: string; session_id?: string };
    let fired = 0;
    for (const binding of this.bindings.get(type)?.values() ?? []) {
      const f = binding.filter;
      if (f.repo_path !== undefined && f.repo_path !== event.repo_path) continue;
      if (f.worktree_id !== undefined && f.worktree_id !== event.worktree_id) continue;
      if (f.session_id !== undefined && f.session_id !== event.session_id) continue;
      fired++;
      this.client
        .trigger({ function_id: binding.functionId, payload, action: TriggerAction.Void(), metadata: binding.metadata })
        .catch(() => undefined); // the SDK queues while reconnecting; a closed client has nobody to tell
    }
    return fired;
  }
}
