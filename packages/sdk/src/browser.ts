import { EngClient } from './client.ts';
import { randomId } from './ids.ts';
import { browserSocketFactory } from './socket-browser.ts';
import { noContextStore } from './tracing.ts';
import type { ConnectOptions, RuntimeInfo } from './types.ts';

// Browser entry point (the `browser` export condition): the client on the global WebSocket.
// Nothing here may import `ws` or `node:*`.

export * from './api.ts';

export const DEFAULT_ENGINE_URL = 'ws://127.0.0.1:49134';

/** `process.env.ENG_URL` when a bundler defines it; browsers have no environment otherwise. */
function envUrl(): string | undefined {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  return env?.ENG_URL || undefined;
}

const tabId = randomId().slice(0, 8);

const browserRuntime: RuntimeInfo = {
  runtime: 'browser',
  contextStore: noContextStore,
  env: () => undefined,
  defaultUrl: () => envUrl() ?? DEFAULT_ENGINE_URL,
  defaultName: () => `browser:${globalThis.location?.host || 'page'}:${tabId}`,
  os: () => globalThis.navigator?.userAgent ?? 'browser',
  // a page has no process id; the engine lists bus workers only once they report one (spec §4.1)
  pid: () => undefined,
};

/**
 * Connect to the engine from a page. The client connects at once and keeps reconnecting; await
 * `client.ready()` to know the engine has accepted it.
 */
export function connect(url?: string, options: ConnectOptions = {}): EngClient {
  return new EngClient(url || browserRuntime.defaultUrl(), options, browserRuntime, browserSocketFactory(options.WebSocket));
}
