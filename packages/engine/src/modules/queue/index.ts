import { join, resolve } from 'node:path';
import type { EngineModule, ModuleContext } from '../../core/module.ts';
import { BrokerQueueService, type QueueBroker } from './broker.ts';
import { type QueueModuleConfig, QueueModuleConfigSchema } from './config.ts';
import { Dispatcher } from './dispatcher.ts';
import { registerQueueFunctions } from './functions.ts';
import { MemoryQueueStore } from './memory-store.ts';
import { QueueService } from './service.ts';
import { SqliteQueueStore } from './sqlite-store.ts';
import type { QueueStore } from './store.ts';
import { SubscriberRegistry } from './subscribers.ts';

// spec: engine-protocol §4.7, §5.4, §7.2 — the durable queue: the enqueue action's provider,
// durable topics, retries with backoff, a dead-letter queue, and a store that survives restarts.

export const DURABLE_SUBSCRIBER = 'durable:subscriber';

/** How often dormant subscribers are checked against their TTL. */
const EXPIRY_SWEEP_MS = 60_000;

function openStore(config: QueueModuleConfig, dataDir: string): QueueStore {
  if (config.adapter.name === 'memory') return new MemoryQueueStore();
  if (config.adapter.name !== 'sqlite') throw new Error(`not a local queue store: ${config.adapter.name}`);
  const file = config.adapter.config?.file_path;
  return new SqliteQueueStore(file ? resolve(file) : join(dataDir, 'queue.db'));
}

export function queueModule(): EngineModule<QueueModuleConfig> {
  let store: QueueStore | undefined;
  let dispatcher: Dispatcher | undefined;
  let sweep: NodeJS.Timeout | undefined;
  let stopWatching: (() => void) | undefined;
  let registry: SubscriberRegistry | undefined;
  let stopBroker: (() => Promise<void>) | undefined;

  return {
    name: 'eng-queue',
    aliases: ['iii-queue', 'queue'],
    description: 'Durable queues: the enqueue action, durable:subscriber topics, retries and a dead-letter queue',
    configSchema: QueueModuleConfigSchema,

    async start(ctx: ModuleContext<QueueModuleConfig>) {
      const { config, core } = ctx;
      if (config.adapter.name === 'redis' || config.adapter.name === 'rabbitmq') {
        stopBroker = await startBroker(ctx);
        return;
      }
      const queueStore = openStore(config, ctx.dataDir);
      store = queueStore;
      const hasFunction = (id: string) => core.functions.has(id);
      dispatcher = new Dispatcher({ store: queueStore, invoke: ctx.invoke, hasFunction, log: ctx.log });
      const subscribers = new SubscriberRegistry({
        store: queueStore,
        dispatcher,
        hasFunction,
        defaults: config.default_queue_config,
        ttlMs: config.subscriber_ttl_ms,
        log: ctx.log,
      });
      registry = subscribers;
      const service = new QueueService(config, queueStore, dispatcher, subscribers);

      // messages left by the previous run (in flight ones included) are ready again: at-least-once
      const now = Date.now();
      subscribers.load(now);
      for (const ref of queueStore.pendingLanes()) if (ref.kind === 'queue') service.queueLane(ref.name);

      registerQueueFunctions(ctx as ModuleContext<unknown>, service);
      ctx.registerTriggerType(
        {
          id: DURABLE_SUBSCRIBER,
          description: 'Receive every message published to a topic, with retries and a dead-letter queue',
          trigger_request_format: {
            type: 'object',
            properties: {
              topic: { type: 'string' },
              condition_function_id: { type: 'string' },
              queue_config: { type: 'object' },
            },
            required: ['topic'],
          },
        },
        { register: (binding) => subscribers.register(binding), unregister: (binding) => subscribers.unregister(binding) },
      );

      const activeDispatcher = dispatcher;
      // a message waits for its function; when any function appears, lanes look again
      stopWatching = core.functions.onChange((change) => {
        if (change.kind === 'added') activeDispatcher.wakeAll();
      });
      sweep = setInterval(
        () => {
          subscribers.expire(Date.now()).catch((err: unknown) => {
            ctx.log.error('expiring dormant subscribers failed', { error: (err as Error).message });
          });
        },
        Math.min(EXPIRY_SWEEP_MS, Math.max(1000, config.subscriber_ttl_ms)),
      );
      sweep.unref();
      ctx.log.info(`queue store: ${queueStore.adapterName}`, {
        pending: queueStore.pendingLanes().length,
        queues: Object.keys(config.queue_configs),
      });
    },

    afterStart() {
      dispatcher?.wakeAll();
    },

    async stop() {
      stopWatching?.();
      if (stopBroker) await stopBroker();
      if (sweep) clearInterval(sweep);
      registry?.stop();
      dispatcher?.stop();
      store?.close();
    },
  };
}

/** `adapter: redis | rabbitmq`: a queue shared by every engine on the same broker. */
async function startBroker(ctx: ModuleContext<QueueModuleConfig>): Promise<() => Promise<void>> {
  const { config, core } = ctx;
  const deps = { config, invoke: ctx.invoke, hasFunction: (id: string) => core.functions.has(id), log: ctx.log };
  const adapter = config.adapter;
  let broker: QueueBroker;
  // loaded only when configured: an engine without them does not load amqplib
  if (adapter.name === 'redis') {
    const { RedisQueueBroker } = await import('./redis-store.ts');
    broker = new RedisQueueBroker({ ...deps, adapter: adapter.config });
  } else if (adapter.name === 'rabbitmq') {
    const { RabbitQueueBroker } = await import('./rabbitmq-store.ts');
    broker = new RabbitQueueBroker({ ...deps, adapter: adapter.config });
  } else throw new Error(`not a shared queue adapter: ${adapter.name}`);
  try {
    await broker.start();
  } catch (err) {
    await broker.stop().catch(() => {});
    throw err;
  }
  registerQueueFunctions(ctx as ModuleContext<unknown>, new BrokerQueueService(config, broker));
  ctx.registerTriggerType(
    {
      id: DURABLE_SUBSCRIBER,
      description: 'Receive every message published to a topic, with retries and a dead-letter queue',
      trigger_request_format: {
        type: 'object',
        properties: { topic: { type: 'string' }, condition_function_id: { type: 'string' }, queue_config: { type: 'object' } },
        required: ['topic'],
      },
    },
    { register: (binding) => broker.registerSubscriber(binding), unregister: (binding) => broker.unregisterSubscriber(binding) },
  );
  const stopWatching = core.functions.onChange((change) => {
    // a worker's function (the engine's own are served by every engine, from their first message on)
    if (change.kind === 'added' && core.functions.get(change.id)?.ownerWorkerId) broker.functionAdded(change.id);
  });
  ctx.log.info(`queue store: ${broker.adapterName}`, { queues: Object.keys(config.queue_configs) });
  return async () => {
    stopWatching();
    await broker.stop();
  };
}
