import { isIPv6 } from 'node:net';

/**
 * eng-console settings: seed table 4.4 flags, their environment variables, and defaults
 * (console spec §2.2). Flags win over the environment.
 */
export interface ConsoleOptions {
  port: number;
  host: string;
  engineHost: string;
  enginePort: number;
  wsPort: number;
  bridgePort: number;
  otel: boolean;
  otelServiceName: string;
  enableFlow: boolean;
}

export const DEFAULTS: ConsoleOptions = {
  port: 3113,
  host: '127.0.0.1',
  engineHost: '127.0.0.1',
  enginePort: 3111,
  wsPort: 3112,
  bridgePort: 49134,
  otel: true,
  otelServiceName: 'eng-console',
  enableFlow: false,
};

/** `1`, `true`, `yes`, `on` (any case) are true; anything else, or unset, is false. */
export function envFlag(value: string | undefined): boolean {
  return value !== undefined && /^(1|true|yes|on)$/i.test(value.trim());
}

export function parsePort(value: string, flag: string): number {
  if (!/^\d+$/.test(value.trim())) throw new Error(`${flag} must be a port number (0-65535), got "${value}"`);
  const port = Number(value);
  if (port > 65535) throw new Error(`${flag} must be a port number (0-65535), got "${value}"`);
  return port;
}

export interface RawFlags {
  port?: string;
  host?: string;
  engineHost?: string;
  enginePort?: string;
  wsPort?: string;
  bridgePort?: string;
  /** commander's `--no-otel`: false when given. */
  otel?: boolean;
  otelServiceName?: string;
  enableFlow?: boolean;
}

export function resolveOptions(flags: RawFlags, env: Record<string, string | undefined> = process.env): ConsoleOptions {
  const host = (name: string, value: string | undefined, fallback: string) => {
    if (value === undefined) return fallback;
    if (value.trim() === '') throw new Error(`${name} must not be empty`);
    return value.trim();
  };
  const port = (flag: string, value: string | undefined, fallback: number) => (value === undefined ? fallback : parsePort(value, flag));
  return {
    port: port('--port', flags.port, DEFAULTS.port),
    host: host('--host', flags.host, DEFAULTS.host),
    engineHost: host('--engine-host', flags.engineHost, DEFAULTS.engineHost),
    enginePort: port('--engine-port', flags.enginePort, DEFAULTS.enginePort),
    wsPort: port('--ws-port', flags.wsPort, DEFAULTS.wsPort),
    bridgePort: port('--bridge-port', flags.bridgePort, DEFAULTS.bridgePort),
    otel: flags.otel !== false && !envFlag(env.OTEL_DISABLED),
    otelServiceName: flags.otelServiceName?.trim() || env.OTEL_SERVICE_NAME?.trim() || DEFAULTS.otelServiceName,
    enableFlow: flags.enableFlow === true || envFlag(env.ENG_ENABLE_FLOW),
  };
}

/** Host part of a URL: IPv6 literals need brackets. */
export function urlHost(host: string): string {
  return isIPv6(host) ? `[${host}]` : host;
}

export function engineUrls(o: ConsoleOptions): { http: string; streams: string; bridge: string; otlp: string } {
  const h = urlHost(o.engineHost);
  return {
    http: `http://${h}:${o.enginePort}`,
    streams: `ws://${h}:${o.wsPort}`,
    bridge: `ws://${h}:${o.bridgePort}`,
    otlp: `http://${h}:${o.enginePort}/v1/traces`,
  };
}
