import type { WorkerRecord } from '@eng/protocol';
import { useQuery } from '@tanstack/react-query';
import { callEngine } from './client.ts';

export type { WorkerRecord };

export const workerKeys = {
  all: ['workers'] as const,
  list: () => [...workerKeys.all, 'list'] as const,
};

/** Workers are engine modules too (`internal: true`); processes are the rest. */
export function isProcessWorker(w: WorkerRecord): boolean {
  return !w.internal;
}

/** Refreshed by `engine::workers-available` (api/live.ts); the 15 s poll only refreshes metrics. */
export function useWorkers() {
  return useQuery({
    queryKey: workerKeys.list(),
    queryFn: async () => (await callEngine<{ workers: WorkerRecord[] }>('engine::workers::list', {})).workers,
    refetchInterval: 15_000,
  });
}
