import { type QueryClient, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef } from 'react';
import type { Page } from '../lib/paged-window.ts';
import { callEngine, engine } from './client.ts';
import { UI_FUNCTION_PREFIX } from './ui-ids.ts';

/**
 * The key-value state store (seed 2.4) through `state::*`. Items are listed with their REAL keys
 * through the keyed listing `state::list {scope, with_keys: true, offset, limit, prefix}` (the
 * reference console made keys up from values, iii#1896). Writes go through `state::set` and
 * `state::delete`, so `state` triggers fire as for any other writer (seed §3).
 */

export interface StateItem {
  key: string;
  value: unknown;
}

export interface StateGroup {
  scope: string;
  /** Keys in the scope; undefined while counting or when the count failed. */
  count: number | undefined;
}

export const stateKeys = {
  all: ['state'] as const,
  groups: () => [...stateKeys.all, 'groups'] as const,
  scope: (scope: string) => [...stateKeys.all, 'scope', scope] as const,
  items: (scope: string, prefix: string) => [...stateKeys.scope(scope), 'items', prefix] as const,
  allKeys: (scope: string) => [...stateKeys.scope(scope), 'all-keys'] as const,
  value: (scope: string, key: string) => [...stateKeys.scope(scope), 'value', key] as const,
};

/** The server's largest page (`limit` 1…10000, state README). */
export const STATE_MAX_PAGE = 10_000;

interface KeyedListing {
  items: StateItem[];
  total: number;
}

export function listStateItems(scope: string, offset: number, limit: number, prefix?: string): Promise<KeyedListing> {
  return callEngine<KeyedListing>('state::list', { scope, with_keys: true, offset, limit, ...(prefix ? { prefix } : {}) });
}

/** Groups (scopes) with their key counts: one `list_groups` and a `limit: 1` keyed listing per scope for its total. */
export function useStateGroups() {
  return useQuery({
    queryKey: stateKeys.groups(),
    queryFn: async (): Promise<StateGroup[]> => {
      const res = await callEngine<{ groups: string[] }>('state::list_groups', {});
      const groups = res.groups ?? [];
      const counts = await Promise.all(
        groups.map((scope) =>
          listStateItems(scope, 0, 1)
            .then((r) => r.total)
            .catch(() => undefined),
        ),
      );
      return groups.map((scope, i) => ({ scope, count: counts[i] }));
    },
    refetchInterval: 15_000,
  });
}

/** One page of a scope's items for the virtualised table (lib/paged-window.ts). */
export function fetchStatePage(scope: string, prefix: string) {
  return async (offset: number, limit: number): Promise<Page<StateItem>> => {
    const res = await listStateItems(scope, offset, limit, prefix || undefined);
    return { rows: res.items, total: res.total };
  };
}

/**
 * Every key of a scope, for the client-side "contains" filter. Read in pages of 10,000 and
 * capped at `cap` keys so a huge scope cannot freeze the tab; `truncated` says when it stopped.
 */
export function useAllStateItems(scope: string | undefined, enabled: boolean, cap = 50_000) {
  return useQuery({
    queryKey: stateKeys.allKeys(scope ?? ''),
    enabled: !!scope && enabled,
    queryFn: async () => {
      const items: StateItem[] = [];
      let total = 0;
      for (let offset = 0; offset < cap; offset += STATE_MAX_PAGE) {
        const res = await listStateItems(scope as string, offset, STATE_MAX_PAGE);
        total = res.total;
        items.push(...res.items);
        if (items.length >= total || res.items.length === 0) break;
      }
      return { items, total, truncated: items.length < total };
    },
  });
}

/** The current value of one key (`state::get` answers nothing for a missing key). */
export function useStateValue(scope: string | undefined, key: string | undefined) {
  return useQuery({
    queryKey: stateKeys.value(scope ?? '', key ?? ''),
    enabled: !!scope && key !== undefined,
    queryFn: async () => {
      const value = await callEngine<unknown>('state::get', { scope, key });
      return { exists: value !== undefined && value !== null, value: value ?? null };
    },
  });
}

function invalidateScope(qc: QueryClient, scope: string): void {
  void qc.invalidateQueries({ queryKey: stateKeys.scope(scope) });
  void qc.invalidateQueries({ queryKey: stateKeys.groups() });
}

/** Add or edit: `state::set {scope, key, value}` → `{old_value, new_value}`. */
export function useSetStateItem() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (input: { scope: string; key: string; value: unknown }) =>
      callEngine<{ old_value: unknown; new_value: unknown }>('state::set', input),
    onSuccess: (_res, input) => invalidateScope(qc, input.scope),
  });
}

/** Delete: `state::delete {scope, key}` answers the previous value. */
export function useDeleteStateItem() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (input: { scope: string; key: string }) => callEngine<unknown>('state::delete', input),
    onSuccess: (_res, input) => invalidateScope(qc, input.scope),
  });
}

/** `state::get` without caching, to warn before Add overwrites an existing key. */
export async function stateKeyExists(scope: string, key: string): Promise<boolean> {
  const value = await callEngine<unknown>('state::get', { scope, key });
  return value !== undefined && value !== null;
}

export interface StateChange {
  event_type: 'state:created' | 'state:updated' | 'state:deleted';
  scope: string;
  key: string;
}

let liveSeq = 0;

/**
 * Live refresh while the States page is open: a hidden function bound to a `state` trigger on
 * every scope (state README "state trigger type"), so writes by any worker show up at once.
 * Invalidations are batched per 250 ms so a burst of writes costs one refetch per scope.
 */
export function useStateLiveRefresh(onChange?: (change: StateChange) => void): void {
  const qc = useQueryClient();
  const onChangeRef = useRef(onChange);
  onChangeRef.current = onChange;
  useEffect(() => {
    const client = engine();
    const id = `${UI_FUNCTION_PREFIX}${Math.random().toString(36).slice(2, 10)}-${++liveSeq}::state`;
    const dirty = new Set<string>();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const fn = client.registerFunction(
      id,
      (event: StateChange) => {
        if (event && typeof event.scope === 'string') {
          dirty.add(event.scope);
          onChangeRef.current?.(event);
        }
        timer ??= setTimeout(() => {
          timer = undefined;
          for (const scope of dirty) invalidateScope(qc, scope);
          dirty.clear();
        }, 250);
        return null;
      },
      { description: 'console UI: refresh the States page on state changes', metadata: { internal: true, 'eng.ui': true } },
    );
    const trigger = client.registerTrigger({ type: 'state', function_id: id, config: {} });
    return () => {
      clearTimeout(timer);
      trigger.unregister();
      fn.unregister();
    };
  }, [qc]);
}
