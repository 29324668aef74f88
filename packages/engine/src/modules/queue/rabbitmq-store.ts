import { createHash } from 'node:crypto';
import { describeZodError } from '@eng/protocol';
import type { Channel, ChannelModel, ConfirmChannel, ConsumeMessage, GetMessage, Options } from 'amqplib';
import type { TriggerBinding } from '../../core/triggers.ts';
import type { Logger } from '../../log.ts';
import { amqp } from '../../stores/optional-deps.ts';
import type { QueueBroker, TopicStats } from './broker.ts';
import {
  backoffDelay,
  type LaneSettings,
  laneSettingsOfQueue,
  laneSettingsOfSubscriber,
  type QueueModuleConfig,
  type RabbitQueueAdapter,
  SubscriberTriggerConfigSchema,
} from './config.ts';
import { type DeliveryDeps, deliverOnce } from './dispatcher.ts';
import { BROKER, groupOf, type MessageContext, type TopicRow } from './service.ts';
import type { MessageKind, NewMessage, StoredMessage } from './store.ts';

/*
 * The queue on RabbitMQ (AMQP 0-9-1, amqplib). Names (X = prefix, default `eng.`):
 *
 *   X q.<queue>.<function>   durable queue: one function of a named queue (queues not listed in
 *                            queue_configs share `default`'s, keeping their own name on each message);
 *                            FIFO queues are declared with x-single-active-consumer
 *   X topics                 direct exchange; X t.<topic>.<function> (X tf. for FIFO) is a subscriber's
 *                            queue, bound with the topic as routing key: every subscribing function gets
 *                            one copy, whichever engine published
 *   X delay.<ms>             fanout exchange and queue with x-message-ttl = ms and the default exchange
 *                            as dead-letter exchange: a message published there with routing key R comes
 *                            back to queue R after ms (retries with backoff, delaySeconds)
 *   X dlq.<name>             the dead-letter queue of a queue or topic; each message keeps the queue it
 *                            came from (x-eng-target), its error, attempts and time of failure
 *
 * An engine consumes only the queues of functions its own workers serve. Unacknowledged messages of
 * an engine that dies go back to their queue when its connection closes. See README.md (RabbitMQ).
 */

const H_ATTEMPTS = 'x-eng-attempts';
const H_ERROR = 'x-eng-error';
const H_FAILED_AT = 'x-eng-failed-at';
const H_TARGET = 'x-eng-target';
const H_FUNCTION = 'x-eng-function';

/** The fixed fields of a message, as the AMQP body (JSON). */
type Body = Omit<NewMessage, 'lane'>;

interface Consumer {
  queue: string;
  kind: MessageKind;
  name: string;
  functionId: string;
  fifo: boolean;
  tag: string | null;
  starting: Promise<void> | null;
  /** Local durable:subscriber bindings (topic consumers). */
  bindings: Set<string>;
  /** A topic consumer's queue arguments (declared again after a reconnect). */
  queueArgs?: Record<string, unknown>;
  subscriberSettings: LaneSettings | null;
}

export interface RabbitBrokerDeps extends DeliveryDeps {
  config: QueueModuleConfig;
  adapter: RabbitQueueAdapter['config'];
  log: Logger;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Reconnection backoff after the connection to RabbitMQ is lost: 100 ms, doubling, at most 5 s. */
const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5000;

/** AMQP names are at most 255 bytes: long ones keep a readable head and a hash. */
function amqpName(name: string): string {
  if (Buffer.byteLength(name) <= 200) return name;
  return `${name.slice(0, 120)}~${createHash('sha256').update(name).digest('hex').slice(0, 32)}`;
}

export class RabbitQueueBroker implements QueueBroker {
  readonly adapterName = 'rabbitmq' as const;
  private connection: ChannelModel | null = null;
  private pub!: ConfirmChannel;
  private consume!: Channel;
  private admin!: Channel;
  private readonly x: string;
  private readonly consumers = new Map<string, Consumer>();
  private readonly consumerOfBinding = new Map<string, string>();
  private readonly declared = new Set<string>();
  /** Names this engine has seen (its config, its enqueues and publishes, its subscribers). */
  private readonly names = new Map<string, MessageKind>();
  /** AMQP queues known to hold messages of a name. */
  private readonly partsOf = new Map<string, Set<string>>();
  private readonly counters = new Map<string, { delivered: number; failed: number }>();
  private readonly inflight = new Map<string, number>();
  private stopped = false;
  private consumerStarts: Promise<unknown> = Promise.resolve();
  /** Since when the connection is down (null: connected, or never connected). */
  private lostSince: number | null = null;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private reconnectDelay = RECONNECT_MIN_MS;

