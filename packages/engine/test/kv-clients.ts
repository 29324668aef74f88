/**
 * The two worker SDKs the state and stream tests run with (the published iii-sdk 0.22.1 and our
 * @eng/sdk), behind the few calls those tests need, plus a streams-socket client.
 */
import { connect } from '@eng/sdk';
import { registerWorker } from 'iii-sdk-0.22.1';
import { RawClient, type RawFrame } from '../../../test/raw-client.ts';

export interface KvClient {
  call<T = any>(functionId: string, payload?: unknown): Promise<T>;
  register(id: string, handler: (input: any, metadata: unknown) => unknown): void;
  bind(type: string, functionId: string, config: unknown, metadata?: Record<string, unknown>): { unregister(): void };
  /** Resolves once everything registered so far has reached the engine (frames are ordered). */
  sync(): Promise<void>;
  close(): Promise<void>;
  /** The raw SDK client, for SDK-specific helpers. */
  raw: unknown;
}

export type ClientFactory = (url: string, name: string) => Promise<KvClient>;

export const iiiSdk: ClientFactory = async (url, name) => {
  const worker = registerWorker(url, {
    workerName: name,
    otel: { enabled: false },
    reconnectionConfig: { initialDelayMs: 100, maxDelayMs: 500 },
  });
  const client: KvClient = {
    raw: worker,
    call: (function_id, payload = {}) => worker.trigger({ function_id, payload }),
    register: (id, handler) => {
      worker.registerFunction(id, async (input: unknown, metadata?: unknown) => handler(input, metadata));
    },
    bind: (type, function_id, config, metadata) => worker.registerTrigger({ type, function_id, config, metadata } as never),
    sync: async () => {
      await worker.trigger({ function_id: 'engine::functions::list', payload: {} });
    },
    close: () => worker.shutdown(),
  };
  await client.sync();
  return client;
};

export const engSdk: ClientFactory = async (url, name) => {
  const worker = connect(url, { name });
  await worker.ready({ timeoutMs: 10_000 });
  return {
    raw: worker,
    call: (function_id, payload = {}) => worker.trigger({ function_id, payload }),
    register: (id, handler) => {
      worker.registerFunction(id, (input: unknown, ctx) => handler(input, ctx.metadata));
    },
    bind: (type, function_id, config, metadata) => worker.registerTrigger({ type, function_id, config, metadata }),
    sync: async () => {
      await worker.trigger({ function_id: 'engine::functions::list', payload: {} });
    },
    close: () => worker.close(),
  };
};

export const SDKS: Array<[string, ClientFactory]> = [
  ['iii-sdk 0.22.1', iiiSdk],
  ['@eng/sdk', engSdk],
];

/** The rejection of a call: its error code and message (both SDKs put `code` on the error). */
export async function failure(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (err) {
    return { code: (err as { code: string }).code, message: (err as Error).message };
  }
  throw new Error('expected the call to fail, it succeeded');
}

/** A client of the streams WebSocket (spec §6.2). */
export class StreamsClient {
  private constructor(readonly raw: RawClient) {}

  static async connect(url: string, headers?: Record<string, string>): Promise<StreamsClient> {
    return new StreamsClient(await RawClient.connect(url, headers ? { headers } : undefined));
  }

  join(subscriptionId: string, streamName: string, groupId: string, id?: string): void {
    this.raw.send({ type: 'join', data: { subscriptionId, streamName, groupId, ...(id ? { id } : {}) } });
  }

  leave(subscriptionId: string, streamName: string, groupId: string): void {
    this.raw.send({ type: 'leave', data: { subscriptionId, streamName, groupId } });
  }

  /** The next message whose event has this type (and, when given, this item id). */
  next(eventType: string, match: (f: RawFrame) => boolean = () => true, timeoutMs = 5000): Promise<RawFrame & { event: any }> {
    return this.raw.next((f) => (f.event as { type?: string } | undefined)?.type === eventType && match(f), timeoutMs) as Promise<
      RawFrame & { event: any }
    >;
  }

  /** Messages received and not yet consumed by `next`. */
  get pending(): RawFrame[] {
    return this.raw.frames;
  }

  close(): void {
    this.raw.socket.close();
  }
}
