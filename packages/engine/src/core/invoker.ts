import { EngError, EngineFunction, type ErrorBody, ErrorCode, type TriggerAction } from '@eng/protocol';
import type { Logger } from '../log.ts';
import { type FunctionRegistry, functionKind, type InProcessHandler, type InvocationInfo } from './functions.ts';
import { newUuid } from './ids.ts';
import { idTooLong } from './json-limits.ts';
import type { WorkerRegistry } from './workers.ts';

/** The executor's own result frame, relayed untouched when the caller used the same invocation id. */
export interface RawResultFrame {
  /** The frame's bytes as received (a text frame's UTF-8). */
  frame: Buffer;
  invocationId: string;
}

/**
 * A handler's result given as JSON text (the state module stores values as JSON): a bus caller
 * gets the text in its result frame as it is, any other caller gets it parsed. Saves a parse and
 * a serialisation per call.
 */
export class JsonText {
  constructor(readonly json: string) {}
}

/**
 * A handler's answer that is another call: the invoker dispatches it and the handler's caller gets
 * that call's outcome as its own (a result, or the error as the callee gave it), with no promise
 * per call and no result object made in between. `engine::functions::invoke` answers with one.
 */
export class Forward {
  constructor(
    readonly functionId: string,
    readonly payload: unknown,
    readonly options: InvokeOptions,
  ) {}
}

export type InvokeOutcome =
  | {
      ok: true;
      result: unknown;
      /** Set instead of `result` for targets that take JSON text (`Settle.takesJson`). */
      resultJson?: string;
      traceparent?: string;
      baggage?: string;
      rawFrame?: RawResultFrame;
    }
  | { ok: false; error: ErrorBody; rawFrame?: RawResultFrame };

export interface InvokeOptions {
  invocationId?: string;
  /** Set for calls that came over the bus; injected into object payloads as `_caller_worker_id` (§2.3.9). */
  callerWorkerId?: string;
  /**
   * The worker an indirect call acts for (a queued message's or a publish's sender), kept beside
   * the data: an in-process handler is told it (`info.callerWorkerId`, and `_caller_worker_id` on
   * its payload, as for a direct call), a worker's function gets the data as it was sent (iii
   * delivers queue messages and publishes unchanged). The call does not end when that worker leaves.
   * Whenever the engine names no caller to the executor, a `_caller_worker_id` in the payload is
   * removed: no payload chooses a worker.
   */
  originWorkerId?: string;
  traceparent?: string;
  baggage?: string;
  metadata?: unknown;
  action?: TriggerAction | null;
  /** Engine-side deadline for internal callers (HTTP module, CLI). The bus itself has none (§2.4). */
  timeoutMs?: number;
  /**
   * `data` belongs to this call alone (parsed from the caller's frame): `_caller_worker_id` is set
   * on it in place instead of on a copy.
   */
  payloadOwned?: boolean;
  /**
   * What the engine's span for this call should say beyond the defaults (queue deliveries: kind
   * `consumer` and the message's attributes; trigger firings: the trigger's id and type; the
   * enqueue action: its own name). A call with this always gets an engine span (unless its
   * incoming context is unsampled).
   */
  span?: CallSpanHints;
}

export interface CallSpanHints {
  /** Span name instead of `call <function_id>` (the enqueue action's `enqueue_action`). */
  name?: string;
  kind?: 'server' | 'consumer' | 'producer' | 'internal';
  /** Laid over the call span's default attributes (these win). */
  attributes: Record<string, string | number | boolean>;
  /**
   * Called once the observers have seen the call, before it runs, with the context it runs in
   * (its engine span's when it got one): the enqueue action puts it on the message so that the
   * deliveries hang under `enqueue_action`.
   */
  onContext?(traceparent: string | undefined, payload: unknown): void;
}

/** One dispatched call, as observers see it. `traceparent` may be rewritten by `beforeDispatch`. */
export interface CallRecord {
  invocationId: string;
  functionId: string;
  callerWorkerId?: string;
  executorWorkerId: string | null;
  traceparent?: string;
  baggage?: string;
  startedAtNs: bigint;
  startedAtMs: number;
  span?: CallSpanHints;
  /** Set by the observer that opened an engine span for the call (it ends it afterwards). */
  openSpan?: { end(options?: { status?: 'ok'; error?: ErrorBody }): void };
}

