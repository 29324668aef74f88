import { useQuery } from '@tanstack/react-query';
import { callEngine, EngineCallError } from './client.ts';
import { engineRetry } from './outage.ts';

/**
 * `engine::config::get` (issue 25 item 10): the configuration file the engine runs, asked of the
 * engine itself over the bus, since neither console server can know it (`eng start -c other.yaml`
 * while the console worker's folder holds a config.yaml). Credentials come redacted and `${VAR}`
 * as written.
 */
export interface EngineRunningConfig {
  /** Absolute path of the file the engine loaded; null when it runs its default modules. */
  path: string | null;
  text: string | null;
  workers: Array<{ name: string; command?: string; config?: Record<string, unknown> }> | null;
}

export type EngineConfigResult = { available: true; config: EngineRunningConfig } | { available: false; reason: string };

export const engineConfigKeys = { all: ['engine-config'] as const };

export async function fetchEngineConfig(): Promise<EngineConfigResult> {
  try {
    return { available: true, config: await callEngine<EngineRunningConfig>('engine::config::get', {}, { timeoutMs: 4000 }) };
  } catch (err) {
    // an engine that does not serve it (iii, an older eng) is an answer, not an error to retry
    if (err instanceof EngineCallError && err.code === 'function_not_found') {
      return { available: false, reason: 'this engine does not report the configuration it runs (it serves no engine::config::get)' };
    }
    throw err;
  }
}

export function useEngineConfig() {
  return useQuery({ queryKey: engineConfigKeys.all, queryFn: fetchEngineConfig, staleTime: 30_000, retry: engineRetry(0) });
}
