import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { z } from 'zod';

/**
 * Which web pages may open a WebSocket on the worker bus or the streams socket. Browsers always
 * send `Origin` on a WebSocket upgrade and cannot forge it; workers (Node, Python) send none. So an
 * upgrade whose `Origin` is present and not listed under `allowed_origins` comes from a page some
 * user opened, and is refused: otherwise any site could call `state::set` on a local engine.
 *
 * The `Host` header is not checked on these sockets: DNS rebinding needs a browser, and a page on
 * evil.example whose name was rebound to 127.0.0.1 still sends `Origin: http://evil.example`, which
 * this rule refuses. Non-browser clients can send any Host they like, so checking it adds nothing.
 */

/** `scheme://host[:port]`, compared as browsers serialize it: lower-case host, default port dropped. */
export function normalizeOrigin(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return undefined;
  }
  if (url.username || url.password || url.search || url.hash || (url.pathname !== '/' && url.pathname !== '')) return undefined;
  if (!url.host) return undefined;
  // URL#origin is "null" for schemes it does not know (chrome-extension://…): build it the same way
  return url.origin !== 'null' ? url.origin : `${url.protocol}//${url.host}`;
}

/** The `allowed_origins` config key of eng-worker-manager and eng-stream. */
export const AllowedOriginsSchema = z
  .array(
    z.string().refine((value) => normalizeOrigin(value) !== undefined, {
      message: 'must be an origin: scheme://host[:port], e.g. http://localhost:5173 (no path, no wildcard)',
    }),
  )
  .default([]);

const MAX_SHOWN = 200;
/** How many distinct refused origins are logged at warn (a page retrying in a loop logs once). */
const MAX_WARNED = 100;

/** Refuses browser upgrades from origins not in `allowed`; `where`/`module` name the socket and its config block. */
export class OriginGate {
  private readonly allowed: Set<string>;
  private readonly warned = new Set<string>();

  constructor(
    allowed: readonly string[],
    private readonly where: string,
    private readonly module: string,
    private readonly warn: (message: string) => void,
  ) {
    this.allowed = new Set(allowed.map((o) => normalizeOrigin(o)).filter((o): o is string => o !== undefined));
  }

  /**
   * True when the upgrade may go on; otherwise the socket has been answered 403 with the rule and
   * the config key, and destroyed.
   */
  admit(req: IncomingMessage, socket: Duplex): boolean {
    // version-8 handshakes (which ws still accepts) carried the page's origin as Sec-WebSocket-Origin
    const legacy = req.headers['sec-websocket-origin'];
    const header = req.headers.origin ?? (typeof legacy === 'string' ? legacy : undefined);
    if (header === undefined) return true; // not a browser
    const normalized = normalizeOrigin(header);
    if (normalized !== undefined && this.allowed.has(normalized)) return true;
    const shown = header.length > MAX_SHOWN ? `${header.slice(0, MAX_SHOWN)}…` : header;
    const body =
      `cross-origin WebSocket refused: pages from ${shown} may not connect to the ${this.where}. ` +
      `Browsers reach the engine through the console; to allow this page, add its origin to allowed_origins of ${this.module}.\n`;
    if (!this.warned.has(shown) && this.warned.size < MAX_WARNED) {
      this.warned.add(shown);
      this.warn(`refused a WebSocket upgrade from a browser page at ${shown} (not in ${this.module} allowed_origins)`);
    }
    socket.on('error', () => undefined);
    socket.once('finish', () => socket.destroy());
    socket.end(
      `HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
    return false;
  }
}