export interface InvocationObserver {
  beforeDispatch?(call: CallRecord): void;
  afterDispatch?(call: CallRecord, outcome: InvokeOutcome, durationNs: bigint): void;
}

/** Where one call's outcome goes: a promise (engine-side callers) or straight back onto the bus. */
export interface Settle {
  settle(outcome: InvokeOutcome): void;
  /** True when the target writes the result out as JSON anyway: a JsonText result reaches it unparsed. */
  readonly takesJson?: boolean;
}

class PromiseSettle implements Settle {
  constructor(private readonly resolve: (outcome: InvokeOutcome) => void) {}
  settle(outcome: InvokeOutcome): void {
    this.resolve(outcome);
  }
}

interface Pending {
  call: CallRecord;
  /** Where the outcome goes; a caller that disconnected (§2.8) is told `invocation_stopped` at once. */
  target: Settle;
  /** Engine-side deadline (ms since epoch) and the timeout it came from; 0 for none. */
  deadline: number;
  timeoutMs: number;
}

/**
 * Deadlines of pending calls, soonest first, under one timer (a timer per call cost a Timeout
 * object and an async resource each). Entries are invocation ids; a call that completed leaves its
 * entry behind, dropped when it comes due or when the queue is compacted.
 */
class DeadlineQueue {
  private at: number[] = [];
  private ids: string[] = [];
  private start = 0;
  private timer?: NodeJS.Timeout;
  private armedFor = Number.POSITIVE_INFINITY;

  constructor(
    /** Called with the id of each entry that came due; it checks whether the call is still pending. */
    private readonly due: (invocationId: string, at: number) => void,
    /** How many entries can still matter (the pending calls): the queue is compacted past twice that. */
    private readonly live: () => number,
    private readonly stillPending: (invocationId: string, at: number) => boolean,
  ) {}

  add(invocationId: string, at: number): void {
    const n = this.at.length;
    if (n === this.start || (this.at[n - 1] as number) <= at) {
      this.at.push(at);
      this.ids.push(invocationId);
    } else {
      let lo = this.start;
      let hi = n;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if ((this.at[mid] as number) <= at) lo = mid + 1;
        else hi = mid;
      }
      this.at.splice(lo, 0, at);
      this.ids.splice(lo, 0, invocationId);
    }
    if (n - this.start > 1024 && n - this.start > 2 * this.live()) this.compact();
    if (at < this.armedFor) this.arm(at);
  }

  private arm(at: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.armedFor = at;
    this.timer = setTimeout(() => this.fire(), Math.max(0, at - Date.now()));
  }

  private fire(): void {
    this.timer = undefined;
    this.armedFor = Number.POSITIVE_INFINITY;
    const now = Date.now();
    while (this.start < this.at.length && (this.at[this.start] as number) <= now) {
      const id = this.ids[this.start] as string;
      const at = this.at[this.start] as number;
      this.start++;
      this.due(id, at);
    }
    if (this.start > 1024 && this.start * 2 > this.at.length) {
      this.at = this.at.slice(this.start);
      this.ids = this.ids.slice(this.start);
      this.start = 0;
    }
    if (this.start < this.at.length) this.arm(this.at[this.start] as number);
  }

  /** Drop the entries of calls that already ended. */
  private compact(): void {
    const at: number[] = [];
    const ids: string[] = [];
    for (let i = this.start; i < this.at.length; i++) {
      if (!this.stillPending(this.ids[i] as string, this.at[i] as number)) continue;
      at.push(this.at[i] as number);
      ids.push(this.ids[i] as string);
    }
    this.at = at;
    this.ids = ids;
    this.start = 0;
  }

  clear(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.armedFor = Number.POSITIVE_INFINITY;
    this.at = [];
    this.ids = [];
    this.start = 0;
  }
}

interface Observation {
  call: CallRecord;
  outcome: InvokeOutcome;
  durationNs: bigint;
}

const RESOLVED = Promise.resolve();

const STOPPED: ErrorBody = { code: ErrorCode.InvocationStopped, message: 'Invocation stopped' };
const CALLER_GONE: ErrorBody = { code: ErrorCode.InvocationStopped, message: 'Invocation abandoned: the caller disconnected' };

