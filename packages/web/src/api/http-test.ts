import { useMutation } from '@tanstack/react-query';
import { consoleEndpoint } from '../lib/base-path.ts';

/**
 * "Test HTTP trigger" (seed 4.1 op 2). The browser talks to one origin only, so eng-console
 * and the console worker forward `/_console/http/<path>` to the engine's HTTP port. A server without
 * that endpoint answers 404 without our marker header; the panel then says the test is unavailable.
 */
export interface HttpTestRequest {
  method: string;
  /** Path as the engine serves it, without a leading slash: `orders/42`. */
  path: string;
  query: Array<[string, string]>;
  body?: string;
  headers?: Record<string, string>;
}

export interface HttpTestResponse {
  status: number;
  statusText: string;
  headers: Array<[string, string]>;
  body: string;
  json?: unknown;
  durationMs: number;
  url: string;
}

export class HttpTestUnavailable extends Error {}

/** Header eng-console adds to proxied responses so the UI can tell them from its own 404s. */
export const PROXY_MARKER = 'x-eng-console-proxy';

export async function sendHttpTest(req: HttpTestRequest): Promise<HttpTestResponse> {
  const qs = new URLSearchParams(req.query.filter(([k]) => k.trim() !== ''));
  const path = req.path.replace(/^\/+/, '');
  const url = `${consoleEndpoint(`http/${path}`)}${qs.size ? `?${qs}` : ''}`;
  const headers: Record<string, string> = { ...(req.headers ?? {}) };
  const hasBody = req.body !== undefined && req.body !== '' && !['GET', 'HEAD'].includes(req.method);
  if (hasBody && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
  const t0 = performance.now();
  const res = await fetch(url, { method: req.method, headers, body: hasBody ? req.body : undefined });
  const text = await res.text();
  const durationMs = performance.now() - t0;
  if (!res.headers.has(PROXY_MARKER)) {
    // the console's own answer: its JSON error says why (engine HTTP port down, …)
    let reason: string | undefined;
    try {
      reason = (JSON.parse(text) as { error?: { message?: string } }).error?.message;
    } catch {
      reason = undefined;
    }
    if (res.status === 404) {
      // eng-console and the console worker both forward: this is another server in front of the engine
      throw new HttpTestUnavailable(
        'This server does not forward HTTP trigger tests (it has no /_console/http endpoint). Open the page from eng-console or the console worker, or call the route on the engine HTTP port directly.',
      );
    }
    throw new Error(reason ?? `The console could not forward the request (HTTP ${res.status}).`);
  }
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  const responseHeaders = [...res.headers.entries()].filter(([k]) => k !== PROXY_MARKER);
  return {
    status: res.status,
    statusText: res.statusText,
    headers: responseHeaders,
    body: text,
    json,
    durationMs,
    url: `/${path}${qs.size ? `?${qs}` : ''}`,
  };
}

export function useHttpTest() {
  return useMutation({ mutationFn: sendHttpTest });
}
