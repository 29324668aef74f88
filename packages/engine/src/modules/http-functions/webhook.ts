import { createHmac } from 'node:crypto';
import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { EngError, type ErrorBody, ErrorCode } from '@eng/protocol';
import { redactUrl, UrlErrorCode, type UrlGuard } from './url-security.ts';

// spec: engine-protocol §3.4 — the engine's side of an HTTP-invoked function call.

export const WebhookErrorCode = {
  /** The server answered ≥ 400 without an `{"error": {code}}` body. */
  HttpError: 'http_error',
  /** No answer: connection refused, reset, TLS failure, … */
  RequestFailed: 'http_request_failed',
  /** A 2xx answer whose body is not JSON. */
  InvalidResponse: 'invalid_response',
  /** The answer is larger than max_response_bytes. */
  ResponseTooLarge: 'response_too_large',
} as const;

export type ResolvedAuth =
  | { type: 'hmac'; secret: string }
  | { type: 'bearer'; token: string }
  | { type: 'api_key'; header: string; value: string };

export interface WebhookTarget {
  functionId: string;
  url: URL;
  method: string;
  timeoutMs: number;
  headers: Record<string, string>;
  auth?: ResolvedAuth;
}

export interface WebhookLimits {
  maxResponseBytes: number;
  maxRedirects: number;
  userAgent: string;
}

export interface WebhookCall {
  invocationId: string;
  payload: unknown;
  /** W3C context of the client span: sent as `traceparent` so the server can continue the trace. */
  traceparent?: string;
  baggage?: string;
}

export interface WebhookResult {
  status: number;
  /** Redirects followed. */
  redirects: number;
  /** Where the answer came from (after redirects). */
  finalUrl: URL;
  outcome: { ok: true; result: unknown } | { ok: false; error: ErrorBody };
}

/**
 * HMAC-SHA256 over `<timestamp>:<base64 of the body bytes>`, hex, prefixed `sha256=` — iii's
 * format (engine/src/invocation/signature.rs), so receivers written for iii verify ours.
 */
export function signBody(secret: string, timestamp: number, body: Buffer): string {
  return `sha256=${createHmac('sha256', secret)
    .update(`${timestamp}:${body.toString('base64')}`)
    .digest('hex')}`;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * Calls one HTTP-invoked function: the JSON payload with the engine headers, auth and the
 * function's own headers; follows redirects only to URLs the security rules allow (each hop is
 * checked, and the private-address rule is applied to the address actually connected to).
 */
export async function callWebhook(
  target: WebhookTarget,
  call: WebhookCall,
  guard: UrlGuard,
  limits: WebhookLimits,
): Promise<WebhookResult> {
  const body = Buffer.from(JSON.stringify(call.payload === undefined ? null : call.payload));
  const timestamp = Math.floor(Date.now() / 1000);
  const engineHeaders: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json',
    'user-agent': limits.userAgent,
  };
  // both spellings: ours, and iii's for receivers written against iii (§3.4)
  for (const prefix of ['x-eng-', 'x-iii-']) {
    engineHeaders[`${prefix}function-path`] = target.functionId;
    engineHeaders[`${prefix}invocation-id`] = call.invocationId;
    engineHeaders[`${prefix}timestamp`] = String(timestamp);
  }
  if (call.traceparent) engineHeaders.traceparent = call.traceparent;
  if (call.baggage) engineHeaders.baggage = call.baggage;
  const authHeaders: Record<string, string> = {};
  const auth = target.auth;
  if (auth?.type === 'hmac') {
    const signature = signBody(auth.secret, timestamp, body);
    engineHeaders['x-eng-signature'] = signature;
    engineHeaders['x-iii-signature'] = signature;
  } else if (auth?.type === 'bearer') authHeaders.authorization = `Bearer ${auth.token}`;
  else if (auth?.type === 'api_key') authHeaders[auth.header.toLowerCase()] = auth.value;

  const deadline = Date.now() + target.timeoutMs;
  let url = target.url;
  let method = target.method;
  let sendBody = true;
  let sendAuth = true;
  for (let redirects = 0; ; redirects++) {
    const headers = { ...target.headers, ...engineHeaders, ...(sendAuth ? authHeaders : {}) };
    if (!sendBody) {
      delete headers['content-type'];
    }
    const response = await send(url, method, headers, sendBody ? body : undefined, deadline, target, guard, limits);
    const { status } = response;
    if (REDIRECTS.has(status)) {
      const location = response.location;
      if (!location) return finish(status, redirects, url, httpError(status, response.body));
      if (redirects >= limits.maxRedirects) {
        return finish(status, redirects, url, {
          ok: false,
          error: {
            code: WebhookErrorCode.HttpError,
            message: `HTTP ${status}: redirect to ${redactUrl(new URL(location, url))} not followed (max_redirects: ${limits.maxRedirects})`,
          },
        });
      }
      let next: URL;
      try {
        next = guard.check(new URL(location, url).href, `redirect from ${redactUrl(url)} to`);
      } catch (err) {
        const error = err instanceof EngError ? err.toBody() : { code: UrlErrorCode, message: (err as Error).message };
        return finish(status, redirects, url, { ok: false, error });
      }
      // fetch's rules: 303 (and 301/302 after a POST) become a GET without body
      if (status === 303 || ((status === 301 || status === 302) && method === 'POST')) {
        method = 'GET';
        sendBody = false;
      }
      // credentials go only to the origin they were configured for
      if (next.origin !== target.url.origin) sendAuth = false;
      url = next;
      continue;
    }
    if (status >= 400) return finish(status, redirects, url, httpError(status, response.body));
    if (response.body.length === 0) return finish(status, redirects, url, { ok: true, result: undefined });
    try {
      return finish(status, redirects, url, { ok: true, result: JSON.parse(response.body.toString('utf8')) });
    } catch {
      if (status >= 200 && status < 300) {
        return finish(status, redirects, url, {
          ok: false,
          error: { code: WebhookErrorCode.InvalidResponse, message: `HTTP ${status} from ${redactUrl(url)} is not JSON` },
        });
      }
      // 1xx/3xx without JSON: a result-less success (as iii)
      return finish(status, redirects, url, { ok: true, result: undefined });
    }
  }
}

