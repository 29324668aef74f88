import type { ChannelWriter } from '@eng/sdk';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, JSONRPCNotification, RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { DirectDispatch } from '../direct-dispatch.ts';
import { cancelledRequestId, errorMessage, INVALID_REQUEST, isNotification, isRequest, isResponse } from '../jsonrpc.ts';
import { EventStore, type ReplayStream } from './replay.ts';

// spec: MCP transports/streamable-http — one session's side of the exchanges. Each POST that
// carries requests becomes an Exchange answered as JSON or as SSE; what belongs to no request goes
// to the session's GET stream. Every SSE stream is resumable (replay.ts): a dropped connection, or
// one eng-mcp closed on purpose, is picked up again with GET and `Last-Event-ID`.

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

/**
 * The answer to a POST whose every request was cancelled (spec basic/utilities/cancellation: no
 * response follows): a request's POST is still answered with one of the two content types
 * streamable-http allows: an SSE stream with no events, or for a JSON-only client a JSON-RPC error.
 */
function cancelledReply(id: RequestId, sse: boolean, headers: Record<string, string>): HttpReply {
  if (sse) return { status_code: 200, headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...headers }, body: '' };
  return jsonReply(200, errorMessage(id, REQUEST_CANCELLED, 'Request cancelled: the client sent notifications/cancelled'), headers);
}

/** The code of the JSON-only answer to a cancelled request (JSON-RPC's request-cancelled code, as LSP uses it). */
export const REQUEST_CANCELLED = -32800;

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

export interface TransportOptions {
  /** What one session's kept SSE events may take together. */
  replayBytes: number;
  /** The `retry` a priming event announces. */
  retryMs: number;
  /** Whether new streams start with a priming event (the session negotiated 2025-11-25 or later). */
  priming(): boolean;
  /**
   * Where requests and notifications (already checked by the endpoint's `classify`) go without the
   * SDK's three schema passes per message (direct-dispatch.ts); responses still take `onmessage`.
   */
  direct?: DirectDispatch;
}

class Exchange {
  readonly waiting = new Set<RequestId>();
  readonly replies: JSONRPCMessage[] = [];
  stream?: ReplayStream;
  private timer?: NodeJS.Timeout;
  private settled = false;
  private done = false;
  private resolveReply!: (reply: HttpReply | null) => void;
  readonly reply = new Promise<HttpReply | null>((resolve) => {
    this.resolveReply = resolve;
  });

  constructor(
    private readonly options: ExchangeOptions,
    private readonly transport: HttpSessionTransport,
    private readonly onDone: (exchange: Exchange) => void,
  ) {}

  begin(): void {
    if (this.options.sse) this.startStream(false);
    else if (this.options.canStream) {
      this.timer = setTimeout(() => this.startStream(false), this.options.streamAfterMs);
      this.timer.unref();
    }
  }

  /** Answer as SSE from now on (what was queued goes first); false when the client cannot take SSE. */
  private startStream(forcePriming: boolean): boolean {
    if (this.stream) return true;
    if (this.settled || !this.options.canStream) return false;
    clearTimeout(this.timer);
    const stream = this.transport.createStream('request');
    this.stream = stream;
    for (const reply of this.replies.splice(0)) stream.send(reply);
    const priming = forcePriming || this.transport.options.priming();
    void stream
      .attach(this.options.writer, this.options.headers, 0, priming ? this.transport.options.retryMs : undefined)
      .finally(() => this.settle(null));
    if (this.done) stream.finish();
    return true;
  }

  /** A message of this exchange: a response, or a notification or request related to one of its requests. */
  deliver(message: JSONRPCMessage): boolean {
    if (isResponse(message)) {
      if (!this.waiting.delete(message.id)) return false;
      if (this.stream) this.stream.send(message);
      else this.replies.push(message);
      if (this.waiting.size === 0) this.finish();
      return true;
    }
    // related messages travel on the request's own stream (spec): a JSON answer turns into SSE for them
    if (this.done || !this.startStream(false)) return false;
    this.stream?.send(message);
    return true;
  }

  /** SEP-1699: close the connection now and let the client resume it; undefined when done, else why not. */
  release(retryMs: number): string | undefined {
    if (this.done) return 'the call has already been answered';
    if (!this.startStream(true)) return 'the client accepts only JSON for this request, so its answer cannot be resumed';
    this.stream?.detach(retryMs);
    return undefined;
  }

