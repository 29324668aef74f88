import { z } from 'zod';

// spec: engine-protocol §4.7 (queue_configs), §5.4 (durable:subscriber queue_config), §7.2.

/** One named queue of `queue_configs` (snake_case, as in config.yaml). */
export const QueueConfigSchema = z
  .object({
    type: z.enum(['standard', 'fifo']).default('standard'),
    /** Retries after the first failed delivery; then the message moves to the dead-letter queue. */
    max_retries: z.number().int().min(0).default(3),
    /** Deliveries in flight at once (for FIFO: groups served at once). */
    concurrency: z.number().int().min(1).default(10),
    /** FIFO only: the field of `data` whose value names the message group. */
    message_group_field: z.string().min(1).optional(),
    /** Base retry delay; the n-th retry waits backoff_ms * 2^(n-1). */
    backoff_ms: z.number().int().min(0).default(1000),
    /** Least time between two timer-driven scans of a queue (retries that became due). */
    poll_interval_ms: z.number().int().min(1).default(100),
    /** A delivery that has not answered by then counts as failed (and may be retried). */
    timeout_ms: z.number().int().min(1).default(1_800_000),
  })
  .strict()
  .superRefine((value, ctx) => {
    if (value.type === 'fifo' && !value.message_group_field) {
      ctx.addIssue({ code: 'custom', path: ['message_group_field'], message: 'a fifo queue needs message_group_field' });
    }
  });
export type QueueConfig = z.infer<typeof QueueConfigSchema>;

/** `adapter: {name: redis}`: the queue shared by every engine on one Redis (redis-store.ts). */
const RedisQueueAdapterSchema = z
  .object({
    name: z.literal('redis'),
    config: z
      .object({
        redis_url: z.string().min(1).default('redis://localhost:6379'),
        /** Prefix of every key (and of the wake-up channel); engines that share a queue share it. */
        key_prefix: z.string().default('eng:queue:'),
        /**
         * How long a claimed message stays invisible to other engines without its engine renewing the
         * claim (every lease_ms / 3): after an engine dies, its messages run again after at most this.
         */
        lease_ms: z.number().int().min(100).default(30_000),
      })
      .strict()
      .prefault({}),
  })
  .strict();
export type RedisQueueAdapter = z.output<typeof RedisQueueAdapterSchema>;

/** `adapter: {name: rabbitmq}` with iii's config keys (rabbitmq-store.ts). */
const RabbitQueueAdapterSchema = z
  .object({
    name: z.literal('rabbitmq'),
    config: z
      .object({
        amqp_url: z.string().min(1).default('amqp://localhost:5672'),
        /** Deliveries before the dead-letter queue, for every queue (iii's key); unset: 1 + max_retries of the queue. */
        max_attempts: z.number().int().min(1).optional(),
        /** Unacknowledged deliveries per consumer (per function, per engine); unset: the queue's concurrency. */
        prefetch_count: z.number().int().min(1).optional(),
        /** `fifo`: every named queue is served in order, one message at a time across the cluster. */
        queue_mode: z.enum(['standard', 'fifo']).default('standard'),
        /** Prefix of every exchange and queue name this engine declares. */
        prefix: z.string().default('eng.'),
      })
      .strict()
      .prefault({}),
  })
  .strict();
export type RabbitQueueAdapter = z.output<typeof RabbitQueueAdapterSchema>;

type StoreAdapter =
  | { name: 'memory'; config?: null | Record<string, never> }
  | { name: 'sqlite'; config?: { file_path?: string } | null }
  | RedisQueueAdapter
  | RabbitQueueAdapter;

const AdapterSchema = z
  .discriminatedUnion('name', [
    z.object({ name: z.literal('memory'), config: z.object({}).strict().nullish() }).strict(),
    z
      .object({
        name: z.literal('sqlite'),
        config: z
          .object({ file_path: z.string().min(1).optional() })
          .strict()
          .nullish(),
      })
      .strict(),
    // iii's spelling (its default): in memory unless `store_method: file_based`, which is our SQLite store
    z
      .object({
        name: z.literal('builtin'),
        config: z
          .object({
            store_method: z.enum(['in_memory', 'file_based']).default('in_memory'),
            file_path: z.string().min(1).optional(),
            save_interval_ms: z.number().int().min(0).optional(),
          })
          .strict()
          .nullish(),
      })
      .strict(),
    RedisQueueAdapterSchema,
    RabbitQueueAdapterSchema,
  ])
  .transform((adapter): StoreAdapter => {
    if (adapter.name !== 'builtin') return adapter;
    if (adapter.config?.store_method !== 'file_based') return { name: 'memory' };
    return { name: 'sqlite', config: adapter.config.file_path ? { file_path: adapter.config.file_path } : null };
  });
