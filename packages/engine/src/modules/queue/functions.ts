import { describeZodError, EngError, EngineFunction, ErrorCode } from '@eng/protocol';
import { z } from 'zod';
import type { ModuleContext } from '../../core/module.ts';
import type { QueueApi } from './service.ts';

// spec: engine-protocol §4.7 — the queue's functions, under our `eng::` ids and the iii ones.

export const QueueFunction = {
  Enqueue: EngineFunction.QueueEnqueue,
  Publish: 'eng::durable::publish',
  Redrive: 'eng::queue::redrive',
  RedriveMessage: 'eng::queue::redrive_message',
  DiscardMessage: 'eng::queue::discard_message',
  ListTopics: 'engine::queue::list_topics',
  TopicStats: 'engine::queue::topic_stats',
  DlqTopics: 'engine::queue::dlq_topics',
  DlqMessages: 'engine::queue::dlq_messages',
} as const;

/** The iii spelling of each `eng::` id, registered as well so iii workers and consoles find them. */
const IiiAlias: Record<string, string> = {
  [QueueFunction.Publish]: 'iii::durable::publish',
  [QueueFunction.Redrive]: 'iii::queue::redrive',
  [QueueFunction.RedriveMessage]: 'iii::queue::redrive_message',
  [QueueFunction.DiscardMessage]: 'iii::queue::discard_message',
};

const EnqueueInput = z.object({
  queue: z.string(),
  function_id: z.string().min(1, 'must not be empty'),
  data: z.unknown().optional(),
  messageReceiptId: z.string().min(1, 'must not be empty').optional(),
  traceparent: z.string().nullish(),
  baggage: z.string().nullish(),
});
type EnqueueArgs = z.infer<typeof EnqueueInput>;

/**
 * The enqueue request as the engine's own enqueue action makes it, checked by hand (the schema
 * costs a few µs a message); any other input goes through the schema, which names what is wrong.
 */
function enqueueArgs(input: unknown): EnqueueArgs {
  if (input !== null && typeof input === 'object' && !Array.isArray(input)) {
    const { queue, function_id, messageReceiptId, traceparent, baggage } = input as Record<string, unknown>;
    if (
      typeof queue === 'string' &&
      typeof function_id === 'string' &&
      function_id !== '' &&
      (messageReceiptId === undefined || (typeof messageReceiptId === 'string' && messageReceiptId !== '')) &&
      (traceparent === undefined || traceparent === null || typeof traceparent === 'string') &&
      (baggage === undefined || baggage === null || typeof baggage === 'string')
    ) {
      return input as EnqueueArgs;
    }
  }
  return parse(EnqueueInput, input);
}
const PublishInput = z.object({ topic: z.string().optional(), queue: z.string().optional(), data: z.unknown().optional() });
const QueueNameInput = z.object({ queue: z.string().optional(), topic: z.string().optional() });
const MessageInput = QueueNameInput.extend({ message_id: z.string().min(1, 'must not be empty') });
const DlqMessagesInput = QueueNameInput.extend({
  offset: z.number().int().min(0).default(0),
  limit: z.number().int().min(1).max(1000).default(50),
  /** eng's console: `{topic, messages, total, offset, limit}` instead of iii's bare array of messages. */
  paged: z.boolean().optional(),
});

function parse<T>(schema: z.ZodType<T>, input: unknown): T {
  if (input === null || input === undefined || typeof input !== 'object' || Array.isArray(input)) {
    throw new EngError(ErrorCode.DeserializationError, '(root): expected an object');
  }
  const parsed = schema.safeParse(input);
  if (!parsed.success) throw new EngError(ErrorCode.DeserializationError, describeZodError(parsed.error));
  return parsed.data;
}

