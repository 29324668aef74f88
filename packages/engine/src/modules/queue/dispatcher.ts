import { type ErrorBody, ErrorCode } from '@eng/protocol';
import type { InvokeOptions, InvokeOutcome } from '../../core/invoker.ts';
import type { Logger } from '../../log.ts';
import { backoffDelay, type LaneSettings } from './config.ts';
import type { MessageKind, NewMessage, QueueStore, StoredMessage } from './store.ts';

export interface DispatcherDeps {
  store: QueueStore;
  /** Synchronous invocation, so the outcome decides ack, retry or dead letter (no trigger metadata, §2.5 step 7). */
  invoke(functionId: string, data: unknown, options?: InvokeOptions): Promise<InvokeOutcome>;
  hasFunction(functionId: string): boolean;
  log: Logger;
}

/** One unit of ordering and concurrency: a named queue, or one subscriber of a durable topic. */
export interface Lane {
  readonly key: string;
  readonly name: string;
  readonly kind: MessageKind;
  settings: LaneSettings;
  /** Topic lanes deliver only while their subscriber is bound; queue lanes always do. */
  active: boolean;
  readonly inflight: Map<string, StoredMessage>;
  /** Delivered (or failed), its outcome being written: not delivered again, but not holding a slot. */
  readonly settling: Set<string>;
  /**
   * The lane may hold messages ready to deliver: set by every wake-up, cleared when a scan of a
   * standard lane finds fewer than it had slots for. While set, every finished delivery scans again.
   */
  wanted: boolean;
  scheduled: boolean;
  timer: NodeJS.Timeout | null;
  timerAt: number;
}

/** Pause before touching a lane again after its store write failed, so a broken disk does not spin. */
const STORE_ERROR_PAUSE_MS = 1000;

/**
 * Delivers stored messages. Event driven: a lane is scanned when a message arrives, a delivery
 * ends, a function appears, or a retry becomes due — never by polling lanes that have nothing to do.
 */
export class Dispatcher {
  private readonly lanes = new Map<string, Lane>();
  private stopped = false;

  constructor(private readonly deps: DispatcherDeps) {}

  lane(key: string, name: string, kind: MessageKind, settings: LaneSettings, active = true): Lane {
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = {
        key,
        name,
        kind,
        settings,
        active,
        inflight: new Map(),
        settling: new Set(),
        wanted: true,
        scheduled: false,
        timer: null,
        timerAt: 0,
      };
      this.lanes.set(key, lane);
    }
    return lane;
  }

  getLane(key: string): Lane | undefined {
    return this.lanes.get(key);
  }

  allLanes(): IterableIterator<Lane> {
    return this.lanes.values();
  }

  /**
   * Store messages durably, then wake their lanes. Resolves only after the write is durable. The
   * scan runs in a microtask: the wake-ups of one commit still coalesce, and a new message is on its
   * way to its handler before the enqueue's receipt goes out rather than a loop turn later.
   */
  async accept(lanes: Lane[], messages: NewMessage[]): Promise<void> {
    await this.deps.store.insert(messages);
    for (const lane of lanes) this.schedule(lane, true);
  }

  setActive(lane: Lane, active: boolean): void {
    lane.active = active;
    if (active) this.schedule(lane);
  }

  inFlight(name: string): number {
    let n = 0;
    for (const lane of this.lanes.values()) if (lane.name === name) n += lane.inflight.size;
    return n;
  }

  wakeAll(): void {
    for (const lane of this.lanes.values()) this.schedule(lane);
  }

  /**
   * Coalesce wake-ups into a single scan: those of one loop turn (the deliveries that finished in
   * it), or with `soon` those of the current microtask queue (see accept).
   */
  schedule(lane: Lane, soon = false): void {
    lane.wanted = true;
    if (lane.scheduled || this.stopped) return;
    lane.scheduled = true;
    if (soon) queueMicrotask(() => this.pump(lane));
    else setImmediate(() => this.pump(lane));
  }

  stop(): void {
    this.stopped = true;
    for (const lane of this.lanes.values()) {
      if (lane.timer) clearTimeout(lane.timer);
      lane.timer = null;
    }
  }

  private pump(lane: Lane): void {
    lane.scheduled = false;
    if (this.stopped || !lane.active) return;
    const free = lane.settings.concurrency - lane.inflight.size;
    if (free <= 0) return;
    const now = Date.now();
    const fifo = lane.settings.fifo;
    // spec §4.7 FIFO: only the oldest pending message of a group may run, and one at a time
    const blockedGroups = new Set<string>();
    const picked: StoredMessage[] = [];
    let nextDue = Number.POSITIVE_INFINITY;
    const busy = (id: string) => lane.inflight.has(id) || lane.settling.has(id);
    // a FIFO lane reads the messages in flight too: they hold their groups
    for (const message of this.deps.store.scanLane(lane.key, fifo ? undefined : busy)) {
      const group = fifo ? (message.group ?? '') : null;
      if (group !== null) {
        if (blockedGroups.has(group)) continue;
        blockedGroups.add(group);
      }
      if (busy(message.id)) continue;
      // a message waits, without spending retries, until its function is registered (e.g. after a restart)
      if (!this.deps.hasFunction(message.functionId)) continue;
      if (message.readyAt > now) {
        nextDue = Math.min(nextDue, message.readyAt);
        continue;
      }
      picked.push(message);
      if (picked.length >= free) break;
    }
    for (const message of picked) this.deliver(lane, message);
    if (picked.length < free) {
      if (!fifo) lane.wanted = false;
      if (nextDue !== Number.POSITIVE_INFINITY) this.arm(lane, nextDue);
    }
  }

  private arm(lane: Lane, at: number): void {
    if (lane.timer && lane.timerAt <= at) return;
    if (lane.timer) clearTimeout(lane.timer);
    lane.timerAt = at;
    const delay = Math.max(at - Date.now(), lane.settings.pollIntervalMs);
    lane.timer = setTimeout(() => {
      lane.timer = null;
      this.schedule(lane);
    }, delay);
    lane.timer.unref();
  }

  private deliver(lane: Lane, message: StoredMessage): void {
    lane.inflight.set(message.id, message);
    deliverOnce(this.deps, lane.settings, message)
      .then((verdict) => {
        lane.inflight.delete(message.id);
        if (this.stopped) return;
        // the handler is done: its slot is free while the outcome is written
        lane.settling.add(message.id);
        const written = this.record(lane, message, verdict);
        // a standard lane with more waiting fills the slot now; a FIFO lane once the outcome is
        // written (until then the message holds its group)
        if (lane.wanted && !lane.settings.fifo) this.schedule(lane);
        return written.then(() => {
          lane.settling.delete(message.id);
          if (lane.settings.fifo) this.schedule(lane);
        });
      })
      .catch((err: unknown) => {
        lane.inflight.delete(message.id);
        lane.settling.delete(message.id);
        if (this.stopped) return;
        this.deps.log.error('queue store write failed; the message stays queued', {
          queue: lane.name,
          message_id: message.id,
          error: (err as Error).message,
        });
        this.arm(lane, Date.now() + STORE_ERROR_PAUSE_MS);
      });
  }

  /** Record one delivery's outcome: ack, retry with backoff, or dead letter. */
  private async record(lane: Lane, message: StoredMessage, verdict: DeliveryVerdict): Promise<void> {
    const { store } = this.deps;
    if (verdict.kind === 'ack') return store.ack(message);
    if (verdict.kind === 'requeue') return;
    const attempts = message.attempts + 1;
    if (attempts >= lane.settings.maxAttempts) {
      this.deps.log.warn('message moved to the dead-letter queue', {
        queue: lane.name,
        message_id: message.id,
        attempts,
        error: verdict.error,
      });
      return store.deadLetter(message, attempts, verdict.error, Date.now());
    }
    const readyAt = Date.now() + backoffDelay(lane.settings.backoffMs, attempts);
    await store.retry(message, attempts, readyAt, verdict.error);
    this.arm(lane, readyAt);
  }
}

