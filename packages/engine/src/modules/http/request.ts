import type { IncomingMessage } from 'node:http';

// spec: engine-protocol §5.2 — what a request looks like to the function it triggers.

export class PayloadTooLargeError extends Error {
  constructor(
    readonly limit: number,
    /** The client announced more than we are willing to discard: answer, then close. */
    readonly closeConnection = false,
  ) {
    super(`Request body exceeds the limit of ${limit} bytes`);
  }
}

const EMPTY = Buffer.alloc(0);
/**
 * After a 413 the rest of the body is read and thrown away (never buffered) so the client gets to
 * read the answer; past this many more bytes the connection is cut instead.
 */
const DISCARD_LIMIT = 8 * 1024 * 1024;

/**
 * Read the whole body, refusing (without buffering further) once it passes `limit` bytes.
 * A declared Content-Length over the limit is refused before anything is read.
 */
/** False when the request announces no body at all (no Content-Length, not chunked). */
export function hasBody(req: IncomingMessage): boolean {
  const declared = req.headers['content-length'];
  return (declared !== undefined && declared !== '0') || req.headers['transfer-encoding'] !== undefined;
}

export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  if (!hasBody(req)) return Promise.resolve(EMPTY);
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    const tooMuch = Number(declared) > limit + DISCARD_LIMIT;
    if (!tooMuch) discardRest(req, DISCARD_LIMIT);
    return Promise.reject(new PayloadTooLargeError(limit, tooMuch));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) {
        chunks.push(chunk);
        return;
      }
      req.off('data', onData);
      chunks.length = 0;
      discardRest(req, DISCARD_LIMIT);
      reject(new PayloadTooLargeError(limit));
    };
    req.on('data', onData);
    req.once('end', () => {
      if (size <= limit) resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    });
    req.once('error', reject);
  });
}

/** Drop the rest of a refused body; cut the connection once more than `budget` bytes arrive. */
function discardRest(req: IncomingMessage, budget: number): void {
  let discarded = 0;
  req.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > budget) req.socket.destroy();
  });
}

/** `?a=1&b=2` → `{a:'1', b:'2'}`; a repeated key keeps its last value (as iii's HashMap). */
export function parseQuery(search: string): Record<string, string> {
  const params: Record<string, string> = {};
  if (search === '') return params;
  for (const [key, value] of new URLSearchParams(search)) params[key] = value;
  return params;
}

/** Lower-cased names (Node already lower-cases), repeated headers joined as Node joins them. */
export function flattenHeaders(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  const source = req.headers;
  for (const name in source) {
    const value = source[name];
    if (value === undefined) continue;
    headers[name] = typeof value === 'string' ? value : value.join(', ');
  }
  return headers;
}

/** `body` is parsed JSON only for `application/json`; invalid JSON (or none) is null. */
export function parseJsonBody(contentType: string | undefined, raw: Buffer): unknown {
  if (!contentType?.toLowerCase().includes('application/json') || raw.length === 0) return null;
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    return null;
  }
}
