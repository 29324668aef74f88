import type { StoredLog, StoredSpan, TraceListSpan } from '@eng/protocol';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef } from 'react';
import { GROUP_ATTRIBUTES, type GroupBy, listInputOf, type TraceFilters, timeWindow } from '../components/traces/trace-search.ts';
import { callEngine, engine } from './client.ts';
import { UI_FUNCTION_PREFIX } from './ui-ids.ts';

/**
 * The trace explorer's data: `engine::traces::list|spans|group_by|clear` and `engine::logs::list`
 * (console-worker §3.1, engine-protocol §4.3). Freshness is pushed: the engine's `trace` trigger
 * type reports the trace ids that received spans (at most every 300 ms), with a slow poll behind it
 * for engines without that trigger.
 */

export type { StoredLog, StoredSpan, TraceListSpan };

export interface TraceListResult {
  spans: TraceListSpan[];
  total: number;
  offset: number;
  limit: number;
}

export interface TraceGroup {
  value: string;
  label: string;
  trace_ids: string[];
  span_count: number;
  first_seen_ms: number;
  last_seen_ms: number;
  duration_ms: number;
  error_count: number;
}

export const traceKeys = {
  all: ['traces'] as const,
  lists: () => [...traceKeys.all, 'list'] as const,
  list: (filters: TraceFilters, page: number, size: number) => [...traceKeys.lists(), filters, page, size] as const,
  spans: (traceId: string) => [...traceKeys.all, 'spans', traceId] as const,
  groups: (group: GroupBy, filters: TraceFilters) => [...traceKeys.all, 'groups', group, filters] as const,
  groupRows: (traceIds: string[], filters: TraceFilters) => [...traceKeys.all, 'group-rows', traceIds, filters] as const,
  logs: (traceId: string, spanId: string) => [...traceKeys.all, 'logs', traceId, spanId] as const,
};

/** A fallback refresh for engines whose `trace` trigger is missing; pushes normally come first. */
const SAFETY_POLL_MS = 15_000;
/** Free-text search looks at this many matching spans to find their traces. */
const SEARCH_SPAN_LIMIT = 2000;

const HEX_ID = /^[0-9a-f]{16}$|^[0-9a-f]{32}$/i;

/**
 * Free text (debounced in the page) → the ids of traces with a span whose name or service contains
 * it, or whose trace id is it. The list is then the normal root listing over those ids, so every
 * other filter still applies to the trace as a whole and rows stay one per trace.
 */
async function tracesMatchingText(q: string, base: Record<string, unknown>): Promise<string[]> {
  const common: Record<string, unknown> = { search_all_spans: true, limit: SEARCH_SPAN_LIMIT, sort_by: 'start_time', sort_order: 'desc' };
  if (base.include_internal) common.include_internal = true;
  if (base.start_time !== undefined) common.start_time = base.start_time;
  if (base.end_time !== undefined) common.end_time = base.end_time;
  const calls = [
    callEngine<TraceListResult>('engine::traces::list', { ...common, name: q }),
    callEngine<TraceListResult>('engine::traces::list', { ...common, service_name: q }),
  ];
  if (HEX_ID.test(q.trim())) {
    const id = q.trim().toLowerCase();
    calls.push(callEngine<TraceListResult>('engine::traces::list', { ...common, trace_id: id.length === 32 ? id : undefined }));
  }
  const results = await Promise.all(calls);
  const ids = new Set<string>();
  for (const res of results) for (const span of res.spans) ids.add(span.trace_id);
  return [...ids];
}

export async function fetchTraceList(filters: TraceFilters, page: number, size: number): Promise<TraceListResult> {
  const input = listInputOf(filters, Date.now());
  const offset = page * size;
  if (filters.q?.trim()) {
    let ids = await tracesMatchingText(filters.q.trim(), input);
    // the engine ORs trace_id with trace_ids: intersect here so the exact-id filter still narrows
    if (filters.tid) ids = ids.filter((id) => id === filters.tid);
    if (ids.length === 0) return { spans: [], total: 0, offset, limit: size };
    delete input.trace_id;
    input.trace_ids = ids;
  }
  return callEngine<TraceListResult>('engine::traces::list', { ...input, offset, limit: size });
}

