import { z } from 'zod';
import { AllowedOriginsSchema } from '../../bus/origins.ts';
import { HeartbeatIntervalSchema, HeartbeatTimeoutSchema, heartbeatRefinement, MaxConnectionsSchema } from '../../bus/socket-limits.ts';
import type { EngineModule, ModuleContext } from '../../core/module.ts';
import { BridgeAdapterSchema, type BridgeClient } from '../../stores/bridge.ts';
import { MemoryKvStore } from '../../stores/memory.ts';
import { openStore, StoreAdapterSchema } from '../../stores/open.ts';
import { RedisEventFanout } from '../../stores/redis-events.ts';
import type { KvStore } from '../../stores/types.ts';
import { parseInput } from '../state/schemas.ts';
import { type RemoteStreams, startStreamBridge } from './bridge.ts';
import {
  JoinLeaveTriggerConfig,
  StreamGroupInput,
  StreamItemInput,
  StreamListAllInput,
  StreamListGroupsInput,
  StreamSendInput,
  StreamSetInput,
  StreamTriggerConfig,
  StreamUpdateInput,
} from './schemas.ts';
import { StreamsSocketServer } from './socket-server.ts';
import { StreamService } from './stream-service.ts';
import { type StreamMessage, StreamTriggers, streamCallTrace } from './triggers.ts';

// spec: engine-protocol §4.5 (functions), §5.7 (trigger types), §6.2 (socket), §7.2 (config).

export const StreamConfig = z
  .object({
    host: z.string().default('127.0.0.1'),
    port: z.number().int().min(0).max(65535).default(3112),
    /** Called with {headers, path, query_params, addr} per socket; its `context` reaches join/leave triggers. */
    auth_function: z.string().min(1).optional(),
    /** Browser origins whose pages may open the streams socket directly; others get 403 (bus/origins.ts). */
    allowed_origins: AllowedOriginsSchema,
    /** A connection that has not sent its whole upgrade request by then is closed. */
    handshake_timeout_ms: z.number().int().positive().default(10_000),
    /** Open sockets at most (default 4096, at most 1/4 of the open-file limit); more are closed at once. */
    max_connections: MaxConnectionsSchema,
    /** Every client is pinged this often; one that sent nothing (not even a pong) for heartbeat_timeout_ms is closed. */
    heartbeat_interval_ms: HeartbeatIntervalSchema,
    heartbeat_timeout_ms: HeartbeatTimeoutSchema,
    adapter: z
      .discriminatedUnion('name', [...StoreAdapterSchema.options, BridgeAdapterSchema])
      .default({ name: 'kv', config: { store_method: 'file_based', synchronous: 'full' } }),
    max_value_bytes: z
      .number()
      .int()
      .positive()
      .default(16 * 1024 * 1024),
  })
  .strict()
  .refine(...heartbeatRefinement);
export type StreamConfig = z.infer<typeof StreamConfig>;

export const STREAM_STORE_SERVICE = 'store.stream';

/** Made when first read (core/module.ts). */
const jsonSchema = (schema: z.ZodType) => () => z.toJSONSchema(schema, { unrepresentable: 'any', io: 'input' });