/** What one delivery came to: done (or skipped by its condition), not the handler's fault, or failed. */
export type DeliveryVerdict = { kind: 'ack' } | { kind: 'requeue' } | { kind: 'fail'; error: string };

export interface DeliveryDeps {
  invoke(functionId: string, data: unknown, options?: InvokeOptions): Promise<InvokeOutcome>;
  hasFunction(functionId: string): boolean;
}

/**
 * One delivery of a message, shared by every store (the local dispatcher and the brokers of
 * redis-store.ts and rabbitmq-store.ts): the condition call, the consumer span, the handler call.
 */
export async function deliverOnce(deps: DeliveryDeps, settings: LaneSettings, message: StoredMessage): Promise<DeliveryVerdict> {
  const outcome = await runDelivery(deps, settings, message);
  if (outcome === 'skipped' || outcome.ok) return { kind: 'ack' };
  if (notTheHandlersFault(deps, outcome.error, message.functionId)) return { kind: 'requeue' };
  return { kind: 'fail', error: `${outcome.error.code}: ${outcome.error.message}` };
}

async function runDelivery(deps: DeliveryDeps, settings: LaneSettings, message: StoredMessage): Promise<InvokeOutcome | 'skipped'> {
  const data = JSON.parse(message.dataJson) as unknown;
  const options: InvokeOptions = {
    traceparent: message.traceparent ?? undefined,
    baggage: message.baggage ?? undefined,
    timeoutMs: settings.timeoutMs,
    // made on behalf of the worker that sent it, which the engine stored beside the data
    originWorkerId: message.sender ?? undefined,
  };
  const condition = settings.conditionFunctionId;
  if (condition) {
    // spec §5.1: only a literal `false` skips; a failed condition call fails this delivery
    const verdict = await deps.invoke(condition, data, options);
    if (!verdict.ok) {
      return { ok: false, error: { code: verdict.error.code, message: `condition ${condition} failed: ${verdict.error.message}` } };
    }
    if (verdict.result === false) return 'skipped';
  }
  // spec §2.6 queue spans: each delivery attempt is a consumer span tagged with the message, so
  // the trace explorer's "group by message" gathers a message's attempts
  options.span = {
    kind: 'consumer',
    attributes: {
      'messaging.system': 'eng-queue',
      'messaging.operation.type': 'process',
      'messaging.destination.name': message.name,
      'messaging.message.id': message.id,
      'eng.message.id': message.id,
      'eng.queue.attempt': message.attempts + 1,
    },
  };
  return deps.invoke(message.functionId, data, options);
}

/**
 * The function vanished (its worker disconnected before or during the call) or the engine is
 * stopping (the call was stopped while the function is still registered): the message stays
 * queued and is delivered again later without spending a retry.
 */
function notTheHandlersFault(deps: DeliveryDeps, error: ErrorBody, functionId: string): boolean {
  if (error.code === ErrorCode.FunctionNotFound) return !deps.hasFunction(functionId);
  if (error.code === ErrorCode.InvocationStopped) return deps.hasFunction(functionId);
  return false;
}
