import { redactUrl } from '@eng/console/redact';
import type { EngClient } from '@eng/sdk';
import type { SettingSource, WorkerSettings } from './config.ts';
import { WORKER_VERSION } from './version.ts';

/**
 * `GET /_console/config` of the console worker: eng-console's shape (the UI reads one shape) with
 * `server: 'console-worker'`, plus where each engine address came from, so the Config page can name
 * this worker's own flags and config keys (`--url`, `--http-port`, `engine_http_url`, …) rather
 * than eng-console's. No field carries URL credentials.
 */
export interface WorkerConfigBody {
  server: 'console-worker';
  version: string;
  host: string;
  port: number;
  url: string | null;
  engine_host: string;
  engine_port: number;
  ws_port: number;
  bridge_port: number;
  engine_urls: { http: string; streams: string; bridge: string };
  engine_connected: boolean;
  otel: { enabled: false; service_name: string };
  enable_flow: boolean;
  /** `handoff`: `/ws` sockets are handed to the engine that launched this worker; `proxy`: relayed. */
  bus: 'handoff' | 'proxy';
  launched_by_engine: boolean;
  config_path: string;
  config_found: boolean;
  sources: Record<'engine_http_url' | 'engine_streams_url' | 'enable_flow', SettingSource>;
  started_at: number;
  node_version: string;
}

function portOf(url: string, fallback: number): number {
  try {
    const parsed = new URL(url);
    return parsed.port ? Number(parsed.port) : fallback;
  } catch {
    return fallback;
  }
}

export function workerConfigBody(input: {
  settings: WorkerSettings;
  port: number;
  url: string | undefined;
  client: EngClient;
  handoff: boolean;
  launchedByEngine: boolean;
  startedAt: number;
}): WorkerConfigBody {
  const { settings } = input;
  const bus = new URL(settings.engineUrl);
  return {
    server: 'console-worker',
    version: WORKER_VERSION,
    host: settings.host,
    port: input.port,
    url: input.url ?? null,
    engine_host: bus.hostname.replace(/^\[|\]$/g, ''),
    engine_port: portOf(settings.engineHttpUrl, 80),
    ws_port: portOf(settings.engineStreamsUrl, 80),
    bridge_port: portOf(settings.engineUrl, 80),
    engine_urls: {
      http: redactUrl(settings.engineHttpUrl),
      streams: redactUrl(settings.engineStreamsUrl),
      bridge: redactUrl(settings.engineUrl),
    },
    engine_connected: input.client.workerId !== undefined,
    otel: { enabled: false, service_name: 'console' },
    enable_flow: settings.enableFlow,
    bus: input.handoff ? 'handoff' : 'proxy',
    launched_by_engine: input.launchedByEngine,
    config_path: settings.configPath,
    config_found: settings.configFound,
    sources: settings.sources,
    started_at: input.startedAt,
    node_version: process.version,
  };
}
