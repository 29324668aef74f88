import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { callEngine, engine, onEngineOpen } from './client.ts';
import { onLiveEvent } from './live.ts';
import { UI_FUNCTION_PREFIX } from './ui-ids.ts';

/**
 * The worktree worker's functions (console-worker.md §4): `worktree::list {include_status: true}`
 * read live from its six lifecycle trigger types, with a 15 s poll while those bindings are not
 * all active (skipped while the tab is hidden), and claim / release / land / remove.
 */

export type Lifecycle = 'active' | 'claimed' | 'landing' | 'land-blocked' | 'orphaned';

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
  diffstat: string;
  head_sha: string;
  integrated: boolean;
  integration_reason?: string;
}

export interface LandSummary {
  job_id: string;
  target_branch: string;
  state: 'queued' | 'running' | 'landed' | 'blocked';
  reason?: string;
  code?: string;
  message?: string;
  conflict_files?: string[];
  exit_code?: number;
  merged_sha?: string;
  updated_at: number;
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
  status_error?: string;
  created_at: number;
  updated_at: number;
}

export const LIFECYCLE_EVENTS = ['created', 'claimed', 'released', 'removed', 'landed', 'land-blocked'] as const;
export type LifecycleEvent = (typeof LIFECYCLE_EVENTS)[number];

export const POLL_MS = 15_000;

export const worktreeKeys = {
  all: ['worktrees'] as const,
  list: () => [...worktreeKeys.all, 'list'] as const,
  config: () => [...worktreeKeys.all, 'config'] as const,
};

/** The worktree worker's configuration entry id (packages/worktree/README.md "Configuration entry `worktree`"). */
export const WORKTREE_CONFIG_ID = 'worktree';

/**
 * The stored value of the worker's `worktree` configuration entry (its effective settings: the
 * worker reloads the entry on every change), or `null` when it cannot be read: an engine without
 * `configuration::*`, where the worker runs on its ENG_WORKER_CONFIG, or an entry not registered.
 * Read again with the list (every lifecycle event and action invalidates both).
 */
export function useWorktreeConfig(enabled = true) {
  return useQuery({
    queryKey: worktreeKeys.config(),
    enabled,
    queryFn: async (): Promise<Record<string, unknown> | null> => {
      const res = await callEngine<{ value?: unknown } | null>('configuration::get', { id: WORKTREE_CONFIG_ID }).catch(() => null);
      const value = res?.value;
      return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
    },
    staleTime: 0,
  });
}

/** Every managed worktree with its status, oldest first. `live`: the six bindings are active (no poll needed). */
export function useWorktrees(live: boolean) {
  return useQuery({
    queryKey: worktreeKeys.list(),
    queryFn: async () => {
      const res = await callEngine<{ worktrees?: WorktreeInfo[] } | null>(
        'worktree::list',
        { include_status: true },
        { timeoutMs: 60_000 },
      );
      return Array.isArray(res?.worktrees) ? res.worktrees : [];
    },
    // the fallback poll; TanStack Query skips interval refetches while the tab is hidden
    refetchInterval: live ? false : POLL_MS,
    refetchIntervalInBackground: false,
    // back on the tab: read at once (events that arrived while hidden were not missed, polls were)
    refetchOnWindowFocus: 'always',
  });
}

export interface LiveEventRecord {
  type: LifecycleEvent;
  payload: Record<string, unknown>;
  at: number;
}

type Listener = (event: LiveEventRecord) => void;
const listeners = new Set<Listener>();
let bindings: { ids: string[]; unregister(): void } | undefined;
let dropTimer: number | undefined;

/** Register `<prefix><tab>::worktree-lifecycle::<type>` and bind each lifecycle type to it (the SDK replays both on reconnect). */
function ensureBindings(): { ids: string[] } {
  if (bindings) return bindings;
  const client = engine();
  const tab = Math.random().toString(36).slice(2, 10);
  const hidden = { internal: true, 'eng.ui': true };
  const refs = LIFECYCLE_EVENTS.map((type) => {
    const functionId = `${UI_FUNCTION_PREFIX}${tab}::worktree-lifecycle::${type}`;
    const fn = client.registerFunction(
      functionId,
      (payload: Record<string, unknown>) => {
        const record = { type, payload: payload ?? {}, at: Date.now() };
        for (const listener of listeners) listener(record);
        return null;
      },
      { description: `console UI: refresh the worktree graph on worktree::${type}`, metadata: hidden },
    );
    const trigger = client.registerTrigger({ type: `worktree::${type}`, function_id: functionId, config: {} });
    return { fn, trigger };
  });
  bindings = {
    ids: refs.map((r) => r.trigger.id),
    unregister() {
      for (const r of refs) {
        r.trigger.unregister();
        r.fn.unregister();
      }
    },
  };
  return bindings;
}

