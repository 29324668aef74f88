import type { StoredLog } from '@eng/protocol';
import { useMutation, useQueries, useQuery, useQueryClient } from '@tanstack/react-query';
import type { Page } from '../lib/paged-window.ts';
import { callEngine } from './client.ts';

export type { StoredLog };

/**
 * Logs (seed 2.7) from the observability module's store: `engine::logs::list` (newest first,
 * `total` counted before paging) and `engine::logs::clear`. Every filter runs on the engine, so
 * a 100,000-line store is read one page at a time.
 */

export const SEVERITIES = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'] as const;
export type Severity = (typeof SEVERITIES)[number];

export const RANGE_PRESETS = {
  '5m': 5 * 60_000,
  '15m': 15 * 60_000,
  '1h': 3_600_000,
  '6h': 6 * 3_600_000,
  '24h': 86_400_000,
  '7d': 7 * 86_400_000,
};
export type RangePreset = keyof typeof RANGE_PRESETS;

/** The page's filters, as kept in the URL. */
export interface LogFilters {
  severity?: Severity[];
  /** A preset is relative to "now" at every refresh, so a live tail never falls out of its window. */
  range?: RangePreset | 'custom';
  from?: number;
  to?: number;
  q?: string;
  trace_id?: string;
  service?: string;
}

interface LogsListAnswer {
  logs: StoredLog[];
  total: number;
}

/** The `engine::logs::list` input for `filters`, read as of `asOf` (ms). */
export function logsQuery(filters: LogFilters, asOf: number): Record<string, unknown> {
  const query: Record<string, unknown> = {};
  if (filters.severity?.length) query.severity_text = filters.severity;
  if (filters.q) query.search = filters.q;
  if (filters.trace_id) query.trace_id = filters.trace_id.trim().toLowerCase();
  if (filters.service) query.service_name = filters.service;
  let end = asOf;
  if (filters.range === 'custom') {
    if (filters.from !== undefined) query.start_time = filters.from;
    if (filters.to !== undefined) end = Math.min(end, filters.to);
  } else if (filters.range) {
    query.start_time = Math.max(0, asOf - RANGE_PRESETS[filters.range]);
  }
  query.end_time = Math.max(end, (query.start_time as number | undefined) ?? 0);
  return query;
}

export const logKeys = {
  all: ['logs'] as const,
  window: (filters: LogFilters, asOf: number) => [...logKeys.all, 'window', filters, asOf] as const,
  head: (filters: LogFilters) => [...logKeys.all, 'head', filters] as const,
  sample: (filters: LogFilters, bucket: number) => [...logKeys.all, 'sample', filters, bucket] as const,
  levels: (filters: LogFilters, bucket: number) => [...logKeys.all, 'levels', filters, bucket] as const,
};

/** One page of the list as of the snapshot `asOf` (fixed while reading, so offsets stay stable). */
export function fetchLogsPage(filters: LogFilters, asOf: number) {
  return async (offset: number, limit: number): Promise<Page<StoredLog>> => {
    const res = await callEngine<LogsListAnswer>('engine::logs::list', { ...logsQuery(filters, asOf), offset, limit });
    return { rows: res.logs, total: res.total };
  };
}

/**
 * Live tail: how many lines match right now and when the newest was written. We poll this
 * (one line per call) every `intervalMs` rather than binding a `log` trigger to the tab: the
 * trigger would deliver every record to the browser, so a burst of 100,000 lines would become
 * 100,000 invocations over the socket, while polling costs one small call whatever the volume.
 */
export function useLogsHead(filters: LogFilters, intervalMs: number | false) {
  return useQuery({
    queryKey: logKeys.head(filters),
    queryFn: async () => {
      const res = await callEngine<LogsListAnswer>('engine::logs::list', { ...logsQuery(filters, Date.now()), limit: 1 });
      return { total: res.total, newest: res.logs[0]?.timestamp_unix_nano ?? 0, at: Date.now() };
    },
    refetchInterval: intervalMs,
    staleTime: 0,
  });
}

export const SAMPLE_SIZE = 2000;

/** Which services write the most: counted over the newest `SAMPLE_SIZE` matching lines (refreshed every 5 s). */
export function useLogSources(filters: LogFilters, asOf: number) {
  const bucket = Math.floor(asOf / 5000);
  return useQuery({
    queryKey: logKeys.sample(filters, bucket),
    queryFn: async () => {
      const res = await callEngine<LogsListAnswer>('engine::logs::list', { ...logsQuery(filters, asOf), limit: SAMPLE_SIZE });
      const counts = new Map<string, { service: string; count: number; errors: number }>();
      for (const log of res.logs) {
        const entry = counts.get(log.service_name) ?? { service: log.service_name, count: 0, errors: 0 };
        entry.count++;
        if (log.severity_number >= 17) entry.errors++;
        counts.set(log.service_name, entry);
      }
      return { sources: [...counts.values()].sort((a, b) => b.count - a.count), sampled: res.logs.length, total: res.total };
    },
    placeholderData: (previous) => previous,
    staleTime: 5000,
  });
}

/** Lines per severity under the other filters (for the severity chips), one count-only call each. */
export function useSeverityCounts(filters: LogFilters, asOf: number): Partial<Record<Severity, number>> {
  const bucket = Math.floor(asOf / 5000);
  const others = { ...filters, severity: undefined };
  const results = useQueries({
    queries: SEVERITIES.map((level) => ({
      queryKey: [...logKeys.levels(others, bucket), level],
      queryFn: async () => {
        const res = await callEngine<LogsListAnswer>('engine::logs::list', {
          ...logsQuery(others, asOf),
          severity_text: [level],
          limit: 1,
        });
        return res.total;
      },
      placeholderData: (previous: number | undefined) => previous,
      staleTime: 5000,
    })),
  });
  const counts: Partial<Record<Severity, number>> = {};
  SEVERITIES.forEach((level, i) => {
    const n = results[i]?.data;
    if (n !== undefined) counts[level] = n;
  });
  return counts;
}

/** Up to `limit` matching lines for Export. */
export async function exportLogs(filters: LogFilters, limit = 10_000): Promise<StoredLog[]> {
  const res = await callEngine<LogsListAnswer>('engine::logs::list', { ...logsQuery(filters, Date.now()), limit }, { timeoutMs: 30_000 });
  return res.logs;
}

/** Clear for real: `engine::logs::clear` deletes every stored record on the engine (the reference only hid them). */
export function useClearLogs() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: () => callEngine<{ success: boolean; message?: string }>('engine::logs::clear', {}),
    onSuccess: () => qc.invalidateQueries({ queryKey: logKeys.all }),
  });
}
