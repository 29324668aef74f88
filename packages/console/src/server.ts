import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { connect, type EngClient } from '@eng/sdk';
import { createConsoleApi } from './console-api.ts';
import { hostAllowed as hostAllowedFor } from './host-check.ts';
import { HTTP_PREFIX } from './http-forward.ts';
import { sendError } from './http-util.ts';
import { type ConsoleOptions, engineUrls, urlHost } from './options.ts';
import { redactText, redactUrl } from './redact.ts';
import { loadBundle, type StaticBundle } from './static-assets.ts';
import { type ConsoleTelemetry, disabledTelemetry, startTelemetry } from './telemetry.ts';
import { CONSOLE_VERSION } from './version.ts';
import { createWsProxy, type WsProxy } from './ws-proxy.ts';

/**
 * The eng-console HTTP server (issue 6 §1): the UI bundle, `/ws` → engine bus, `/ws/streams` →
 * engine streams socket, and the console's own `/_console/*` endpoints. It never needs the engine
 * to start: with the engine down it serves the UI, which reports the outage and reconnects.
 */
export interface ConsoleLogger {
  info(message: string): void;
  warn(message: string): void;
  debug(message: string): void;
}

export interface ConsoleServerOptions extends ConsoleOptions {
  /** Directory of the built UI (packages/web/dist). */
  webDir: string;
  logger?: ConsoleLogger;
}

export interface ConsoleServer {
  server: Server;
  url: string;
  port: number;
  bundle: StaticBundle;
  client: EngClient;
  telemetry: ConsoleTelemetry;
  /** Stop accepting, close proxied sockets and the engine client, flush telemetry. */
  close(): Promise<void>;
}

/** Distinct refused Host names logged; beyond that a flood of them stays quiet. */
const MAX_WARNED = 50;

const silent: ConsoleLogger = { info: () => undefined, warn: () => undefined, debug: () => undefined };

function securityHeaders(bundle: StaticBundle): Record<string, string> {
  return {
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    'content-security-policy': [
      "default-src 'self'",
      `script-src 'self' ${bundle.inlineScriptHashes.join(' ')}`.trim(),
      "style-src 'self' 'unsafe-inline'",
      "img-src 'self' data: blob:",
      "font-src 'self' data:",
      "connect-src 'self'",
      "frame-ancestors 'none'",
      "base-uri 'none'",
      "form-action 'self'",
    ].join('; '),
  };
}

