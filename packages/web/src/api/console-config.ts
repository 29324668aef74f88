import { useQuery } from '@tanstack/react-query';
import { consoleEndpoint } from '../lib/base-path.ts';

/** Where a console worker setting came from (its `/_console/config` `sources`). */
export type SettingSource = 'flag' | 'supervisor config' | 'config file' | 'engine' | 'engine config' | 'env' | 'default';

/**
 * `GET /_console/config` of the serving console: eng-console, or the console worker (`server:
 * 'console-worker'`, same shape plus where its engine addresses came from). A server without the
 * endpoint (another console in front of the engine) gives `available: false`.
 */
export interface ConsoleConfig {
  /** Absent from eng-console's answer. */
  server?: 'console-worker';
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
  engine_connected?: boolean;
  /** Console worker only. */
  url?: string | null;
  bus?: 'handoff' | 'proxy';
  launched_by_engine?: boolean;
  config_path?: string;
  config_found?: boolean;
  sources?: Partial<Record<'engine_http_url' | 'engine_streams_url' | 'enable_flow', SettingSource>>;
}

export type ServerKind = 'eng-console' | 'console-worker' | 'unknown';

export function serverKindOf(result: ConsoleConfigResult | undefined): ServerKind {
  if (!result?.available) return 'unknown';
  return result.config.server === 'console-worker' ? 'console-worker' : 'eng-console';
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
    // said plainly: an HTTP status here read as an engine failure beside a connected engine
    return {
      available: false,
      reason: 'the server of this page does not report console settings (it serves no /_console/config); the engine connection is separate',
    };
  }
  return { available: true, config: (await res.json()) as ConsoleConfig };
}

export function useConsoleConfig() {
  return useQuery({
    queryKey: consoleConfigKeys.all,
    queryFn: fetchConsoleConfig,
    staleTime: 60_000,
    retry: 0,
    // the serving console answers whether or not the engine is up
    networkMode: 'always',
    meta: { source: 'console' },
  });
}

/** Which server serves this page (decides which flags and keys messages name). */
export function useServerKind(): ServerKind {
  return serverKindOf(useConsoleConfig().data);
}

/** Whether the Flow page is on (`--enable-flow` / `ENG_ENABLE_FLOW`, seed 2.8). */
export function useFlowEnabled(): boolean {
  const { data } = useConsoleConfig();
  return data?.available === true && data.config.enable_flow;
}
