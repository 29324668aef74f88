import { EngError, ErrorCode } from '@eng/protocol';
import { z } from 'zod';
import type { EngineModule, ModuleContext } from '../../core/module.ts';
import { BridgeClient } from '../../stores/bridge.ts';
import { parseInput } from '../state/schemas.ts';

// spec: engine-protocol §7.2 — `iii-bridge`: `url`, `service_id`, `expose`/`forward` maps to another engine.

export const BridgeConfig = z
  .object({
    /** The other engine's worker bus. */
    url: z
      .string({ error: 'url is required: the worker bus of the other engine (ws://host:49134)' })
      .regex(/^wss?:\/\/[^\s]+$/, { error: 'url must be a ws:// or wss:// URL' }),
    /** The name this connection has there (engine::workers::list). */
    service_id: z.string().min(1).default('eng-bridge'),
    service_name: z.string().min(1).optional(),
    /** Upgrade headers for that bus (an RBAC bus's auth function reads them). */
    headers: z.record(z.string(), z.string()).optional(),
    /** Functions of this engine the other one may call: registered there under `remote_function`. */
    expose: z.array(z.object({ local_function: z.string().min(1), remote_function: z.string().min(1).optional() }).strict()).default([]),
    /** Functions registered here whose calls go to `remote_function` of the other engine. */
    forward: z
      .array(
        z
          .object({
            local_function: z.string().min(1),
            remote_function: z.string().min(1),
            timeout_ms: z.number().int().positive().optional(),
          })
          .strict(),
      )
      .default([]),
    /** Default deadline of a forwarded call. */
    timeout_ms: z.number().int().positive().default(30_000),
    /** At startup, how long to wait for the other engine before starting anyway. */
    connect_timeout_ms: z.number().int().min(0).default(5_000),
  })
  .strict();
export type BridgeConfig = z.infer<typeof BridgeConfig>;

const InvokeInput = z.object({
  function_id: z.string({ error: 'function_id is required' }).min(1, { error: 'function_id must not be empty' }),
  data: z.unknown().optional(),
  timeout_ms: z.number({ error: 'timeout_ms must be a number' }).int().positive().optional(),
});

/**
 * `eng-bridge` (iii: `iii-bridge`): this engine as a worker of another one. `expose` makes local
 * functions callable there, `forward` makes remote functions callable here under a local id, and
 * `bridge.invoke` / `bridge.invoke_async` call anything there.
 */
export function bridgeModule(): EngineModule<BridgeConfig> {
  let bridge: BridgeClient | undefined;
  return {
    name: 'eng-bridge',
    aliases: ['iii-bridge'],
    description: 'bridge to another engine: expose local functions there, forward calls to its functions',
    configSchema: BridgeConfig,
    async start(ctx) {
      const config = ctx.config;
      for (const f of config.forward) {
        const current = ctx.core.functions.get(f.local_function);
        if (current) {
          throw new Error(
            `eng-bridge: forward local_function ${f.local_function} is already served${current.moduleName ? ` by ${current.moduleName}` : ''}; choose another id (e.g. remote::${f.remote_function})`,
          );
        }
      }
      const client = new BridgeClient(
        { bridge_url: config.url, headers: config.headers, timeout_ms: config.timeout_ms, connect_timeout_ms: config.connect_timeout_ms },
        'eng-bridge',
        ctx.log,
        (id) => ctx.core.workers.get(id) !== undefined,
        config.service_name ?? config.service_id,
      );
      bridge = client;
      for (const e of config.expose) exposeThere(ctx, client, e.local_function, e.remote_function ?? e.local_function);
      await client.start();
      for (const f of config.forward) {
        ctx.registerFunction(
          { id: f.local_function, description: `${f.remote_function} of the engine at ${client.shownUrl} (eng-bridge forward)` },
          (input, info) => client.call(f.remote_function, input, info.traceparent, f.timeout_ms),
        );
      }
      ctx.registerFunction(
        { id: 'bridge.invoke', description: `Call a function of the engine at ${client.shownUrl} and wait for its result` },
        (input, info) => {
          const q = parseInput('bridge.invoke', InvokeInput, input);
          return client.call(q.function_id, q.data ?? null, info.traceparent, q.timeout_ms);
        },
      );
      ctx.registerFunction(
        { id: 'bridge.invoke_async', description: `Call a function of the engine at ${client.shownUrl} without waiting (fire and forget)` },
        (input) => {
          const q = parseInput('bridge.invoke_async', InvokeInput, input);
          if (!client.connected)
            throw new EngError('BRIDGE_UNAVAILABLE', `bridge.invoke_async: the bridge to ${client.shownUrl} is not connected`);
          void client.client.trigger({ function_id: q.function_id, payload: q.data ?? null, action: { type: 'void' } });
          return null;
        },
      );
      ctx.log.info(`bridge to ${client.shownUrl}: ${config.expose.length} exposed, ${config.forward.length} forwarded`);
    },
    async stop() {
      await bridge?.close();
    },
  };
}

/** Register `remoteId` on the other engine; its calls run `localId` here and answer with its outcome. */
function exposeThere(ctx: ModuleContext<BridgeConfig>, client: BridgeClient, localId: string, remoteId: string): void {
  client.client.registerFunction(
    remoteId,
    async (input, info) => {
      const outcome = await ctx.invoke(localId, input, { traceparent: info.traceparent, metadata: info.metadata });
      if (outcome.ok) return outcome.result;
      throw new EngError(outcome.error.code || ErrorCode.InvocationFailed, outcome.error.message);
    },
    { description: `${localId} of a bridged engine (eng-bridge expose)` },
  );
}
