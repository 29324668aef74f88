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

  /** A call waiting for its `invocationresult`; the timeout keeps running while it is queued. */
  request<T>(invocationId: string, text: string, timeoutMs: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(
        () => {
          if (!this.pending.delete(invocationId)) return;
          // a call that timed out while queued must not be sent later
          if (!this.transport.isOpen) this.outbox = this.outbox.filter((frame) => frame.invocationId !== invocationId);
          reject(new EngError(ErrorCode.Timeout, `invocation timed out after ${timeoutMs}ms`));
        },
        Math.min(Math.max(0, timeoutMs), MAX_TIMER_MS),
      );
      const call: PendingCall = { resolve: resolve as (value: unknown) => void, reject, timer, sent: false };
      this.pending.set(invocationId, call);
      call.sent = this.sendOrQueue({ text, invocationId });
    });
  }

  settle(message: InvocationResult): void {
    const call = this.pending.get(message.invocation_id);
    if (!call) return; // timed out already, or not ours
    this.pending.delete(message.invocation_id);
    clearTimeout(call.timer);
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
      this.pending.delete(id);
      clearTimeout(call.timer);
      call.reject(new EngError(ErrorCode.InvocationStopped, 'the connection to the engine closed before the result arrived'));
    }
  }

  /** Fail every pending and queued call (client closed, or reconnecting gave up). */
  abandon(error: EngError): void {
    for (const call of this.pending.values()) {
      clearTimeout(call.timer);
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
        this.pending.delete(dropped.invocationId);
        clearTimeout(call.timer);
        call.reject(new EngError(ErrorCode.NotConnected, 'not connected to the engine: the send queue is full'));
      }
    }
    this.outbox.push(frame);
    return false;
  }
}