/** A forwarded call (`engine::functions::invoke`) in flight: its caller, and the call it became. */
interface ForwardLink {
  callerWorkerId: string | undefined;
  innerInvocationId: string;
}

/** Told when a call a worker was executing is cancelled (the bus sends the worker a `cancelinvocation`). */
export type CancelNotice = (executorWorkerId: string, invocationId: string, functionId: string, reason: string | undefined) => void;

/** Routes invocations to in-process handlers or to the owning bus worker, and matches results. */
export class Invoker {
  private readonly pending = new Map<string, Pending>();
  /** Forwarding calls by their own invocation id, so cancelling one cancels the call it became. */
  private readonly forwards = new Map<string, ForwardLink>();
  /** In-process calls that can be cancelled (a call routed to another engine), by invocation id. */
  private readonly cancellable = new Map<string, { callerWorkerId: string | undefined; cancel: (reason: string | undefined) => void }>();
  /** Set by the bus: how an executing worker hears that its call was cancelled. */
  onCancel?: CancelNotice;
  readonly observers: InvocationObserver[] = [];
  /**
   * Observers (engine spans, metrics) run after the caller has its outcome: the duration is taken
   * at once, the bookkeeping waits for the microtask queue, so it is off the call's latency path
   * yet done before any later frame is read.
   */
  private observations: Observation[] = [];
  private readonly flushObservations = () => this.runObservers();
  private readonly deadlines = new DeadlineQueue(
    (id, at) => {
      const pending = this.pending.get(id);
      if (pending && pending.deadline === at) this.complete(id, timeoutOutcome(pending.timeoutMs));
    },
    () => this.pending.size,
    (id, at) => this.pending.get(id)?.deadline === at,
  );

  /**
   * Calls that could not be sent to a worker already leaving, after stopAll: while the engine stops
   * its workers go one by one and each departure fires worker triggers at the others, so these
   * are expected then — counted for one line at the end, not a warning each (issue 25 item 14).
   */
  notSentWhileStopping = 0;
  private stopping = false;

  constructor(
    private readonly functions: FunctionRegistry,
    private readonly workers: WorkerRegistry,
    private readonly log: Logger,
  ) {}

  get inFlight(): number {
    return this.pending.size;
  }

  /** Invoke and resolve with an outcome; never rejects. */
  invoke(functionId: string, data: unknown, options: InvokeOptions = {}): Promise<InvokeOutcome> {
    return new Promise<InvokeOutcome>((resolve) => this.dispatch(functionId, data, options, new PromiseSettle(resolve)));
  }