/** One page of traces (root spans with per-trace counts), newest first by default. */
export function useTraceList(filters: TraceFilters, page: number, size: number, options: { live: boolean; enabled?: boolean }) {
  return useQuery({
    queryKey: traceKeys.list(filters, page, size),
    queryFn: () => fetchTraceList(filters, page, size),
    enabled: options.enabled ?? true,
    placeholderData: keepPreviousData,
    refetchInterval: options.live ? SAFETY_POLL_MS : false,
  });
}

/** Every span of one trace, by start time. Polled while any span is still in progress. */
export function useTraceSpans(traceId: string | undefined) {
  return useQuery({
    queryKey: traceKeys.spans(traceId ?? ''),
    queryFn: async () => (await callEngine<{ spans: StoredSpan[] }>('engine::traces::spans', { trace_id: traceId })).spans,
    enabled: !!traceId,
    staleTime: 2_000,
    refetchInterval: (query) => (query.state.data?.some((s) => s.pending) ? 1_000 : false),
  });
}

/**
 * `engine::traces::group_by` over each spelling of the attribute (eng.* and iii.*), merged by value;
 * the time filter maps to `since_ms`. Groups carry trace ids only: rows load when a group opens.
 */
export function useTraceGroups(group: GroupBy, filters: TraceFilters, options: { live: boolean }) {
  return useQuery({
    queryKey: traceKeys.groups(group, filters),
    enabled: group !== 'none',
    placeholderData: keepPreviousData,
    refetchInterval: options.live ? SAFETY_POLL_MS : false,
    queryFn: async () => {
      if (group === 'none') return [];
      const now = Date.now();
      const { start } = timeWindow(filters, now);
      const filter = await groupFilterOf(filters, now);
      if (filter === null) return [];
      const results = await Promise.all(
        GROUP_ATTRIBUTES[group].attributes.map((attribute) =>
          callEngine<{ groups: TraceGroup[] }>('engine::traces::group_by', {
            attribute,
            limit: 100,
            ...(start !== undefined ? { since_ms: Math.floor(start) } : {}),
            ...(filters.system ? { include_internal: true } : {}),
            ...(filter ? { filter } : {}),
          }),
        ),
      );
      return mergeGroups(results.flatMap((r) => r.groups));
    },
  });
}

/**
 * The list filters a grouping passes on, so that groups count only the traces the list would show;
 * undefined while only the time window is set (`since_ms` covers it, and engines without the
 * `filter` option are not asked for it). Free text becomes the ids of the traces it matches; null
 * when it matches none (no group can hold a trace).
 */
async function groupFilterOf(filters: TraceFilters, now: number): Promise<Record<string, unknown> | undefined | null> {
  const traceLevel =
    filters.q?.trim() ||
    filters.tid ||
    filters.service ||
    filters.op ||
    filters.status ||
    filters.min !== undefined ||
    filters.max !== undefined ||
    (filters.attr?.length ?? 0) > 0 ||
    filters.to !== undefined;
  if (!traceLevel) return undefined;
  const { sort_by: _sort, sort_order: _order, ...filter } = listInputOf(filters, now);
  if (filters.q?.trim()) {
    let ids = await tracesMatchingText(filters.q.trim(), filter);
    if (filters.tid) ids = ids.filter((id) => id === filters.tid);
    if (ids.length === 0) return null;
    delete filter.trace_id;
    filter.trace_ids = ids;
  }
  return filter;
}

