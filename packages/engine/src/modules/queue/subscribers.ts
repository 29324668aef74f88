import { describeZodError } from '@eng/protocol';
import type { TriggerBinding } from '../../core/triggers.ts';
import type { Logger } from '../../log.ts';
import { type LaneSettings, laneSettingsOfSubscriber, type QueueConfig, SubscriberTriggerConfigSchema } from './config.ts';
import type { Dispatcher, Lane } from './dispatcher.ts';
import { type QueueStore, topicLaneKey } from './store.ts';

// spec: engine-protocol §5.4 — `durable:subscriber` bindings: every subscriber of a topic gets its
// own copy of each published message, with its own retries, concurrency and dead-letter queue.

export interface Subscriber {
  topic: string;
  functionId: string;
  lane: Lane;
  /** Bindings currently delivering to this (topic, function); several bindings share one copy. */
  bindings: Set<string>;
  /** Set while no binding is left because the subscriber's worker went away. */
  dormantSince: number | null;
  /** Pending removal after an explicit unsubscribe. */
  forgetTimer: NodeJS.Timeout | null;
}

/** How long an explicitly unsubscribed subscriber is kept in case a binding for it comes right back. */
const UNSUBSCRIBE_GRACE_MS = 1000;

export interface SubscriberDeps {
  store: QueueStore;
  dispatcher: Dispatcher;
  hasFunction(functionId: string): boolean;
  defaults: QueueConfig;
  ttlMs: number;
  log: Logger;
}

export class SubscriberRegistry {
  private readonly byLane = new Map<string, Subscriber>();
  private readonly laneOfBinding = new Map<string, string>();

  constructor(private readonly deps: SubscriberDeps) {}

  /**
   * After a restart every remembered subscriber is dormant until its worker binds again; its
   * messages wait for it (and publishes keep reaching it) for `ttlMs`.
   */
  load(now: number): void {
    for (const record of this.deps.store.subscribers()) {
      const parsed = SubscriberTriggerConfigSchema.safeParse(record.config);
      const settings = laneSettingsOfSubscriber(parsed.success ? parsed.data : {}, this.deps.defaults);
      this.ensure(record.topic, record.functionId, settings, now);
    }
    for (const ref of this.deps.store.pendingLanes()) if (ref.kind === 'topic') this.adopt(ref.lane, now);
  }

  /** The subscriber of a topic lane; one nobody remembers (redriven messages) starts dormant. */
  adopt(laneKey: string, now: number): Subscriber {
    const known = this.byLane.get(laneKey);
    if (known) return known;
    const [topic, functionId] = JSON.parse(laneKey.slice(2)) as [string, string];
    return this.ensure(topic, functionId, laneSettingsOfSubscriber({}, this.deps.defaults), now);
  }

  /** Validate a binding and start delivering to it; throws an Error with a readable message to refuse. */
  async register(binding: TriggerBinding): Promise<void> {
    const parsed = SubscriberTriggerConfigSchema.safeParse(binding.config ?? {});
    if (!parsed.success) throw new Error(`durable:subscriber config: ${describeZodError(parsed.error)}`);
    const topic = parsed.data.topic ?? parsed.data.queue ?? '';
    if (topic === '') throw new Error('durable:subscriber config: topic is required');
    const settings = laneSettingsOfSubscriber(parsed.data, this.deps.defaults);
    await this.deps.store.saveSubscriber({ topic, functionId: binding.functionId, config: binding.config ?? {} });
    const subscriber = this.ensure(topic, binding.functionId, settings, null);
    subscriber.lane.settings = settings;
    subscriber.bindings.add(binding.id);
    subscriber.dormantSince = null;
    if (subscriber.forgetTimer) clearTimeout(subscriber.forgetTimer);
    subscriber.forgetTimer = null;
    this.laneOfBinding.set(binding.id, subscriber.lane.key);
    this.deps.dispatcher.setActive(subscriber.lane, true);
  }

  async unregister(binding: TriggerBinding): Promise<void> {
    const key = this.laneOfBinding.get(binding.id);
    if (!key) return;
    this.laneOfBinding.delete(binding.id);
    const subscriber = this.byLane.get(key);
    if (!subscriber) return;
    subscriber.bindings.delete(binding.id);
    if (subscriber.bindings.size > 0) return;
    this.deps.dispatcher.setActive(subscriber.lane, false);
    if (!this.deps.hasFunction(subscriber.functionId)) {
      // spec §2.8: the worker disconnected (its functions went first); keep its messages for its return
      subscriber.dormantSince = Date.now();
      return;
    }
    // an unsubscribe is often half of a re-registration (same id, new config): wait a moment
    subscriber.forgetTimer = setTimeout(() => {
      subscriber.forgetTimer = null;
      if (subscriber.bindings.size > 0 || this.byLane.get(key) !== subscriber) return;
      this.forget(subscriber, `subscriber ${subscriber.functionId} unsubscribed from topic ${subscriber.topic}`).catch((err: unknown) => {
        this.deps.log.error('forgetting a durable subscriber failed', { topic: subscriber.topic, error: (err as Error).message });
      });
    }, UNSUBSCRIBE_GRACE_MS);
    subscriber.forgetTimer.unref();
  }

  stop(): void {
    for (const subscriber of this.byLane.values()) if (subscriber.forgetTimer) clearTimeout(subscriber.forgetTimer);
  }

  /** Subscribers that receive a publish to `topic`: bound ones and dormant ones within their TTL. */
  ofTopic(topic: string): Subscriber[] {
    return [...this.byLane.values()].filter((s) => s.topic === topic);
  }

  all(): Subscriber[] {
    return [...this.byLane.values()];
  }

  /** Dormant subscribers past their TTL are forgotten; their waiting messages go to the dead-letter queue. */
  async expire(now: number): Promise<void> {
    for (const subscriber of [...this.byLane.values()]) {
      if (subscriber.dormantSince === null || now - subscriber.dormantSince < this.deps.ttlMs) continue;
      await this.forget(
        subscriber,
        `subscriber ${subscriber.functionId} of topic ${subscriber.topic} did not come back within ${this.deps.ttlMs} ms`,
      );
    }
  }

  private ensure(topic: string, functionId: string, settings: LaneSettings, dormantSince: number | null): Subscriber {
    const key = topicLaneKey(topic, functionId);
    let subscriber = this.byLane.get(key);
    if (!subscriber) {
      const lane = this.deps.dispatcher.lane(key, topic, 'topic', settings, false);
      subscriber = { topic, functionId, lane, bindings: new Set(), dormantSince, forgetTimer: null };
      this.byLane.set(key, subscriber);
    }
    return subscriber;
  }

  private async forget(subscriber: Subscriber, reason: string): Promise<void> {
    this.byLane.delete(subscriber.lane.key);
    await this.deps.store.deleteSubscriber(subscriber.topic, subscriber.functionId);
    // nothing is lost silently: what it never received stays visible (and redrivable) in the DLQ
    const moved = await this.deps.store.deadLetterLane(subscriber.lane.key, reason, Date.now());
    if (moved > 0) this.deps.log.warn(`${moved} queued message(s) moved to the dead-letter queue`, { topic: subscriber.topic, reason });
  }
}
