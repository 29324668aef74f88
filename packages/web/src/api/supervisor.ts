import { useQuery } from '@tanstack/react-query';
import { callEngine, EngineCallError } from './client.ts';

/**
 * `engine::supervisor::list`: the workers the engine launches from its config.yaml (console, mcp,
 * the demo app, …), including the ones that never came up (issue 19 §8). Null when the engine has
 * no supervisor (an iii engine): the Workers page then shows connected workers only.
 */
export type SupervisedStatus = 'running' | 'restarting' | 'crash_loop' | 'failed_to_launch' | 'stopped';

export interface SupervisedWorker {
  name: string;
  pid: number | null;
  running: boolean;
  restarts: number;
  lastExit: { code: number | null; signal: string | null; atMs: number } | null;
  logFile: string | null;
  startedAtMs: number | null;
  url: string | null;
  /** Engines before issue 19 report only `running`. */
  status?: SupervisedStatus;
  error?: string | null;
  quickExits?: number;
  nextRestartAtMs?: number | null;
  command?: string | null;
  /** The last lines its latest run wrote to stderr, redacted by the engine: why it failed (issue 25 item 12). */
  stderrTail?: string[];
}

export const supervisorKeys = { all: ['supervisor'] as const };

/** The state the page shows: engines that predate `status` get one from `running`. */
export function statusOf(w: SupervisedWorker): SupervisedStatus {
  return w.status ?? (w.running ? 'running' : 'restarting');
}

/** Exit of a worker process in words: `code 3`, `SIGKILL`, `could not start`. */
export function describeExit(exit: SupervisedWorker['lastExit']): string {
  if (!exit) return '—';
  if (exit.signal) return exit.signal;
  return exit.code === null ? 'could not start' : `code ${exit.code}`;
}

/**
 * Polled every 5 s: the engine fires no trigger when a launch fails or a restart is scheduled
 * (a worker connecting or leaving also refreshes it, api/live.ts).
 */
export function useSupervisedWorkers() {
  return useQuery({
    queryKey: supervisorKeys.all,
    queryFn: async (): Promise<SupervisedWorker[] | null> => {
      try {
        return (await callEngine<{ workers: SupervisedWorker[] }>('engine::supervisor::list', {})).workers ?? [];
      } catch (err) {
        if (err instanceof EngineCallError && err.code === 'function_not_found') return null;
        throw err;
      }
    },
    refetchInterval: 5000,
  });
}