  /**
   * Invoke and hand the outcome to `target` (synchronously when a result frame completes the call):
   * the bus path, where no promise or closure is made per call.
   */
  dispatch(functionId: string, data: unknown, options: InvokeOptions, target: Settle): void {
    const action = options.action ?? null;
    if (action?.type === 'enqueue') {
      this.enqueue(functionId, data, action.queue, options, target);
      return;
    }

    // a function served by another engine of the cluster only when no local one has the id (eng-cluster)
    const entry = this.functions.get(functionId) ?? this.functions.cluster?.get(functionId);
    if (!entry) {
      // no registered id is longer than MAX_ID_BYTES: say so rather than echo a megabyte back
      const error = idTooLong('the function id', functionId) ?? {
        code: ErrorCode.FunctionNotFound,
        message: `Function ${functionId} not found`,
      };
      target.settle({ ok: false, error });
      return;
    }

    let invocationId = options.invocationId ?? newUuid();
    if (this.pending.has(invocationId)) invocationId = newUuid();

    // spec §2.3.9: direct calls name their caller in the data; deliveries on a sender's behalf only
    // to built-ins, which run in this process (a worker's subscriber gets the data as published)
    const stampedCaller = options.callerWorkerId ?? (entry.handler ? options.originWorkerId : undefined);
    const payload = stampCaller(data === undefined ? null : data, stampedCaller, options.payloadOwned);

    const call: CallRecord = {
      invocationId,
      functionId,
      callerWorkerId: options.callerWorkerId,
      executorWorkerId: entry.ownerWorkerId,
      traceparent: options.traceparent,
      baggage: options.baggage,
      startedAtNs: process.hrtime.bigint(),
      startedAtMs: Date.now(),
      span: options.span,
      openSpan: undefined,
    };
    for (const observer of this.observers) observer.beforeDispatch?.(call);
    call.span?.onContext?.(call.traceparent, payload);

    if (entry.handler) {
      this.runHandler(entry.handler, payload, call, options, target);
      return;
    }

    if (entry.invocation) {
      this.finish(call, target, {
        ok: false,
        error: { code: ErrorCode.FunctionNotInvokable, message: `Function ${functionId} is an HTTP-invoked function` },
      });
      return;
    }

    const executor = entry.ownerWorkerId ? this.workers.get(entry.ownerWorkerId) : undefined;
    if (!executor) {
      this.finish(call, target, { ok: false, error: { code: ErrorCode.FunctionNotFound, message: `Function ${functionId} not found` } });
      return;
    }
    const frame: Record<string, unknown> = {
      type: 'invokefunction',
      invocation_id: invocationId,
      function_id: functionId,
      data: payload,
    };
    if (call.traceparent) frame.traceparent = call.traceparent;
    if (call.baggage) frame.baggage = call.baggage;
    if (options.metadata !== undefined && options.metadata !== null) frame.metadata = options.metadata;
    // the call counts (pending, the executor busy) only once its frame is out: a frame that cannot
    // be written must answer the caller now, not leave a call nobody will ever complete
    let sent = false;
    let failure: string | undefined;
    try {
      sent = executor.peer.send(frame);
    } catch (err) {
      failure = (err as Error).message ?? String(err);
    }
    if (!sent) {
      const error: ErrorBody =
        failure === undefined
          ? { code: ErrorCode.ChannelSendFailed, message: `Worker owning ${functionId} is not reachable` }
          : { code: ErrorCode.SerializationError, message: `the call to ${functionId} could not be sent to its worker: ${failure}` };
      if (this.stopping && failure === undefined) this.notSentWhileStopping++;
      else this.log.warn(`call to ${functionId} not sent to worker ${executor.peer.id}: ${error.message}`);
      this.finish(call, target, { ok: false, error });
      return;
    }
    const timeoutMs = options.timeoutMs ?? 0;
    const pending: Pending = { call, target, deadline: timeoutMs ? Date.now() + timeoutMs : 0, timeoutMs };
    this.pending.set(invocationId, pending);
    executor.activeInvocations++;
    if (timeoutMs) this.deadlines.add(invocationId, pending.deadline);
  }

  /**
   * One in-process call. No closure is made per call here: under tsx (esbuild keepNames) every
   * named function expression costs an Object.defineProperty each time it is created.
   */
  private async runInProcess(
    handler: InProcessHandler,
    payload: unknown,
    call: CallRecord,
    options: InvokeOptions,
    target: Settle,
  ): Promise<InvokeOutcome> {
    try {
      const result = await handler(payload, handlerInfo(call, options));
      if (result instanceof Forward) return forwardedOutcome(await this.invoke(result.functionId, result.payload, result.options));
      return resultOutcome(result, target);
    } catch (err) {
      return { ok: false as const, error: toErrorBody(err) };
    }
  }

  private runHandler(handler: InProcessHandler, payload: unknown, call: CallRecord, options: InvokeOptions, target: Settle): void {
    if (options.timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<InvokeOutcome>((r) => {
        timer = setTimeout(() => r(timeoutOutcome(options.timeoutMs as number)), options.timeoutMs);
      });
      Promise.race([this.runInProcess(handler, payload, call, options, target), timeout]).then((o) => {
        clearTimeout(timer);
        this.finish(call, target, o);
      });
      return;
    }
    // a handler that answers synchronously (state::get on a store read in place) is settled at
    // once: no promise, async frame or microtask per call; a promise is awaited as before
    let result: unknown;
    try {
      result = handler(payload, handlerInfo(call, options));
    } catch (err) {
      this.finish(call, target, { ok: false, error: toErrorBody(err) });
      return;
    }
    if (result !== null && typeof result === 'object' && typeof (result as PromiseLike<unknown>).then === 'function') {
      (result as PromiseLike<unknown>).then(
        (value) => this.finishWith(call, target, value),
        (err) => this.finish(call, target, { ok: false, error: toErrorBody(err) }),
      );
      return;
    }
    this.finishWith(call, target, result);
  }

