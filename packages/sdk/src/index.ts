import { AsyncLocalStorage } from 'node:async_hooks';
import { arch, hostname, platform, release } from 'node:os';
import { EngClient } from './client.ts';
import { nodeSocketFactory } from './socket-node.ts';
import type { ActiveContext, ContextStore } from './tracing.ts';
import type { ConnectOptions, RuntimeInfo } from './types.ts';

// Node entry point (the `default` export condition): the client on the `ws` package.

export * from './api.ts';

export const DEFAULT_ENGINE_URL = 'ws://127.0.0.1:49134';

const storage = new AsyncLocalStorage<ActiveContext>();
const asyncContext: ContextStore = { current: () => storage.getStore(), run: (ctx, fn) => storage.run(ctx, fn) };

const nodeRuntime: RuntimeInfo = {
  runtime: 'node',
  contextStore: asyncContext,
  env: (name) => process.env[name],
  defaultUrl: () => process.env.ENG_URL || DEFAULT_ENGINE_URL,
  defaultName: () => process.env.ENG_WORKER_NAME || `${hostname()}:${process.pid}`,
  os: () => `${platform()} ${release()} (${arch()})`,
  pid: () => process.pid,
};

/**
 * Connect a worker to the engine. The client connects at once and keeps reconnecting; await
 * `client.ready()` to know the engine has accepted it.
 */
export function connect(url?: string, options: ConnectOptions = {}): EngClient {
  return new EngClient(url || nodeRuntime.defaultUrl(), options, nodeRuntime, nodeSocketFactory(options.WebSocket));
}
