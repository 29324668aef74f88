import type { IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { gunzip, inflate } from 'node:zlib';
import { ErrorCode } from '@eng/protocol';
import { jsonTooDeep, tooDeepMessage } from '../../core/json-limits.ts';
import type { HttpRouterService } from '../http/index.ts';
import type { TelemetryIngest, TelemetryKind } from './ingest.ts';

// OTLP/HTTP receiver (JSON encoding) on the HTTP module's port, so any OpenTelemetry SDK can
// export to the engine: POST /v1/traces, /v1/logs, /v1/metrics (OTLP spec "OTLP/HTTP").

const gunzipAsync = promisify(gunzip);
const inflateAsync = promisify(inflate);

const ROUTES: Array<[string, TelemetryKind]> = [
  ['/v1/traces', 'traces'],
  ['/v1/logs', 'logs'],
  ['/v1/metrics', 'metrics'],
];
const REJECTED_FIELD: Record<TelemetryKind, string> = {
  traces: 'rejectedSpans',
  logs: 'rejectedLogRecords',
  metrics: 'rejectedDataPoints',
};

/** Mount the receiver; returns a function that unmounts it. */
export function mountOtlpReceiver(router: HttpRouterService, ingest: TelemetryIngest): () => void {
  const removers = ROUTES.map(([path, kind]) => router.addRoute('POST', path, (req, res) => receive(router, ingest, kind, req, res)));
  return () => {
    for (const remove of removers) remove();
  };
}

async function receive(router: HttpRouterService, ingest: TelemetryIngest, kind: TelemetryKind, req: IncomingMessage, res: ServerResponse) {
  const contentType = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (contentType !== 'application/json') {
    req.resume();
    const what = contentType.includes('protobuf')
      ? 'OTLP/protobuf is not supported'
      : `Content-Type "${contentType || '(none)'}" is not supported`;
    router.sendError(
      res,
      415,
      ErrorCode.UnsupportedMediaType,
      `${what}: this receiver accepts OTLP/JSON only. Send Content-Type: application/json (OTEL_EXPORTER_OTLP_PROTOCOL=http/json).`,
    );
    return;
  }
  let body = await router.readBody(req);
  const encoding = (req.headers['content-encoding'] ?? '').toLowerCase();
  try {
    // a few KiB of gzip can inflate to gigabytes: the inflated body has the same limit as a plain one
    const options = { maxOutputLength: router.bodyLimitBytes };
    if (encoding === 'gzip') body = await gunzipAsync(body, options);
    else if (encoding === 'deflate') body = await inflateAsync(body, options);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
      router.sendError(
        res,
        413,
        ErrorCode.PayloadTooLarge,
        `the ${encoding} body inflates to more than ${router.bodyLimitBytes} bytes (body_limit_bytes of eng-http)`,
      );
      return;
    }
    router.sendError(res, 400, ErrorCode.DeserializationError, `body is not valid ${encoding}: ${(err as Error).message}`);
    return;
  }
  if (jsonTooDeep(body)) {
    router.sendError(res, 400, ErrorCode.JsonTooDeep, tooDeepMessage('the OTLP/JSON body'));
    return;
  }
  let payload: unknown;
  try {
    payload = JSON.parse(body.toString('utf8'));
  } catch (err) {
    router.sendError(res, 400, ErrorCode.DeserializationError, `body is not JSON: ${(err as Error).message}`);
    return;
  }
  const result = ingest.ingest(kind, payload, null, `OTLP/HTTP ${req.socket.remoteAddress ?? ''}`.trim());
  if (!result.ok) {
    router.sendError(res, 400, ErrorCode.DeserializationError, result.reason);
    return;
  }
  // OTLP/HTTP: a 200 with `partialSuccess` tells the exporter what was rejected and why
  if (result.rejected > 0) {
    router.sendJson(res, 200, {
      partialSuccess: { [REJECTED_FIELD[kind]]: result.rejected, errorMessage: result.reason ?? 'records rejected' },
    });
    return;
  }
  router.sendJson(res, 200, {});
}
