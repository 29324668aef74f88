import { type ChannelRef, EngError, isChannelRef } from '@eng/protocol';
import type { Frame, SocketAdapter, SocketFactory, SocketHandlers } from './socket.ts';
import { HANDSHAKE_TIMEOUT_MS } from './socket.ts';
import type { Logger } from './types.ts';

// spec: engine-protocol §2.11 — byte/text channels. Each end is its own WebSocket on the bus port,
// `<bus url>/ws/channels/<id>?key=<access_key>&dir=read|write`, opened lazily on first use so a
// handler that ignores a channel it was handed costs nothing.

/** Error code of a channel end that closed or could not open. (Not yet in the @eng/protocol catalogue.) */
export const CHANNEL_CLOSED = 'channel_closed';

/** The writer splits binary data into frames of this size (as iii-sdk does). */
export const CHANNEL_FRAME_BYTES = 64 * 1024;
/** A writer waits while more than this is queued on its socket; a reader pauses its socket past it. */
const HIGH_WATER_BYTES = 1024 * 1024;
/** spec §2.11: the SDK writer waits 10 ms before closing, the engine drains 10 ms after the close. */
const CLOSE_DELAY_MS = 10;
const CLOSE_WAIT_MS = 2000;

const encoder = new TextEncoder();
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** What channel ends need from the client that made them. */
export interface ChannelHost {
  busUrl: string;
  createSocket: SocketFactory;
  headers?: Record<string, string>;
  logger: Logger;
  /** Live ends are tracked so `client.close()` can drop them and let the process exit. */
  track(end: ChannelEnd): void;
  untrack(end: ChannelEnd): void;
}

export interface ChannelEnd {
  readonly ref: ChannelRef;
  abort(reason: string): void;
}

