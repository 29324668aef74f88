import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HttpModuleConfig } from './config.ts';

// spec: engine-protocol §6.1 CORS — no `cors` block: fully permissive; with one: the listed origins
// (any if empty or `*`), the listed methods (any if empty), any headers. Preflight is answered
// here, before routing, as tower-http's CorsLayer does in iii.

export class CorsPolicy {
  private readonly anyOrigin: boolean;
  private readonly origins: Set<string>;
  private readonly methods: string | null;

  constructor(config: HttpModuleConfig['cors']) {
    const origins = config?.allowed_origins ?? [];
    this.anyOrigin = !config || origins.length === 0 || origins.includes('*');
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
}