/** Whether all six bindings are active on the engine (a binding waits inactive until the worker provides its type). */
async function bindingsActive(ids: string[], tabToken: string): Promise<boolean> {
  const res = await callEngine<{ registered_triggers: Array<{ id: string; status: string }> }>('engine::registered-triggers::list', {
    include_internal: true,
    search: tabToken,
  });
  const active = new Set(res.registered_triggers.filter((t) => t.status === 'active').map((t) => t.id));
  return ids.every((id) => active.has(id));
}

/**
 * Live refresh of the worktree list: every lifecycle event re-reads it (coalesced), `onEvent`
 * sees each event. Returns whether the bindings are all active; while they are not, the list
 * polls every 15 s instead.
 */
export function useWorktreeLive(onEvent?: Listener): { live: boolean } {
  const queryClient = useQueryClient();
  const [live, setLive] = useState(false);
  const latest = useRef(onEvent);
  latest.current = onEvent;
  useEffect(() => {
    window.clearTimeout(dropTimer);
    const { ids } = ensureBindings();
    const token = `::worktree-lifecycle::`;
    let refresh: number | undefined;
    const listener: Listener = (event) => {
      latest.current?.(event);
      window.clearTimeout(refresh);
      refresh = window.setTimeout(() => void queryClient.invalidateQueries({ queryKey: worktreeKeys.all }), 120);
    };
    listeners.add(listener);
    let disposed = false;
    const check = async () => {
      try {
        const ok = await bindingsActive(ids, token);
        if (!disposed) setLive(ok);
      } catch {
        if (!disposed) setLive(false);
      }
    };
    // bindings become active when the worker (re)connects; events missed meanwhile are lost, so re-read too
    const offOpen = onEngineOpen(() => {
      void check();
      void queryClient.invalidateQueries({ queryKey: worktreeKeys.all });
    });
    const offLive = onLiveEvent(() => void check());
    const timer = window.setInterval(() => void check(), POLL_MS);
    const first = window.setTimeout(() => void check(), 300);
    return () => {
      disposed = true;
      listeners.delete(listener);
      offOpen();
      offLive();
      window.clearInterval(timer);
      window.clearTimeout(first);
      window.clearTimeout(refresh);
      // keep the bindings across quick remounts; drop them once nobody watched for a while
      dropTimer = window.setTimeout(() => {
        if (listeners.size > 0) return;
        bindings?.unregister();
        bindings = undefined;
      }, 10_000);
    };
  }, [queryClient]);
  return { live };
}

function useWorktreeMutation<T>(functionId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: T) => callEngine<Record<string, unknown>>(functionId, input, { timeoutMs: 60_000 }),
    onSettled: () => void queryClient.invalidateQueries({ queryKey: worktreeKeys.all }),
  });
}

export const useClaimWorktree = () => useWorktreeMutation<{ worktree_id: string; session_id: string }>('worktree::claim');
export const useReleaseWorktree = () => useWorktreeMutation<{ worktree_id: string; session_id: string }>('worktree::release');
export const useLandWorktree = () =>
  useWorktreeMutation<{ worktree_id: string; target_branch: string; test_cmd?: string; keep?: boolean }>('worktree::land');
export const useRemoveWorktree = () =>
  useWorktreeMutation<{ worktree_id: string; delete_branch?: boolean; force?: boolean }>('worktree::remove');

/** The session id this browser claims with (kept in local storage so claims survive a reload). */
export function consoleSessionId(): string {
  const key = 'eng-worktree-session';
  try {
    const known = localStorage.getItem(key);
    if (known) return known;
    const fresh = `console-${Math.random().toString(36).slice(2, 8)}`;
    localStorage.setItem(key, fresh);
    return fresh;
  } catch {
    return 'console';
  }
}