export function streamModule(): EngineModule<StreamConfig> {
  let store: KvStore | undefined;
  let fanout: RedisEventFanout<StreamMessage> | undefined;
  let sockets: StreamsSocketServer | undefined;
  let context: ModuleContext<StreamConfig> | undefined;
  let bridge: BridgeClient | undefined;
  return {
    name: 'eng-stream',
    aliases: ['iii-stream'],
    description: 'streams: stream::* functions, stream trigger types and the streams WebSocket',
    configSchema: StreamConfig,
    async start(ctx) {
      context = ctx;
      const triggers = new StreamTriggers(ctx as ModuleContext<unknown>);
      const deliverLocally = (message: StreamMessage) => {
        triggers.dispatch(message);
        sockets?.deliver(message);
      };
      let share: (message: StreamMessage) => void = () => {};
      let remote: RemoteStreams | undefined;
      const adapter = ctx.config.adapter;
      if (adapter.name === 'bridge') {
        // the items live in another engine; the store below stays empty (the service never uses it)
        const bridged = await startStreamBridge(ctx as ModuleContext<unknown>, adapter, deliverLocally);
        bridge = bridged.bridge;
        remote = bridged.remote;
        share = (message) => bridged.publish(message);
        store = new MemoryKvStore();
        ctx.log.info(`stream: bridged to ${bridged.bridge.shownUrl}`);
      } else {
        const opened = await openStore(adapter, { dataDir: ctx.dataDir, namespace: 'stream', defaultFile: 'streams.db' });
        store = opened.store;
        ctx.log.info(`stream store: ${opened.description}`);
        ctx.services.set(STREAM_STORE_SERVICE, store);
        if (opened.redis) {
          // engines sharing one Redis deliver each other's changes to their subscribers and triggers
          const redis = await RedisEventFanout.open<StreamMessage>(opened.redis.url, opened.redis.channel, ctx.log, deliverLocally);
          fanout = redis;
          share = (message) => redis.publish(message);
        }
      }
      const service = new StreamService(
        ctx as ModuleContext<unknown>,
        store,
        ctx.config.max_value_bytes,
        (message) => {
          deliverLocally(message);
          share(message);
        },
        remote,
      );
      sockets = new StreamsSocketServer(ctx, service, triggers);
      registerStreamFunctions(ctx, service);

      const handlers = { register: triggers.register.bind(triggers), unregister: triggers.unregister.bind(triggers) };
      ctx.registerTriggerType(
        {
          id: 'stream',
          description: 'Fires on stream item create/update/delete and stream::send events',
          trigger_request_format: jsonSchema(StreamTriggerConfig),
        },
        handlers,
      );
      ctx.registerTriggerType(
        {
          id: 'stream:join',
          description: 'Fires when a socket joins a stream; {unauthorized: true} refuses it',
          trigger_request_format: jsonSchema(JoinLeaveTriggerConfig),
        },
        handlers,
      );
      ctx.registerTriggerType(
        {
          id: 'stream:leave',
          description: 'Fires when a socket leaves a stream or closes',
          trigger_request_format: jsonSchema(JoinLeaveTriggerConfig),
        },
        handlers,
      );
    },
    async afterStart() {
      if (!sockets || !context) return;
      const address = await sockets.listen();
      context.services.set('address.streams', address);
      context.log.info(`streams socket listening on ${address.url}`);
    },
    async stop() {
      await sockets?.close();
      await bridge?.close();
      await fanout?.close();
      await store?.close();
    },
  };
}

function registerStreamFunctions(ctx: ModuleContext<StreamConfig>, service: StreamService): void {
  const define = <T>(id: string, description: string, schema: z.ZodType<T>, run: (input: T, raw: unknown) => unknown) =>
    ctx.registerFunction({ id, description, request_format: jsonSchema(schema) }, async (raw, info) =>
      info.traceparent
        ? streamCallTrace.run({ traceparent: info.traceparent }, () => run(parseInput(id, schema, raw), raw))
        : run(parseInput(id, schema, raw), raw),
    );

  define('stream::set', 'Create or replace a stream item; emits create or update', StreamSetInput, (input, raw) =>
    service.set({ ...input, data: input.data === undefined ? null : input.data }, raw),
  );
  define('stream::get', 'Read a stream item (no result when missing)', StreamItemInput, (input, raw) => service.get(input, raw));
  define('stream::delete', 'Delete a stream item; returns {old_value}', StreamItemInput, (input, raw) => service.delete(input, raw));
  define('stream::list', 'Items of a stream group', StreamGroupInput, (input, raw) => service.list(input, raw));
  define('stream::list_groups', 'Group ids of a stream (a bare array)', StreamListGroupsInput, (input, raw) =>
    service.listGroups(input, raw),
  );
  define('stream::update', 'Apply update ops to a stream item; emits create or update', StreamUpdateInput, (input, raw) =>
    service.update(input, raw),
  );
  define('stream::send', 'Send a custom event to a stream group or item', StreamSendInput, (input) => service.send(input));
  define('stream::list_all', 'Every stream with its groups', StreamListAllInput, () => service.listAll());
}
