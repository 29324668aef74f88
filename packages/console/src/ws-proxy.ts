import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { redactText, redactUrl } from './redact.ts';
import { acceptFor, dialUpstream, UPSTREAM_PROTOCOLS } from './ws-dial.ts';
import { closeFrame, MAX_CLOSE_REASON_BYTES } from './ws-frames.ts';
import { SplicedPair } from './ws-splice.ts';

/**
 * A transparent WebSocket proxy: one upstream connection per browser connection, messages relayed
 * 1:1 both ways (text stays text, binary stays binary), ping/pong relayed rather than answered
 * locally, close codes and reasons passed through, no message-size cap, and both legs torn down
 * together. Shared by eng-console (`/ws`, `/ws/streams`) and the console worker (issue 7 §3).
 *
 * After the handshake it moves bytes, not messages (ARCHITECTURE.md budget: ≤ 1.15× the latency of a
 * direct connection): the engine is dialled with the browser's own Sec-WebSocket-Key, its 101 goes
 * back to the browser, and the two TCP connections are spliced (ws-splice.ts).
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

export function truncateReason(reason: string): string {
  let out = reason;
  while (Buffer.byteLength(out) > MAX_CLOSE_REASON_BYTES) out = out.slice(0, -1);
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
const KEY_PATTERN = /^[+/0-9A-Za-z]{22}==$/;
/** Bytes a browser may send before its 101 (it should send none). */
const MAX_EARLY_BYTES = 64 * 1024;
/** How long a leg may stay half-closed after the other one closed. */
const LINGER_MS = 30_000;
const FORCE_CLOSE_MS = 1500;

/** The checks `ws` makes on an upgrade request, made before dialling the engine. */
export function isWebSocketUpgrade(req: IncomingMessage): boolean {
  const key = req.headers['sec-websocket-key'];
  const version = req.headers['sec-websocket-version'];
  return (
    req.method === 'GET' &&
    req.headers.upgrade?.toLowerCase() === 'websocket' &&
    typeof key === 'string' &&
    KEY_PATTERN.test(key) &&
    (version === '13' || version === '8')
  );
}

export function createWsProxy(options: WsProxyOptions): WsProxy {
  const logger = options.logger ?? quiet;
  const highWaterMark = options.highWaterMark ?? 16 * 1024 * 1024;
  const connectTimeoutMs = options.connectTimeoutMs ?? 5000;
  // only for the failure paths: accept the browser so it can read a 1011 and its reason
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, clientTracking: false });
  const pairs = new Set<SplicedPair>();
  const pendingDials = new Set<() => void>();
  let closing = false;

  const acceptAndClose = (req: IncomingMessage, socket: Duplex, head: Buffer, reason: string) => {
    // a browser cannot read an HTTP error on an upgrade: accept, then close 1011 with the reason
    wss.handleUpgrade(req, socket, head, (client) => client.close(1011, truncateReason(reason)));
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
    if (!isWebSocketUpgrade(req)) {
      wss.handleUpgrade(req, socket, head, (client) => client.terminate()); // answers 400 with the reason
      return;
    }
    const target = typeof options.target === 'function' ? options.target(req) : options.target;
    let url: URL;
    try {
      url = new URL(target);
      if (!UPSTREAM_PROTOCOLS.has(url.protocol) || url.hash) throw new Error(`unsupported URL ${redactUrl(target)}`);
    } catch (err) {
      // a malformed target URL: the browser still learns why, the server stays up
      logger.warn(`ws proxy: cannot dial ${redactUrl(target)}: ${(err as Error).message}`);
      acceptAndClose(req, socket, head, `engine unreachable at ${redactUrl(target)}: invalid URL`);
      return;
    }

    const browser = socket as Socket;
    // bytes the browser sends while we dial are kept (and bounded), a hang-up aborts the dial
    const early: Buffer[] = head.length > 0 ? [head] : [];
    let earlyBytes = head.length;
    const onEarlyData = (chunk: Buffer) => {
      early.push(chunk);
      earlyBytes += chunk.length;
      if (earlyBytes > MAX_EARLY_BYTES) browser.destroy();
    };
    const onEarlyError = (err: Error) => logger.debug(`ws proxy: browser socket error while dialling: ${err.message}`);
    const onEarlyGone = () => abort();
    const detach = () => {
      pendingDials.delete(refuseDuringShutdown);
      browser.off('data', onEarlyData);
      browser.off('error', onEarlyError);
      browser.off('end', onEarlyGone);
      browser.off('close', onEarlyGone);
    };
    const abort = () => {
      detach();
      dial.abort();
      browser.destroy();
    };
    const refuseDuringShutdown = () => {
      detach();
      dial.abort();
      refuse(browser, 503, 'Service Unavailable');
    };
    browser.on('data', onEarlyData);
    browser.on('error', onEarlyError);
    browser.once('end', onEarlyGone);
    browser.once('close', onEarlyGone);
    pendingDials.add(refuseDuringShutdown);

    const key = req.headers['sec-websocket-key'] as string;
    const dial = dialUpstream(
      {
        url,
        key,
        version: req.headers['sec-websocket-version'] as string,
        protocol: req.headers['sec-websocket-protocol'],
        timeoutMs: connectTimeoutMs,
      },
      (error, dialed) => {
        detach();
        if (error !== null || !dialed) {
          if (browser.destroyed) return;
          const cause = redactText(String(error));
          logger.debug(`ws proxy: ${redactUrl(target)}: ${cause}`);
          acceptAndClose(req, browser, Buffer.concat(early), `engine unreachable at ${redactUrl(target)}: ${cause}`);
          return;
        }
        if (browser.destroyed || !browser.writable) {
          dialed.socket.destroy();
          return;
        }
        // the engine's accept was computed from the browser's key: valid end to end
        browser.write(
          `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${acceptFor(key)}\r\n${
            dialed.protocol ? `Sec-WebSocket-Protocol: ${dialed.protocol}\r\n` : ''
          }\r\n`,
        );
        const pair = new SplicedPair(browser, dialed.socket, {
          highWaterMark,
          lingerMs: LINGER_MS,
          onFirstClose: () => pairs.delete(pair),
          onError: (message) => logger.debug(`ws proxy leg error: ${message}`),
        });
        pairs.add(pair);
        pair.start(early, dialed.rest);
      },
    );
  };

  return {
    handleUpgrade,
    get size() {
      return pairs.size;
    },
    async close(code = 1001, reason = 'proxy shutting down') {
      closing = true;
      for (const refuseDial of [...pendingDials]) refuseDial();
      const why = Buffer.from(truncateReason(reason));
      const open = [...pairs];
      for (const pair of open) pair.shutdown(closeFrame(code, why, false), closeFrame(code, why, true));
      const force = setTimeout(() => {
        for (const pair of open) pair.destroy();
      }, FORCE_CLOSE_MS);
      await Promise.all(open.map((pair) => pair.closed));
      clearTimeout(force);
      pairs.clear();
    },
  };
}
