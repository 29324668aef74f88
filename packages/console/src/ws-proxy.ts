import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import { redactUrl } from './redact.ts';

/**
 * A transparent WebSocket proxy: one upstream connection per browser connection, messages relayed
 * 1:1 both ways (text stays text, binary stays binary), ping/pong relayed rather than answered
 * locally, close codes and reasons passed through, no message-size cap, and both legs torn down
 * together. Shared by eng-console (`/ws`, `/ws/streams`) and the console worker (issue 7 §3).
 */

export interface WsProxyLogger {
  debug(message: string): void;
  warn(message: string): void;
}

export interface WsProxyOptions {
  /** Upstream URL, fixed or per request. */
  target: string | ((req: IncomingMessage) => string);
  /** Refuse upgrades whose `Origin` host differs from `Host` (403). Default true. */
  checkOrigin?: boolean;
  /** Upstream handshake deadline. Default 5000 ms. */
  connectTimeoutMs?: number;
  /** Pause the sending side while the receiving side has more than this buffered. Default 16 MiB. */
  highWaterMark?: number;
  logger?: WsProxyLogger;
}

export interface WsProxy {
  /** Handle an HTTP upgrade for this proxy; the caller has already matched the path. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Connection pairs currently open. */
  readonly size: number;
  /** Close every pair (code 1001 by default) and resolve once both legs are gone. */
  close(code?: number, reason?: string): Promise<void>;
}

const MAX_REASON_BYTES = 123; // RFC 6455 §5.5: control frame payload 125 bytes, 2 for the code

export function truncateReason(reason: string): string {
  let out = reason;
  while (Buffer.byteLength(out) > MAX_REASON_BYTES) out = out.slice(0, -1);
  return out;
}

/** True when the request's Origin (if any) names the host it was sent to. */
export function sameOrigin(req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  if (!origin) return true; // not a browser: nothing to protect against
  const host = req.headers.host;
  if (!host) return false;
  try {
    const url = new URL(origin);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
    // compare with default ports made explicit: `Host: x:80` and `Origin: http://x` are the same origin
    const originPort = url.port || (url.protocol === 'https:' ? '443' : '80');
    const hostUrl = new URL(`${url.protocol}//${host}`);
    const hostPort = hostUrl.port || (url.protocol === 'https:' ? '443' : '80');
    return url.hostname.toLowerCase() === hostUrl.hostname.toLowerCase() && originPort === hostPort;
  } catch {
    return false;
  }
}