export type AdapterConfig = z.output<typeof AdapterSchema>;

export const QueueModuleConfigSchema = z
  .object({
    /** Where messages live: `sqlite` (default, `<dataDir>/queue.db`) survives restarts; `memory` does not. */
    adapter: AdapterSchema.prefault({ name: 'sqlite' }),
    queue_configs: z.record(z.string().min(1), QueueConfigSchema).prefault({}),
    /** Settings of queues that are not listed in `queue_configs` (including `default`). */
    default_queue_config: QueueConfigSchema.prefault({}),
    /** Refuse to enqueue to a queue that is not listed in `queue_configs` (0.11.6 behaviour). */
    strict: z.boolean().default(false),
    /**
     * A durable subscriber whose worker went away keeps receiving published messages for this
     * long; after that its pending messages move to the dead-letter queue.
     */
    subscriber_ttl_ms: z.number().int().min(0).default(86_400_000),
  })
  .strict();
export type QueueModuleConfig = z.infer<typeof QueueModuleConfigSchema>;

/** `queue_config` of a `durable:subscriber` binding: camelCase keys, unknown keys accepted (§5.4). */
export const SubscriberQueueConfigSchema = z
  .object({
    type: z.enum(['standard', 'fifo', 'concurrent']).optional(),
    maxRetries: z.number().int().min(0).optional(),
    concurrency: z.number().int().min(1).optional(),
    /** Seconds a delivery may take before it counts as failed. */
    visibilityTimeout: z.number().positive().optional(),
    backoffMs: z.number().int().min(0).optional(),
    /** The motia spelling of backoffMs. */
    backoffDelayMs: z.number().int().min(0).optional(),
    /** Seconds to wait before the first delivery. */
    delaySeconds: z.number().min(0).optional(),
    /** FIFO: the field of `data` naming the message group; without it a FIFO subscriber is strictly serial. */
    messageGroupField: z.string().min(1).optional(),
  })
  .loose();

export const SubscriberTriggerConfigSchema = z
  .object({
    topic: z.string().optional(),
    /** The standalone queue worker's spelling of `topic`. */
    queue: z.string().optional(),
    condition_function_id: z.string().min(1).nullish(),
    queue_config: SubscriberQueueConfigSchema.nullish(),
  })
  .loose();
export type SubscriberTriggerConfig = z.infer<typeof SubscriberTriggerConfigSchema>;

/** Everything the dispatcher needs to serve one lane (a named queue or one subscriber of a topic). */
export interface LaneSettings {
  fifo: boolean;
  groupField: string | null;
  /** Total deliveries before the dead-letter queue: 1 + retries. */
  maxAttempts: number;
  concurrency: number;
  backoffMs: number;
  timeoutMs: number;
  pollIntervalMs: number;
  /** Wait before the first delivery (subscriber `delaySeconds`). */
  delayMs: number;
  conditionFunctionId: string | null;
}

export function laneSettingsOfQueue(config: QueueConfig): LaneSettings {
  return {
    fifo: config.type === 'fifo',
    groupField: config.message_group_field ?? null,
    maxAttempts: config.max_retries + 1,
    concurrency: config.concurrency,
    backoffMs: config.backoff_ms,
    timeoutMs: config.timeout_ms,
    pollIntervalMs: config.poll_interval_ms,
    delayMs: 0,
    conditionFunctionId: null,
  };
}

export function laneSettingsOfSubscriber(config: SubscriberTriggerConfig, defaults: QueueConfig): LaneSettings {
  const q = config.queue_config ?? {};
  return {
    fifo: q.type === 'fifo',
    groupField: q.messageGroupField ?? null,
    maxAttempts: (q.maxRetries ?? defaults.max_retries) + 1,
    // spec §5.4: a FIFO subscriber without a group field is strictly serial
    concurrency: q.type === 'fifo' && !q.messageGroupField ? 1 : (q.concurrency ?? defaults.concurrency),
    backoffMs: q.backoffMs ?? q.backoffDelayMs ?? defaults.backoff_ms,
    timeoutMs: q.visibilityTimeout !== undefined ? Math.ceil(q.visibilityTimeout * 1000) : defaults.timeout_ms,
    pollIntervalMs: defaults.poll_interval_ms,
    delayMs: Math.round((q.delaySeconds ?? 0) * 1000),
    conditionFunctionId: config.condition_function_id ?? null,
  };
}

/** Delay before the next delivery after `attempts` failed ones: exponential, capped at an hour. */
export function backoffDelay(backoffMs: number, attempts: number): number {
  const delay = backoffMs * 2 ** Math.max(0, attempts - 1);
  return Math.min(delay, Math.max(backoffMs, 3_600_000));
}