export async function startConsoleServer(options: ConsoleServerOptions): Promise<ConsoleServer> {
  const logger = options.logger ?? silent;
  const bundle = loadBundle(options.webDir);
  const urls = engineUrls(options);
  // what users see (config endpoint, error messages): never the credentials in an engine URL
  const shown = {
    http: redactUrl(urls.http),
    streams: redactUrl(urls.streams),
    bridge: redactUrl(urls.bridge),
    otlp: redactUrl(urls.otlp),
  };
  const startedAt = Date.now();
  const telemetry = options.otel
    ? startTelemetry({ serviceName: options.otelServiceName, version: CONSOLE_VERSION, endpoint: urls.otlp })
    : disabledTelemetry();

  // the console's own bus session, for /_console/invoke; it reconnects by itself
  const client = connect(urls.bridge, {
    name: 'eng-console',
    description: 'eng web console',
    registerWorker: false,
    reconnect: { initialDelayMs: 500, maxDelayMs: 5000 },
    logger: {
      debug: () => undefined,
      info: (m) => logger.debug(m),
      warn: (m) => logger.debug(redactText(m)),
      error: (m) => logger.warn(redactText(m)),
    },
  });
  let outageLogged = false;
  client.on('connected', () => {
    outageLogged = false;
    logger.info(`connected to the engine at ${shown.bridge}`);
  });
  client.on('reconnecting', () => {
    if (outageLogged) return;
    outageLogged = true;
    logger.warn(`engine unreachable at ${shown.bridge}; the UI is served anyway and both reconnect by themselves`);
  });
  client.on('disconnected', ({ code }) => logger.warn(`lost the engine at ${shown.bridge} (${code}); reconnecting`));

  const proxyLogger = { debug: (m: string) => logger.debug(redactText(m)), warn: (m: string) => logger.warn(redactText(m)) };
  const busProxy: WsProxy = createWsProxy({ target: urls.bridge, logger: proxyLogger });
  const headers = securityHeaders(bundle);

  const configBody = () => ({
    version: CONSOLE_VERSION,
    host: options.host,
    port: actualPort,
    // up to the last `@`: a raw `@` may sit inside the password
    engine_host: options.engineHost.replace(/^.*@/, ''),
    engine_port: options.enginePort,
    ws_port: options.wsPort,
    bridge_port: options.bridgePort,
    otel: {
      enabled: telemetry.enabled,
      service_name: options.otelServiceName,
      ...(telemetry.endpoint ? { endpoint: redactUrl(telemetry.endpoint) } : {}),
    },
    enable_flow: options.enableFlow,
    engine_urls: shown,
    engine_connected: client.workerId !== undefined,
    started_at: startedAt,
    node_version: process.version,
  });

  // DNS rebinding: a page on evil.example resolving to 127.0.0.1 is "same origin" with itself,
  // so on a loopback bind the Host must name loopback too, on every route: the API and the bus,
  // and the UI itself (served to a rebound name, the page would run as evil.example's own)
  const hostAllowed = (req: IncomingMessage) => hostAllowedFor(options.host, req.headers.host);
  const warned = new Set<string>();
  /** Undefined when the Host may be served; else the refusal text (the UI, the API and /ws alike), logged once per Host. */
  const hostRefusal = (req: IncomingMessage): string | undefined => {
    if (hostAllowed(req)) return undefined;
    const host = (req.headers.host ?? '(none)').slice(0, 200);
    if (!warned.has(host) && warned.size < MAX_WARNED) {
      warned.add(host);
      logger.warn(`refused a request for Host ${host}: this console answers to loopback names only (DNS rebinding protection)`);
    }
    return `forbidden: Host ${host} is not this console's address (DNS rebinding protection); open ${url}, or bind with --host to serve other names`;
  };
  const api = createConsoleApi({ client, urls, config: configBody, hostAllowed, telemetry, logger: proxyLogger, headers });
  const streamsProxy = api.streams;

  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://console');
    const path = url.pathname;
    // invoke, config, probes, the HTTP trigger test: shared with the console worker (console-api.ts)
    if (path.startsWith('/_console/')) return api.route(req, res, path);
    if (bundle.serve(req, res, path, headers)) return;
    res.writeHead(404, { ...headers, 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
    res.end('Not Found\n');
  };

  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const refusal = hostRefusal(req);
    if (refusal) {
      // the API's callers read {error: {code, message}}; everyone else gets the sentence
      if (path.startsWith('/_console/')) return sendError(res, 403, 'FORBIDDEN', refusal, headers);
      const body = `${refusal}\n`;
      res.writeHead(403, {
        ...headers,
        'content-type': 'text/plain; charset=utf-8',
        'cache-control': 'no-store',
        'content-length': String(Buffer.byteLength(body)),
      });
      res.end(body);
      return;
    }
    const traced = telemetry.enabled && path.startsWith('/_console/');
    const run = () =>
      route(req, res).catch((err) => {
        logger.warn(`request ${req.method} ${path} failed: ${(err as Error).message}`);
        if (!res.headersSent) sendError(res, 500, 'INTERNAL_ERROR', (err as Error).message);
        else res.destroy();
      });
    if (!traced) {
      void run();
      return;
    }
    void telemetry.span(
      `${req.method} ${path.startsWith(HTTP_PREFIX) ? `${HTTP_PREFIX}/*` : path}`,
      { 'http.request.method': req.method ?? 'GET', 'url.path': path },
      async (span) => {
        await run();
        span?.setAttribute('http.response.status_code', res.statusCode);
      },
    );
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (req.url ?? '/').split('?')[0];
    const refusal = hostRefusal(req);
    if (refusal) {
      const body = `${refusal}\n`;
      socket.end(
        `HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      return;
    }
    if (path === '/ws') busProxy.handleUpgrade(req, socket, head);
    else if (path === '/ws/streams') streamsProxy.handleUpgrade(req, socket, head);
    else socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
  });
  // browsers hold keep-alive sockets open: do not let them delay shutdown
  server.keepAliveTimeout = 5000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const actualPort = (server.address() as AddressInfo).port;
  const url = `http://${urlHost(options.host === '0.0.0.0' ? '127.0.0.1' : options.host)}:${actualPort}`;

  let closing: Promise<void> | undefined;
  return {
    server,
    url,
    port: actualPort,
    bundle,
    client,
    telemetry,
    close() {
      closing ??= (async () => {
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        await Promise.all([busProxy.close(1001, 'console shutting down'), streamsProxy.close(1001, 'console shutting down')]);
        await client.close();
        await telemetry.shutdown();
        server.closeAllConnections();
        await stopped;
      })();
      return closing;
    },
  };
}

// shared with the console worker (host-check.ts); re-exported for existing importers
export { hostnameOf, isLoopbackHost } from './host-check.ts';
