import { randomUUID } from 'node:crypto';
import { EngError, ErrorCode } from '@eng/protocol';
import { type LaneSettings, laneSettingsOfQueue, type QueueModuleConfig } from './config.ts';
import type { Dispatcher, Lane } from './dispatcher.ts';
import { DuplicateMessageError, type MessageKind, type NewMessage, type QueueStore, queueLaneKey, type StoredMessage } from './store.ts';
import type { SubscriberRegistry } from './subscribers.ts';

// spec: engine-protocol §2.5 step 6 (enqueue), §4.7 (queue functions), §5.4 (durable publish).

export interface TraceContext {
  traceparent?: string | null;
  baggage?: string | null;
}

/** Where a message comes from: its trace, and the worker that sent it (stored beside its data). */
export interface MessageContext extends TraceContext {
  sender?: string | null;
}

export interface DlqMessageRecord {
  id: string;
  queue: string;
  function_id: string;
  payload: unknown;
  error: string;
  failed_at: number;
  retries: number;
  enqueued_at: number;
  size_bytes: number;
}

export interface TopicRow {
  name: string;
  broker_type: string;
  subscriber_count: number;
  depth: number;
  dlq_count: number;
}

export interface DlqPage {
  topic: string;
  messages: DlqMessageRecord[];
  total: number;
  offset: number;
  limit: number;
}

type MaybePromise<T> = T | Promise<T>;

/** What the queue's functions (functions.ts) ask of a queue, whichever adapter holds it. */
export interface QueueApi {
  enqueue(
    queue: string,
    functionId: string,
    data: unknown,
    messageId: string | undefined,
    trace: MessageContext,
  ): Promise<{ messageReceiptId: string }>;
  publish(topic: string, data: unknown, trace: MessageContext): Promise<number>;
  listTopics(): MaybePromise<TopicRow[]>;
  topicStats(name: string): MaybePromise<unknown>;
  dlqTopics(): MaybePromise<Array<{ topic: string; broker_type: string; message_count: number }>>;
  dlqMessages(name: string, offset: number, limit: number): MaybePromise<DlqPage>;
  redrive(name: string, messageId: string | null): Promise<number>;
  discard(name: string, messageId: string): Promise<boolean>;
}

/** Where a queue or topic name is served from, as `engine::queue::list_topics` reports it. */
export const BROKER: Record<MessageKind, string> = { queue: 'function_queue', topic: 'topic' };

export class QueueService implements QueueApi {
  constructor(
    private readonly config: QueueModuleConfig,
    private readonly store: QueueStore,
    private readonly dispatcher: Dispatcher,
    private readonly subscribers: SubscriberRegistry,
  ) {}

  /** Queues not listed in `queue_configs` use `default_queue_config`. */
  queueSettings(queue: string): LaneSettings {
    return laneSettingsOfQueue(this.config.queue_configs[queue] ?? this.config.default_queue_config);
  }

  queueLane(queue: string): Lane {
    return this.dispatcher.lane(queueLaneKey(queue), queue, 'queue', this.queueSettings(queue));
  }

  /** The provider of the enqueue action: resolves once the message is durable. */
  async enqueue(
    queue: string,
    functionId: string,
    data: unknown,
    messageId: string | undefined,
    trace: MessageContext,
  ): Promise<{ messageReceiptId: string }> {
    // 'default' always exists, as in iii (ensure_default_queue)
    if (this.config.strict && queue !== 'default' && !this.config.queue_configs[queue]) {
      throw new EngError(ErrorCode.EnqueueError, `Queue '${queue}' not found (strict mode: add it to queue_configs)`);
    }
    const lane = this.queueLane(queue);
    const group = lane.settings.fifo ? fifoGroup(queue, lane.settings.groupField ?? '', data) : null;
    const now = Date.now();
    const id = messageId ?? randomUUID();
    const message: NewMessage = {
      id,
      lane: lane.key,
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
      await this.dispatcher.accept([lane], [message]);
    } catch (err) {
      if (err instanceof DuplicateMessageError) throw new EngError(ErrorCode.EnqueueError, err.message);
      throw new EngError(ErrorCode.EnqueueError, `could not store the message: ${(err as Error).message}`);
    }
    return { messageReceiptId: id };
  }

  /** One copy per subscriber of the topic, stored atomically; no subscriber means nothing to keep. */
  async publish(topic: string, data: unknown, trace: MessageContext): Promise<number> {
    const subscribers = this.subscribers.ofTopic(topic);
    if (subscribers.length === 0) return 0;
    const now = Date.now();
    const dataJson = JSON.stringify(data ?? null);
    const messages: NewMessage[] = subscribers.map((s) => ({
      id: randomUUID(),
      lane: s.lane.key,
      name: topic,
      kind: 'topic',
      functionId: s.functionId,
      group: s.lane.settings.fifo ? groupOf(s.lane.settings.groupField, data) : null,
      dataJson,
      sender: trace.sender ?? null,
      traceparent: trace.traceparent ?? null,
      baggage: trace.baggage ?? null,
      enqueuedAt: now,
      readyAt: now + s.lane.settings.delayMs,
    }));
    await this.dispatcher.accept(
      subscribers.map((s) => s.lane),
      messages,
    );
    return messages.length;
  }