  /** Finish with a handler's result (a result that cannot be read as JSON text fails the call). */
  private finishWith(call: CallRecord, target: Settle | null, result: unknown): void {
    if (result instanceof Forward) {
      // the inner call's id is known before dispatch so that cancelling the outer call finds it
      const innerId = result.options.invocationId ?? newUuid();
      this.forwards.set(call.invocationId, { callerWorkerId: call.callerWorkerId, innerInvocationId: innerId });
      this.dispatch(result.functionId, result.payload, { ...result.options, invocationId: innerId }, new ForwardSettle(this, call, target));
      return;
    }
    let outcome: InvokeOutcome;
    try {
      outcome = resultOutcome(result, target);
    } catch (err) {
      outcome = { ok: false, error: toErrorBody(err) };
    }
    this.finish(call, target, outcome);
  }

  /** Hand the outcome over, then let the observers see it (after the caller). ForwardSettle ends forwarding calls here. */
  finish(call: CallRecord, target: Settle | null, outcome: InvokeOutcome): void {
    const durationNs = process.hrtime.bigint() - call.startedAtNs;
    if (target) target.settle(outcome);
    if (this.observers.length === 0) return;
    // a resolved promise's reaction is lighter than queueMicrotask, which makes an AsyncResource per call
    if (this.observations.length === 0) RESOLVED.then(this.flushObservations);
    this.observations.push({ call, outcome, durationNs });
  }

  private runObservers(): void {
    const batch = this.observations;
    this.observations = [];
    for (const { call, outcome, durationNs } of batch) {
      for (const observer of this.observers) {
        try {
          observer.afterDispatch?.(call, outcome, durationNs);
        } catch (err) {
          this.log.error(`invocation observer failed after ${call.functionId}`, { error: (err as Error).message });
        }
      }
    }
  }

  /**
   * A call ended. `fromWorkerId` is the connection a result frame came from: unlike iii (§2.3.10,
   * any connection may answer), only the worker the call was sent to may, or any worker that can
   * read a pending span's `eng.invocation.id` could forge another's result.
   */
  complete(invocationId: string, outcome: InvokeOutcome, fromWorkerId?: string): boolean {
    const pending = this.pending.get(invocationId);
    if (!pending) {
      this.log.debug('result for unknown invocation dropped', { invocation_id: invocationId });
      return false;
    }
    if (fromWorkerId !== undefined && pending.call.executorWorkerId !== fromWorkerId) {
      this.log.warn(`result for ${pending.call.functionId} from worker ${fromWorkerId} dropped: the call was sent to another worker`, {
        invocation_id: invocationId,
      });
      return false;
    }
    this.pending.delete(invocationId);
    // nothing left to time out: no timer may keep the process alive for a call that is over
    if (this.pending.size === 0) this.deadlines.clear();
    const executor = pending.call.executorWorkerId ? this.workers.get(pending.call.executorWorkerId) : undefined;
    if (executor && executor.activeInvocations > 0) executor.activeInvocations--;
    this.finish(pending.call, pending.target, outcome);
    return true;
  }

  /**
   * eng's `cancelinvocation` (not iii's: messages.ts): the caller `byWorkerId` gives up a call it
   * made. The call ends now with `invocation_cancelled` (its engine span says so) and its executor
   * is told, under the invocation id it was sent; a late result is dropped as unknown. A forwarding
   * call cancels the call it became. Only the worker that made a call may cancel it: an id read from
   * a trace cancels nothing. False when there was nothing of the caller's to cancel.
   */
  cancel(invocationId: string, byWorkerId: string | undefined, reason?: string): boolean {
    const link = this.forwards.get(invocationId);
    if (link) {
      if (link.callerWorkerId !== byWorkerId) return false;
      return this.cancel(link.innerInvocationId, byWorkerId, reason);
    }
    const inProcess = this.cancellable.get(invocationId);
    if (inProcess) {
      if (inProcess.callerWorkerId !== byWorkerId) return false;
      this.cancellable.delete(invocationId);
      inProcess.cancel(reason);
      return true;
    }
    const pending = this.pending.get(invocationId);
    if (!pending || pending.call.callerWorkerId !== byWorkerId) return false;
    const { executorWorkerId, functionId } = pending.call;
    const message = reason ? `Invocation cancelled by its caller: ${reason}` : 'Invocation cancelled by its caller';
    this.complete(invocationId, { ok: false, error: { code: ErrorCode.InvocationCancelled, message } });
    if (executorWorkerId) {
      try {
        this.onCancel?.(executorWorkerId, invocationId, functionId, reason);
      } catch (err) {
        this.log.warn(`cancel of ${functionId} not sent to worker ${executorWorkerId}: ${(err as Error).message}`);
      }
    }
    return true;
  }

