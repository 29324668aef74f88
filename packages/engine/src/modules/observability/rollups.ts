import { z } from 'zod';
import type { MetricPoint } from './otlp-decode.ts';

// `engine::rollups::list` and `engine::alerts::list` as iii 0.22.1 answers them (its
// engine/src/workers/observability/mod.rs and metrics.rs), over eng's SDK metric points. eng keeps
// no rollup storage, so the rollups are computed on the fly (`source: "on_the_fly"`, iii's fallback).

export const RollupsListInput = z.object({
  start_time: z.number().int().nonnegative().optional(),
  end_time: z.number().int().nonnegative().optional(),
  /** 0 = 1 minute, 1 = 5 minutes, 2 (or more) = 1 hour buckets. */
  level: z.number().int().nonnegative().optional(),
  metric_name: z.string().optional(),
});
export type RollupsListQuery = z.infer<typeof RollupsListInput>;

export interface AggregatedMetric {
  name: string;
  bucket_start_ns: number;
  bucket_end_ns: number;
  count: number;
  sum: number;
  min: number;
  max: number;
  avg: number;
  percentiles?: { p50: number; p75: number; p90: number; p95: number; p99: number };
}

const LEVEL_SECONDS = [60, 300, 3600];

function percentile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? 0;
}

export function listRollups(points: MetricPoint[], query: RollupsListQuery, now = Date.now()) {
  const endMs = query.end_time ?? now;
  const startMs = query.start_time ?? endMs - 3_600_000;
  const level = query.level ?? 0;
  const intervalMs = (LEVEL_SECONDS[level] ?? 3600) * 1000;
  const buckets = new Map<string, { name: string; start: number; values: number[] }>();
  for (const point of points) {
    if (point.timestamp_ms < startMs || point.timestamp_ms > endMs) continue;
    if (query.metric_name && point.name !== query.metric_name) continue;
    const start = Math.floor(point.timestamp_ms / intervalMs) * intervalMs;
    const key = `${point.name}\u0000${start}`;
    let bucket = buckets.get(key);
    if (!bucket) {
      bucket = { name: point.name, start, values: [] };
      buckets.set(key, bucket);
    }
    bucket.values.push(point.value);
  }
  const rollups: AggregatedMetric[] = [...buckets.values()]
    .sort((a, b) => a.start - b.start || a.name.localeCompare(b.name))
    .map(({ name, start, values }) => {
      const sorted = [...values].sort((a, b) => a - b);
      const sum = sorted.reduce((s, v) => s + v, 0);
      return {
        name,
        bucket_start_ns: start * 1_000_000,
        bucket_end_ns: (start + intervalMs) * 1_000_000,
        count: sorted.length,
        sum,
        min: sorted[0] ?? 0,
        max: sorted[sorted.length - 1] ?? 0,
        avg: sorted.length ? sum / sorted.length : 0,
        percentiles: {
          p50: percentile(sorted, 0.5),
          p75: percentile(sorted, 0.75),
          p90: percentile(sorted, 0.9),
          p95: percentile(sorted, 0.95),
          p99: percentile(sorted, 0.99),
        },
      };
    });
  return {
    rollups,
    // eng's SDK metric points are single values: no histogram points to merge
    histogram_rollups: [] as unknown[],
    level,
    source: 'on_the_fly',
    query: { start_time: query.start_time ?? null, end_time: query.end_time ?? null, metric_name: query.metric_name ?? null },
    timestamp: Date.now(),
  };
}

/** eng has no metric alert rules (iii's `alerts` config): the manager answers with none, none firing. */
export function listAlerts() {
  return { alerts: [] as unknown[], rules: [] as unknown[], firing_count: 0, timestamp: Date.now() };
}