  listTopics(): TopicRow[] {
    const names = new Map<string, { name: string; kind: MessageKind }>();
    const add = (name: string, kind: MessageKind) => names.set(`${kind}\u0000${name}`, { name, kind });
    add('default', 'queue');
    for (const name of Object.keys(this.config.queue_configs)) add(name, 'queue');
    for (const ref of this.store.names()) add(ref.name, ref.kind);
    for (const lane of this.dispatcher.allLanes()) add(lane.name, lane.kind);
    return [...names.values()]
      .sort((a, b) => (a.name === b.name ? a.kind.localeCompare(b.kind) : a.name < b.name ? -1 : 1))
      .map(({ name, kind }) => ({
        name,
        broker_type: BROKER[kind],
        // iii reports a function queue's concurrency as its consumers
        subscriber_count: kind === 'queue' ? this.queueSettings(name).concurrency : this.activeSubscribers(name),
        // the same count as topic_stats: stored and not in flight
        depth: Math.max(0, this.store.pendingCount(name) - this.dispatcher.inFlight(name)),
        dlq_count: this.store.dlqCount(name),
      }));
  }

  topicStats(name: string) {
    const inFlight = this.dispatcher.inFlight(name);
    const counters = this.store.counters(name);
    const dlq = this.store.dlqCount(name);
    const isQueue = name === 'default' || name in this.config.queue_configs || this.dispatcher.getLane(queueLaneKey(name)) !== undefined;
    const subscribers = this.subscribers.all().filter((s) => s.topic === name);
    const settings = isQueue ? this.queueSettings(name) : null;
    return {
      topic: name,
      depth: Math.max(0, this.store.pendingCount(name) - inFlight),
      in_flight: inFlight,
      delivered: counters.delivered,
      failed: counters.failed,
      dlq_depth: dlq,
      dlq_count: dlq,
      consumer_count: this.activeSubscribers(name) + (settings ? settings.concurrency : 0),
      config: isQueue ? (this.config.queue_configs[name] ?? this.config.default_queue_config) : null,
      subscribers: subscribers.map((s) => ({
        function_id: s.functionId,
        active: s.bindings.size > 0,
        dormant_since: s.dormantSince,
        in_flight: s.lane.inflight.size,
      })),
    };
  }

  dlqTopics(): Array<{ topic: string; broker_type: string; message_count: number }> {
    return this.listTopics()
      .filter((t) => t.dlq_count > 0)
      .map((t) => ({ topic: t.name, broker_type: t.broker_type, message_count: t.dlq_count }));
  }

  dlqMessages(name: string, offset: number, limit: number): DlqPage {
    const page = this.store.dlqPage(name, offset, limit);
    return { topic: name, messages: page.messages.map(toDlqRecord), total: page.total, offset, limit };
  }

  async redrive(name: string, messageId: string | null): Promise<number> {
    const moved = await this.store.redrive(name, messageId, Date.now());
    const lanes = new Map<string, Lane>();
    for (const m of moved) {
      if (lanes.has(m.lane)) continue;
      const lane = m.kind === 'queue' ? this.queueLane(m.name) : this.subscribers.adopt(m.lane, Date.now()).lane;
      lanes.set(m.lane, lane);
    }
    for (const lane of lanes.values()) this.dispatcher.schedule(lane);
    return moved.length;
  }

  discard(name: string, messageId: string): Promise<boolean> {
    return this.store.discard(name, messageId);
  }

  private activeSubscribers(topic: string): number {
    return this.subscribers.ofTopic(topic).filter((s) => s.bindings.size > 0).length;
  }
}

/** spec §2.5 step 6: a FIFO queue needs its group field present and non-null in `data`. */
export function fifoGroup(queue: string, field: string, data: unknown): string {
  if (data === null || typeof data !== 'object' || Array.isArray(data) || !(field in data)) {
    throw new EngError(ErrorCode.EnqueueError, `FIFO queue '${queue}' requires field '${field}' in data, but it was not found`);
  }
  const value = (data as Record<string, unknown>)[field];
  if (value === null || value === undefined) {
    throw new EngError(ErrorCode.EnqueueError, `FIFO queue '${queue}': field '${field}' must not be null`);
  }
  return JSON.stringify(value);
}

/** A FIFO subscriber without a usable group field is strictly serial: one group for everything. */
export function groupOf(field: string | null, data: unknown): string {
  if (!field || data === null || typeof data !== 'object' || Array.isArray(data)) return '';
  const value = (data as Record<string, unknown>)[field];
  return value === null || value === undefined ? '' : JSON.stringify(value);
}

export function toDlqRecord(m: StoredMessage): DlqMessageRecord {
  return {
    id: m.id,
    queue: m.name,
    function_id: m.functionId,
    payload: JSON.parse(m.dataJson),
    error: m.lastError ?? '',
    failed_at: m.failedAt ?? 0,
    retries: m.attempts,
    enqueued_at: m.enqueuedAt,
    size_bytes: Buffer.byteLength(m.dataJson),
  };
}
