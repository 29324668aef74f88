import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { ConsoleApi } from '@eng/console/console-api';
import { hostAllowed } from '@eng/console/host-check';
import { redactText } from '@eng/console/redact';
import { IMMUTABLE, NO_CACHE, sendAsset } from '@eng/console/static-assets';
import { createWsProxy, sameOrigin, type WsProxy } from '@eng/console/ws-proxy';
import type { BusHandoff } from './bus-handoff.ts';
import type { EmbeddedAsset } from './embedded.ts';

/**
 * The console worker's one port (seed table 4.2): `GET /` → embedded index.html, `GET /assets/*`
 * → embedded content-hashed files, `/ws` upgrade → transparent proxy to the engine bus (the
 * shared @eng/console proxy: one engine connection per browser connection, no frame cap,
 * 1011 when the engine is unreachable, cross-origin upgrades refused), anything else → 404.
 * Like eng-console it also serves `/_console/*` and `/ws/streams` (issue 19 §1: the console
 * `npm start` opens must have every feature of eng-console), from @eng/console/console-api.
 * Every route, `/ws` included, first checks the Host header against DNS rebinding (host-check.ts).
 */
export interface ServerLogger {
  info(message: string): void;
  warn(message: string): void;
  debug(message: string): void;
}

export interface HttpServerOptions {
  host: string;
  port: number;
  engineUrl: string;
  assets: Map<string, EmbeddedAsset>;
  logger: ServerLogger;
  /** Hands `/ws` upgrades to the engine that launched this worker (bus-handoff.ts); else they are proxied. */
  handoff?: BusHandoff;
  /** `/_console/*` and `/ws/streams`, shared with eng-console (invoke, config, probes, HTTP test, streams). */
  api?: ConsoleApi;
}

export interface ConsoleHttpServer {
  server: Server;
  port: number;
  /** Base URL that opens the UI, e.g. `http://127.0.0.1:3113/`. */
  url: string;
  proxy: WsProxy;
  /** Stop accepting, close proxied sockets (1001), let in-flight requests finish within `graceMs`. */
  close(graceMs?: number): Promise<void>;
}

/** Defensive headers of the reference worker, on every response (console-worker spec §1.6). */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "frame-ancestors 'none'; object-src 'none'; base-uri 'none'",
  'cross-origin-resource-policy': 'same-origin',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
};

/** The URL to open: an unspecified bind address maps to loopback (spec §1.5). */
export function uiUrl(host: string, port: number): string {
  const shown = host === '0.0.0.0' || host === '' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}/`;
}

function sendText(res: ServerResponse, status: number, text: string, extra: Record<string, string> = {}): void {
  const body = `${text}\n`;
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    'content-type': 'text/plain; charset=utf-8',
    'cache-control': 'no-store',
    'content-length': String(Buffer.byteLength(body)),
    ...extra,
  });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

function refuseUpgrade(socket: Duplex, status: 403 | 404, text: string): void {
  const body = `${text}\n`;
  socket.on('error', () => undefined);
  socket.end(
    `HTTP/1.1 ${status} ${status === 403 ? 'Forbidden' : 'Not Found'}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

function serveAsset(req: IncomingMessage, res: ServerResponse, asset: EmbeddedAsset, cacheControl: string): void {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    sendText(res, 405, 'method not allowed', { allow: 'GET, HEAD' });
    return;
  }
  const headers: Record<string, string> = {
    ...SECURITY_HEADERS,
    'content-type': asset.type,
    'cache-control': cacheControl,
    etag: asset.etag,
    vary: 'Accept-Encoding',
  };
  sendAsset(req, res, asset, headers);
}

/** How many distinct refusals are logged at warn (a page retrying in a loop logs once). */
const MAX_WARNED = 50;

