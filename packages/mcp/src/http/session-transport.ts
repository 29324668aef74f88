import type { ChannelWriter } from '@eng/sdk';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { cancelledRequestId, errorMessage, INVALID_REQUEST, isRequest, isResponse } from '../jsonrpc.ts';
import { SseStream } from './sse-stream.ts';

// spec: MCP transports/streamable-http — one session's side of the exchanges. Each POST that
// carries requests becomes an Exchange answered as JSON or as SSE; notifications that belong to no
// request go to the session's GET stream when one is open.

/** What the engine's HTTP module turns into the response (engine-protocol §6.1), or null when streamed. */
export interface HttpReply {
  status_code: number;
  headers: Record<string, string>;
  body: string | null;
}

export function jsonReply(status: number, body: unknown, headers: Record<string, string> = {}): HttpReply {
  return { status_code: status, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) };
}

export const accepted = (headers: Record<string, string> = {}): HttpReply => ({
  status_code: 202,
  headers: { 'content-type': 'application/json', ...headers },
  body: null,
});

export interface ExchangeOptions {
  batch: boolean;
  /** Start as SSE (the client asked for progress, or accepts SSE only). */
  sse: boolean;
  /** The client accepts SSE, so a slow JSON exchange may turn into a stream. */
  canStream: boolean;
  /** After this long a JSON exchange becomes a stream, so long calls outlive eng-http's default_timeout. */
  streamAfterMs: number;
  writer: ChannelWriter;
  headers: Record<string, string>;
}

class Exchange {
  readonly waiting = new Set<RequestId>();
  readonly replies: JSONRPCMessage[] = [];
  stream?: SseStream;
  private timer?: NodeJS.Timeout;
  private settled = false;
  private done = false;
  private resolveReply!: (reply: HttpReply | null) => void;
  readonly reply = new Promise<HttpReply | null>((resolve) => {
    this.resolveReply = resolve;
  });

  constructor(
    private readonly options: ExchangeOptions,
    private readonly onDone: (exchange: Exchange) => void,
  ) {}

  async begin(): Promise<void> {
    if (this.options.sse) await this.openStream();
    else if (this.options.canStream) {
      this.timer = setTimeout(() => void this.openStream().catch(() => this.finish()), this.options.streamAfterMs);
      this.timer.unref();
    }
  }

  private async openStream(): Promise<void> {
    if (this.settled || this.stream) return;
    const stream = new SseStream(this.options.writer, () => this.finish());
    this.stream = stream;
    await stream.open(this.options.headers);
    for (const reply of this.replies.splice(0)) stream.send(reply);
    this.settle(null);
    if (this.waiting.size === 0) this.finish();
  }

  /** A message of this exchange: a response (or a notification, which only SSE can carry). */
  deliver(message: JSONRPCMessage): boolean {
    if (isResponse(message)) {
      if (!this.waiting.delete(message.id)) return false;
      if (this.stream) this.stream.send(message);
      else this.replies.push(message);
      if (this.waiting.size === 0) this.finish();
      return true;
    }
    if (!this.stream?.isOpen) return false;
    this.stream.send(message);
    return true;
  }

  /** A cancelled request gets no response (spec basic/utilities/cancellation). */
  drop(id: RequestId): void {
    if (this.waiting.delete(id) && this.waiting.size === 0) this.finish();
  }

  finish(): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    if (this.stream) {
      this.stream.close();
    } else if (!this.settled) {
      const { batch, headers } = this.options;
      if (this.replies.length === 0) this.settle(accepted(headers));
      else this.settle(jsonReply(200, batch ? this.replies : this.replies[0], headers));
    }
    this.onDone(this);
  }

  /** The session ended under this exchange. */
  abort(): void {
    if (!this.settled && !this.stream) this.settle(jsonReply(404, errorMessage(null, -32001, 'Session not found')));
    this.waiting.clear();
    this.finish();
  }

  private settle(reply: HttpReply | null): void {
    if (this.settled) return;
    this.settled = true;
    this.resolveReply(reply);
  }
}

export class HttpSessionTransport implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;

  private readonly byRequest = new Map<RequestId, Exchange>();
  private standalone?: SseStream;
  private closed = false;

  constructor(readonly sessionId: string) {}

  async start(): Promise<void> {}

  get hasStandaloneStream(): boolean {
    return this.standalone?.isOpen ?? false;
  }

  /**
   * Hand a POST's messages to the server; resolves the HTTP answer (null once it streams).
   * `early` holds the answers to batch members that were refused before reaching the server.
   */
  async post(messages: JSONRPCMessage[], options: ExchangeOptions, early: JSONRPCMessage[] = []): Promise<HttpReply | null> {
    // an id still pending in this session (or twice in one batch) would take over the first request's
    // answer and leave its POST waiting forever: refused at once instead (spec: ids are not reused)
    const seen = new Set<RequestId>();
    const duplicates = new Set<JSONRPCMessage>();
    for (const message of messages) {
      if (!isRequest(message)) continue;
      if (this.byRequest.has(message.id) || seen.has(message.id)) duplicates.add(message);
      seen.add(message.id);
    }
    if (duplicates.size > 0) {
      const refusals = [...duplicates].map(
        (m) =>
          errorMessage(
            (m as { id: RequestId }).id,
            INVALID_REQUEST,
            'Invalid Request: this id is already in use by a pending request',
          ) as JSONRPCMessage,
      );
      if (!options.batch) return jsonReply(400, refusals[0], options.headers);
      messages = messages.filter((m) => !duplicates.has(m));
      early = [...early, ...refusals];
    }
    const requests = messages.filter(isRequest);
    if (requests.length === 0) {
      for (const message of messages) this.receive(message);
      return early.length ? jsonReply(200, options.batch ? early : early[0], options.headers) : accepted(options.headers);
    }
    const exchange = new Exchange(options, (done) => {
      for (const [id, owner] of this.byRequest) if (owner === done) this.byRequest.delete(id);
    });
    exchange.replies.push(...early);
    for (const request of requests) {
      exchange.waiting.add(request.id);
      this.byRequest.set(request.id, exchange);
    }
    await exchange.begin();
    for (const message of messages) this.receive(message);
    return exchange.reply;
  }

  private receive(message: JSONRPCMessage): void {
    const cancelled = cancelledRequestId(message);
    if (cancelled !== undefined) this.byRequest.get(cancelled)?.drop(cancelled);
    this.onmessage?.(message);
  }

  /** The GET stream: server-initiated messages that belong to no request. */
  async openStandalone(writer: ChannelWriter, headers: Record<string, string>): Promise<boolean> {
    if (this.standalone?.isOpen) return false;
    const stream = new SseStream(writer, () => {
      if (this.standalone === stream) this.standalone = undefined;
    });
    this.standalone = stream;
    await stream.open(headers);
    return true;
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (this.closed) return;
    const relatedId = isResponse(message) ? message.id : options?.relatedRequestId;
    const exchange = relatedId !== undefined ? this.byRequest.get(relatedId) : undefined;
    if (exchange?.deliver(message)) return;
    if (isResponse(message)) return; // its POST is gone (cancelled or closed): nobody to tell
    this.standalone?.send(message);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const exchange of new Set(this.byRequest.values())) exchange.abort();
    this.byRequest.clear();
    this.standalone?.close();
    this.onclose?.();
  }
}