function refuse(socket: Duplex, status: number, text: string): void {
  const body = `${text}\n`;
  socket.end(
    `HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

const quiet: WsProxyLogger = { debug: () => undefined, warn: () => undefined };

function isValidCloseCode(code: number): boolean {
  return (code >= 1000 && code <= 1014 && code !== 1004 && code !== 1005 && code !== 1006) || (code >= 3000 && code <= 4999);
}

/** Close `ws` the way its peer closed the other leg. */
function mirrorClose(ws: WebSocket, code: number, reason: Buffer): void {
  if (ws.readyState === WebSocket.CLOSED) return;
  if (ws.readyState === WebSocket.CONNECTING) {
    ws.terminate();
    return;
  }
  if (isValidCloseCode(code)) ws.close(code, reason);
  else if (code === 1005) ws.close();
  else ws.terminate(); // 1006 and friends cannot be sent: drop the connection as the peer did
}

export function createWsProxy(options: WsProxyOptions): WsProxy {
  const logger = options.logger ?? quiet;
  const highWaterMark = options.highWaterMark ?? 16 * 1024 * 1024;
  // no frame cap (issue 7 §3: a capped proxy broke large trace responses); pings relayed, not auto-answered
  const wss = new WebSocketServer({ noServer: true, maxPayload: 0, perMessageDeflate: false, autoPong: false, clientTracking: false });
  const pairs = new Set<{ client: WebSocket; upstream: WebSocket }>();
  const pendingUpstreams = new Set<WebSocket>();
  let closing = false;

  const pipe = (client: WebSocket, upstream: WebSocket) => {
    const pair = { client, upstream };
    pairs.add(pair);
    const relay = (from: WebSocket, to: WebSocket) => {
      from.on('message', (data, isBinary) => {
        if (to.readyState !== WebSocket.OPEN) return;
        to.send(data as Buffer, { binary: isBinary }, () => {
          if (from.isPaused && to.bufferedAmount < highWaterMark) from.resume();
        });
        // backpressure: a slow receiver must not make the proxy buffer without bound
        if (to.bufferedAmount >= highWaterMark && !from.isPaused) from.pause();
      });
      from.on('ping', (data) => {
        if (to.readyState === WebSocket.OPEN) to.ping(data);
      });
      from.on('pong', (data) => {
        if (to.readyState === WebSocket.OPEN) to.pong(data);
      });
      from.on('close', (code, reason) => {
        pairs.delete(pair);
        mirrorClose(to, code, reason);
      });
      from.on('error', (err) => {
        logger.debug(`ws proxy leg error: ${err.message}`);
        to.terminate();
      });
    };
    relay(client, upstream);
    relay(upstream, client);
  };

  const handleUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (closing) {
      refuse(socket, 503, 'Service Unavailable');
      return;
    }
    if (options.checkOrigin !== false && !sameOrigin(req)) {
      logger.warn(`ws proxy: refused a cross-origin upgrade from ${req.headers.origin}`);
      refuse(socket, 403, 'Forbidden');
      return;
    }
    const target = typeof options.target === 'function' ? options.target(req) : options.target;
    const protocols = (req.headers['sec-websocket-protocol'] ?? '')
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean);
    let upstream: WebSocket;
    try {
      upstream = new WebSocket(target, protocols, {
        maxPayload: 0,
        perMessageDeflate: false,
        autoPong: false,
        handshakeTimeout: options.connectTimeoutMs ?? 5000,
      });
    } catch (err) {
      // a malformed target URL: the browser still learns why, the server stays up
      logger.warn(`ws proxy: cannot dial ${redactUrl(target)}: ${(err as Error).message}`);
      wss.handleUpgrade(req, socket, head, (client) =>
        client.close(1011, truncateReason(`engine unreachable at ${redactUrl(target)}: invalid URL`)),
      );
      return;
    }
    pendingUpstreams.add(upstream);
    let settled = false;
    // the browser hung up while we were still dialling the engine
    const onEarlyClose = () => {
      if (!settled) {
        settled = true;
        pendingUpstreams.delete(upstream);
        upstream.terminate();
      }
    };
    socket.once('close', onEarlyClose);

    upstream.once('open', () => {
      if (settled) return;
      settled = true;
      pendingUpstreams.delete(upstream);
      socket.off('close', onEarlyClose);
      wss.handleUpgrade(req, socket, head, (client) => {
        if (upstream.readyState !== WebSocket.OPEN) {
          client.close(1011, truncateReason(`engine connection closed at ${redactUrl(target)}`));
          return;
        }
        pipe(client, upstream);
      });
    });
    const fail = (why: string) => {
      if (settled) return;
      settled = true;
      pendingUpstreams.delete(upstream);
      socket.off('close', onEarlyClose);
      upstream.terminate();
      if (socket.destroyed) return;
      logger.debug(`ws proxy: ${why}`);
      // accept, then close 1011 with the reason: a browser cannot read an HTTP error on an upgrade
      wss.handleUpgrade(req, socket, head, (client) =>
        client.close(1011, truncateReason(`engine unreachable at ${redactUrl(target)}: ${why}`)),
      );
    };
    upstream.once('error', (err) => fail((err as NodeJS.ErrnoException).code ?? err.message));
    upstream.once('unexpected-response', (_req, res) => fail(`HTTP ${res.statusCode}`));
  };

  return {
    handleUpgrade,
    get size() {
      return pairs.size;
    },
    async close(code = 1001, reason = 'proxy shutting down') {
      closing = true;
      for (const upstream of pendingUpstreams) upstream.terminate();
      pendingUpstreams.clear();
      const waits: Promise<void>[] = [];
      for (const { client, upstream } of pairs) {
        for (const ws of [client, upstream]) {
          if (ws.readyState === WebSocket.CLOSED) continue;
          waits.push(new Promise<void>((resolve) => ws.once('close', () => resolve())));
          ws.close(code, truncateReason(reason));
        }
      }
      const force = setTimeout(() => {
        for (const { client, upstream } of pairs) {
          client.terminate();
          upstream.terminate();
        }
      }, 1500);
      await Promise.all(waits);
      clearTimeout(force);
      pairs.clear();
    },
  };
}
