import { useQuery } from '@tanstack/react-query';
import { callEngine } from './client.ts';
import { engineRetry } from './outage.ts';

export interface HealthComponent {
  status: string;
  details?: Record<string, unknown>;
}

export interface EngineHealth {
  status: string;
  version?: string;
  timestamp: number;
  components: Record<string, HealthComponent>;
}

export const healthKeys = { all: ['health'] as const };

/** `engine::health::check` (observability module). Absent module → the query errors; pages say so. */
export function useEngineHealth(refetchMs: number | false = 10_000) {
  return useQuery({
    queryKey: healthKeys.all,
    queryFn: () => callEngine<EngineHealth>('engine::health::check', {}, { timeoutMs: 4000 }),
    refetchInterval: refetchMs,
    retry: engineRetry(0),
  });
}
