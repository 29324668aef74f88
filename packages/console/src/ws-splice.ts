import type { Socket } from 'node:net';
import { FrameTracker } from './ws-frames.ts';

/**
 * Two TCP connections that carry one WebSocket session, spliced byte for byte (issue 7 §3): the
 * browser's (we are its server) and the engine's (we are its client). Payloads are never parsed or
 * copied; a FrameTracker per direction follows the frame headers so a close frame can be put in at a
 * frame boundary on shutdown.
 */

/** One direction of a splice: bytes read from `src` are written to `dst`. */
class Direction {
  readonly tracker = new FrameTracker();
  /** A close frame has reached `dst`, relayed or injected: nothing more may follow it (RFC 6455 §5.5.1). */
  closeSent = false;
  /** A close frame waiting for the frame in flight to end. */
  private pendingClose: Buffer | null = null;
  private paused = false;

  constructor(
    private readonly src: Socket,
    private readonly dst: Socket,
    private readonly highWaterMark: number,
    private readonly onCloseProgress: () => void,
  ) {
    dst.on('drain', () => {
      if (this.paused) {
        this.paused = false;
        src.resume();
      }
    });
  }

  readonly onData = (chunk: Buffer): void => {
    if (this.pendingClose === null && !this.closeSent) {
      // the hot path: count frame headers, write the chunk as it came
      this.tracker.advance(chunk);
      this.write(chunk);
      if (this.tracker.closed) {
        this.closeSent = true;
        this.onCloseProgress();
      }
      return;
    }
    if (this.pendingClose !== null) {
      const boundary = this.tracker.advance(chunk, 0, true);
      if (boundary > 0) this.write(boundary === chunk.length ? chunk : chunk.subarray(0, boundary));
      if (!this.tracker.atBoundary) return;
      if (this.tracker.closed) {
        // the frame in flight was the peer's own close: ours would be a second one
        this.pendingClose = null;
        this.closeSent = true;
      } else this.inject(this.pendingClose);
      if (boundary < chunk.length) this.tracker.advance(chunk, boundary);
    } else {
      this.tracker.advance(chunk); // after our close: dropped, but watched for the peer's close reply
    }
    if (this.tracker.closed) this.onCloseProgress();
  };

  /** Send `frame` (a close) at the next frame boundary, unless a close already went this way. */
  closeWith(frame: Buffer): void {
    if (this.closeSent || this.pendingClose !== null) return;
    if (this.tracker.atBoundary) this.inject(frame);
    else this.pendingClose = frame;
  }

  private inject(frame: Buffer): void {
    this.pendingClose = null;
    this.closeSent = true;
    this.write(frame);
    this.onCloseProgress();
  }

  write(chunk: Buffer): void {
    const dst = this.dst;
    if (!dst.writable) return;
    // backpressure: a slow reader pauses the other side instead of growing our buffer
    if (!dst.write(chunk) && !this.paused && dst.writableLength >= this.highWaterMark) {
      this.paused = true;
      this.src.pause();
    }
  }
}

export class SplicedPair {
  private readonly toUpstream: Direction;
  private readonly toBrowser: Direction;
  private openSockets = 2;
  private readonly lingerTimers: NodeJS.Timeout[] = [];
  /** Resolves once both sockets are closed. */
  readonly closed: Promise<void>;

  constructor(
    private readonly browser: Socket,
    private readonly upstream: Socket,
    options: { highWaterMark: number; lingerMs: number; onFirstClose: () => void; onError: (message: string) => void },
  ) {
    browser.setNoDelay(true);
    upstream.setNoDelay(true);
    this.toUpstream = new Direction(browser, upstream, options.highWaterMark, () => this.closeProgress());
    this.toBrowser = new Direction(upstream, browser, options.highWaterMark, () => this.closeProgress());
    let resolveClosed: () => void = () => undefined;
    this.closed = new Promise((resolve) => {
      resolveClosed = resolve;
    });
    let first = true;
    for (const [socket, other] of [
      [browser, upstream],
      [upstream, browser],
    ] as const) {
      // a TCP end on one leg ends the other (a drop without a close frame stays a drop: 1006)
      socket.on('end', () => {
        if (other.writable) other.end();
      });
      socket.on('error', (err) => {
        options.onError(err.message);
        socket.destroy();
        other.destroy();
      });
      socket.on('close', () => {
        if (first) {
          first = false;
          options.onFirstClose();
        }
        if (!other.destroyed) {
          if (other.writable) other.end();
          // a peer that never closes its side does not keep the socket forever
          this.lingerTimers.push(setTimeout(() => other.destroy(), options.lingerMs).unref());
        }
        if (--this.openSockets === 0) {
          for (const timer of this.lingerTimers) clearTimeout(timer);
          resolveClosed();
        }
      });
    }
  }

  /** Start relaying: `fromBrowser` and `fromUpstream` are bytes already read from each side. */
  start(fromBrowser: Buffer[], fromUpstream: Buffer): void {
    if (fromUpstream.length > 0) this.toBrowser.onData(fromUpstream);
    for (const chunk of fromBrowser) this.toUpstream.onData(chunk);
    this.upstream.on('data', this.toBrowser.onData);
    this.browser.on('data', this.toUpstream.onData);
  }

  /** Close both legs with a close frame at the next frame boundary of each direction. */
  shutdown(toBrowser: Buffer, toUpstream: Buffer): void {
    this.toBrowser.closeWith(toBrowser);
    this.toUpstream.closeWith(toUpstream);
  }

  destroy(): void {
    this.browser.destroy();
    this.upstream.destroy();
  }

  private closeProgress(): void {
    // RFC 6455 §7.1.1: once close frames went both ways, the server (here, to the browser) closes TCP
    // first; the engine, our server, closes the upstream leg itself and its end is passed along
    if (this.toBrowser.closeSent && this.toUpstream.tracker.closed && this.browser.writable) this.browser.end();
  }
}
