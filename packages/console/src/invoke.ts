import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EngClient } from '@eng/sdk';
import { BodyTooLarge, readBody, sendError, sendJson } from './http-util.ts';
import type { ConsoleTelemetry } from './telemetry.ts';

/**
 * `POST /_console/invoke {function_id, input, timeout_ms?}` (seed 4.1): forwards to the engine
 * and answers the function's result as JSON, or `{error: {code, message}}` with a status that says
 * whose fault it was: 400 malformed request, 404 unknown function, 504 timeout, 502 engine
 * unreachable, 500 the function failed.
 */
export const INVOKE_BODY_LIMIT = 16 * 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 30_000;
const MAX_TIMEOUT_MS = 300_000;

export interface InvokeDeps {
  client: EngClient;
  bridgeUrl: string;
  telemetry: ConsoleTelemetry;
}

export function statusForCode(code: string): number {
  switch (code) {
    case 'function_not_found':
    case 'NOT_FOUND':
      return 404;
    case 'TIMEOUT':
      return 504;
    case 'not_connected':
      return 502;
    case 'deserialization_error':
    case 'INVALID_ARGUMENTS':
      return 400;
    case 'FORBIDDEN':
      return 403;
    default:
      return 500;
  }
}

export async function handleInvoke(req: IncomingMessage, res: ServerResponse, deps: InvokeDeps): Promise<void> {
  if (req.method !== 'POST') {
    sendError(res, 405, 'METHOD_NOT_ALLOWED', 'use POST with a JSON body {function_id, input}', { allow: 'POST' });
    return;
  }
  let raw: Buffer;
  try {
    raw = await readBody(req, INVOKE_BODY_LIMIT);
  } catch (err) {
    if (err instanceof BodyTooLarge) sendError(res, 413, 'PAYLOAD_TOO_LARGE', err.message);
    else sendError(res, 400, 'JSON_ERROR', `could not read the request body: ${(err as Error).message}`);
    return;
  }
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch (err) {
    sendError(res, 400, 'JSON_ERROR', `request body is not valid JSON: ${(err as Error).message}`);
    return;
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    sendError(res, 400, 'INVALID_ARGUMENTS', 'request body must be a JSON object {function_id, input}');
    return;
  }
  const { function_id: functionId, input, timeout_ms: timeoutMs } = body as Record<string, unknown>;
  if (typeof functionId !== 'string' || functionId.trim() === '') {
    sendError(res, 400, 'INVALID_ARGUMENTS', 'function_id is required and must be a non-empty string');
    return;
  }
  if (
    timeoutMs !== undefined &&
    (typeof timeoutMs !== 'number' || !Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_TIMEOUT_MS)
  ) {
    sendError(res, 400, 'INVALID_ARGUMENTS', `timeout_ms must be an integer between 1 and ${MAX_TIMEOUT_MS}`);
    return;
  }

  await deps.telemetry.span(`invoke ${functionId}`, { 'faas.invoked_name': functionId, function_id: functionId }, async (span) => {
    // the engine may be down: say so at once instead of queueing the call in the SDK
    try {
      await deps.client.ready({ timeoutMs: 1000 });
    } catch {
      span?.setAttribute('error.type', 'not_connected');
      sendError(res, 502, 'not_connected', `engine unreachable at ${deps.bridgeUrl}`);
      return;
    }
    const started = performance.now();
    try {
      const result = await deps.client.call(functionId, input === undefined ? {} : input, {
        timeoutMs: (timeoutMs as number | undefined) ?? DEFAULT_TIMEOUT_MS,
      });
      sendJson(res, 200, result ?? null, { 'x-eng-duration-ms': (performance.now() - started).toFixed(2) });
    } catch (err) {
      const e = err as { code?: string; message?: string };
      const code = e.code ?? 'invocation_failed';
      const status = statusForCode(code);
      span?.setAttribute('error.type', code);
      const message = code === 'not_connected' ? `engine unreachable at ${deps.bridgeUrl}: ${e.message}` : (e.message ?? String(err));
      sendError(res, status, code, message, { 'x-eng-duration-ms': (performance.now() - started).toFixed(2) });
    }
  });
}