  constructor(private readonly deps: RabbitBrokerDeps) {
    this.x = deps.adapter.prefix;
    this.names.set('default', 'queue');
    for (const name of Object.keys(deps.config.queue_configs)) this.names.set(name, 'queue');
  }

  async start(): Promise<void> {
    try {
      await this.connect();
    } catch (err) {
      throw new Error(`could not reach rabbitmq at ${redactUrl(this.deps.adapter.amqp_url)}: ${(err as Error).message}`);
    }
  }

  /** Open the connection and its channels; consumers that should run start again. */
  private async connect(): Promise<void> {
    const connection = await amqp().connect(this.deps.adapter.amqp_url, { noDelay: true });
    // at once: an 'error' without a listener would end the process, and a close during the setup
    // below must not go unnoticed (connectionLost ignores a connection that is not the current one)
    connection.on('error', (err: Error) => this.deps.log.error('rabbitmq connection error', { error: err.message }));
    connection.on('close', () => this.connectionLost(connection));
    try {
      const pub = await connection.createConfirmChannel();
      const consume = await connection.createChannel();
      for (const ch of [pub, consume]) {
        ch.on('error', (err: Error) => this.deps.log.error('rabbitmq channel error', { error: err.message }));
        // one of the two working channels closed under a live connection (a refused operation):
        // start over on a fresh connection rather than run half connected
        ch.on('close', () => {
          if (this.connection === connection && !this.stopped) connection.close().catch(() => {});
        });
      }
      this.connection = connection;
      this.pub = pub;
      this.consume = consume;
      this.admin = await this.openAdmin();
      await this.admin.assertExchange(`${this.x}topics`, 'direct', { durable: true });
    } catch (err) {
      this.connection = null;
      await connection.close().catch(() => {});
      throw err;
    }
    this.lostSince = null;
    this.reconnectDelay = RECONNECT_MIN_MS;
    for (const c of this.consumers.values()) {
      if (c.kind === 'queue' ? this.deps.hasFunction(c.functionId) : c.bindings.size > 0 && this.deps.hasFunction(c.functionId))
        this.startConsumer(c);
    }
  }

