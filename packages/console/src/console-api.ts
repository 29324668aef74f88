import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EngClient } from '@eng/sdk';
import { forwardHttp, HTTP_PREFIX, type HttpTarget } from './http-forward.ts';
import { sendError, sendJson } from './http-util.ts';
import { handleInvoke } from './invoke.ts';
import { runProbes } from './probes.ts';
import { redactText, redactUrl } from './redact.ts';
import type { ConsoleTelemetry } from './telemetry.ts';
import { createWsProxy, sameOrigin, type WsProxy, type WsProxyLogger } from './ws-proxy.ts';

/**
 * The console's own endpoints, served the same way by eng-console and the console worker (issue 19
 * §1: the default console must be the full one): `GET /_console/config`, `POST /_console/invoke`,
 * `GET /_console/probe`, `ANY /_console/http/*` (the Triggers page's HTTP test) and the
 * `/ws/streams` proxy to the engine's streams socket. Each server supplies its own config body.
 */
export interface EngineUrls {
  http: string;
  streams: string;
  bridge: string;
}

export interface ConsoleApiOptions {
  /** The server's own bus session (for invoke and probes); it reconnects by itself. */
  client: EngClient;
  /** Where the engine listens; may carry credentials (they are used, never shown). */
  urls: EngineUrls;
  /** Body of `GET /_console/config`. */
  config: () => unknown;
  /** The Host check against DNS rebinding (host-check.ts), applied with the same-origin check. */
  hostAllowed: (req: IncomingMessage) => boolean;
  telemetry?: ConsoleTelemetry;
  logger?: WsProxyLogger;
  /** Extra headers on refusals (eng-console sends its security headers). */
  headers?: Record<string, string>;
}

export interface ConsoleApi {
  /** Serve a request whose path starts with `/_console/`. */
  route(req: IncomingMessage, res: ServerResponse, path: string): Promise<void>;
  /** `/ws/streams` upgrades (the caller checked the Host); cross-origin ones are refused by the proxy. */
  streams: WsProxy;
  /** The engine URLs without credentials, for messages and the config body. */
  shown: EngineUrls;
}

/** Split a URL into what node:http needs, with its credentials kept apart from what is shown. */
export function httpTargetOf(url: string): HttpTarget {
  const parsed = new URL(url);
  return {
    host: parsed.hostname.replace(/^\[|\]$/g, ''),
    port: Number(parsed.port || (parsed.protocol === 'https:' ? 443 : 80)),
    auth: parsed.username ? `${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}` : undefined,
    shown: redactUrl(url),
  };
}

export function createConsoleApi(options: ConsoleApiOptions): ConsoleApi {
  const { client, urls } = options;
  // inline rather than telemetry.ts's disabledTelemetry(): the console worker must not load OpenTelemetry
  const telemetry: ConsoleTelemetry = options.telemetry ?? {
    enabled: false,
    span: (_name, _attributes, fn) => fn(undefined),
    shutdown: async () => undefined,
  };
  const shown: EngineUrls = { http: redactUrl(urls.http), streams: redactUrl(urls.streams), bridge: redactUrl(urls.bridge) };
  const logger = options.logger ?? { debug: () => undefined, warn: () => undefined };
  const streams = createWsProxy({
    // the streams socket only serves `/`; the query (auth context) is passed on (console spec §2.3)
    target: (req) => `${urls.streams.replace(/\/+$/, '')}/${new URL(req.url ?? '/', 'http://x').search}`,
    logger: { debug: (m) => logger.debug(redactText(m)), warn: (m) => logger.warn(redactText(m)) },
  });
  const httpTarget = httpTargetOf(urls.http);

  const route = async (req: IncomingMessage, res: ServerResponse, path: string): Promise<void> => {
    // a page on another origin must not drive the engine through us (CSRF, DNS rebinding)
    if (!sameOrigin(req) || !options.hostAllowed(req)) {
      return sendError(res, 403, 'FORBIDDEN', 'cross-origin requests to the console API are refused', options.headers);
    }
    if (path === '/_console/config') {
      if (req.method !== 'GET' && req.method !== 'HEAD') return sendError(res, 405, 'METHOD_NOT_ALLOWED', 'use GET', { allow: 'GET' });
      return sendJson(res, 200, options.config());
    }
    if (path === '/_console/invoke') return handleInvoke(req, res, { client, bridgeUrl: shown.bridge, telemetry });
    if (path === '/_console/probe') {
      if (req.method !== 'GET') return sendError(res, 405, 'METHOD_NOT_ALLOWED', 'use GET', { allow: 'GET' });
      const probes = await runProbes(urls, client.workerId !== undefined);
      return sendJson(res, 200, {
        probes: probes.map((p) => ({ ...p, url: redactUrl(p.url), detail: redactText(p.detail) })),
        timestamp: Date.now(),
      });
    }
    if (path === HTTP_PREFIX || path.startsWith(`${HTTP_PREFIX}/`)) {
      const raw = req.url ?? '';
      const rest = raw.slice(raw.indexOf(HTTP_PREFIX) + HTTP_PREFIX.length) || '/';
      return forwardHttp(req, res, httpTarget, rest.startsWith('/') ? rest : `/${rest}`);
    }
    return sendError(res, 404, 'NOT_FOUND', `no console endpoint ${path}`);
  };

  return { route, streams, shown };
}
