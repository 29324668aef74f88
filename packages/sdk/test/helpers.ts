/** Shared by the SDK tests: clients that are always closed, and a socket that records what it sends. */
import { type ConnectOptions, connect, type EngClient, type WebSocketConstructor } from '@eng/sdk';
import WebSocket from 'ws';
import { waitFor } from '../../../test/harness.ts';

const open = new Set<EngClient>();

/** connect() with test-friendly defaults; every client is closed by `closeClients()`. */
export function client(url: string, options: ConnectOptions = {}): EngClient {
  const c = connect(url, { registerWorker: true, ...options, logger: options.logger ?? quietLogger });
  open.add(c);
  return c;
}

export async function closeClients(): Promise<void> {
  await Promise.all([...open].map((c) => c.close()));
  open.clear();
}

export const quietLogger = { debug() {}, info() {}, warn() {}, error() {} };

/** A logger that keeps its lines, to assert on what the SDK said. */
export function recordingLogger(): ConnectOptions['logger'] & { lines: Array<{ level: string; message: string }> } {
  const lines: Array<{ level: string; message: string }> = [];
  const log = (level: string) => (message: string) => {
    lines.push({ level, message });
  };
  return { lines, debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}

/** Wait until the engine lists `functionId` (registrations from another socket race with calls). */
export async function functionListed(c: EngClient, functionId: string, present = true): Promise<void> {
  await waitFor(async () => {
    const { functions } = await c.call<{ functions: Array<{ function_id: string }> }>('engine::functions::list', {});
    return functions.some((f) => f.function_id === functionId) === present;
  });
}

/** A `ws` WebSocket that keeps every text frame it sends, in order. */
export function recordingWebSocket(sent: string[]): WebSocketConstructor {
  return class RecordingWebSocket extends WebSocket {
    constructor(url: string, options?: WebSocket.ClientOptions) {
      super(url, options);
      const send = this.send.bind(this) as (...args: unknown[]) => void;
      this.send = ((data: unknown, ...rest: unknown[]) => {
        if (typeof data === 'string') sent.push(data);
        send(data, ...rest);
      }) as WebSocket['send'];
    }
  };
}

export function deferred<T = void>(): { promise: Promise<T>; resolve(value: T): void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
