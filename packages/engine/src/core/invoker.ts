import { randomUUID } from 'node:crypto';
import { EngError, EngineFunction, type ErrorBody, ErrorCode, type TriggerAction } from '@eng/protocol';
import type { Logger } from '../log.ts';
import type { FunctionRegistry } from './functions.ts';
import type { WorkerRegistry } from './workers.ts';

/** The executor's own result frame, relayed untouched when the caller used the same invocation id. */
export interface RawResultFrame {
  /** The frame's bytes as received (a text frame's UTF-8). */
  frame: Buffer;
  invocationId: string;
}

export type InvokeOutcome =
  | { ok: true; result: unknown; traceparent?: string; baggage?: string; rawFrame?: RawResultFrame }
  | { ok: false; error: ErrorBody; rawFrame?: RawResultFrame };

export interface InvokeOptions {
  invocationId?: string;
  /** Set for calls that came over the bus; injected into object payloads as `_caller_worker_id` (§2.3.9). */
  callerWorkerId?: string;
  traceparent?: string;
  baggage?: string;
  metadata?: unknown;
  action?: TriggerAction | null;
  /** Engine-side deadline for internal callers (HTTP module, CLI). The bus itself has none (§2.4). */
  timeoutMs?: number;
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
}

export interface InvocationObserver {
  beforeDispatch?(call: CallRecord): void;
  afterDispatch?(call: CallRecord, outcome: InvokeOutcome, durationNs: bigint): void;
}

interface Pending {
  call: CallRecord;
  /** Null once the caller disconnected: the result is then discarded (§2.8). */
  resolve: ((outcome: InvokeOutcome) => void) | null;
  /** Tells the observers how the call ended, even once the caller is gone (its span must end). */
  observe: (outcome: InvokeOutcome) => void;
  timer?: NodeJS.Timeout;
}

const STOPPED: ErrorBody = { code: ErrorCode.InvocationStopped, message: 'Invocation stopped' };

/** Routes invocations to in-process handlers or to the owning bus worker, and matches results. */
export class Invoker {
  private readonly pending = new Map<string, Pending>();
  readonly observers: InvocationObserver[] = [];

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
    const action = options.action ?? null;
    if (action?.type === 'enqueue') return this.enqueue(functionId, data, action.queue, options);

    const entry = this.functions.get(functionId);
    if (!entry) {
      return Promise.resolve({
        ok: false,
        error: { code: ErrorCode.FunctionNotFound, message: `Function ${functionId} not found` },
      });
    }

    let invocationId = options.invocationId ?? randomUUID();
    if (this.pending.has(invocationId)) invocationId = randomUUID();

    let payload = data === undefined ? null : data;
    if (options.callerWorkerId && payload !== null && typeof payload === 'object' && !Array.isArray(payload)) {
      // spec §2.3.9: overwrite whatever the client sent so a worker cannot spoof another's id
      payload = { ...(payload as Record<string, unknown>), _caller_worker_id: options.callerWorkerId };
    }

    const call: CallRecord = {
      invocationId,
      functionId,
      callerWorkerId: options.callerWorkerId,
      executorWorkerId: entry.ownerWorkerId,
      traceparent: options.traceparent,
      baggage: options.baggage,
      startedAtNs: process.hrtime.bigint(),
      startedAtMs: Date.now(),
    };
    for (const observer of this.observers) observer.beforeDispatch?.(call);

