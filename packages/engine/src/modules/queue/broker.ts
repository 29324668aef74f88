import { randomUUID } from 'node:crypto';
import { EngError, ErrorCode } from '@eng/protocol';
import type { TriggerBinding } from '../../core/triggers.ts';
import { type LaneSettings, laneSettingsOfQueue, type QueueModuleConfig } from './config.ts';
import { type DlqPage, fifoGroup, type MessageContext, type QueueApi, type TopicRow, toDlqRecord } from './service.ts';
import { DuplicateMessageError, type NewMessage, type StoredMessage } from './store.ts';

// A queue held by a broker that several engines share (redis-store.ts, rabbitmq-store.ts). Unlike
// the local stores, the broker delivers by itself: each engine takes (claims, consumes) only the
// messages of functions its own workers serve, so nothing reaches an engine that cannot run it.

export interface TopicStats {
  topic: string;
  depth: number;
  in_flight: number;
  delivered: number;
  failed: number;
  dlq_depth: number;
  dlq_count: number;
  consumer_count: number;
  config: unknown;
  subscribers: Array<{ function_id: string; active: boolean; dormant_since: number | null; in_flight: number }>;
}

export interface QueueBroker {
  readonly adapterName: 'redis' | 'rabbitmq';
  /** Connect; rejects with a readable message when the broker cannot be reached (startup fails). */
  start(): Promise<void>;
  /** Store one message of a named queue; rejects with DuplicateMessageError on a known id. */
  enqueue(message: NewMessage, settings: LaneSettings): Promise<void>;
  /** One copy for every subscribing function of the topic, cluster-wide; resolves with the count. */
  publish(topic: string, data: unknown, trace: MessageContext): Promise<number>;
  registerSubscriber(binding: TriggerBinding): Promise<void>;
  unregisterSubscriber(binding: TriggerBinding): Promise<void>;
  /** A function appeared on this engine: start taking its messages. */
  functionAdded(functionId: string): void;
  listTopics(): Promise<TopicRow[]>;
  topicStats(name: string): Promise<TopicStats>;
  dlqPage(name: string, offset: number, limit: number): Promise<{ messages: StoredMessage[]; total: number }>;
  redrive(name: string, id: string | null): Promise<number>;
  discard(name: string, id: string): Promise<boolean>;
  stop(): Promise<void>;
}

/** The queue functions over a shared broker: the same validation and shapes as QueueService. */
export class BrokerQueueService implements QueueApi {
  constructor(
    private readonly config: QueueModuleConfig,
    private readonly broker: QueueBroker,
  ) {}

  queueSettings(queue: string): LaneSettings {
    return laneSettingsOfQueue(this.config.queue_configs[queue] ?? this.config.default_queue_config);
  }

  async enqueue(
    queue: string,
    functionId: string,
    data: unknown,
    messageId: string | undefined,
    trace: MessageContext,
  ): Promise<{ messageReceiptId: string }> {
    if (this.config.strict && queue !== 'default' && !this.config.queue_configs[queue]) {
      throw new EngError(ErrorCode.EnqueueError, `Queue '${queue}' not found (strict mode: add it to queue_configs)`);
    }
    const settings = this.queueSettings(queue);
    const group = settings.fifo ? fifoGroup(queue, settings.groupField ?? '', data) : null;
    const now = Date.now();
    const id = messageId ?? randomUUID();
    const message: NewMessage = {
      id,
      lane: queue,
      name: queue,
      kind: 'queue',
      functionId,
      group,
      dataJson: JSON.stringify(data ?? null),
      sender: trace.sender ?? null,
      traceparent: trace.traceparent ?? null,
      baggage: trace.baggage ?? null,
      enqueuedAt: now,
      readyAt: now,
    };
    try {
      await this.broker.enqueue(message, settings);
    } catch (err) {
      if (err instanceof DuplicateMessageError) throw new EngError(ErrorCode.EnqueueError, err.message);
      throw new EngError(ErrorCode.EnqueueError, `could not store the message: ${(err as Error).message}`);
    }
    return { messageReceiptId: id };
  }

  publish(topic: string, data: unknown, trace: MessageContext): Promise<number> {
    return this.broker.publish(topic, data, trace);
  }

  listTopics(): Promise<TopicRow[]> {
    return this.broker.listTopics();
  }

  topicStats(name: string): Promise<TopicStats> {
    return this.broker.topicStats(name);
  }

  async dlqTopics(): Promise<Array<{ topic: string; broker_type: string; message_count: number }>> {
    return (await this.listTopics())
      .filter((t) => t.dlq_count > 0)
      .map((t) => ({ topic: t.name, broker_type: t.broker_type, message_count: t.dlq_count }));
  }

  async dlqMessages(name: string, offset: number, limit: number): Promise<DlqPage> {
    const page = await this.broker.dlqPage(name, offset, limit);
    return { topic: name, messages: page.messages.map(toDlqRecord), total: page.total, offset, limit };
  }

  redrive(name: string, messageId: string | null): Promise<number> {
    return this.broker.redrive(name, messageId);
  }

  discard(name: string, messageId: string): Promise<boolean> {
    return this.broker.discard(name, messageId);
  }
}
