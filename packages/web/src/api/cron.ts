import { useMutation, useQuery } from '@tanstack/react-query';
import { callEngine } from './client.ts';

export const cronKeys = {
  all: ['cron'] as const,
  nextRuns: (triggerId: string, count: number) => [...cronKeys.all, 'next-runs', triggerId, count] as const,
};

/** `eng::cron::next_runs {trigger_id, count}` → RFC 3339 times (cron module README). */
export function useCronNextRuns(triggerId: string | undefined, count = 5) {
  return useQuery({
    queryKey: cronKeys.nextRuns(triggerId ?? '', count),
    queryFn: () => callEngine<{ expression: string; next_runs: string[] }>('eng::cron::next_runs', { trigger_id: triggerId, count }),
    enabled: !!triggerId,
    refetchInterval: 15_000,
  });
}

/** "Trigger Now" (seed 4.1 op 3): fires the binding; resolves without waiting for the handler. */
export function useCronTriggerNow() {
  return useMutation({
    mutationFn: (triggerId: string) => callEngine<Record<string, unknown>>('eng::cron::trigger_now', { trigger_id: triggerId }),
  });
}
