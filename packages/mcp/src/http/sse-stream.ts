import type { ChannelWriter } from '@eng/sdk';

// spec: MCP transports/streamable-http (SSE) and engine-protocol §6.1 streaming mode — an SSE
// response written through the request's `response` channel: `set_status` and `set_headers`
// text frames first, then the body bytes; ending the channel ends the HTTP response. Writes are
// chained, so what is queued while the stream opens goes out after it, in order.

const KEEPALIVE_MS = 15_000;

export const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
};

export class SseStream {
  private closed = false;
  private failed = false;
  private keepalive?: NodeJS.Timeout;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly writer: ChannelWriter,
    /** Called once when the stream ends, by us or because the client went away. */
    private readonly onGone: () => void,
  ) {
    // the engine closes the channel when the HTTP client disconnects: that is a cancel, known now
    // rather than at the next write (a keepalive may be 15 s away)
    writer.onClose(() => {
      if (!this.closed) this.gone();
    });
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  /**
   * Send status and headers, then `first` (a priming event) or a comment, so the engine starts the
   * response now. Resolves once that is written.
   */
  open(extraHeaders: Record<string, string>, first = ': stream open\n\n'): Promise<void> {
    const writer = this.writer;
    this.enqueue(async () => {
      await writer.sendMessage(JSON.stringify({ type: 'set_status', status_code: 200 }));
      await writer.sendMessage(JSON.stringify({ type: 'set_headers', headers: { ...SSE_HEADERS, ...extraHeaders } }));
      await writer.write(first);
    });
    this.keepalive = setInterval(() => this.raw(': keepalive\n\n'), KEEPALIVE_MS);
    this.keepalive.unref();
    return this.chain;
  }

  /** Text already in SSE form (never awaited by callers: the chain keeps order). */
  raw(text: string): void {
    if (this.closed) return;
    const writer = this.writer;
    this.enqueue(() => writer.write(text));
  }

  /** End the HTTP response; resolves true when everything written before reached the engine. */
  close(): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    this.closed = true;
    clearInterval(this.keepalive);
    const writer = this.writer;
    this.enqueue(() => writer.end());
    const ended = this.chain.then(() => !this.failed);
    void ended.then(() => this.onGone());
    return ended;
  }

  private enqueue(step: () => Promise<unknown>): void {
    this.chain = this.chain.then(async () => {
      if (this.failed) return;
      try {
        await step();
      } catch {
        this.gone();
      }
    });
  }

  /** The client went away (a write failed): nothing more can be written. */
  private gone(): void {
    this.failed = true;
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.keepalive);
    void this.writer.end().catch(() => undefined);
    this.onGone();
  }
}
