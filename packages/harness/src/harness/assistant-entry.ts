import type { EngClient } from '@eng/sdk';
import type { ContentBlock, ErrorKind, StopReason, Usage } from '../router/types.ts';

// The streaming assistant entry: appended once, then rewritten through `session::update-message`
// with rising revisions. The first visible text goes out at once (time to first token is what a
// user feels); later changes are batched every UPDATE_INTERVAL_MS, one update in flight at a time,
// so a fast stream costs a bounded number of writes and nothing is lost: the newest content wins.

export const UPDATE_INTERVAL_MS = 40;

export interface FinalPatch {
  stop_reason: StopReason;
  native_stop_reason?: string;
  error_message?: string;
  error_kind?: ErrorKind;
  usage?: Usage;
}

export class AssistantEntry {
  private readonly appended: Promise<unknown>;
  private content: ContentBlock[] = [];
  private dirty = false;
  private sentVisible = false;
  private inflight?: Promise<void>;
  private timer?: ReturnType<typeof setTimeout>;
  private lastSentAt = 0;
  private finished = false;
  updates = 0;

  constructor(
    private readonly client: EngClient,
    private readonly sessionId: string,
    readonly entryId: string,
    base: { model: string; provider: string },
    private readonly origin: Record<string, unknown>,
    /** What must be in the transcript first (the user message the turn answers). */
    after: Promise<unknown> = Promise.resolve(),
  ) {
    this.appended = after.then(() =>
      client.call(
        'session::append',
        {
          session_id: sessionId,
          entry_id: entryId,
          origin,
          message: { role: 'assistant', content: [], model: base.model, provider: base.provider, timestamp: Date.now() },
        },
        { timeoutMs: 15_000 },
      ),
    );
    // a failed append surfaces at the first update; keep it from being unhandled meanwhile
    this.appended.catch(() => undefined);
  }

  ready(): Promise<unknown> {
    return this.appended;
  }

  /** New content (the whole message so far). */
  set(content: ContentBlock[]): void {
    if (this.finished) return;
    this.content = content;
    this.dirty = true;
    const visible = content.some((b) => (b.type === 'text' || b.type === 'thinking') && b.text.length > 0);
    if (visible && !this.sentVisible) {
      this.sentVisible = true;
      this.flushSoon(0);
    } else this.flushSoon(Math.max(0, UPDATE_INTERVAL_MS - (Date.now() - this.lastSentAt)));
  }

  /** The last write: the final content with the stop reason, usage, error. */
  async finish(content: ContentBlock[], patch: FinalPatch): Promise<void> {
    this.finished = true;
    clearTimeout(this.timer);
    await this.appended;
    await this.inflight?.catch(() => undefined);
    await this.client.call(
      'session::update-message',
      { session_id: this.sessionId, entry_id: this.entryId, content, origin: this.origin, ...stripUndefined(patch) },
      { timeoutMs: 15_000 },
    );
    this.updates++;
  }

  private flushSoon(delay: number): void {
    if (this.timer || this.inflight) return;
    if (delay === 0) {
      void this.flush();
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, delay);
  }

  private async flush(): Promise<void> {
    if (!this.dirty || this.finished) return;
    this.dirty = false;
    const content = this.content;
    this.lastSentAt = Date.now();
    this.inflight = (async () => {
      await this.appended;
      if (this.finished) return;
      await this.client.call(
        'session::update-message',
        { session_id: this.sessionId, entry_id: this.entryId, content, origin: this.origin },
        { timeoutMs: 15_000 },
      );
      this.updates++;
    })();
    try {
      await this.inflight;
    } catch {
      // a lost intermediate update is repaired by the next one (each carries the whole content)
    } finally {
      this.inflight = undefined;
    }
    if (this.dirty && !this.finished) this.flushSoon(Math.max(0, UPDATE_INTERVAL_MS - (Date.now() - this.lastSentAt)));
  }
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