export async function startHttpServer(options: HttpServerOptions): Promise<ConsoleHttpServer> {
  const { assets, logger } = options;
  let port = options.port;
  const warned = new Set<string>();
  const warnOnce = (message: string) => {
    if (warned.has(message) || warned.size >= MAX_WARNED) return;
    warned.add(message);
    logger.warn(message);
  };
  /** Undefined when the Host may be served; else the refusal text (the UI, the API and /ws alike). */
  const hostRefusal = (req: IncomingMessage): string | undefined => {
    if (hostAllowed(options.host, req.headers.host)) return undefined;
    const host = (req.headers.host ?? '(none)').slice(0, 200);
    warnOnce(`refused a request for Host ${host}: this console answers to loopback names only (DNS rebinding protection)`);
    return `forbidden: Host ${host} is not this console's address (DNS rebinding protection); open ${uiUrl(options.host, port)}`;
  };
  const proxy = createWsProxy({
    target: options.engineUrl,
    logger: { debug: (m) => logger.debug(redactText(m)), warn: (m) => logger.warn(redactText(m)) },
  });

  const server = createServer((req, res) => {
    const refusal = hostRefusal(req);
    if (refusal) return sendText(res, 403, refusal);
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (path === '/') {
      const index = assets.get('/index.html');
      if (index) return serveAsset(req, res, index, NO_CACHE);
    } else if (path.startsWith('/assets/')) {
      const asset = assets.get(path);
      if (asset) return serveAsset(req, res, asset, IMMUTABLE);
    } else if (path === '/ws' || (path === '/ws/streams' && options.api)) {
      return sendText(res, 426, `upgrade required: ${path} is a WebSocket endpoint`, { upgrade: 'websocket', connection: 'Upgrade' });
    } else if (path.startsWith('/_console/') && options.api) {
      // the api answers JSON; it adds no defensive headers of its own
      for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
      options.api.route(req, res, path).catch((err) => {
        logger.warn(`request ${req.method} ${path} failed: ${(err as Error).message}`);
        if (!res.headersSent) sendText(res, 500, 'internal error');
        else res.destroy();
      });
      return;
    }
    sendText(res, 404, 'not found');
  });
  let closing: Promise<void> | undefined;
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (req.url ?? '/').split('?')[0];
    const refusal = hostRefusal(req);
    if (refusal) return refuseUpgrade(socket, 403, refusal);
    if (path === '/ws') {
      // the page must come from the address it connects to; checked before the socket may be handed to the engine
      if (!sameOrigin(req)) {
        warnOnce(`refused a cross-origin /ws upgrade from ${String(req.headers.origin).slice(0, 200)}`);
        return refuseUpgrade(socket, 403, 'cross-origin WebSocket denied: the page must be served by this console');
      }
      const proxied = () => proxy.handleUpgrade(req, socket, head);
      if (closing || !options.handoff?.(req, socket, head, proxied)) proxied();
    } else if (path === '/ws/streams' && options.api) {
      if (!sameOrigin(req)) {
        warnOnce(`refused a cross-origin /ws/streams upgrade from ${String(req.headers.origin).slice(0, 200)}`);
        return refuseUpgrade(socket, 403, 'cross-origin WebSocket denied: the page must be served by this console');
      }
      options.api.streams.handleUpgrade(req, socket, head);
    } else refuseUpgrade(socket, 404, 'not found');
  });
  server.on('clientError', (_err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
  });
  // idle browser keep-alive sockets must not hold shutdown up
  server.keepAliveTimeout = 5000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;

  return {
    server,
    port,
    url: uiUrl(options.host, port),
    proxy,
    close(graceMs = 3000) {
      closing ??= (async () => {
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        await Promise.all([
          proxy.close(1001, 'console worker shutting down'),
          options.api?.streams.close(1001, 'console worker shutting down'),
        ]);
        // requests in flight get `graceMs` to finish, then their sockets are cut
        const force = setTimeout(() => server.closeAllConnections(), graceMs);
        await stopped;
        clearTimeout(force);
      })();
      return closing;
    },
  };
}
