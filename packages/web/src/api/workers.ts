import type { WorkerRecord } from '@eng/protocol';
import { useQuery } from '@tanstack/react-query';
import { callEngine } from './client.ts';

export type { WorkerRecord };

export const workerKeys = {
  all: ['workers'] as const,
  list: () => [...workerKeys.all, 'list'] as const,
};

/** The list includes the engine's own modules (`runtime: engine`); seed 2.1 counts worker processes. */
export function isProcessWorker(w: WorkerRecord): boolean {
  return w.runtime !== 'engine';
}

/** Refreshed by `engine::workers-available` (api/live.ts); the 15 s poll only refreshes metrics. */
export function useWorkers() {
  return useQuery({
    queryKey: workerKeys.list(),
    queryFn: async () => (await callEngine<{ workers: WorkerRecord[] }>('engine::workers::list', {})).workers,
    refetchInterval: 15_000,
  });
}
