import type { IncomingMessage, ServerResponse } from 'node:http';
import { ErrorCode } from '@eng/protocol';
import type { HttpModuleConfig } from './config.ts';
import { sendError } from './response.ts';

// spec: engine-protocol §6.1 CORS — no `cors` block: fully permissive; with one: the listed origins
// (any if empty or `*`), the listed methods (any if empty), any headers. Preflight is answered
// here, before routing, as tower-http's CorsLayer does in iii.
//
// Engine routes (the OTLP receiver, `/v1/*`) are for SDKs and collectors, never for web pages: a
// request with an `Origin` is served only when `cors.allowed_origins` names that origin (or `*`)
// explicitly; otherwise 403, and a preflight gets no CORS headers. Issue 12 item 5: a page must
// not be able to fill the engine's memory with telemetry.

const MAX_SHOWN = 200;
const MAX_WARNED = 100;

export class CorsPolicy {
  private readonly anyOrigin: boolean;
  private readonly origins: Set<string>;
  private readonly methods: string | null;
  /** Engine routes: only origins the config lists (or `*` listed); none without a `cors` block. */
  private readonly engineAnyOrigin: boolean;
  private readonly warned = new Set<string>();

  constructor(
    config: HttpModuleConfig['cors'],
    private readonly warn: (message: string) => void = () => {},
  ) {
    const origins = config?.allowed_origins ?? [];
    this.anyOrigin = !config || origins.length === 0 || origins.includes('*');
    this.engineAnyOrigin = origins.includes('*');
    this.origins = new Set(origins);
    const methods = config?.allowed_methods ?? [];
    this.methods = methods.length === 0 ? null : methods.map((m) => m.toUpperCase()).join(', ');
  }

  /**
   * Add CORS headers for a request that carries an `Origin`. Returns true when it was a preflight
   * and has been answered.
   */
  apply(req: IncomingMessage, res: ServerResponse): boolean {
    const origin = req.headers.origin;
    if (origin === undefined) return false;
    const allowed = this.anyOrigin || this.origins.has(origin);
    if (allowed) {
      res.setHeader('access-control-allow-origin', this.anyOrigin ? '*' : origin);
      if (!this.anyOrigin) res.setHeader('vary', 'origin');
    }
    const requestedMethod = req.headers['access-control-request-method'];
    if (req.method !== 'OPTIONS' || requestedMethod === undefined) {
      if (allowed) res.setHeader('access-control-expose-headers', '*');
      return false;
    }
    if (allowed) {
      res.setHeader('access-control-allow-methods', this.methods ?? String(requestedMethod).toUpperCase());
      const requestedHeaders = req.headers['access-control-request-headers'];
      res.setHeader('access-control-allow-headers', requestedHeaders ? String(requestedHeaders) : '*');
      res.setHeader('access-control-max-age', '86400');
    }
    res.statusCode = 204;
    res.setHeader('content-length', '0');
    res.end();
    return true;
  }

  /**
   * CORS for an engine route (`req` carries an `Origin`). Returns true when the request has been
   * answered: a preflight, or a 403 for an origin the config does not list.
   */
  applyEngine(req: IncomingMessage, res: ServerResponse, pathname: string): boolean {
    const origin = req.headers.origin as string;
    const preflight = req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
    if (this.engineAnyOrigin || this.origins.has(origin)) {
      res.setHeader('access-control-allow-origin', this.engineAnyOrigin ? '*' : origin);
      if (!this.engineAnyOrigin) res.setHeader('vary', 'origin');
      if (!preflight) return false;
      res.setHeader('access-control-allow-methods', this.methods ?? String(req.headers['access-control-request-method']).toUpperCase());
      const requestedHeaders = req.headers['access-control-request-headers'];
      res.setHeader('access-control-allow-headers', requestedHeaders ? String(requestedHeaders) : '*');
      res.setHeader('access-control-max-age', '86400');
      res.statusCode = 204;
      res.setHeader('content-length', '0');
      res.end();
      return true;
    }
    const shown = origin.length > MAX_SHOWN ? `${origin.slice(0, MAX_SHOWN)}…` : origin;
    if (!this.warned.has(shown) && this.warned.size < MAX_WARNED) {
      this.warned.add(shown);
      this.warn(`refused a request to ${pathname} from a browser page at ${shown} (not in eng-http cors.allowed_origins)`);
    }
    // the body is not read: close the connection rather than drain it
    res.setHeader('connection', 'close');
    sendError(
      res,
      403,
      ErrorCode.Forbidden,
      `cross-origin request refused: pages from ${shown} may not use ${pathname} (engine routes take telemetry from SDKs and collectors, not web pages). ` +
        'To allow this page, list its origin under cors.allowed_origins of eng-http.',
    );
    return true;
  }
}
