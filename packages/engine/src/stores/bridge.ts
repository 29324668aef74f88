import { hostname } from 'node:os';
import { EngError, redactUrl } from '@eng/protocol';
import { connect, type EngClient } from '@eng/sdk';
import { z } from 'zod';
import type { Logger } from '../log.ts';

// spec: engine-protocol §4.4/§7.2 — `adapter: {name: bridge, config: {bridge_url}}` of iii-state and
// iii-stream: the module's functions are answered by another engine, reached as a worker of its bus.

export const BridgeErrorCode = 'BRIDGE_UNAVAILABLE';

export const BridgeAdapterSchema = z
  .object({
    name: z.literal('bridge'),
    config: z
      .object({
        /** The other engine's worker bus, e.g. ws://state-host:49134 (an RBAC bus works, with `headers`). */
        bridge_url: z
          .string({ error: 'bridge_url is required: the worker bus of the engine that holds the data (ws://host:49134)' })
          .regex(/^wss?:\/\/[^\s]+$/, { error: 'bridge_url must be a ws:// or wss:// URL' }),
        /** Upgrade headers for that bus (an RBAC bus's auth function reads them). */
        headers: z.record(z.string(), z.string()).optional(),
        /** Deadline of one forwarded call. */
        timeout_ms: z.number().int().positive().default(30_000),
        /** At startup, how long to wait for the other engine before starting anyway (calls fail until it answers). */
        connect_timeout_ms: z.number().int().min(0).default(5_000),
      })
      .strict(),
  })
  .strict();
export type BridgeAdapterConfig = z.infer<typeof BridgeAdapterSchema>;

/**
 * One module's connection to the other engine: an ordinary worker of its bus that reconnects by
 * itself and registers its functions and triggers again on every reconnect. A call made while it
 * is not connected fails at once, naming the URL, instead of waiting in a queue.
 */
export class BridgeClient {
  readonly client: EngClient;
  readonly shownUrl: string;
  /** Set when bridge_url turned out to be this engine's own bus: every call would come back here. */
  private selfLoop = false;

  constructor(
    readonly config: BridgeAdapterConfig['config'],
    module: string,
    private readonly log: Logger,
    /** Whether a worker id is one of this engine's own connections. */
    isOwnWorker: (workerId: string) => boolean,
    /** The name the other engine lists this connection under; default `<module>-bridge@<host>`. */
    workerName?: string,
  ) {
    this.shownUrl = redactUrl(config.bridge_url);
    let lastState = '';
    const note = (state: string, line: string) => {
      if (state === lastState) return;
      lastState = state;
      if (state === 'connected') log.info(line);
      else log.warn(line);
    };
    this.client = connect(config.bridge_url, {
      name: workerName ?? `${module}-bridge@${hostname()}`,
      description: `${module} of another engine, bridged to this one`,
      headers: config.headers,
      invocationTimeoutMs: config.timeout_ms,
      reconnect: { initialDelayMs: 200, maxDelayMs: 5_000 },
      tracing: false,
      logger: { debug: () => {}, info: () => {}, warn: (m: string) => log.debug(m), error: (m: string) => log.debug(m) },
    });
    this.client.on('connected', ({ workerId }) => {
      if (isOwnWorker(workerId)) {
        this.selfLoop = true;
        log.error(`bridge_url ${this.shownUrl} is this engine's own bus: ${module} would call itself forever; point it at another engine`);
        void this.client.close();
        return;
      }
      note('connected', `bridge to ${this.shownUrl} connected`);
    });
    this.client.on('disconnected', () => note('disconnected', `bridge to ${this.shownUrl} lost; reconnecting`));
  }

  /** Wait (up to connect_timeout_ms) for the other engine; starting without it is allowed. */
  async start(): Promise<void> {
    try {
      await this.client.ready({ timeoutMs: this.config.connect_timeout_ms });
    } catch {
      this.log.warn(`bridge to ${this.shownUrl} is not reachable yet: calls fail with ${BridgeErrorCode} until it is (retrying)`);
    }
  }

  get connected(): boolean {
    return this.client.workerId !== undefined;
  }

  /** Call `functionId` on the other engine; its answer (or error) is this call's. */
  call<T = unknown>(functionId: string, payload: unknown, traceparent?: string, timeoutMs?: number): Promise<T> {
    if (this.selfLoop) {
      return Promise.reject(
        new EngError(BridgeErrorCode, `${functionId}: bridge_url ${this.shownUrl} is this engine's own bus; point it at another engine`),
      );
    }
    if (!this.connected) {
      return Promise.reject(
        new EngError(
          BridgeErrorCode,
          `${functionId}: the bridge to ${this.shownUrl} is not connected (the other engine is down or unreachable)`,
        ),
      );
    }
    return this.client.trigger<T>({
      function_id: functionId,
      payload,
      ...(traceparent ? { traceparent } : {}),
      ...(timeoutMs ? { timeoutMs } : {}),
    });
  }

  close(): Promise<void> {
    return this.client.close();
  }
}
