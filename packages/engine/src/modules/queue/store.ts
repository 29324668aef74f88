/**
 * The queue's storage: one small interface, two backends (memory, sqlite). Reads are synchronous
 * (the dispatcher scans a lane in one go); writes resolve once they are durable, so a receipt is
 * only returned for a message that survives a crash (spec: engine-protocol §2.5 step 6).
 *
 * Which messages are in flight is deliberately NOT stored: after a crash every stored message is
 * simply ready again, which is what at-least-once delivery needs.
 */

/** `queue`: a named function queue (the enqueue action). `topic`: one subscriber's copy of a publish. */
export type MessageKind = 'queue' | 'topic';

export interface StoredMessage {
  id: string;
  /** Position in its lane; assigned by the store on insert, dead-lettering and redrive. */
  seq: number;
  /** The dispatcher's unit of ordering and concurrency (see laneKey). */
  lane: string;
  /** The queue or topic name users address (DLQ and stats functions). */
  name: string;
  kind: MessageKind;
  functionId: string;
  /** FIFO group key (JSON of the group field's value); null for standard lanes. */
  group: string | null;
  /** The payload as JSON text, as it was sent: decoded only when delivered, never shared with a caller. */
  dataJson: string;
  /**
   * The worker that enqueued or published it (null: no worker, e.g. an HTTP call or cron). Kept
   * beside the data, not in it: the delivery is made on its behalf, and built-ins are told it.
   */
  sender: string | null;
  traceparent: string | null;
  baggage: string | null;
  /** Failed deliveries so far. */
  attempts: number;
  enqueuedAt: number;
  /** Not delivered before this time (retry backoff, delaySeconds). */
  readyAt: number;
  lastError: string | null;
  /** Set while the message is in the dead-letter queue. */
  failedAt: number | null;
}

export type NewMessage = Omit<StoredMessage, 'seq' | 'attempts' | 'lastError' | 'failedAt'>;

export interface LaneRef {
  lane: string;
  name: string;
  kind: MessageKind;
}

export interface NameRef {
  name: string;
  kind: MessageKind;
}

/** A `durable:subscriber` remembered across restarts, so publishes reach it while its worker reconnects. */
export interface SubscriberRecord {
  topic: string;
  functionId: string;
  /** The binding's trigger config (topic, condition_function_id, queue_config). */
  config: unknown;
}

export class DuplicateMessageError extends Error {
  constructor(readonly messageId: string) {
    super(`message ${messageId} is already queued`);
  }
}

export interface QueueStore {
  readonly adapterName: 'memory' | 'sqlite';
  /** All or nothing; rejects with DuplicateMessageError when an id is already stored. */
  insert(messages: NewMessage[]): Promise<void>;
  /** Messages of a lane that are not dead-lettered, in seq order, but those whose id `skip` accepts. */
  scanLane(lane: string, skip?: (id: string) => boolean): Iterable<StoredMessage>;
  /** Lanes holding at least one message that is not dead-lettered. */
  pendingLanes(): LaneRef[];
  /** Delivered: remove it and count a delivery. */
  ack(message: StoredMessage): Promise<void>;
  /** Failed, will be retried at `readyAt`: count a failure. */
  retry(message: StoredMessage, attempts: number, readyAt: number, error: string): Promise<void>;
  /** Failed for the last time: move to the dead-letter queue and count a failure. */
  deadLetter(message: StoredMessage, attempts: number, error: string, failedAt: number): Promise<void>;
  /** Move every pending message of a lane to the dead-letter queue (a subscriber went away). */
  deadLetterLane(lane: string, error: string, failedAt: number): Promise<number>;
  /** Back from the DLQ to the end of its lane with a fresh retry budget; `id` null means all of `name`. */
  redrive(name: string, id: string | null, now: number): Promise<StoredMessage[]>;
  discard(name: string, id: string): Promise<boolean>;
  /** Dead-lettered messages of `name`, oldest failure first. */
  dlqPage(name: string, offset: number, limit: number): { messages: StoredMessage[]; total: number };
  dlqCount(name: string): number;
  /** Messages of `name` not dead-lettered (in flight included). */
  pendingCount(name: string): number;
  /** Names that hold messages or have delivery counters. */
  names(): NameRef[];
  counters(name: string): { delivered: number; failed: number };
  subscribers(): SubscriberRecord[];
  saveSubscriber(record: SubscriberRecord): Promise<void>;
  deleteSubscriber(topic: string, functionId: string): Promise<void>;
  close(): void;
}

/** Lane keys: one per named queue, one per (topic, subscribing function). */
export function queueLaneKey(queue: string): string {
  return `q:${queue}`;
}
export function topicLaneKey(topic: string, functionId: string): string {
  return `t:${JSON.stringify([topic, functionId])}`;
}