  /**
   * An in-process handler whose work can be stopped (a call routed to another engine) says how:
   * a cancel from the call's caller runs `cancel`, which must end the handler's promise with
   * `invocation_cancelled`. Returns the function that forgets it once the call is over.
   */
  onCancelled(info: InvocationInfo, cancel: (reason: string | undefined) => void): () => void {
    const id = info.invocationId;
    const entry = { callerWorkerId: info.callerWorkerId, cancel };
    this.cancellable.set(id, entry);
    return () => {
      if (this.cancellable.get(id) === entry) this.cancellable.delete(id);
    };
  }

  /** A forwarding call ended: nothing left to cancel under its id. */
  forwardEnded(call: CallRecord): void {
    this.forwards.delete(call.invocationId);
  }

  /**
   * spec §2.8: a worker went away. Calls it was executing end with `invocation_stopped`;
   * calls it had made are abandoned (their results are discarded).
   */
  workerGone(workerId: string): void {
    for (const [id, pending] of this.pending) {
      if (pending.call.executorWorkerId === workerId) {
        this.complete(id, { ok: false, error: STOPPED });
      } else if (pending.call.callerWorkerId === workerId) {
        // abandoned: a worker that never answers must not keep the call (and its executor's busy
        // count) forever, and a late result is dropped as unknown. The target is told: a closed
        // connection drops the answer, a call that forwarded here ends with it, an in-process
        // caller stops waiting
        this.complete(id, { ok: false, error: CALLER_GONE });
      }
    }
  }

  /** Ends every pending call (engine shutdown). */
  stopAll(): void {
    this.stopping = true;
    for (const id of [...this.pending.keys()]) this.complete(id, { ok: false, error: STOPPED });
  }

  /**
   * spec §2.5 step 6 (0.22.1): the enqueue action goes through the queue provider's function. It is
   * dispatched like any call (its `enqueue_action` span, the observers), with no promise or async
   * frame of its own: the provider's outcome becomes the action's in `EnqueueSettle`.
   */
  private enqueue(functionId: string, data: unknown, queue: string, options: InvokeOptions, target: Settle): void {
    if (!this.functions.has(EngineFunction.QueueEnqueue)) {
      target.settle({
        ok: false,
        error: {
          code: ErrorCode.EnqueueError,
          message: `No queue provider is installed: add the eng-queue worker to config.yaml to enqueue to '${queue}'`,
        },
      });
      return;
    }
    const messageReceiptId = newUuid();
    const request = {
      queue,
      function_id: functionId,
      data: data === undefined ? null : data,
      messageReceiptId,
      traceparent: options.traceparent ?? null,
      baggage: options.baggage ?? null,
    };
    const enqueued = this.functions.get(functionId);
    // spec §8.1 `enqueue_action`: a producer span per enqueue, named for the target function and
    // queue; the message carries ITS context, so every delivery attempt (a `consumer` call span)
    // hangs under it in the same trace. No `eng.message.id` here: that tag marks delivery attempts.
    const attributes: Record<string, string> = {
      'messaging.system': 'eng-queue',
      'messaging.operation.type': 'send',
      'messaging.destination.name': queue,
      'messaging.message.id': messageReceiptId,
      'eng.queue.name': queue,
      'eng.queue.receipt_id': messageReceiptId,
      function_id: functionId,
      'eng.function.kind': enqueued ? functionKind(enqueued) : 'user',
    };
    if (options.callerWorkerId) attributes['eng.caller.worker_id'] = options.callerWorkerId;
    this.dispatch(
      EngineFunction.QueueEnqueue,
      request,
      {
        traceparent: options.traceparent,
        baggage: options.baggage,
        // the provider stores the real sender beside the message's data
        originWorkerId: options.callerWorkerId ?? options.originWorkerId,
        // made here for this call alone: the sender is stamped in place, not on a copy
        payloadOwned: true,
        span: { name: 'enqueue_action', kind: 'producer', attributes, onContext: putTraceparent },
      },
      new EnqueueSettle(target, messageReceiptId),
    );
  }
}