function finish(status: number, redirects: number, finalUrl: URL, outcome: WebhookResult['outcome']): WebhookResult {
  return { status, redirects, finalUrl, outcome };
}

/** spec §3.4: `{"error": {code, message}}` when the body has one, else `HTTP <status>`. */
export function httpError(status: number, body: Buffer): { ok: false; error: ErrorBody } {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { error?: unknown };
    const error = parsed?.error;
    if (error && typeof error === 'object' && !Array.isArray(error)) {
      const { code, message } = error as { code?: unknown; message?: unknown };
      return {
        ok: false,
        error: {
          code: typeof code === 'string' && code ? code : WebhookErrorCode.HttpError,
          message: typeof message === 'string' && message ? message : `HTTP ${status}`,
        },
      };
    }
    if (typeof error === 'string' && error) return { ok: false, error: { code: WebhookErrorCode.HttpError, message: error } };
  } catch {
    // not JSON: the status says it all
  }
  return { ok: false, error: { code: WebhookErrorCode.HttpError, message: `HTTP ${status}` } };
}

interface RawResponse {
  status: number;
  location?: string;
  body: Buffer;
}

function send(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: Buffer | undefined,
  deadline: number,
  target: WebhookTarget,
  guard: UrlGuard,
  limits: WebhookLimits,
): Promise<RawResponse> {
  const remaining = deadline - Date.now();
  const shown = redactUrl(url);
  if (remaining <= 0) return Promise.reject(timeoutError(target, shown));
  return new Promise<RawResponse>((resolve, reject) => {
    const options: RequestOptions = {
      method,
      headers: body ? { ...headers, 'content-length': String(body.length) } : headers,
      lookup: guard.guardedLookup(shown),
      // no keep-alive pool: a connection is checked once, when it is made for this call
      agent: false,
    };
    const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, options);
    let settled = false;
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      reject(err);
    };
    const timer = setTimeout(() => fail(timeoutError(target, shown)), remaining);
    request.on('error', (err: NodeJS.ErrnoException) => {
      if (err instanceof EngError) return fail(err);
      fail(new EngError(WebhookErrorCode.RequestFailed, `${method} ${shown} failed: ${err.code ? `${err.code} ` : ''}${err.message}`));
    });
    request.on('response', (response: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > limits.maxResponseBytes) {
          fail(
            new EngError(
              WebhookErrorCode.ResponseTooLarge,
              `${method} ${shown} answered more than ${limits.maxResponseBytes} bytes (max_response_bytes)`,
            ),
          );
          return;
        }
        chunks.push(chunk);
      });
      response.on('error', (err) => fail(new EngError(WebhookErrorCode.RequestFailed, `${method} ${shown}: ${err.message}`)));
      response.on('end', () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        const location = response.headers.location;
        resolve({
          status: response.statusCode ?? 0,
          location: typeof location === 'string' ? location : undefined,
          body: Buffer.concat(chunks),
        });
      });
    });
    request.end(body);
  });
}

function timeoutError(target: WebhookTarget, shown: string): EngError {
  return new EngError(
    ErrorCode.Timeout,
    `HTTP function ${target.functionId} timed out after ${target.timeoutMs}ms (${target.method} ${shown})`,
  );
}
