import type { ChannelWriter } from '@eng/sdk';

// spec: MCP transports/streamable-http (SSE) and engine-protocol §6.1 streaming mode — an SSE
// response written through the request's `response` channel: `set_status` and `set_headers`
// text frames first, then the body bytes; ending the channel ends the HTTP response.

const KEEPALIVE_MS = 15_000;

export const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
};

export class SseStream {
  private closed = false;
  private keepalive?: NodeJS.Timeout;

  constructor(
    private readonly writer: ChannelWriter,
    /** Called once when the stream ends, by us or because the client went away. */
    private readonly onGone: () => void,
  ) {}

  get isOpen(): boolean {
    return !this.closed;
  }

  /** Send status and headers plus a first comment, so the engine starts the response now. */
  async open(extraHeaders: Record<string, string>): Promise<void> {
    await this.writer.sendMessage(JSON.stringify({ type: 'set_status', status_code: 200 }));
    await this.writer.sendMessage(JSON.stringify({ type: 'set_headers', headers: { ...SSE_HEADERS, ...extraHeaders } }));
    await this.writer.write(': stream open\n\n');
    this.keepalive = setInterval(() => this.raw(': keepalive\n\n'), KEEPALIVE_MS);
    this.keepalive.unref();
  }

  /** One JSON-RPC message as an SSE `message` event (never awaited by callers: the writer keeps order). */
  send(message: unknown): void {
    this.raw(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }

  private raw(text: string): void {
    if (this.closed) return;
    this.writer.write(text).catch(() => this.gone());
  }

  /** End the HTTP response. */
  close(): void {
    if (this.closed) return;
    this.gone();
    void this.writer.end().catch(() => undefined);
  }

  private gone(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.keepalive);
    this.onGone();
  }
}
