import { useQuery } from '@tanstack/react-query';
import { callEngine } from './client.ts';
import { engineRetry } from './outage.ts';

export interface MetricsPoint {
  /** Bucket start, ms. */
  t: number;
  invocations: number;
  errors: number;
}

export interface EngineMetrics {
  engine_metrics: {
    invocations: { total: number; success: number; error: number; deferred: number; by_function: Record<string, number> };
    workers: { spawns: number; deaths: number; active: number };
    performance: { avg_duration_ms: number; p50_duration_ms: number; p95_duration_ms: number; p99_duration_ms: number };
  };
  series?: MetricsPoint[];
  aggregate_interval?: number;
  timestamp: number;
}

export const metricsKeys = {
  all: ['metrics'] as const,
  engine: (interval: number) => [...metricsKeys.all, 'engine', interval] as const,
};

/** `engine::metrics::list`: counters plus a 15-minute series. No trigger exists, so it polls. */
export function useEngineMetrics(intervalSeconds = 10, refetchMs = 5_000) {
  return useQuery({
    queryKey: metricsKeys.engine(intervalSeconds),
    queryFn: () => callEngine<EngineMetrics>('engine::metrics::list', { aggregate_interval: intervalSeconds }),
    refetchInterval: refetchMs,
    retry: engineRetry(0),
  });
}
