import type { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { TLSSocket } from 'node:tls';
import { isWebSocketUpgrade, sameOrigin } from '@eng/console/ws-proxy';

/**
 * `/ws` without a relay when the engine launched this worker (supervisor, `eng worker add console`):
 * the upgrade is checked here (same origin, a well-formed WebSocket handshake), then the browser's
 * TCP socket is sent to the engine over the IPC channel the supervisor opened, as Node's cluster
 * hands connections to its workers. The engine completes the handshake on that socket, and from
 * then on the browser talks to the bus directly: a call costs what a direct connection costs
 * (ARCHITECTURE.md: ≤ 1.15× a direct connection), and the connection outlives a restart of this
 * worker. Anything else — no IPC channel, a `--url` naming another engine, a refused check, a
 * send that fails — goes through the byte proxy as before.
 */

/** What `process` offers for the handoff (injectable for tests). */
export interface HandoffChannel {
  send?: (message: unknown, handle: Socket, options: { keepOpen: boolean }, callback: (error: Error | null) => void) => boolean;
  connected?: boolean;
  channel?: { unref(): void } | null;
}

/** Hand an upgrade to the engine; false when it must be proxied instead (nothing was sent). */
export type BusHandoff = (req: IncomingMessage, socket: Duplex, head: Buffer, fallback: () => void) => boolean;

/** The bus URL the handoff serves, compared without credentials, trailing slash or default port. */
function busKey(url: string): string | undefined {
  try {
    const u = new URL(url);
    if (u.protocol !== 'ws:') return undefined; // a wss:// engine is dialled through TLS: proxy it
    const path = u.pathname === '' ? '/' : u.pathname;
    return `${u.hostname.toLowerCase()}:${u.port || '80'}${path}${u.search}`;
  } catch {
    return undefined;
  }
}

export function createBusHandoff(options: {
  engineUrl: string;
  env: NodeJS.ProcessEnv;
  channel?: HandoffChannel;
  logger: { debug(message: string): void; warn(message: string): void };
}): BusHandoff | undefined {
  const { env, logger } = options;
  const channel = options.channel ?? (process as unknown as HandoffChannel);
  const offered = env.ENG_BUS_HANDOFF;
  if (!offered || typeof channel.send !== 'function') return undefined;
  const target = busKey(options.engineUrl);
  if (!target || target !== busKey(offered)) {
    logger.debug('/ws is proxied: the engine that launched this worker is not the one it serves');
    return undefined;
  }
  // the channel must not keep this process alive on its own (shutdown waits for sockets only)
  channel.channel?.unref();
  const path = new URL(options.engineUrl).pathname || '/';
  const send = channel.send.bind(channel);
  return (req, socket, head, fallback) => {
    if (!channel.connected || !(socket instanceof Socket) || socket instanceof TLSSocket) return false;
    // refusals (403, 400) are the proxy's to answer, with its messages
    if (!sameOrigin(req) || !isWebSocketUpgrade(req)) return false;
    // Stop reading before the socket leaves. `pause()` alone only pauses the stream: the handle
    // keeps reading until the engine acknowledges the handoff and this process closes its copy,
    // and whatever it reads in that window (the browser's first frames, sent as soon as the
    // engine's 101 arrives) would be swallowed here. With reading stopped, those bytes wait in
    // the kernel for the engine. Anything already read travels along with `head`.
    // (`read` may start the handle again, so the buffer is taken first.)
    socket.pause();
    const early = socket.readableLength > 0 ? (socket.read(socket.readableLength) as Buffer | null) : null;
    stopReading(socket);
    const rest = early && early.length > 0 ? Buffer.concat([head, early]) : head;
    const message = { type: 'eng:bus-adopt', path, headers: req.headers, head: rest.toString('base64') };
    // The socket leaves this process for good. Left attached to its server, Node would track it
    // as a connection the engine now serves, and `server.close()` here would wait until the engine
    // closed every handed-over page (a worker restart or an engine stop would hang its full grace
    // period). Detached, the server forgets it once it is sent.
    const owner = detachFromServer(socket);
    try {
      send(message, socket, { keepOpen: false }, (error) => {
        if (!error) {
          // its handle has gone to the engine: this only releases the server's count
          if (!handleOf(socket)) socket.destroy();
          return;
        }
        reattachToServer(socket, owner);
        logger.warn(`/ws handoff to the engine failed (${error.message}); proxying instead`);
        if (socket.destroyed) return;
        giveBack(socket, early);
        fallback();
      });
    } catch (error) {
      reattachToServer(socket, owner);
      logger.warn(`/ws handoff to the engine failed (${(error as Error).message}); proxying instead`);
      giveBack(socket, early);
      return false;
    }
    return true;
  };
}

type ReadableHandle = { reading?: boolean; readStop?: () => number; readStart?: () => number };

function handleOf(socket: Socket): ReadableHandle | null | undefined {
  return (socket as unknown as { _handle?: ReadableHandle | null })._handle;
}

/**
 * Stop the libuv handle under `socket` from reading, as `Socket#pause` does for sockets with an
 * `onread` buffer. The stream may still think a read is under way, so `giveBack` restarts it.
 */
function stopReading(socket: Socket): void {
  const handle = handleOf(socket);
  if (!handle || typeof handle.readStop !== 'function' || !handle.reading) return;
  handle.reading = false;
  handle.readStop();
}

/** The handoff failed and the socket stayed here: read it again, the early bytes first. */
function giveBack(socket: Socket, early: Buffer | null): void {
  if (early && early.length > 0) socket.unshift(early);
  const handle = handleOf(socket);
  if (handle && !handle.reading && typeof handle.readStart === 'function') {
    handle.reading = true;
    if (handle.readStart() !== 0) {
      socket.destroy();
      return;
    }
  }
  socket.resume();
}

/** `socket.server` names the listening server to `child_process.send`, which then tracks the socket. */
function detachFromServer(socket: Socket): unknown {
  const holder = socket as unknown as { server?: unknown };
  const owner = holder.server;
  holder.server = null;
  return owner;
}

function reattachToServer(socket: Socket, owner: unknown): void {
  (socket as unknown as { server?: unknown }).server = owner;
}
