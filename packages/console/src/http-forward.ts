import type { IncomingMessage, ServerResponse } from 'node:http';
import { request } from 'node:http';
import { sendError } from './http-util.ts';

/**
 * `/_console/http/<path>` → `<engine http>/<path>` for the Triggers page's "Test HTTP trigger"
 * (seed 4.1 op 2): the browser talks to one origin only. Method, query, headers (minus
 * hop-by-hop and Host) and body stream through; the engine's status, headers and body come back,
 * marked with `x-eng-console-proxy` so the UI can tell them from the console's own answers.
 */
export const PROXY_MARKER = 'x-eng-console-proxy';
export const HTTP_PREFIX = '/_console/http';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'trailers',
  'transfer-encoding',
  'upgrade',
  'host',
  'origin',
  'referer',
  'cookie',
]);

export interface HttpTarget {
  host: string;
  port: number;
  auth?: string;
  /** The engine URL without credentials, for messages. */
  shown: string;
}

export function forwardHttp(req: IncomingMessage, res: ServerResponse, engine: HttpTarget, pathAndQuery: string): Promise<void> {
  return new Promise((resolve) => {
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined || HOP_BY_HOP.has(name)) continue;
      headers[name] = value;
    }
    const upstream = request(
      { host: engine.host, port: engine.port, auth: engine.auth, method: req.method, path: pathAndQuery || '/', headers, timeout: 30_000 },
      (up) => {
        const out: Record<string, string | string[]> = { [PROXY_MARKER]: '1' };
        for (const [name, value] of Object.entries(up.headers)) {
          if (value === undefined || HOP_BY_HOP.has(name)) continue;
          out[name] = value;
        }
        res.writeHead(up.statusCode ?? 502, up.statusMessage, out);
        up.pipe(res);
        up.on('end', () => resolve());
        up.on('error', () => {
          res.destroy();
          resolve();
        });
      },
    );
    upstream.on('timeout', () => upstream.destroy(new Error('the engine did not answer within 30 s')));
    upstream.on('error', (err) => {
      if (!res.headersSent) {
        const code = (err as NodeJS.ErrnoException).code;
        sendError(res, 502, 'engine_unreachable', `engine HTTP port unreachable at ${engine.shown}: ${code ?? err.message}`);
      } else res.destroy();
      resolve();
    });
    req.pipe(upstream);
  });
}
