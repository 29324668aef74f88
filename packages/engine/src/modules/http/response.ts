import { randomBytes } from 'node:crypto';
import { type ServerResponse, validateHeaderName, validateHeaderValue } from 'node:http';
import { ErrorCode } from '@eng/protocol';

// spec: engine-protocol §6.1 — turning a handler's result into an HTTP response, and the
// engine's own error bodies (0.22.1 shapes, §9 row 15).

export type HeaderList = Array<[string, string]>;

export interface ShapedResponse {
  status: number;
  /** The handler's own headers. */
  headers: HeaderList;
  /** Set when the engine chose the content type (no user content-type). */
  contentType?: string;
  body: string | Buffer;
}

const JSON_TYPE = 'application/json';

/** `{status_code?, headers?, body?}` → status, headers and bytes (§6.1 "Handler result → HTTP response"). */
export function shapeResult(result: unknown): ShapedResponse {
  const value = result !== null && typeof result === 'object' && !Array.isArray(result) ? (result as Record<string, unknown>) : {};
  const status = validStatus(value.status_code) ?? 200;
  const headers = parseHeaders(value.headers);
  const body = 'body' in value && value.body !== undefined ? value.body : {};
  const userType = headers.length === 0 ? undefined : headers.find(([name]) => name.toLowerCase() === 'content-type')?.[1];
  if (userType === undefined) return { status, headers, contentType: JSON_TYPE, body: JSON.stringify(body) ?? 'null' };
  if (typeof body === 'string') return { status, headers, body };
  if (body === null) return { status, headers, body: '' };
  return { status, headers, body: JSON.stringify(body) ?? 'null' };
}

/** Headers given as a map (string values) or as `"Name: value"` lines; anything else is dropped. */
export function parseHeaders(raw: unknown): HeaderList {
  const headers: HeaderList = [];
  if (raw === undefined || raw === null) return headers;
  if (Array.isArray(raw)) {
    for (const line of raw) {
      if (typeof line !== 'string') continue;
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      const name = line.slice(0, colon).trim();
      if (name) headers.push([name, line.slice(colon + 1).trim()]);
    }
  } else if (raw !== null && typeof raw === 'object') {
    for (const [name, value] of Object.entries(raw)) if (typeof value === 'string') headers.push([name, value]);
  }
  return headers;
}

export function validStatus(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 100 && value <= 599 ? value : undefined;
}

/** Write status and headers, skipping names or values Node would refuse (never crash on user input). */
export function writeHead(res: ServerResponse, status: number, headers: HeaderList | Record<string, string>): void {
  res.statusCode = status;
  const list = Array.isArray(headers) ? headers : Object.entries(headers);
  if (list.length === 0) return;
  const grouped = new Map<string, { name: string; values: string[] }>();
  for (const [name, value] of list) {
    try {
      validateHeaderName(name);
      validateHeaderValue(name, value);
    } catch {
      continue;
    }
    const lower = name.toLowerCase();
    const entry = grouped.get(lower);
    if (entry) entry.values.push(value);
    else grouped.set(lower, { name, values: [value] });
  }
  for (const { name, values } of grouped.values()) {
    res.setHeader(name, values.length === 1 ? (values[0] as string) : values);
  }
}

export function sendShaped(res: ServerResponse, shaped: ShapedResponse): void {
  const { status } = shaped;
  if (shaped.headers.length === 0 && shaped.contentType && status >= 200 && status !== 204 && status !== 304) {
    // the common case (a handler's JSON body, no headers of its own): the header block straight
    // from a flat list, without Node's per-response header map (headers set before, such as
    // CORS, are still merged in)
    res.writeHead(status, ['content-type', shaped.contentType, 'content-length', String(Buffer.byteLength(shaped.body))]);
    res.end(shaped.body);
    return;
  }
  writeHead(res, shaped.status, shaped.headers);
  if (shaped.contentType) res.setHeader('content-type', shaped.contentType);
  // the framing is ours: a wrong user content-length would corrupt the keep-alive connection
  if (shaped.headers.length > 0) res.removeHeader('transfer-encoding');
  if (shaped.status === 204 || shaped.status === 304 || shaped.status < 200) {
    res.removeHeader('content-length');
    res.end();
    return;
  }
  res.setHeader('content-length', Buffer.byteLength(shaped.body));
  res.end(shaped.body);
}

export function sendJson(res: ServerResponse, status: number, body: unknown, extraHeaders?: Record<string, string>): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('content-type', JSON_TYPE);
  res.setHeader('content-length', Buffer.byteLength(text));
  if (extraHeaders) for (const [name, value] of Object.entries(extraHeaders)) res.setHeader(name, value);
  res.end(text);
}

/** A short id users can quote and operators can find in the engine log (as iii's `error_id`). */
export function newErrorId(): string {
  return randomBytes(6).toString('hex');
}

export function sendError(res: ServerResponse, status: number, code: string, message: string, extra?: Record<string, unknown>): void {
  sendJson(res, status, { error: { code, message, ...extra } });
}

export const sendNotFound = (res: ServerResponse) => sendError(res, 404, ErrorCode.NotFound, 'Not Found');
