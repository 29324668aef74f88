import { useQuery } from '@tanstack/react-query';
import { consoleEndpoint } from '../lib/base-path.ts';

/** `GET /_console/config` of eng-console. The console worker has no such endpoint: `available: false`. */
export interface ConsoleConfig {
  version: string;
  host: string;
  port: number;
  engine_host: string;
  engine_port: number;
  ws_port: number;
  bridge_port: number;
  otel: { enabled: boolean; service_name: string; endpoint?: string };
  enable_flow: boolean;
  engine_urls: { http: string; streams: string; bridge: string; otlp?: string };
  started_at?: number;
  node_version?: string;
}

export type ConsoleConfigResult = { available: true; config: ConsoleConfig } | { available: false; reason: string };

export const consoleConfigKeys = { all: ['console-config'] as const };

export async function fetchConsoleConfig(): Promise<ConsoleConfigResult> {
  let res: Response;
  try {
    res = await fetch(consoleEndpoint('config'), { headers: { accept: 'application/json' } });
  } catch (err) {
    return { available: false, reason: `the serving console did not answer (${(err as Error).message})` };
  }
  const type = res.headers.get('content-type') ?? '';
  if (!res.ok || !type.includes('application/json')) {
    return { available: false, reason: `this server has no /_console/config endpoint (HTTP ${res.status})` };
  }
  return { available: true, config: (await res.json()) as ConsoleConfig };
}

export function useConsoleConfig() {
  return useQuery({
    queryKey: consoleConfigKeys.all,
    queryFn: fetchConsoleConfig,
    staleTime: 60_000,
    retry: 0,
    meta: { source: 'console' },
  });
}

/** Whether the Flow page is on (`--enable-flow` / `ENG_ENABLE_FLOW`, seed 2.8). */
export function useFlowEnabled(): boolean {
  const { data } = useConsoleConfig();
  return data?.available === true && data.config.enable_flow;
}
