import { useQuery } from '@tanstack/react-query';
import { callEngine, EngineCallError } from './client.ts';

/**
 * `console::status` (seed 2.10): what the console worker registered with the engine says about
 * itself — version, HTTP port, engine URL and the URL that opens it. Null when no console worker
 * is connected (`function_not_found`), e.g. eng-console in front of an engine without one.
 */
export interface ConsoleWorkerStatus {
  http_port: number;
  engine_url: string;
  version: string;
  url?: string;
}

export const consoleStatusKeys = { all: ['console-status'] as const };

export function useConsoleStatus(enabled = true) {
  return useQuery({
    enabled,
    queryKey: consoleStatusKeys.all,
    queryFn: async (): Promise<ConsoleWorkerStatus | null> => {
      try {
        return await callEngine<ConsoleWorkerStatus>('console::status', {}, { timeoutMs: 4000 });
      } catch (err) {
        if (err instanceof EngineCallError && err.code === 'function_not_found') return null;
        throw err;
      }
    },
    staleTime: 30_000,
  });
}
