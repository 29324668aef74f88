import { EngError, ErrorCode, type InvocationResult } from '@eng/protocol';
import type { Logger } from './types.ts';

// Outgoing calls: match results to callers by invocation id, run the caller-side timeout (the bus
// has none, spec §2.4), and queue calls made while disconnected for the next open (§2.9).

interface PendingCall {
  resolve(value: unknown): void;
  reject(error: EngError): void;
  timer: ReturnType<typeof setTimeout>;
  /** Written to an open socket (false while it waits in the outbox). */
  sent: boolean;
  /** The caller's signal, and the listener that cancels the call when it aborts. */
  signal?: AbortSignal;
  onAbort?: () => void;
}

/** A frame waiting for the socket; sync calls carry their id so settled ones are skipped. */
interface QueuedFrame {
  text: string;
  invocationId?: string;
}

export interface CallTransport {
  readonly isOpen: boolean;
  /** False when there is no open socket. */
  sendText(text: string): boolean;
}

/** setTimeout fires at once past 2^31-1 ms; clamp so a long timeout stays long. */
export const MAX_TIMER_MS = 2 ** 31 - 1;
/** Calls queued during an outage, at most: a long outage must not grow memory without bound. */
const MAX_QUEUED_FRAMES = 10_000;

export class Calls {
  private readonly pending = new Map<string, PendingCall>();
  private outbox: QueuedFrame[] = [];
  private droppedFrames = 0;

  constructor(
    private readonly transport: CallTransport,
    private readonly logger: Logger,
  ) {}

  /** A fire-and-forget frame: sent now, or queued for the next open. */
  fire(text: string): void {
    this.sendOrQueue({ text });
  }

  /**
   * A call waiting for its `invocationresult`; the timeout keeps running while it is queued. When
   * `signal` aborts the call rejects with `invocation_cancelled` and, if it was sent, the engine is
   * told (`cancelinvocation`, eng's frame: an iii engine drops it and the call runs on there).
   */
  request<T>(invocationId: string, text: string, timeoutMs: number, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) return Promise.reject(cancelledError(signal));
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(
        () => {
          const call = this.pending.get(invocationId);
          if (!call) return;
          this.drop(invocationId, call);
          // a call that timed out while queued must not be sent later
          if (!this.transport.isOpen) this.outbox = this.outbox.filter((frame) => frame.invocationId !== invocationId);
          reject(new EngError(ErrorCode.Timeout, `invocation timed out after ${timeoutMs}ms`));
        },
        Math.min(Math.max(0, timeoutMs), MAX_TIMER_MS),
      );
      const call: PendingCall = { resolve: resolve as (value: unknown) => void, reject, timer, sent: false };
      if (signal) {
        call.signal = signal;
        call.onAbort = () => this.cancel(invocationId, signal);
        signal.addEventListener('abort', call.onAbort, { once: true });
      }
      this.pending.set(invocationId, call);
      call.sent = this.sendOrQueue({ text, invocationId });
    });
  }

  /** The caller gave up on a call: it rejects now, and the engine is told if the call reached it. */
  private cancel(invocationId: string, signal: AbortSignal): void {
    const call = this.pending.get(invocationId);
    if (!call) return;
    this.drop(invocationId, call);
    if (call.sent) {
      const reason = reasonText(signal.reason);
      const frame: Record<string, unknown> = { type: 'cancelinvocation', invocation_id: invocationId };
      if (reason) frame.reason = reason;
      this.transport.sendText(JSON.stringify(frame));
    } else {
      this.outbox = this.outbox.filter((frame) => frame.invocationId !== invocationId);
    }
    call.reject(cancelledError(signal));
  }

  /** Forget a pending call: its timer and its abort listener. */
  private drop(invocationId: string, call: PendingCall): void {
    this.pending.delete(invocationId);
    clearTimeout(call.timer);
    if (call.onAbort) call.signal?.removeEventListener('abort', call.onAbort);
  }

  settle(message: InvocationResult): void {
    const call = this.pending.get(message.invocation_id);
    if (!call) return; // timed out already, or not ours
    this.drop(message.invocation_id, call);
    if (message.error) call.reject(EngError.from(message.error));
    else call.resolve(message.result);
  }

  /** On open: send what waited, skipping calls that settled meanwhile (spec §2.7 step 6). */
  flush(): void {
    const queued = this.outbox;
    this.outbox = [];
    for (const frame of queued) {
      const call = frame.invocationId ? this.pending.get(frame.invocationId) : undefined;
      if (frame.invocationId && !call) continue;
      const written = this.transport.sendText(frame.text);
      if (call) call.sent = written;
    }
  }

  /**
   * The socket closed. A call already written to it can no longer be answered: the engine halts
   * the work a closed connection initiated (spec §2.8 step 2), and a result would have nowhere to
   * go. It fails now with `invocation_stopped` instead of waiting out its timeout (the iii SDK's
   * TIMEOUT, §2.9); calls still queued wait for the next open.
   */
  connectionClosed(): void {
    for (const [id, call] of this.pending) {
      if (!call.sent) continue;
      this.drop(id, call);
      call.reject(new EngError(ErrorCode.InvocationStopped, 'the connection to the engine closed before the result arrived'));
    }
  }

  /** Fail every pending and queued call (client closed, or reconnecting gave up). */
  abandon(error: EngError): void {
    for (const call of this.pending.values()) {
      clearTimeout(call.timer);
      if (call.onAbort) call.signal?.removeEventListener('abort', call.onAbort);
      call.reject(error);
    }
    this.pending.clear();
    this.outbox = [];
  }

  /** True when written now; false when queued for the next open. */
  private sendOrQueue(frame: QueuedFrame): boolean {
    if (this.transport.sendText(frame.text)) return true;
    if (this.outbox.length >= MAX_QUEUED_FRAMES) {
      const dropped = this.outbox.shift() as QueuedFrame;
      if (this.droppedFrames++ % 1000 === 0) this.logger.warn(`engine unreachable: ${MAX_QUEUED_FRAMES} calls queued, dropping the oldest`);
      const call = dropped.invocationId ? this.pending.get(dropped.invocationId) : undefined;
      if (call && dropped.invocationId) {
        this.drop(dropped.invocationId, call);
        call.reject(new EngError(ErrorCode.NotConnected, 'not connected to the engine: the send queue is full'));
      }
    }
    this.outbox.push(frame);
    return false;
  }
}

/** What a cancelled call rejects with. */
function cancelledError(signal: AbortSignal): EngError {
  const reason = reasonText(signal.reason);
  return new EngError(ErrorCode.InvocationCancelled, reason ? `invocation cancelled: ${reason}` : 'invocation cancelled');
}

/** An abort reason as a short text for the engine (an AbortError's default says nothing). */
function reasonText(reason: unknown): string | undefined {
  if (reason === undefined || (reason instanceof Error && reason.name === 'AbortError')) return undefined;
  const text = reason instanceof Error ? reason.message : typeof reason === 'string' ? reason : undefined;
  return text ? text.slice(0, 1024) : undefined;
}