    const finished = new Promise<InvokeOutcome>((resolve) => {
      // Observers (engine spans, metrics) run after the caller's reply: the duration is taken at
      // once, the bookkeeping waits for the microtask queue, so it is off the call's latency path
      // yet done before any later frame is read.
      const observe = (outcome: InvokeOutcome) => {
        const durationNs = process.hrtime.bigint() - call.startedAtNs;
        if (this.observers.length === 0) return;
        queueMicrotask(() => {
          for (const observer of this.observers) {
            try {
              observer.afterDispatch?.(call, outcome, durationNs);
            } catch (err) {
              this.log.error(`invocation observer failed after ${call.functionId}`, { error: (err as Error).message });
            }
          }
        });
      };
      const settle = (outcome: InvokeOutcome) => {
        resolve(outcome);
        observe(outcome);
      };

      if (entry.handler) {
        const handler = entry.handler;
        const run = async () => {
          try {
            const result = await handler(payload, {
              invocationId,
              functionId,
              callerWorkerId: options.callerWorkerId,
              traceparent: call.traceparent,
              baggage: call.baggage,
              metadata: options.metadata,
            });
            return { ok: true as const, result };
          } catch (err) {
            return { ok: false as const, error: toErrorBody(err) };
          }
        };
        if (options.timeoutMs) {
          let timer: NodeJS.Timeout | undefined;
          const timeout = new Promise<InvokeOutcome>((r) => {
            timer = setTimeout(() => r(timeoutOutcome(options.timeoutMs as number)), options.timeoutMs);
          });
          Promise.race([run(), timeout]).then((o) => {
            clearTimeout(timer);
            settle(o);
          });
        } else {
          run().then(settle);
        }
        return;
      }

      if (entry.invocation) {
        settle({
          ok: false,
          error: { code: ErrorCode.FunctionNotInvokable, message: `Function ${functionId} is an HTTP-invoked function` },
        });
        return;
      }

      const executor = entry.ownerWorkerId ? this.workers.get(entry.ownerWorkerId) : undefined;
      if (!executor) {
        settle({ ok: false, error: { code: ErrorCode.FunctionNotFound, message: `Function ${functionId} not found` } });
        return;
      }
      const pending: Pending = { call, resolve: settle, observe };
      this.pending.set(invocationId, pending);
      executor.activeInvocations++;
      const frame: Record<string, unknown> = {
        type: 'invokefunction',
        invocation_id: invocationId,
        function_id: functionId,
        data: payload,
      };
      if (call.traceparent) frame.traceparent = call.traceparent;
      if (call.baggage) frame.baggage = call.baggage;
      if (options.metadata !== undefined && options.metadata !== null) frame.metadata = options.metadata;
      if (!executor.peer.send(frame)) {
        this.complete(invocationId, {
          ok: false,
          error: { code: ErrorCode.ChannelSendFailed, message: `Worker owning ${functionId} is not reachable` },
        });
        return;
      }
      if (options.timeoutMs) {
        pending.timer = setTimeout(() => this.complete(invocationId, timeoutOutcome(options.timeoutMs as number)), options.timeoutMs);
      }
    });
    return finished;
  }

  /** A result frame arrived (from any connection: matching is by id only, §2.3.10). */
  complete(invocationId: string, outcome: InvokeOutcome): boolean {
    const pending = this.pending.get(invocationId);
    if (!pending) {
      this.log.debug('result for unknown invocation dropped', { invocation_id: invocationId });
      return false;
    }
    this.pending.delete(invocationId);
    if (pending.timer) clearTimeout(pending.timer);
    const executor = pending.call.executorWorkerId ? this.workers.get(pending.call.executorWorkerId) : undefined;
    if (executor && executor.activeInvocations > 0) executor.activeInvocations--;
    if (pending.resolve) pending.resolve(outcome);
    else pending.observe(outcome);
    return true;
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
        pending.resolve = null;
      }
    }
  }

  /** Ends every pending call (engine shutdown). */
  stopAll(): void {
    for (const id of [...this.pending.keys()]) this.complete(id, { ok: false, error: STOPPED });
  }

  private async enqueue(functionId: string, data: unknown, queue: string, options: InvokeOptions): Promise<InvokeOutcome> {
    // spec §2.5 step 6 (0.22.1): the enqueue action goes through the queue provider's function
    if (!this.functions.has(EngineFunction.QueueEnqueue)) {
      return {
        ok: false,
        error: {
          code: ErrorCode.EnqueueError,
          message: `No queue provider is installed: add the eng-queue worker to config.yaml to enqueue to '${queue}'`,
        },
      };
    }
    const messageReceiptId = randomUUID();
    const payload = data === undefined ? null : data;
    const outcome = await this.invoke(
      EngineFunction.QueueEnqueue,
      {
        queue,
        function_id: functionId,
        data: payload,
        messageReceiptId,
        traceparent: options.traceparent ?? null,
        baggage: options.baggage ?? null,
      },
      { traceparent: options.traceparent, baggage: options.baggage },
    );
    if (!outcome.ok) {
      const code = outcome.error.code === ErrorCode.EnqueueError ? outcome.error.code : ErrorCode.EnqueueError;
      return { ok: false, error: { code, message: outcome.error.message } };
    }
    return { ok: true, result: { messageReceiptId } };
  }
}

export function toErrorBody(err: unknown): ErrorBody {
  if (err instanceof EngError) return err.toBody();
  if (err instanceof Error) return { code: ErrorCode.InvocationFailed, message: err.message, stacktrace: err.stack };
  return { code: ErrorCode.InvocationFailed, message: String(err) };
}

function timeoutOutcome(ms: number): InvokeOutcome {
  return { ok: false, error: { code: ErrorCode.Timeout, message: `invocation timed out after ${ms}ms` } };
}
