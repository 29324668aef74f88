/**
 * What the compat checklist needs from one published iii-sdk version, and the shared test
 * environment (one engine, two in-process SDK workers) each version's test file sets up.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import { type EngineProcess, startEngine, waitFor } from '../../../../test/harness.ts';
import { killAllChildren } from './child-worker.ts';

export type SdkVersion = '0.22.1' | '0.11.6';

export interface TriggerConfig {
  id: string;
  function_id: string;
  config: unknown;
  metadata?: Record<string, unknown>;
}

/** The surface both SDK versions share (their own types differ only in optional extras). */
export interface CompatClient {
  registerFunction(
    id: string,
    handler: (input: any, metadata?: any) => Promise<any>,
    options?: Record<string, unknown>,
  ): { id: string; unregister(): void };
  registerTrigger(trigger: { type: string; function_id: string; config: unknown; metadata?: Record<string, unknown> }): {
    unregister(): void;
  };
  registerTriggerType(
    type: { id: string; description: string },
    handler: { registerTrigger(c: TriggerConfig): Promise<void>; unregisterTrigger(c: TriggerConfig): Promise<void> },
  ): unknown;
  trigger(request: {
    function_id: string;
    payload: unknown;
    action?: { type: 'void' } | { type: 'enqueue'; queue: string };
    timeoutMs?: number;
    metadata?: unknown;
  }): Promise<any>;
  shutdown(): Promise<void>;
}

export interface CompatChannel {
  writer: { stream: NodeJS.WritableStream; sendMessage(text: string): void; close(): void };
  reader: { readAll(): Promise<Buffer>; onMessage(listener: (text: string) => void): void };
  writerRef: { channel_id: string; access_key: string; direction: 'write' };
  readerRef: { channel_id: string; access_key: string; direction: 'read' };
}

export interface ConnectOptions {
  name: string;
  description?: string;
  /**
   * OpenTelemetry on (the SDK default) opens the `/otel` socket. Both SDKs re-run a global
   * `initOtel` on every `registerWorker` and only ever shut the newest one down, so in one
   * process only the first worker keeps it on; the others would leak a reconnecting socket.
   */
  otel?: boolean;
}

export interface SdkUnderTest {
  version: SdkVersion;
  connect(url: string, options: ConnectOptions): CompatClient;
  createChannel(client: CompatClient, bufferSize?: number): Promise<CompatChannel>;
  /** The SDK's error class for rejected invocations (InvocationError / IIIInvocationError). */
  ErrorClass: new (
    ...args: any[]
  ) => Error;
  /** `TriggerAction.Void()` of that SDK. */
  voidAction(): { type: 'void' };
}

/** The worker id the engine gave a client (kept by the SDK from `workerregistered`). */
export function workerIdOf(client: CompatClient): string | undefined {
  return (client as unknown as { workerId?: string }).workerId;
}

/** Resolves once the client's socket is open and everything it registered so far reached the engine. */
export async function ready(client: CompatClient): Promise<string> {
  await client.trigger({ function_id: 'engine::functions::list', payload: {} });
  return waitFor(() => workerIdOf(client));
}

export interface CompatEnv {
  sdk: SdkUnderTest;
  engine: EngineProcess;
  /** Worker A (OTel on, like a real worker) and worker B, both in this process. */
  a: CompatClient;
  b: CompatClient;
  aId: string;
  bId: string;
  /** Another in-process worker on the shared engine, shut down in afterAll. */
  connect(options: ConnectOptions): CompatClient;
  /** Call a function as worker A and return its result. */
  call<T = any>(functionId: string, payload?: unknown): Promise<T>;
}

// The SDKs log every connect and OTel step with console.debug; keep the test output readable.
const originalDebug = console.debug;
console.debug = (...args: unknown[]) => {
  if (typeof args[0] === 'string' && /^\[(iii|OTel)\]/.test(args[0])) return;
  originalDebug(...args);
};

/** One engine and workers A and B for a test file; everything is stopped in afterAll. */
export function useCompatEnv(sdk: SdkUnderTest): CompatEnv {
  const clients: CompatClient[] = [];
  const env = { sdk } as CompatEnv;
  env.connect = (options) => {
    const client = sdk.connect(env.engine.busUrl, options);
    clients.push(client);
    return client;
  };
  env.call = (functionId, payload = {}) => env.a.trigger({ function_id: functionId, payload });

  beforeAll(async () => {
    env.engine = await startEngine();
    env.a = env.connect({ name: `compat-a-${sdk.version}`, description: 'worker A of the compat suite', otel: true });
    env.b = env.connect({ name: `compat-b-${sdk.version}` });
    [env.aId, env.bId] = await Promise.all([ready(env.a), ready(env.b)]);
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.shutdown().catch(() => {})));
    await killAllChildren();
    await env.engine?.stop();
  });
  return env;
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');

/** Records what a custom trigger type's provider is told (§5.11). */
export function recordingProvider() {
  const registered: TriggerConfig[] = [];
  const unregistered: TriggerConfig[] = [];
  return {
    registered,
    unregistered,
    handler: {
      async registerTrigger(config: TriggerConfig) {
        registered.push(config);
      },
      async unregisterTrigger(config: TriggerConfig) {
        unregistered.push(config);
      },
    },
  };
}