export function channelUrl(busUrl: string, ref: ChannelRef): string {
  const url = new URL(busUrl);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/ws/channels/${encodeURIComponent(ref.channel_id)}`;
  url.searchParams.set('key', ref.access_key);
  url.searchParams.set('dir', ref.direction);
  return url.toString();
}

function frameBytes(frame: Frame): number {
  return typeof frame === 'string' ? frame.length : frame.byteLength;
}

function closedError(ref: ChannelRef, code: number, reason: string, cause?: Error): EngError {
  const why = reason || cause?.message || `close code ${code}`;
  return new EngError(CHANNEL_CLOSED, `channel ${ref.channel_id} (${ref.direction}) closed: ${why}`);
}

/**
 * Write end. `write()` sends bytes (strings are UTF-8 encoded) as binary frames of 64 KiB and
 * resolves once the socket has room again, so awaiting each write respects backpressure.
 * `sendMessage()` sends one text frame. `end()` (alias `close()`) flushes and closes.
 */
export class ChannelWriter implements ChannelEnd {
  private socket?: SocketAdapter;
  private opening?: Promise<SocketAdapter>;
  private failure?: EngError;
  private closed = false;
  private readonly closedWaiters: (() => void)[] = [];
  private readonly closeListeners = new Set<() => void>();
  private tail: Promise<void> = Promise.resolve();
  private ending?: Promise<void>;

  constructor(
    private readonly host: ChannelHost,
    readonly ref: ChannelRef,
  ) {}

  /**
   * Called once when the channel's socket closes, whoever closed it: the engine closes a writer
   * whose reader went away (an HTTP client that disconnected from a streamed response), so a
   * writer learns of it without waiting for its next write to fail. Returns a remover.
   */
  onClose(listener: () => void): () => void {
    if (this.closed) {
      queueMicrotask(listener);
      return () => {};
    }
    this.closeListeners.add(listener);
    return () => this.closeListeners.delete(listener);
  }

  write(data: Uint8Array | string): Promise<void> {
    const bytes = typeof data === 'string' ? encoder.encode(data) : data;
    return this.enqueue(async (socket) => {
      for (let offset = 0; offset < bytes.byteLength; offset += CHANNEL_FRAME_BYTES) {
        this.assertOpen();
        socket.send(bytes.subarray(offset, offset + CHANNEL_FRAME_BYTES));
        await this.drain(socket);
      }
    });
  }

  /** One text frame (the HTTP module reads these as control messages, spec §2.11). */
  sendMessage(text: string): Promise<void> {
    return this.enqueue(async (socket) => {
      this.assertOpen();
      socket.send(text);
      await this.drain(socket);
    });
  }

  /** Flush pending writes and close; the reader then sees the end of the stream. Idempotent. */
  end(): Promise<void> {
    this.ending ??= (async () => {
      await this.tail;
      if (this.closed) return;
      // a writer that never wrote must still connect, or the reader would wait for the 5-minute sweep
      const socket = await this.open().catch(() => undefined);
      if (!socket || this.closed) return;
      await sleep(CLOSE_DELAY_MS);
      socket.close(1000, 'stream_complete');
      await this.waitClosed();
    })();
    return this.ending;
  }

  close(): Promise<void> {
    return this.end();
  }

  abort(reason: string): void {
    this.failure ??= new EngError(CHANNEL_CLOSED, `channel ${this.ref.channel_id} (write) closed: ${reason}`);
    this.socket?.terminate();
  }

  /** Serialised as its reference, so a writer can be passed on inside a payload. */
  toJSON(): ChannelRef {
    return this.ref;
  }

  private enqueue(operation: (socket: SocketAdapter) => Promise<void>): Promise<void> {
    if (this.ending) return Promise.reject(new EngError(CHANNEL_CLOSED, `channel ${this.ref.channel_id} (write) already ended`));
    // one operation at a time: concurrent writes must not interleave their frames
    const run = this.tail.then(async () => operation(await this.open()));
    this.tail = run.catch(() => undefined);
    return run;
  }

  private assertOpen(): void {
    if (this.closed || this.failure) throw this.failure ?? new EngError(CHANNEL_CLOSED, `channel ${this.ref.channel_id} (write) closed`);
  }

  private async drain(socket: SocketAdapter): Promise<void> {
    while (socket.bufferedAmount > HIGH_WATER_BYTES) {
      this.assertOpen();
      await sleep(1);
    }
  }

  private open(): Promise<SocketAdapter> {
    if (this.failure) return Promise.reject(this.failure);
    this.opening ??= new Promise<SocketAdapter>((resolve, reject) => {
      let lastError: Error | undefined;
      const handlers: SocketHandlers = {
        onOpen: () => resolve(this.socket as SocketAdapter),
        onMessage: () => {}, // the engine sends nothing to a writer
        onActivity: () => {},
        onError: (err) => {
          lastError = err;
        },
        onClose: (code, reason) => {
          this.closed = true;
          this.failure ??= closedError(this.ref, code, reason, lastError);
          this.host.untrack(this);
          reject(this.failure);
          for (const waiter of this.closedWaiters.splice(0)) waiter();
          for (const listener of this.closeListeners) {
            try {
              listener();
            } catch (err) {
              this.host.logger.warn(`channel ${this.ref.channel_id}: onClose listener threw`, err);
            }
          }
          this.closeListeners.clear();
        },
      };
      try {
        this.socket = this.host.createSocket(channelUrl(this.host.busUrl, this.ref), handlers, {
          headers: this.host.headers,
          handshakeTimeoutMs: HANDSHAKE_TIMEOUT_MS,
        });
        this.host.track(this);
      } catch (err) {
        this.failure = new EngError(CHANNEL_CLOSED, `cannot open channel ${this.ref.channel_id}: ${(err as Error).message}`);
        reject(this.failure);
      }
    });
    return this.opening;
  }

  private waitClosed(): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.socket?.terminate();
        resolve();
      }, CLOSE_WAIT_MS);
      this.closedWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

/**
 * Read end. Iterate it (`for await (const chunk of reader)`) for every frame in order: binary
 * frames as bytes, text frames as strings, unless `onMessage` listeners are registered, which
 * then receive the text frames instead. `readAll()` collects the binary frames into one array.
 */
export class ChannelReader implements ChannelEnd, AsyncIterable<Frame> {
  private socket?: SocketAdapter;
  private readonly queue: Frame[] = [];
  private queuedBytes = 0;
  private paused = false;
  private done = false;
  private failure?: EngError;
  private wake?: () => void;
  private iterating = false;
  private readonly listeners = new Set<(text: string) => void>();

  constructor(
    private readonly host: ChannelHost,
    readonly ref: ChannelRef,
  ) {}

  /** Receive text frames (control messages). Returns an unsubscribe function. */
  onMessage(listener: (text: string) => void): () => void {
    this.listeners.add(listener);
    this.start();
    return () => this.listeners.delete(listener);
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Frame, void, undefined> {
    if (this.iterating) throw new EngError(CHANNEL_CLOSED, `channel ${this.ref.channel_id} (read) is already being read`);
    this.iterating = true;
    this.start();
    try {
      while (true) {
        const frame = this.queue.shift();
        if (frame !== undefined) {
          this.queuedBytes -= frameBytes(frame);
          if (this.paused && this.queuedBytes < HIGH_WATER_BYTES / 2) {
            this.paused = false;
            this.socket?.resume?.();
          }
          yield frame;
          continue;
        }
        if (this.failure) throw this.failure;
        if (this.done) return;
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
      }
    } finally {
      // a consumer that stops early is done with the channel: let the writer know
      if (!this.done) this.close();
    }
  }

  /** Every binary frame until the writer ends, concatenated. */
  async readAll(): Promise<Uint8Array> {
    const chunks: Uint8Array[] = [];
    let total = 0;
    for await (const frame of this) {
      if (typeof frame === 'string') continue;
      chunks.push(frame);
      total += frame.byteLength;
    }
    const out = new Uint8Array(total);
    let offset = 0;
    for (const chunk of chunks) {
      out.set(chunk, offset);
      offset += chunk.byteLength;
    }
    return out;
  }

  close(): void {
    this.done = true;
    this.socket?.close(1000, 'channel_close');
    this.notify();
  }

  abort(reason: string): void {
    this.failure ??= new EngError(CHANNEL_CLOSED, `channel ${this.ref.channel_id} (read) closed: ${reason}`);
    this.socket?.terminate();
    this.notify();
  }

  toJSON(): ChannelRef {
    return this.ref;
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  private start(): void {
    if (this.socket || this.done || this.failure) return;
    let lastError: Error | undefined;
    const handlers: SocketHandlers = {
      onOpen: () => {},
      onActivity: () => {},
      onMessage: (data, isBinary) => {
        if (!isBinary && typeof data === 'string' && this.listeners.size > 0) {
          for (const listener of this.listeners) {
            try {
              listener(data);
            } catch (err) {
              this.host.logger.warn(`channel ${this.ref.channel_id}: onMessage listener threw`, err);
            }
          }
          return;
        }
        this.queue.push(data);
        this.queuedBytes += frameBytes(data);
        if (!this.paused && this.queuedBytes > HIGH_WATER_BYTES && this.socket?.pause) {
          this.paused = true;
          this.socket.pause();
        }
        this.notify();
      },
      onError: (err) => {
        lastError = err;
      },
      onClose: (code, reason) => {
        this.host.untrack(this);
        // 1000 (and 1005, no status) is the writer's normal end; anything else loses data
        if (code !== 1000 && code !== 1005 && !this.done) this.failure ??= closedError(this.ref, code, reason, lastError);
        this.done = true;
        this.notify();
      },
    };
    try {
      this.socket = this.host.createSocket(channelUrl(this.host.busUrl, this.ref), handlers, {
        headers: this.host.headers,
        handshakeTimeoutMs: HANDSHAKE_TIMEOUT_MS,
      });
      this.host.track(this);
    } catch (err) {
      this.failure = new EngError(CHANNEL_CLOSED, `cannot open channel ${this.ref.channel_id}: ${(err as Error).message}`);
    }
  }
}

export interface Channel {
  writer: ChannelWriter;
  reader: ChannelReader;
  writerRef: ChannelRef;
  readerRef: ChannelRef;
}

/**
 * spec §2.3.9 (last bullet): every channel reference anywhere in a payload becomes a live end.
 * Objects are copied only along paths that contain a reference; the rest is passed through.
 */
export function resolveChannelRefs(value: unknown, host: ChannelHost): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (isChannelRef(value)) return value.direction === 'read' ? new ChannelReader(host, value) : new ChannelWriter(host, value);
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((item) => {
      const resolved = resolveChannelRefs(item, host);
      if (resolved !== item) changed = true;
      return resolved;
    });
    return changed ? out : value;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null) return value;
  let changed = false;
  const entries = Object.entries(value).map(([key, item]) => {
    const resolved = resolveChannelRefs(item, host);
    if (resolved !== item) changed = true;
    return [key, resolved] as const;
  });
  // fromEntries defines own properties, so a `__proto__` key from JSON stays a plain key
  return changed ? Object.fromEntries(entries) : value;
}