/** `queue` with `topic` accepted as its other spelling (iii accepts both); empty or absent is an error. */
function queueName(input: { queue?: string; topic?: string }, primary: 'queue' | 'topic'): string {
  const name = primary === 'queue' ? (input.queue ?? input.topic) : (input.topic ?? input.queue);
  if (!name) {
    if (primary === 'topic') throw new EngError(ErrorCode.TopicNotSet, 'topic: is required (a non-empty string)');
    throw new EngError(ErrorCode.QueueNotSet, 'queue: is required (a non-empty string)');
  }
  return name;
}

export function registerQueueFunctions(ctx: ModuleContext<unknown>, service: QueueApi): void {
  const register = (id: string, description: string, handler: Parameters<typeof ctx.registerFunction>[1]) => {
    ctx.registerFunction({ id, description }, handler);
    const alias = IiiAlias[id];
    if (alias) ctx.registerFunction({ id: alias, description: `${description} (iii name of ${id})` }, handler);
  };

  // the data is stored as it was sent (iii delivers it so); the real sender, as the engine knows it
  // (never a `_caller_worker_id` written in the data), is stored beside it: the dispatcher makes
  // the delivery on its behalf
  register(QueueFunction.Enqueue, 'Provider of the enqueue action: store a message for function_id on a named queue', (input, info) => {
    const args = enqueueArgs(input);
    if (args.queue === '') throw new EngError(ErrorCode.QueueNotSet, 'queue: is required (a non-empty string)');
    return service.enqueue(args.queue, args.function_id, args.data, args.messageReceiptId, {
      traceparent: args.traceparent,
      baggage: args.baggage,
      sender: info.callerWorkerId,
    });
  });

  register(QueueFunction.Publish, 'Publish data to every durable:subscriber of a topic', async (input, info) => {
    const args = parse(PublishInput, input);
    const topic = queueName(args, 'topic');
    await service.publish(topic, args.data, { traceparent: info.traceparent, baggage: info.baggage, sender: info.callerWorkerId });
    // spec §4: publish returns no result
    return undefined;
  });

  register(QueueFunction.Redrive, 'Move every dead-lettered message of a queue or topic back to it', async (input) => {
    const queue = queueName(parse(QueueNameInput, input), 'queue');
    return { queue, redriven: await service.redrive(queue, null) };
  });

  register(QueueFunction.RedriveMessage, 'Move one dead-lettered message back to its queue or topic', async (input) => {
    const args = parse(MessageInput, input);
    const queue = queueName(args, 'queue');
    return { queue, message_id: args.message_id, redriven: await service.redrive(queue, args.message_id) };
  });

  register(QueueFunction.DiscardMessage, 'Delete one dead-lettered message for good', async (input) => {
    const args = parse(MessageInput, input);
    const queue = queueName(args, 'queue');
    const discarded = (await service.discard(queue, args.message_id)) ? 1 : 0;
    // `redriven` is the field iii answers with here; `discarded` says what happened
    return { queue, message_id: args.message_id, discarded, redriven: discarded };
  });

  register(QueueFunction.ListTopics, 'List queues and durable topics with their depth', (input) => {
    if (input !== null && input !== undefined) parse(z.object({}), input);
    return service.listTopics();
  });

  register(QueueFunction.TopicStats, 'Depth, in flight, delivered, failed, DLQ count and consumers of a queue or topic', (input) => {
    return service.topicStats(queueName(parse(QueueNameInput, input), 'topic'));
  });

  register(QueueFunction.DlqTopics, 'Queues and topics whose dead-letter queue holds messages', (input) => {
    if (input !== null && input !== undefined) parse(z.object({}), input);
    return service.dlqTopics();
  });

  register(QueueFunction.DlqMessages, 'Page through the dead-lettered messages of a queue or topic', async (input) => {
    const args = parse(DlqMessagesInput, input);
    const page = await service.dlqMessages(queueName(args, 'topic'), args.offset, args.limit);
    // iii 0.22.1 answers the messages as a bare array (its console calls `.find` on it); `paged: true` adds the total
    return args.paged ? page : page.messages;
  });
}