export function mergeGroups(groups: TraceGroup[]): TraceGroup[] {
  const byValue = new Map<string, TraceGroup>();
  for (const g of groups) {
    const seen = byValue.get(g.value);
    if (!seen) {
      byValue.set(g.value, { ...g, trace_ids: [...g.trace_ids] });
      continue;
    }
    const ids = new Set([...seen.trace_ids, ...g.trace_ids]);
    seen.trace_ids = [...ids];
    seen.span_count = Math.max(seen.span_count, g.span_count);
    seen.error_count = Math.max(seen.error_count, g.error_count);
    seen.first_seen_ms = Math.min(seen.first_seen_ms, g.first_seen_ms);
    seen.last_seen_ms = Math.max(seen.last_seen_ms, g.last_seen_ms);
    seen.duration_ms = seen.last_seen_ms - seen.first_seen_ms;
  }
  return [...byValue.values()].sort((a, b) => b.last_seen_ms - a.last_seen_ms);
}

/** The traces of one opened group, with the page's other filters applied (loaded lazily). */
export function useGroupRows(traceIds: string[], filters: TraceFilters, enabled: boolean) {
  return useQuery({
    queryKey: traceKeys.groupRows(traceIds, filters),
    enabled: enabled && traceIds.length > 0,
    queryFn: async () => {
      const input = listInputOf({ ...filters, q: undefined }, Date.now());
      delete input.trace_id;
      const ids = filters.tid ? traceIds.filter((id) => id === filters.tid) : traceIds;
      if (ids.length === 0) return { spans: [], total: 0, offset: 0, limit: 0 } as TraceListResult;
      return callEngine<TraceListResult>('engine::traces::list', { ...input, trace_ids: ids, limit: Math.max(ids.length, 1) });
    },
  });
}

/** OTel log records of one span (the span's Logs tab). */
export function useSpanLogs(traceId: string | undefined, spanId: string | undefined) {
  return useQuery({
    queryKey: traceKeys.logs(traceId ?? '', spanId ?? ''),
    enabled: !!traceId && !!spanId,
    queryFn: async () => {
      const res = await callEngine<{ logs: StoredLog[]; total: number }>('engine::logs::list', {
        trace_id: traceId,
        span_id: spanId,
        limit: 500,
      });
      return res.logs;
    },
  });
}

export function useClearTraces() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => callEngine('engine::traces::clear', {}),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: traceKeys.all }),
  });
}

// ── live feed: the engine's `trace` trigger (observability README "Trigger types") ─────────

type TraceListener = (traceIds: string[]) => void;
const traceListeners = new Set<TraceListener>();
let feed: { unregister(): void } | undefined;
let feedTimer: number | undefined;

function startFeed(): void {
  if (feed) return;
  const client = engine();
  const functionId = `${UI_FUNCTION_PREFIX}${Math.random().toString(36).slice(2, 10)}::traces-changed`;
  const fn = client.registerFunction(
    functionId,
    (input: { trace_ids?: string[] }) => {
      const ids = Array.isArray(input?.trace_ids) ? input.trace_ids : [];
      for (const listener of traceListeners) listener(ids);
      return null;
    },
    { description: 'console UI: refresh the trace explorer when spans arrive', metadata: { internal: true, 'eng.ui': true } },
  );
  const trigger = client.registerTrigger({ type: 'trace', function_id: functionId, config: {} });
  feed = {
    unregister() {
      trigger.unregister();
      fn.unregister();
    },
  };
}

/** Subscribe to "these traces received spans"; the binding lives while someone listens. */
export function useTraceFeed(listener: TraceListener): void {
  const latest = useRef(listener);
  latest.current = listener;
  useEffect(() => {
    const wrapped: TraceListener = (ids) => latest.current(ids);
    traceListeners.add(wrapped);
    window.clearTimeout(feedTimer);
    startFeed();
    return () => {
      traceListeners.delete(wrapped);
      // keep the binding across quick remounts (StrictMode, route changes back and forth)
      if (traceListeners.size === 0) {
        feedTimer = window.setTimeout(() => {
          if (traceListeners.size > 0) return;
          feed?.unregister();
          feed = undefined;
        }, 5_000);
      }
    };
  }, []);
}
