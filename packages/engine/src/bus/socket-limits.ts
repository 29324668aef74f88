import { readFileSync } from 'node:fs';
import type { Server, ServerOptions } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import { z } from 'zod';

// Issue 12 item 8: sockets that never send a byte, and more sockets than file descriptors, must
// not lock everyone out. Shared by the three listening ports (bus, eng-http, streams): a deadline
// for the request head / WebSocket upgrade, a connection cap, and for WebSockets a heartbeat.

const CAP = 4096;

/** The process's soft limit on open files (Linux `/proc/self/limits`); undefined when unknown. */
export function openFileLimit(): number | undefined {
  try {
    const match = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Default `max_connections` per port: 4096, but at most a quarter of the open-file limit, so the
 * three ports together still leave a quarter of the descriptors for files, SQLite, Redis and
 * the workers the supervisor runs.
 */
export function defaultMaxConnections(): number {
  const limit = openFileLimit();
  return limit === undefined ? CAP : Math.max(16, Math.min(CAP, Math.floor(limit / 4)));
}

/** `max_connections`: open sockets per port; more are closed at once, with a warning (at most one per 10 s). */
export const MaxConnectionsSchema = z.number().int().positive().optional();
/** A WebSocket port's heartbeat: a ping every interval; nothing received for the timeout closes the socket. */
export const HeartbeatIntervalSchema = z.number().int().positive().default(30_000);
export const HeartbeatTimeoutSchema = z.number().int().positive().default(90_000);

/** `.refine(...heartbeatRefinement)` on a config with both heartbeat keys: a healthy idle client only speaks when pinged. */
export const heartbeatRefinement: [
  (c: { heartbeat_interval_ms: number; heartbeat_timeout_ms: number }) => boolean,
  { message: string; path: string[] },
] = [
  (c) => c.heartbeat_timeout_ms > c.heartbeat_interval_ms,
  { message: 'must be longer than heartbeat_interval_ms: a healthy idle client only answers each ping', path: ['heartbeat_timeout_ms'] },
];

/**
 * node:http checks `headersTimeout` / `requestTimeout` on an interval (30 s by default), so a
 * socket that never sends a byte lived up to 30 s past its deadline; check often enough that it
 * closes within about a tenth of the timeout (at most 1 s late).
 */
export function checkingInterval(timeoutMs: number): number {
  return Math.max(50, Math.min(1000, Math.floor(timeoutMs / 10)));
}

/**
 * Options for `createServer`: the request head (or WebSocket upgrade request) must arrive within
 * `headersTimeoutMs` of the connection opening, else the socket is closed (408 when possible).
 */
export function headerDeadline(headersTimeoutMs: number, requestTimeoutMs = headersTimeoutMs): ServerOptions {
  return {
    headersTimeout: headersTimeoutMs,
    // node refuses a request timeout shorter than the headers timeout
    requestTimeout: Math.max(requestTimeoutMs, headersTimeoutMs),
    connectionsCheckingInterval: checkingInterval(headersTimeoutMs),
  };
}

const WARN_EVERY_MS = 10_000;

/**
 * Cap the open connections of `server` (upgraded WebSockets included: node counts a socket until
 * it closes). Beyond the cap node closes new sockets at once; one warning names the port and the
 * config key, then at most one per 10 s with the number refused meanwhile.
 */
export function capConnections(
  server: Server,
  maxConnections: number,
  where: string,
  configKey: string,
  warn: (message: string) => void,
): void {
  server.maxConnections = maxConnections;
  let lastWarnAt = 0;
  let refused = 0;
  let timer: NodeJS.Timeout | undefined;
  const report = () => {
    timer = undefined;
    lastWarnAt = Date.now();
    const address = server.address();
    const on = typeof address === 'object' && address ? ` on ${address.address}:${address.port}` : '';
    warn(
      `refused ${refused} connection(s) to the ${where}${on}: max_connections (${maxConnections}) are open. ` +
        `Raise ${configKey} or find the client holding them.`,
    );
    refused = 0;
  };
  server.on('drop', () => {
    refused++;
    if (timer) return;
    const wait = lastWarnAt + WARN_EVERY_MS - Date.now();
    if (wait <= 0) report();
    else {
      timer = setTimeout(report, wait);
      timer.unref();
    }
  });
  server.once('close', () => {
    if (timer) clearTimeout(timer);
  });
}

interface Watched {
  ws: WebSocket;
  lastSeen: number;
}

/**
 * WebSocket heartbeat: every `intervalMs` each socket is sent a ping (browsers, `ws` and Python's
 * `websockets` answer on their own); a socket that has sent nothing at all — no frame, no pong —
 * for `timeoutMs` is closed. An idle worker that answers pings stays connected forever.
 */
export class Heartbeat {
  private readonly watched = new Set<Watched>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    intervalMs: number,
    private readonly timeoutMs: number,
  ) {
    this.timer = setInterval(() => this.tick(), intervalMs);
    this.timer.unref();
  }

  /** Watch an accepted WebSocket; `socket` is the connection it runs on (the upgrade's socket). */
  watch(ws: WebSocket, socket: Duplex): void {
    const entry: Watched = { ws, lastSeen: Date.now() };
    this.watched.add(entry);
    // any bytes count, so a large frame still arriving keeps its socket alive; ws reads with 'data' too
    socket.on('data', () => {
      entry.lastSeen = Date.now();
    });
    ws.once('close', () => this.watched.delete(entry));
  }

  get size(): number {
    return this.watched.size;
  }

  stop(): void {
    clearInterval(this.timer);
    this.watched.clear();
  }

  private tick(): void {
    const now = Date.now();
    for (const entry of this.watched) {
      const { ws } = entry;
      if (ws.readyState !== ws.OPEN) continue;
      // a socket we paused (channel backpressure) is not read: its pongs wait unread
      if (ws.isPaused) entry.lastSeen = now;
      if (now - entry.lastSeen > this.timeoutMs) {
        this.watched.delete(entry);
        ws.terminate();
        continue;
      }
      try {
        ws.ping();
      } catch {
        // closing meanwhile: the close handler forgets it
      }
    }
  }
}

/** A connection is refused only once it has received this much of a frame: small frames always pass. */
const LARGE_FRAME_BYTES = 64 * 1024;

/**
 * Issue 12 item 13: a global budget for bytes of WebSocket frames being received. `ws` buffers a
 * frame whole before handing it over, so 24 connections each sending a 60 MB frame held 1.5 GB.
 * Every chunk read from a watched socket counts until its connection completes a frame (message,
 * ping or pong); while the total is over `maxBytes`, a connection that has received more than
 * 64 KiB of its current frame is closed with 1009 and a reason naming the key, and no longer read
 * (its bytes leave the budget then).
 * The count is per chunk, so it may be off by one chunk per connection (at most 64 KiB).
 */
export class FrameBudget {
  private total = 0;
  private lastWarnAt = 0;
  private unreported = 0;

  constructor(
    readonly maxBytes: number,
    private readonly where: string,
    private readonly configKey: string,
    private readonly warn: (message: string) => void,
  ) {}

  /** Bytes of frames being received now, across connections. */
  get inFlight(): number {
    return this.total;
  }

  /** Watch an accepted WebSocket and the socket it runs on (the upgrade's socket). */
  watch(ws: WebSocket, socket: Duplex): void {
    let pending = 0;
    let refused = false;
    const release = () => {
      this.total -= pending;
      pending = 0;
    };
    // ahead of ws's own listener: a chunk that completes a frame is counted, then released below
    socket.prependListener('data', (chunk: Buffer) => {
      if (refused) return;
      pending += chunk.length;
      this.total += chunk.length;
      if (this.total > this.maxBytes && pending > LARGE_FRAME_BYTES) {
        refused = true;
        this.refuse(ws, socket, pending);
        // its bytes leave the budget now: the socket is read no more and goes within a second, and
        // a connection finishing a frame meanwhile must not be refused for bytes already given up
        release();
      }
    });
    // control frames (ping, pong) may come between the fragments of a message: each releases only
    // its own bytes (a client frame is masked: 2 header bytes, a 4-byte key, at most 125 of payload),
    // or a peer could keep a large fragmented frame out of the budget by pinging between fragments
    const control = (data: Buffer) => {
      const own = Math.min(pending, 6 + data.length);
      pending -= own;
      this.total -= own;
    };
    ws.on('message', release);
    ws.on('ping', control);
    ws.on('pong', control);
    ws.once('close', release);
  }

  private refuse(ws: WebSocket, socket: Duplex, pending: number): void {
    const total = this.total;
    try {
      ws.close(1009, `engine busy: frames in flight over ${this.configKey.split(' ')[0]} (${this.maxBytes} bytes)`);
    } catch {
      // closing already
    }
    // read no more of the frame; the peer cannot finish the close handshake behind it
    socket.pause();
    setTimeout(() => ws.terminate(), 1000).unref();
    this.unreported++;
    const now = Date.now();
    if (now - this.lastWarnAt < WARN_EVERY_MS) return;
    const others = this.unreported > 1 ? ` (${this.unreported - 1} more since the last warning)` : '';
    this.lastWarnAt = now;
    this.unreported = 0;
    this.warn(
      `closed a ${this.where} connection receiving a ${pending}-byte frame (so far): ${total} bytes of frames were in flight ` +
        `across connections, over the budget of ${this.maxBytes} bytes${others}. Raise ${this.configKey} if this is expected load.`,
    );
  }
}