  /**
   * The connection closed (the broker stopped or restarted, the network broke, or it refused an
   * operation). The broker puts back every message this engine had not acknowledged; deliveries
   * running here finish but cannot be settled (they run again). Reconnect with backoff; meanwhile
   * enqueues and publishes fail at once (see `whileDisconnected`).
   */
  private connectionLost(connection: ChannelModel): void {
    if (this.connection !== connection) return;
    this.connection = null;
    this.declared.clear();
    this.consumerStarts = Promise.resolve();
    for (const c of this.consumers.values()) {
      c.tag = null;
      c.starting = null;
    }
    if (this.stopped) return;
    this.lostSince = Date.now();
    this.deps.log.error('rabbitmq connection lost: the queue reconnects; enqueues fail until it is back', {
      url: redactUrl(this.deps.adapter.amqp_url),
    });
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.reconnectTimer) return;
    const delay = this.reconnectDelay;
    this.reconnectDelay = Math.min(RECONNECT_MAX_MS, this.reconnectDelay * 2);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      if (this.stopped) return;
      const since = this.lostSince;
      this.connect().then(
        () => {
          if (this.stopped) {
            this.connection?.close().catch(() => {});
            return;
          }
          this.deps.log.info('rabbitmq connection back: the queue delivers again', {
            after_ms: since === null ? 0 : Date.now() - since,
          });
        },
        (err: unknown) => {
          this.deps.log.warn('rabbitmq still unreachable; trying again', { error: (err as Error).message, in_ms: this.reconnectDelay });
          this.scheduleReconnect();
        },
      );
    }, delay);
    this.reconnectTimer.unref();
  }

  /** Writes while the connection is down fail at once: a receipt means the broker holds the message. */
  private whileDisconnected(): Error {
    const since = this.lostSince === null ? '' : ` for ${Date.now() - this.lostSince} ms`;
    return new Error(`rabbitmq is unreachable${since} (reconnecting): the message was not stored, send it again`);
  }

  private async openAdmin(): Promise<Channel> {
    if (!this.connection) throw this.whileDisconnected();
    const ch = await this.connection.createChannel();
    ch.on('error', () => {});
    // a failed declaration closes the channel: the next operation opens a fresh one
    ch.on('close', () => {
      if (this.admin === ch && !this.stopped) this.adminClosed = true;
    });
    this.adminClosed = false;
    return ch;
  }
  private adminClosed = false;

  private async adminChannel(): Promise<Channel> {
    if (!this.connection) throw this.whileDisconnected();
    if (this.adminClosed) this.admin = await this.openAdmin();
    return this.admin;
  }

  // ── names ────────────────────────────────────────────────────────────

  private isFifoQueue(name: string): boolean {
    return this.deps.adapter.queue_mode === 'fifo' || this.queueSettings(name).fifo;
  }

  private queueSettings(name: string): LaneSettings {
    return laneSettingsOfQueue(this.deps.config.queue_configs[name] ?? this.deps.config.default_queue_config);
  }

  /** Queues not listed in queue_configs share the partitions of `default` (they have its settings). */
  private partitionName(name: string): string {
    return name in this.deps.config.queue_configs ? name : 'default';
  }

  private queueOf(name: string, functionId: string): string {
    return amqpName(`${this.x}q.${this.partitionName(name)}.${functionId}`);
  }

  private topicQueue(topic: string, functionId: string, fifo: boolean): string {
    return amqpName(`${this.x}${fifo ? 'tf' : 't'}.${topic}.${functionId}`);
  }

  private dlqOf(name: string): string {
    return amqpName(`${this.x}dlq.${name}`);
  }

  private seen(name: string, kind: MessageKind, queue?: string): void {
    if (!this.names.has(name)) this.names.set(name, kind);
    if (queue) {
      let parts = this.partsOf.get(name);
      if (!parts) {
        parts = new Set();
        this.partsOf.set(name, parts);
      }
      parts.add(queue);
    }
  }

  private async declareQueue(queue: string, options: Options.AssertQueue): Promise<void> {
    if (this.declared.has(queue)) return;
    await (await this.adminChannel()).assertQueue(queue, { durable: true, ...options });
    this.declared.add(queue);
  }

  private declareFunctionQueue(name: string, functionId: string): Promise<void> {
    const fifo = this.isFifoQueue(this.partitionName(name));
    return this.declareQueue(this.queueOf(name, functionId), fifo ? { arguments: { 'x-single-active-consumer': true } } : {});
  }

  /** The delay queue of `ms`: what is published to it comes back to its routing key's queue after ms. */
  private async delayExchange(ms: number): Promise<string> {
    const name = `${this.x}delay.${ms}`;
    if (this.declared.has(name)) return name;
    const ch = await this.adminChannel();
    await ch.assertExchange(name, 'fanout', { durable: true });
    await ch.assertQueue(name, { durable: true, messageTtl: Math.max(1, ms), deadLetterExchange: '' });
    await ch.bindQueue(name, name, '');
    this.declared.add(name);
    return name;
  }

  private publishConfirmed(exchange: string, routingKey: string, content: Buffer, options: Options.Publish): Promise<void> {
    if (!this.connection) return Promise.reject(this.whileDisconnected());
    return new Promise((resolve, reject) => {
      this.pub.publish(exchange, routingKey, content, { persistent: true, ...options }, (err: unknown) =>
        err ? reject(err instanceof Error ? err : new Error('the broker refused the message')) : resolve(),
      );
    });
  }

  // ── writes ───────────────────────────────────────────────────────────

  async enqueue(message: NewMessage, _settings: LaneSettings): Promise<void> {
    const queue = this.queueOf(message.name, message.functionId);
    await this.declareFunctionQueue(message.name, message.functionId);
    this.seen(message.name, 'queue', queue);
    const { lane: _lane, ...body } = message;
    await this.publishConfirmed('', queue, Buffer.from(JSON.stringify(body satisfies Body)), {
      messageId: message.id,
      headers: { [H_ATTEMPTS]: 0 },
    });
    // an engine enqueueing for a function it serves takes its messages too
    if (this.deps.hasFunction(message.functionId)) this.ensureQueueConsumer(message.name, message.functionId);
  }

  async publish(topic: string, data: unknown, trace: MessageContext): Promise<number> {
    this.seen(topic, 'topic');
    const now = Date.now();
    const body: Body = {
      id: `${now.toString(36)}-${Math.random().toString(36).slice(2, 12)}`,
      name: topic,
      kind: 'topic',
      functionId: '',
      group: null,
      dataJson: JSON.stringify(data ?? null),
      sender: trace.sender ?? null,
      traceparent: trace.traceparent ?? null,
      baggage: trace.baggage ?? null,
      enqueuedAt: now,
      readyAt: now,
    };
    // the exchange gives each bound subscriber queue its copy; unroutable (no subscriber) is dropped
    await this.publishConfirmed(`${this.x}topics`, topic, Buffer.from(JSON.stringify(body)), {
      messageId: body.id,
      headers: { [H_ATTEMPTS]: 0 },
    });
    return 1;
  }

  // ── consumers ────────────────────────────────────────────────────────

  functionAdded(functionId: string): void {
    // every configured queue (and `default`) may hold messages for it
    const names = new Set(['default', ...Object.keys(this.deps.config.queue_configs)]);
    for (const name of names) this.ensureQueueConsumer(name, functionId);
    for (const c of this.consumers.values())
      if (c.functionId === functionId && c.kind === 'topic' && c.bindings.size > 0) this.startConsumer(c);
  }

  private ensureQueueConsumer(name: string, functionId: string): void {
    const partition = this.partitionName(name);
    const queue = this.queueOf(partition, functionId);
    let c = this.consumers.get(queue);
    if (!c) {
      c = {
        queue,
        kind: 'queue',
        name: partition,
        functionId,
        fifo: this.isFifoQueue(partition),
        tag: null,
        starting: null,
        bindings: new Set(),
        subscriberSettings: null,
      };
      this.consumers.set(queue, c);
    }
    this.seen(partition, 'queue', queue);
    this.startConsumer(c);
  }

  private startConsumer(c: Consumer): void {
    if (c.tag || c.starting || this.stopped || !this.connection) return;
    // a start that outlives its connection must not mark the consumer started on the next one
    const ch = this.consume;
    let starting!: Promise<void>;
    starting = (async () => {
      if (c.kind === 'queue') await this.declareFunctionQueue(c.name, c.functionId);
      else {
        // after a reconnect the broker may be a new one: the subscriber's queue and binding again
        await this.declareQueue(c.queue, { arguments: c.queueArgs });
        await (await this.adminChannel()).bindQueue(c.queue, `${this.x}topics`, c.name);
      }
      const prefetch = c.fifo ? 1 : (this.deps.adapter.prefetch_count ?? this.consumerSettings(c).concurrency);
      // the channel's prefetch applies to the consumers started after it: one start at a time
      const started = this.consumerStarts.then(async () => {
        await ch.prefetch(prefetch, false);
        return ch.consume(c.queue, (msg) => {
          if (msg) this.handle(c, msg, ch);
        });
      });
      this.consumerStarts = started.catch(() => undefined);
      const { consumerTag } = await started;
      if (this.consume === ch && c.starting === starting) c.tag = consumerTag;
    })();
    c.starting = starting;
    starting
      .catch((err: unknown) => {
        if (!this.stopped && this.connection)
          this.deps.log.error('rabbitmq consumer failed to start', { queue: c.queue, error: (err as Error).message });
      })
      .finally(() => {
        if (c.starting === starting) c.starting = null;
      });
  }

  private stopConsumer(c: Consumer): void {
    const tag = c.tag;
    c.tag = null;
    if (tag && this.connection) this.consume.cancel(tag).catch(() => {});
  }

  private consumerSettings(c: Consumer): LaneSettings {
    if (c.kind === 'topic') return c.subscriberSettings ?? laneSettingsOfSubscriber({}, this.deps.config.default_queue_config);
    return this.queueSettings(c.name);
  }

  /** One delivery, settled on the channel it came on (a delivery tag means nothing on another). */
  private handle(c: Consumer, msg: ConsumeMessage, ch: Channel): void {
    this.inflight.set(c.name, (this.inflight.get(c.name) ?? 0) + 1);
    this.process(c, msg, ch)
      .catch((err: unknown) => {
        if (this.stopped) return;
        this.deps.log.error('rabbitmq delivery could not be settled; the message goes back to its queue', {
          queue: c.queue,
          error: (err as Error).message,
        });
        try {
          ch.nack(msg, false, true);
        } catch {
          // the channel is gone: the broker requeues it anyway
        }
      })
      .finally(() => this.inflight.set(c.name, Math.max(0, (this.inflight.get(c.name) ?? 1) - 1)));
  }

  private async process(c: Consumer, msg: ConsumeMessage, ch: Channel): Promise<void> {
    const body = JSON.parse(msg.content.toString()) as Body;
    const headers = msg.properties.headers ?? {};
    let attempts = Number(headers[H_ATTEMPTS] ?? 0);
    // a named queue's settings come from its own name, also when it shares `default`'s partition
    const settings = c.kind === 'topic' ? this.consumerSettings(c) : this.queueSettings(body.name);
    const maxAttempts = this.deps.adapter.max_attempts ?? settings.maxAttempts;
    const id = c.kind === 'topic' ? `${body.id}:${c.functionId}` : body.id;
    const functionId = c.kind === 'topic' ? c.functionId : body.functionId;
    if (!this.deps.hasFunction(functionId)) {
      // its worker left this engine: back to the queue for an engine that has it
      this.stopConsumer(c);
      ch.nack(msg, false, true);
      return;
    }
    if (c.kind === 'topic' && settings.delayMs > 0 && attempts === 0) {
      const wait = body.enqueuedAt + settings.delayMs - Date.now();
      if (wait > 0) {
        await this.publishConfirmed(await this.delayExchange(wait), c.queue, msg.content, {
          messageId: body.id,
          headers: { [H_ATTEMPTS]: 0 },
        });
        ch.ack(msg);
        return;
      }
    }
    const group = c.kind === 'topic' && settings.fifo ? groupOf(settings.groupField, JSON.parse(body.dataJson)) : body.group;
    const message: StoredMessage = { ...body, id, functionId, group, lane: c.queue, seq: 0, attempts, lastError: null, failedAt: null };
    for (;;) {
      const verdict = await deliverOnce(this.deps, settings, message);
      if (this.stopped) return;
      if (verdict.kind === 'ack') {
        ch.ack(msg);
        this.count(body.name).delivered++;
        return;
      }
      if (verdict.kind === 'requeue') {
        ch.nack(msg, false, true);
        return;
      }
      attempts++;
      this.count(body.name).failed++;
      if (attempts >= maxAttempts) {
        this.deps.log.warn('message moved to the dead-letter queue', { queue: body.name, message_id: id, attempts, error: verdict.error });
        const dlq = this.dlqOf(body.name);
        await this.declareQueue(dlq, {});
        this.seen(body.name, body.kind);
        await this.publishConfirmed('', dlq, msg.content, {
          messageId: id,
          headers: {
            [H_ATTEMPTS]: attempts,
            [H_ERROR]: verdict.error,
            [H_FAILED_AT]: Date.now(),
            [H_TARGET]: c.queue,
            [H_FUNCTION]: functionId,
          },
        });
        ch.ack(msg);
        return;
      }
      const delay = backoffDelay(settings.backoffMs, attempts);
      if (c.fifo) {
        // FIFO: the message keeps its place (unacknowledged, one at a time) through its backoff
        await sleep(delay);
        if (this.stopped) return;
        message.attempts = attempts;
        continue;
      }
      await this.publishConfirmed(await this.delayExchange(delay), c.queue, msg.content, {
        messageId: msg.properties.messageId,
        headers: { [H_ATTEMPTS]: attempts },
      });
      ch.ack(msg);
      return;
    }
  }

  private count(name: string): { delivered: number; failed: number } {
    let c = this.counters.get(name);
    if (!c) {
      c = { delivered: 0, failed: 0 };
      this.counters.set(name, c);
    }
    return c;
  }

  // ── subscribers ──────────────────────────────────────────────────────

  async registerSubscriber(binding: TriggerBinding): Promise<void> {
    const parsed = SubscriberTriggerConfigSchema.safeParse(binding.config ?? {});
    if (!parsed.success) throw new Error(`durable:subscriber config: ${describeZodError(parsed.error)}`);
    const topic = parsed.data.topic ?? parsed.data.queue ?? '';
    if (topic === '') throw new Error('durable:subscriber config: topic is required');
    const settings = laneSettingsOfSubscriber(parsed.data, this.deps.config.default_queue_config);
    const queue = this.topicQueue(topic, binding.functionId, settings.fifo);
    const args: Record<string, unknown> = {};
    if (settings.fifo) args['x-single-active-consumer'] = true;
    // a subscriber nobody consumes for subscriber_ttl_ms is deleted with what it holds
    if (this.deps.config.subscriber_ttl_ms > 0) args['x-expires'] = this.deps.config.subscriber_ttl_ms;
    // while the broker is unreachable the binding is kept here and declared when it is back
    if (this.connection) {
      await this.declareQueue(queue, { arguments: args });
      await (await this.adminChannel()).bindQueue(queue, `${this.x}topics`, topic);
    }
    this.seen(topic, 'topic', queue);
    let c = this.consumers.get(queue);
    if (!c) {
      c = {
        queue,
        kind: 'topic',
        name: topic,
        functionId: binding.functionId,
        fifo: settings.fifo,
        tag: null,
        starting: null,
        bindings: new Set(),
        subscriberSettings: settings,
      };
      this.consumers.set(queue, c);
    }
    c.subscriberSettings = settings;
    c.queueArgs = args;
    c.bindings.add(binding.id);
    this.consumerOfBinding.set(binding.id, queue);
    if (this.deps.hasFunction(binding.functionId)) this.startConsumer(c);
  }

  async unregisterSubscriber(binding: TriggerBinding): Promise<void> {
    const queue = this.consumerOfBinding.get(binding.id);
    if (!queue) return;
    this.consumerOfBinding.delete(binding.id);
    const c = this.consumers.get(queue);
    if (!c) return;
    c.bindings.delete(binding.id);
    // its queue stays bound: copies keep arriving for the subscriber's return (or another engine's)
    if (c.bindings.size === 0) this.stopConsumer(c);
  }

  // ── reads ────────────────────────────────────────────────────────────

  private async messageCount(queue: string): Promise<number> {
    try {
      const ch = await this.adminChannel();
      return (await ch.checkQueue(queue)).messageCount;
    } catch {
      return 0;
    }
  }

  private async depth(name: string): Promise<number> {
    let n = 0;
    for (const queue of this.partsOf.get(name) ?? []) n += await this.messageCount(queue);
    return n;
  }

  private async dlqCount(name: string): Promise<number> {
    await this.declareQueue(this.dlqOf(name), {});
    return this.messageCount(this.dlqOf(name));
  }

  async listTopics(): Promise<TopicRow[]> {
    const rows: TopicRow[] = [];
    for (const [name, kind] of [...this.names].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
      const subscribers = [...this.consumers.values()].filter((c) => c.kind === 'topic' && c.name === name && c.bindings.size > 0);
      rows.push({
        name,
        broker_type: BROKER[kind],
        subscriber_count: kind === 'queue' ? this.queueSettings(name).concurrency : subscribers.length,
        depth: await this.depth(name),
        dlq_count: await this.dlqCount(name),
      });
    }
    return rows;
  }

  async topicStats(name: string): Promise<TopicStats> {
    const config = this.deps.config;
    const isQueue = this.names.get(name) === 'queue';
    const dlq = await this.dlqCount(name);
    const counters = this.counters.get(name) ?? { delivered: 0, failed: 0 };
    const subscribers = [...this.consumers.values()].filter((c) => c.kind === 'topic' && c.name === name);
    return {
      topic: name,
      depth: await this.depth(name),
      in_flight: this.inflight.get(name) ?? 0,
      delivered: counters.delivered,
      failed: counters.failed,
      dlq_depth: dlq,
      dlq_count: dlq,
      consumer_count: subscribers.filter((c) => c.bindings.size > 0).length + (isQueue ? this.queueSettings(name).concurrency : 0),
      config: isQueue ? (config.queue_configs[name] ?? config.default_queue_config) : null,
      subscribers: subscribers.map((c) => ({ function_id: c.functionId, active: c.bindings.size > 0, dormant_since: null, in_flight: 0 })),
    };
  }

  /**
   * Walk a dead-letter queue on a channel of its own: every message taken is unacknowledged until
   * `visit` acks it; closing the channel puts the others back in their places.
   */
  private async walkDlq(name: string, visit: (msg: GetMessage, ch: ConfirmChannel) => Promise<'stop' | 'next'>): Promise<void> {
    if (!this.connection) throw this.whileDisconnected();
    const dlq = this.dlqOf(name);
    await this.declareQueue(dlq, {});
    const ch = await this.connection.createConfirmChannel();
    ch.on('error', () => {});
    try {
      for (;;) {
        const msg = await ch.get(dlq, { noAck: false });
        if (!msg) return;
        if ((await visit(msg, ch)) === 'stop') return;
      }
    } finally {
      await ch.close().catch(() => {});
    }
  }

  private dead(msg: GetMessage): StoredMessage {
    const body = JSON.parse(msg.content.toString()) as Body;
    const h = msg.properties.headers ?? {};
    return {
      ...body,
      id: String(msg.properties.messageId ?? body.id),
      functionId: String(h[H_FUNCTION] ?? body.functionId),
      lane: String(h[H_TARGET] ?? ''),
      seq: 0,
      attempts: Number(h[H_ATTEMPTS] ?? 0),
      lastError: h[H_ERROR] === undefined ? null : String(h[H_ERROR]),
      failedAt: h[H_FAILED_AT] === undefined ? null : Number(h[H_FAILED_AT]),
    };
  }

  async dlqPage(name: string, offset: number, limit: number): Promise<{ messages: StoredMessage[]; total: number }> {
    const total = await this.dlqCount(name);
    const messages: StoredMessage[] = [];
    let index = 0;
    await this.walkDlq(name, async (msg) => {
      if (index >= offset) messages.push(this.dead(msg));
      index++;
      return messages.length >= limit ? 'stop' : 'next';
    });
    return { messages, total };
  }

  async redrive(name: string, id: string | null): Promise<number> {
    let n = 0;
    await this.walkDlq(name, async (msg, ch) => {
      const m = this.dead(msg);
      if (id !== null && m.id !== id) return 'next';
      const target = String(msg.properties.headers?.[H_TARGET] ?? '');
      await new Promise<void>((resolve, reject) => {
        ch.publish(
          '',
          target,
          msg.content,
          { persistent: true, messageId: msg.properties.messageId, headers: { [H_ATTEMPTS]: 0 } },
          (err: unknown) => (err ? reject(new Error('the broker refused the message')) : resolve()),
        );
      });
      ch.ack(msg);
      n++;
      return id === null ? 'next' : 'stop';
    });
    return n;
  }

  async discard(name: string, id: string): Promise<boolean> {
    let found = false;
    await this.walkDlq(name, async (msg, ch) => {
      if (this.dead(msg).id !== id) return 'next';
      ch.ack(msg);
      found = true;
      return 'stop';
    });
    return found;
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    // unacknowledged deliveries go back to their queues when the connection closes
    await this.connection?.close().catch(() => {});
  }
}

function redactUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}