  /** A cancelled request gets no response (spec basic/utilities/cancellation). */
  drop(id: RequestId): void {
    if (!this.waiting.delete(id) || this.waiting.size > 0) return;
    if (!this.stream && !this.settled && this.replies.length === 0) {
      this.settle(cancelledReply(id, this.options.canStream, this.options.headers));
    }
    this.finish();
  }

  finish(): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    if (this.stream) {
      this.stream.finish();
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

export type ResumeOutcome = 'resumed' | 'unknown' | 'ended';

export class HttpSessionTransport implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;

  private readonly byRequest = new Map<RequestId, Exchange>();
  private readonly store: EventStore;
  private standalone?: ReplayStream;
  private closed = false;

  constructor(
    readonly sessionId: string,
    readonly options: TransportOptions,
  ) {
    this.store = new EventStore(options.replayBytes);
  }

  async start(): Promise<void> {}

  get hasStandaloneStream(): boolean {
    return this.standalone?.attached ?? false;
  }

  /** Bytes of SSE events kept for resumption (part of the session's memory estimate). */
  get replayBytes(): number {
    return this.store.bytes;
  }

  createStream(kind: 'request' | 'standalone'): ReplayStream {
    return this.store.create(kind);
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
    const exchange = new Exchange(options, this, (done) => {
      for (const [id, owner] of this.byRequest) if (owner === done) this.byRequest.delete(id);
    });
    exchange.replies.push(...early);
    for (const request of requests) {
      exchange.waiting.add(request.id);
      this.byRequest.set(request.id, exchange);
    }
    exchange.begin();
    for (const message of messages) this.receive(message);
    return exchange.reply;
  }

  private receive(message: JSONRPCMessage): void {
    const cancelled = cancelledRequestId(message);
    if (cancelled !== undefined) this.byRequest.get(cancelled)?.drop(cancelled);
    const direct = this.options.direct;
    if (direct && isRequest(message)) direct.request(message);
    else if (direct && isNotification(message)) direct.notification(message as JSONRPCNotification);
    else this.onmessage?.(message);
  }

  /** The GET stream: server-initiated messages that belong to no request. */
  async openStandalone(writer: ChannelWriter, headers: Record<string, string>): Promise<boolean> {
    if (this.standalone?.attached) return false;
    // a new GET without Last-Event-ID starts afresh: what the old stream kept is not asked for
    if (this.standalone) {
      this.standalone.finish();
      this.store.remove(this.standalone);
    }
    const stream = this.store.create('standalone');
    this.standalone = stream;
    await stream.attach(writer, headers, 0, this.options.priming() ? this.options.retryMs : undefined);
    return true;
  }

  /** GET with `Last-Event-ID`: the named stream again, from the event after it. */
  async resume(lastEventId: string, writer: ChannelWriter, headers: Record<string, string>): Promise<ResumeOutcome> {
    const found = this.store.find(lastEventId);
    if (!found) return 'unknown';
    const { stream, seq } = found;
    if (stream.kind === 'standalone' && stream !== this.standalone) return 'ended';
    if (stream.finished && seq >= stream.lastSeq) return 'ended';
    await stream.attach(writer, headers, seq);
    return 'resumed';
  }

  /** SEP-1699 on behalf of a called function: close the stream that carries `requestId`'s answer. */
  release(requestId: RequestId, retryMs: number): string | undefined {
    const exchange = this.byRequest.get(requestId);
    if (!exchange) return 'the call is not in flight on this session';
    return exchange.release(retryMs);
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (this.closed) return;
    const relatedId = isResponse(message) ? message.id : options?.relatedRequestId;
    const exchange = relatedId !== undefined ? this.byRequest.get(relatedId) : undefined;
    if (exchange?.deliver(message)) return;
    if (isResponse(message)) return; // its POST is gone (cancelled or closed): nobody to tell
    if (this.standalone && !this.standalone.finished) {
      this.standalone.send(message);
      return;
    }
    if (isRequest(message)) {
      // the SDK rejects the request with this, so the function that asked learns it at once
      throw new Error(
        `cannot send ${message.method} to the client: its request is answered as JSON only and the session has no GET stream open`,
      );
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const exchange of new Set(this.byRequest.values())) exchange.abort();
    this.byRequest.clear();
    this.store.clear();
    this.standalone = undefined;
    this.onclose?.();
  }
}
