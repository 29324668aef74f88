import type { ConsoleConfig, ServerKind, SettingSource } from '../api/console-config.ts';

/**
 * The flags and config keys each console server takes, so every message names the ones of the
 * server that serves the page (issue 19 §1: the console worker's banner named eng-console's
 * `--engine-host` / `--bridge-port`).
 */
export interface ServerFlags {
  /** What to check when the engine bus is unreachable. */
  bus: string[];
  /** How to turn the Flow page on. */
  flow: string[];
  engineHttp: string;
  engineStreams: string;
}

export function flagsFor(kind: ServerKind): ServerFlags {
  if (kind === 'console-worker') {
    return {
      bus: ['--url', 'ENG_URL'],
      flow: ['enable_flow: true', '--enable-flow', 'ENG_ENABLE_FLOW=1'],
      engineHttp: '--engine-http-url / engine_http_url',
      engineStreams: '--engine-streams-url / engine_streams_url',
    };
  }
  return {
    bus: ['--engine-host', '--bridge-port'],
    flow: ['eng-console --enable-flow', 'ENG_ENABLE_FLOW=1'],
    engineHttp: '--engine-port',
    engineStreams: '--ws-port',
  };
}

const SOURCE_LABEL: Record<SettingSource, string> = {
  flag: 'from its flag',
  'supervisor config': 'from the console entry of the engine config',
  'config file': 'from its config file',
  engine: 'announced by the engine that launched it',
  'engine config': 'from the engine config it reads',
  env: 'from the environment',
  default: 'default',
};

export function sourceLabel(source: SettingSource | undefined): string | undefined {
  return source ? SOURCE_LABEL[source] : undefined;
}

/** The command line that starts this console with the same settings (defaults left out). */
export function commandLineOf(c: ConsoleConfig): string {
  if (c.server === 'console-worker') {
    const fromFlagOrConfig = (key: 'engine_http_url' | 'engine_streams_url' | 'enable_flow') => {
      const source = c.sources?.[key];
      return source !== undefined && source !== 'default' && source !== 'engine';
    };
    return [
      'eng-console-worker',
      `--http-port ${c.port}`,
      c.host !== '127.0.0.1' ? `--host ${c.host}` : '',
      c.engine_urls.bridge !== 'ws://127.0.0.1:49134' ? `--url ${c.engine_urls.bridge}` : '',
      fromFlagOrConfig('engine_http_url') ? `--engine-http-url ${c.engine_urls.http}` : '',
      fromFlagOrConfig('engine_streams_url') ? `--engine-streams-url ${c.engine_urls.streams}` : '',
      c.enable_flow ? '--enable-flow' : '',
    ]
      .filter(Boolean)
      .join(' ');
  }
  return [
    'eng-console',
    `-p ${c.port}`,
    c.host !== '127.0.0.1' ? `--host ${c.host}` : '',
    c.engine_host !== '127.0.0.1' ? `--engine-host ${c.engine_host}` : '',
    c.engine_port !== 3111 ? `--engine-port ${c.engine_port}` : '',
    c.ws_port !== 3112 ? `--ws-port ${c.ws_port}` : '',
    c.bridge_port !== 49134 ? `--bridge-port ${c.bridge_port}` : '',
    c.otel.enabled ? '' : '--no-otel',
    c.otel.enabled && c.otel.service_name !== 'eng-console' ? `--otel-service-name ${c.otel.service_name}` : '',
    c.enable_flow ? '--enable-flow' : '',
  ]
    .filter(Boolean)
    .join(' ');
}
