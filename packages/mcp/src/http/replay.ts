import type { ChannelWriter } from '@eng/sdk';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { SseStream } from './sse-stream.ts';

// spec: MCP transports/streamable-http §resumability and redelivery (and SEP-1699 polling,
// 2025-11-25). Every SSE stream of a session has a number; each event on it the id
// `<stream>-<seq>`, unique in the session. Events are kept while they may still be asked for:
// a client whose stream broke (or that eng-mcp closed on purpose) reconnects with GET and
// `Last-Event-ID`, and gets what followed that event on that stream, then the rest as it comes.
// A stream that ended with everything written is forgotten; the session's store is capped.

/** What the session's GET stream keeps for a reconnecting client: its latest events only. */
const STANDALONE_KEPT = 100;

export type StreamKind = 'request' | 'standalone';

export class ReplayStream {
  private events: Array<{ seq: number; text: string }> = [];
  private seq = 0;
  private primed = false;
  bytes = 0;
  /** Nothing more will be added (its request was answered, or it was replaced). */
  finished = false;
  private sse?: SseStream;

  constructor(
    readonly id: number,
    readonly kind: StreamKind,
    private readonly store: EventStore,
  ) {}

  /** A client connection is writing this stream now. */
  get attached(): boolean {
    return this.sse?.isOpen ?? false;
  }

  get lastSeq(): number {
    return this.seq;
  }

  /** Kept for replay, and written at once when a client is attached. */
  send(message: JSONRPCMessage): void {
    if (this.finished) return;
    const seq = ++this.seq;
    const text = `id: ${this.id}-${seq}\nevent: message\ndata: ${JSON.stringify(message)}\n\n`;
    this.events.push({ seq, text });
    this.bytes += text.length;
    this.store.grew(this, text.length);
    if (this.kind === 'standalone' && this.events.length > STANDALONE_KEPT) this.dropOldest();
    this.sse?.raw(text);
  }

  /**
   * Write this stream to a new client connection: the events after `after`, then the live ones.
   * `primeRetryMs` starts it with a priming event (an id, empty data, `retry`), so the client can
   * resume it even before the first message (SEP-1699). A previous connection is closed first.
   */
  attach(writer: ChannelWriter, headers: Record<string, string>, after: number, primeRetryMs?: number): Promise<void> {
    this.sse?.close();
    const sse = new SseStream(writer, () => {
      if (this.sse === sse) this.sse = undefined;
    });
    this.sse = sse;
    const first = primeRetryMs !== undefined ? `id: ${this.id}-${this.seq}\nretry: ${primeRetryMs}\ndata: \n\n` : undefined;
    if (first) this.primed = true;
    const opened = sse.open(headers, first);
    for (const event of this.events) if (event.seq > after) sse.raw(event.text);
    if (this.finished) this.end(sse);
    return opened;
  }

  /**
   * Close the client's connection but keep the stream (SEP-1699: the server may close at will; the
   * client reconnects after `retryMs` with the last id it saw). Primes the stream first when the
   * client has no event id of it yet.
   */
  detach(retryMs: number): void {
    const sse = this.sse;
    if (!sse) return;
    if (!this.primed && this.seq === 0) {
      sse.raw(`id: ${this.id}-0\ndata: \n\n`);
      this.primed = true;
    }
    sse.raw(`retry: ${retryMs}\n\n`);
    this.sse = undefined;
    void sse.close();
  }

  /** Nothing more comes: end the connection, and forget the stream once all of it was written. */
  finish(): void {
    if (this.finished) return;
    this.finished = true;
    if (this.sse) this.end(this.sse);
  }

  private end(sse: SseStream): void {
    void sse.close().then((complete) => {
      if (complete && this.finished && this.sse === undefined) this.store.remove(this);
    });
  }

  /** Drop the oldest kept event (store cap). */
  dropOldest(): boolean {
    const event = this.events.shift();
    if (!event) return false;
    this.bytes -= event.text.length;
    this.store.shrank(event.text.length);
    return true;
  }

  /** Close the connection without ending the stream's story (session gone). */
  abandon(): void {
    this.finished = true;
    void this.sse?.close();
  }
}

export class EventStore {
  private readonly streams = new Map<number, ReplayStream>();
  private nextId = 1;
  bytes = 0;

  /** `capBytes`: what the session's kept events may take together. */
  constructor(private readonly capBytes: number) {}

  create(kind: StreamKind): ReplayStream {
    const stream = new ReplayStream(this.nextId++, kind, this);
    this.streams.set(stream.id, stream);
    return stream;
  }

  /** The stream and position an event id names (`<stream>-<seq>`), if still kept. */
  find(eventId: string): { stream: ReplayStream; seq: number } | undefined {
    const match = /^(\d{1,15})-(\d{1,15})$/.exec(eventId.trim());
    if (!match) return undefined;
    const stream = this.streams.get(Number(match[1]));
    const seq = Number(match[2]);
    if (!stream || seq > stream.lastSeq) return undefined;
    return { stream, seq };
  }

  grew(_stream: ReplayStream, bytes: number): void {
    this.bytes += bytes;
    if (this.bytes <= this.capBytes) return;
    // finished streams first (oldest first), then the oldest events of the others
    for (const stream of this.streams.values()) {
      if (this.bytes <= this.capBytes) return;
      if (stream.finished) this.remove(stream);
    }
    for (const stream of this.streams.values()) {
      while (this.bytes > this.capBytes && stream.dropOldest());
      if (this.bytes <= this.capBytes) return;
    }
  }

  shrank(bytes: number): void {
    this.bytes -= bytes;
  }

  remove(stream: ReplayStream): void {
    if (this.streams.get(stream.id) !== stream) return;
    this.streams.delete(stream.id);
    this.bytes -= stream.bytes;
    stream.bytes = 0;
  }

  clear(): void {
    for (const stream of this.streams.values()) stream.abandon();
    this.streams.clear();
    this.bytes = 0;
  }
}
