import { connect, type EngClient } from '@eng/sdk';
import { useSyncExternalStore } from 'react';
import { basePath } from '../lib/base-path.ts';

/**
 * The page's one connection to the engine: `@eng/sdk` over `/ws` on the page's own origin (the
 * serving console proxies it to the engine bus). `registerWorker: false` keeps browser tabs out
 * of the workers list (issue 6, Architecture). Pages never use this directly: they go through
 * the hooks in `api/<resource>.ts`.
 */

export type ConnectionStatus = 'connecting' | 'open' | 'reconnecting' | 'failed';

export interface ConnectionState {
  status: ConnectionStatus;
  /** The bus URL the browser uses (the console's `/ws`). */
  url: string;
  workerId?: string;
  /** Why the last socket closed, e.g. the proxy's "engine unreachable at ws://…" (close 1011). */
  lastError?: string;
  lastCloseCode?: number;
  /** When the current status began (ms). */
  since: number;
  /** Reconnect attempt number while reconnecting. */
  attempt: number;
  /** ms until the next attempt, when known. */
  retryInMs?: number;
}

export function busUrl(): string {
  const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${proto}//${location.host}${basePath()}ws`;
}

let state: ConnectionState = { status: 'connecting', url: '', since: Date.now(), attempt: 0 };
const listeners = new Set<() => void>();
function setState(next: Partial<ConnectionState>): void {
  state = { ...state, ...next };
  for (const listener of listeners) listener();
}

let client: EngClient | undefined;
const openListeners = new Set<(client: EngClient) => void>();

/** The shared client, created on first use. */
export function engine(): EngClient {
  if (client) return client;
  const url = busUrl();
  state = { ...state, url };
  client = connect(url, {
    name: 'eng-console-ui',
    registerWorker: false,
    // a console should come back quickly once the engine does; cap the wait at 5 s
    reconnect: { initialDelayMs: 500, maxDelayMs: 5000, maxRetries: -1 },
    invocationTimeoutMs: 30_000,
    logger: quietLogger,
  });
  client.on('connected', ({ workerId }) => {
    setState({
      status: 'open',
      workerId,
      since: Date.now(),
      attempt: 0,
      retryInMs: undefined,
      lastError: undefined,
      lastCloseCode: undefined,
    });
    for (const listener of openListeners) listener(client as EngClient);
  });
  client.on('disconnected', ({ code, reason }) => {
    const since = state.status === 'open' ? Date.now() : state.since;
    setState({ status: 'reconnecting', workerId: undefined, since, lastCloseCode: code, lastError: reason || state.lastError });
  });
  client.on('reconnecting', ({ attempt, delayMs }) => {
    setState({ status: 'reconnecting', attempt, retryInMs: delayMs, ...(state.status === 'open' ? { since: Date.now() } : {}) });
  });
  client.on('error', (error) => {
    if (state.status !== 'open') setState({ lastError: error.message });
  });
  return client;
}

/** Run `listener` on every (re)connection, and now if already connected. */
export function onEngineOpen(listener: (client: EngClient) => void): () => void {
  openListeners.add(listener);
  if (client && state.status === 'open') listener(client);
  return () => openListeners.delete(listener);
}

export function connectionState(): ConnectionState {
  return state;
}

/** Run `listener` whenever the connection state changes (outside React). */
export function subscribeConnection(listener: () => void): () => void {
  engine();
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function useConnection(): ConnectionState {
  return useSyncExternalStore(
    (listener) => {
      engine();
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    () => state,
  );
}

export interface CallOptions {
  timeoutMs?: number;
}

/**
 * Call an engine function and resolve its result. While the engine is unreachable the call fails
 * fast (`not_connected`) instead of waiting in the SDK's queue, so pages can show the outage.
 */
export async function callEngine<T = unknown>(functionId: string, payload: unknown = {}, options: CallOptions = {}): Promise<T> {
  const c = engine();
  if (state.status !== 'open') {
    try {
      await c.ready({ timeoutMs: 1500 });
    } catch {
      throw new EngineCallError('not_connected', describeOutage());
    }
  }
  try {
    return await c.call<T>(functionId, payload, { timeoutMs: options.timeoutMs ?? 10_000 });
  } catch (err) {
    const e = err as { code?: string; message?: string };
    throw new EngineCallError(e.code ?? 'error', e.message ?? String(err));
  }
}

export class EngineCallError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'EngineCallError';
  }
}

/** One sentence for banners: why the UI cannot reach the engine. */
export function describeOutage(s: ConnectionState = state): string {
  if (s.lastError) return s.lastError;
  return `cannot reach the console's engine proxy at ${s.url || busUrl()}`;
}

const quietLogger = {
  debug: () => undefined,
  info: () => undefined,
  warn: (message: string) => console.debug(`[eng] ${message}`),
  error: (message: string, ...details: unknown[]) => console.warn(`[eng] ${message}`, ...details),
};