/** The enqueue request (made by `Invoker.enqueue`) carries the context its span gave the call. */
function putTraceparent(traceparent: string | undefined, payload: unknown): void {
  if (payload !== null && typeof payload === 'object') (payload as { traceparent: string | null }).traceparent = traceparent ?? null;
}

/** The provider's outcome as the enqueue action's: the receipt, or an `enqueue_error`. */
class EnqueueSettle implements Settle {
  constructor(
    private readonly target: Settle,
    private readonly messageReceiptId: string,
  ) {}
  settle(outcome: InvokeOutcome): void {
    this.target.settle(
      outcome.ok
        ? { ok: true, result: { messageReceiptId: this.messageReceiptId } }
        : { ok: false, error: { code: ErrorCode.EnqueueError, message: outcome.error.message } },
    );
  }
}

/**
 * spec §2.3.9: an object payload carries `_caller_worker_id` = the worker that made the call,
 * overwriting whatever the sender put there so no worker can speak for another. Without a caller
 * (HTTP, cron, triggers, engine internals, a queued message or publish reaching a worker) the key
 * is removed, so data can never point `engine::workers::register` and friends at a worker, nor tell
 * a worker's function a caller that did not call. Other payloads pass unchanged.
 */
export function stampCaller(data: unknown, callerWorkerId: string | undefined, owned = false): unknown {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return data;
  if (callerWorkerId) {
    if (!owned) return { ...(data as Record<string, unknown>), _caller_worker_id: callerWorkerId };
    (data as Record<string, unknown>)._caller_worker_id = callerWorkerId;
    return data;
  }
  if (!Object.hasOwn(data, '_caller_worker_id')) return data;
  const { _caller_worker_id: _spoofed, ...rest } = data as Record<string, unknown>;
  return rest;
}

/** What an in-process handler is told about its call. */
function handlerInfo(call: CallRecord, options: InvokeOptions) {
  return {
    invocationId: call.invocationId,
    functionId: call.functionId,
    callerWorkerId: options.callerWorkerId ?? options.originWorkerId,
    traceparent: call.traceparent,
    baggage: call.baggage,
    metadata: options.metadata,
    inputOwned: options.payloadOwned === true,
    timeoutMs: options.timeoutMs,
  };
}

/**
 * A forwarded call's outcome as the forwarding call's own: its result (or JSON text) or its error,
 * without the callee's frame or context, as if the handler had returned the result or thrown it.
 */
function forwardedOutcome(outcome: InvokeOutcome): InvokeOutcome {
  if (!outcome.ok) return { ok: false, error: outcome.error };
  return outcome.resultJson !== undefined
    ? { ok: true, result: undefined, resultJson: outcome.resultJson }
    : { ok: true, result: outcome.result };
}

/** Where a forwarded call's outcome goes: to the forwarding call's own target, ending that call. */
class ForwardSettle implements Settle {
  readonly takesJson: boolean;
  constructor(
    private readonly invoker: Invoker,
    private readonly call: CallRecord,
    private readonly target: Settle | null,
  ) {
    this.takesJson = target?.takesJson === true;
  }
  settle(outcome: InvokeOutcome): void {
    this.invoker.forwardEnded(this.call);
    this.invoker.finish(this.call, this.target, forwardedOutcome(outcome));
  }
}

/** A handler's result as an outcome: JSON text reaches a target that writes JSON as it is. */
function resultOutcome(result: unknown, target: Settle | null): InvokeOutcome {
  if (result instanceof JsonText) {
    return target?.takesJson ? { ok: true, result: undefined, resultJson: result.json } : { ok: true, result: JSON.parse(result.json) };
  }
  return { ok: true, result };
}

export function toErrorBody(err: unknown): ErrorBody {
  if (err instanceof EngError) return err.toBody();
  if (err instanceof Error) return { code: ErrorCode.InvocationFailed, message: err.message, stacktrace: err.stack };
  return { code: ErrorCode.InvocationFailed, message: String(err) };
}

function timeoutOutcome(ms: number): InvokeOutcome {
  return { ok: false, error: { code: ErrorCode.Timeout, message: `invocation timed out after ${ms}ms` } };
}
