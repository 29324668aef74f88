import { describeZodError, EngError, ErrorCode } from '@eng/protocol';
import { z } from 'zod';
import type { EngineModule } from '../../core/module.ts';
import type { TriggerBinding } from '../../core/triggers.ts';
import { RedisAdapterSchema } from '../../stores/redis-adapter.ts';
import { RedisEventFanout } from '../../stores/redis-events.ts';

// spec: engine-protocol §4.6 (`publish`), §5.5 (`subscribe` trigger), §7.2 (`iii-pubsub` adapters).

const REDIS_CHANNEL = 'eng:pubsub';

export const PubSubConfig = z
  .object({
    adapter: z
      .discriminatedUnion('name', [
        // `memory` is 0.22.1's name for the same in-process adapter
        z.object({ name: z.enum(['local', 'memory']), config: z.record(z.string(), z.unknown()).optional() }).strict(),
        RedisAdapterSchema,
      ])
      .default({ name: 'local' }),
  })
  .strict();
export type PubSubConfig = z.infer<typeof PubSubConfig>;

const SubscribeConfig = z.object({
  topic: z.string({ error: 'topic is required for subscribe triggers' }).min(1, 'topic is required for subscribe triggers'),
});

const PublishInput = z.object({ topic: z.unknown().optional(), data: z.unknown().optional() });

interface PublishedEvent {
  topic: string;
  data: unknown;
  /** The publisher's trace context: subscribers' calls join its trace (one request, one trace). */
  traceparent?: string;
  baggage?: string;
}

/** `eng-pubsub` (iii: `iii-pubsub`): fire-and-forget topics between functions and engines. */
export function pubsubModule(): EngineModule<PubSubConfig> {
  let fanout: RedisEventFanout<PublishedEvent> | undefined;
  return {
    name: 'eng-pubsub',
    aliases: ['iii-pubsub'],
    description: 'pub/sub: publish to topics, subscribe triggers',
    configSchema: PubSubConfig,
    async start(ctx) {
      /** topic → binding id → function id */
      const topics = new Map<string, Map<string, string>>();

      // §2.3.6 / §5.5: subscribers get the raw data, as a void call without metadata
      // `publisher`: the local worker that published, which subscribers see as `_caller_worker_id`
      // (never one written in `data`); events from other engines have none here, so theirs is removed
      const deliver = ({ topic, data, traceparent, baggage }: PublishedEvent, publisher?: string) => {
        const subscribers = topics.get(topic);
        if (!subscribers) return;
        const trace = {
          traceparent: typeof traceparent === 'string' ? traceparent : undefined,
          baggage: typeof baggage === 'string' ? baggage : undefined,
          originWorkerId: publisher,
        };
        for (const functionId of subscribers.values()) {
          void ctx.invoke(functionId, data ?? null, trace).then((outcome) => {
            if (!outcome.ok)
              ctx.log.warn(`subscriber ${functionId} of topic "${topic}" failed: ${outcome.error.code}: ${outcome.error.message}`);
          });
        }
      };

      const adapter = ctx.config.adapter;
      if (adapter.name === 'redis') {
        fanout = await RedisEventFanout.open<PublishedEvent>(adapter.config.redis_url, REDIS_CHANNEL, ctx.log, (event) => deliver(event));
        ctx.log.info(`pub/sub shares topics through redis (${adapter.config.redis_url})`);
      }

      ctx.registerFunction(
        {
          id: 'publish',
          description: 'Publish data to a topic; every subscribe trigger on that topic receives it',
          request_format: {
            type: 'object',
            required: ['topic'],
            properties: { topic: { type: 'string', minLength: 1 }, data: {} },
          },
        },
        (input, info) => {
          const parsed = PublishInput.safeParse(input);
          if (!parsed.success)
            throw new EngError(ErrorCode.DeserializationError, `publish expects {topic, data}: ${describeZodError(parsed.error)}`);
          const { topic, data } = parsed.data;
          if (topic === undefined || topic === null || topic === '') throw new EngError(ErrorCode.TopicNotSet, 'topic is required');
          if (typeof topic !== 'string')
            throw new EngError(ErrorCode.DeserializationError, `topic: expected a string, got ${typeof topic}`);
          const event: PublishedEvent = { topic, data: data ?? null };
          if (info.traceparent) event.traceparent = info.traceparent;
          if (info.baggage) event.baggage = info.baggage;
          deliver(event, info.callerWorkerId);
          fanout?.publish(event);
          return undefined; // §4.6: publish has no result
        },
      );

      ctx.registerTriggerType(
        {
          id: 'subscribe',
          description: 'Pub/sub topic subscription',
          trigger_request_format: { type: 'object', required: ['topic'], properties: { topic: { type: 'string' } } },
          call_request_format: { description: 'the data given to publish' },
        },
        {
          register(binding: TriggerBinding) {
            const parsed = SubscribeConfig.safeParse(binding.config ?? {});
            if (!parsed.success) throw new Error(parsed.error.issues[0]?.message ?? describeZodError(parsed.error));
            const topic = parsed.data.topic;
            let subscribers = topics.get(topic);
            if (!subscribers) {
              subscribers = new Map();
              topics.set(topic, subscribers);
            }
            subscribers.set(binding.id, binding.functionId);
          },
          unregister(binding: TriggerBinding) {
            const topic = (binding.config as { topic?: unknown } | null)?.topic;
            if (typeof topic !== 'string') return;
            const subscribers = topics.get(topic);
            subscribers?.delete(binding.id);
            if (subscribers?.size === 0) topics.delete(topic);
          },
        },
      );
    },
    async stop() {
      await fanout?.close();
    },
  };
}
