import type { IncomingMessage, ServerResponse } from 'node:http';
import { type ChannelRef, type ErrorBody, ErrorCode } from '@eng/protocol';
import type { ChannelFrame, ChannelManager } from '../../bus/channels.ts';
import { evaluateCondition } from '../../core/condition.ts';
import { newUuid } from '../../core/ids.ts';
import type { InvokeOptions, InvokeOutcome, Settle } from '../../core/invoker.ts';
import { jsonTooDeep, tooDeepMessage } from '../../core/json-limits.ts';
import type { Logger } from '../../log.ts';
import type { EngineSpan, EngineTracer } from '../observability/tracer.ts';
import type { HttpModuleConfig } from './config.ts';
import { flattenHeaders, hasBody, PayloadTooLargeError, parseJsonBody, parseQuery, readBody } from './request.ts';
import { newErrorId, type ShapedResponse, sendError, sendJson, sendShaped, shapeResult } from './response.ts';
import { ResponseChannel } from './response-channel.ts';
import type { RouteMatch } from './router.ts';

// spec: engine-protocol §6.1 per-request pipeline: route → global middleware (by priority) →
// condition → per-route middleware → handler, all within `default_timeout`.

/** What an `http` trigger binding puts in the router. */
export interface TriggerRoute {
  bindingId: string;
  functionId: string;
  conditionFunctionId?: string;
  middlewareFunctionIds: string[];
  metadata?: Record<string, unknown>;
}

export interface PipelineEnv {
  config: HttpModuleConfig;
  /** Global middleware function ids, already sorted by priority. */
  globalMiddleware: string[];
  channels: ChannelManager;
  log: Logger;
  invoke(functionId: string, data: unknown, options?: InvokeOptions): Promise<InvokeOutcome>;
  /**
   * Invoke and hand the outcome to `target`, synchronously when the result frame arrives (the
   * invoker's own dispatch): the handler call of every request, with no promise or microtask hop.
   */
  dispatch(functionId: string, data: unknown, options: InvokeOptions, target: Settle): void;
  /** Cancel a call the engine made (no caller worker): its executor is told, as a caller's cancel does. */
  cancel(invocationId: string, reason: string): boolean;
  /** The observability module's tracer, when it runs (looked up per request: modules start in any order). */
  tracer(): EngineTracer | undefined;
}

/** How long a handler that returned nothing gets to start using its response channel. */
const NO_RESULT_GRACE_MS = 1000;
const CHANNEL_FRAME_BYTES = 64 * 1024;
const EMPTY: Buffer = Buffer.alloc(0);

/** The function's input (§5.2); the channel refs are added last. */
interface HttpRequestPayload {
  query_params: Record<string, string>;
  path_params: Record<string, string>;
  headers: Record<string, string>;
  path: string;
  method: string;
  body: unknown;
  trigger: { type: 'http'; path: string; method: string };
  request_body?: ChannelRef;
  response?: ChannelRef;
}

export async function serveTrigger(
  env: PipelineEnv,
  req: IncomingMessage,
  res: ServerResponse,
  match: RouteMatch<TriggerRoute>,
  search: string,
): Promise<void> {
  const timeoutMs = env.config.default_timeout;
  const deadline = Date.now() + timeoutMs;
  const route = match.route.value;
  const pattern = match.route.pattern;
  const method = req.method as string;
  const headers = flattenHeaders(req);
  const query_params = parseQuery(search);
  // spec §2.6, issue 4: a server span `<METHOD> /<route>` per request, parented on the incoming
  // traceparent header; everything the request invokes runs under it
  const names = spanNames(route, pattern, method);
  const span = env.tracer()?.startSpan(names.span, {
    traceparent: headers.traceparent,
    kind: 'server',
    // the stored pairs themselves (no record to walk per request)
    pairs: [
      ['http.request.method', method],
      ['http.route', names.route],
      ['url.path', req.url ?? ''],
      ['function_id', route.functionId],
    ],
  });
  // everything that ends with the response (the span, the channels once made) is on one object,
  // which the server's shared 'close' listener reaches: no closure or listener per request
  const request = new TriggerRequest(env, res, span, route.functionId, deadline, timeoutMs);
  (res as TrackedResponse)[TRIGGER_REQUEST] = request;
  const trace = { traceparent: span?.traceparent ?? headers.traceparent, baggage: headers.baggage };

  for (const functionId of env.globalMiddleware) {
    const input = middlewareInput(match.params, query_params, headers, method);
    if (!(await runMiddleware(env, res, functionId, input, callOptions(trace, deadline)))) return;
  }

  let raw = EMPTY;
  if (hasBody(req)) {
    try {
      raw = await readBody(req, env.config.body_limit_bytes);
    } catch (err) {
      if (err instanceof PayloadTooLargeError) {
        // the rest of the body is discarded, never buffered; a huge announced body closes the connection
        if (err.closeConnection) res.setHeader('connection', 'close');
        sendError(res, 413, ErrorCode.PayloadTooLarge, err.message);
      } else {
        res.destroy();
      }
      return;
    }
  }

  const contentType = headers['content-type'];
  // a JSON body is parsed: measure its nesting first (the raw bytes still reach request_body when shallow)
  if (raw.length > 0 && contentType?.toLowerCase().includes('application/json') && jsonTooDeep(raw)) {
    sendError(res, 400, ErrorCode.JsonTooDeep, tooDeepMessage('the JSON request body'));
    return;
  }

  const payload: HttpRequestPayload = {
    query_params,
    path_params: match.params,
    headers,
    path: pattern,
    method,
    body: parseJsonBody(contentType, raw),
    trigger: { type: 'http', path: pattern, method },
  };

  if (route.conditionFunctionId) {
    // the condition sees the request without its channels, as in iii
    const verdict = await evaluateCondition(
      env.invoke,
      route.conditionFunctionId,
      { ...payload },
      { ...callOptions(trace, deadline), metadata: route.metadata },
    );
    if (!verdict.pass) {
      if (verdict.error) sendFailure(env, res, verdict.error, `condition ${route.conditionFunctionId}`);
      else sendJson(res, 422, { error: { code: ErrorCode.ConditionNotMet, message: 'Request condition not met' }, skipped: true });
      return;
    }
  }

  for (const functionId of route.middlewareFunctionIds) {
    const input = middlewareInput(match.params, query_params, headers, method);
    if (!(await runMiddleware(env, res, functionId, input, callOptions(trace, deadline)))) return;
  }
  if (res.destroyed) return;

  // §5.2: two channels per request; the body is also copied into `request_body` (§9 row 14)
  const { channels } = env;
  const bodyFrames: ChannelFrame[] = [];
  for (let offset = 0; offset < raw.length; offset += CHANNEL_FRAME_BYTES) {
    bodyFrames.push({ data: raw.subarray(offset, offset + CHANNEL_FRAME_BYTES), binary: true });
  }
  const requestBody = channels.createFilled(bodyFrames);
  const response = channels.create(64);
  const channel = new ResponseChannel(res, channels, response.reader.channel_id);
  channels.attachReader(response.reader.channel_id, response.reader.access_key, channel);
  request.requestBodyChannel = requestBody.reader.channel_id;
  request.responseChannel = channel;
  payload.request_body = requestBody.reader;
  payload.response = response.writer;

  const invokeOptions = callOptions(trace, deadline);
  if (route.metadata) invokeOptions.metadata = route.metadata;
  // known before dispatch: a client that hangs up before the answer cancels the handler's call
  invokeOptions.invocationId = newUuid();
  request.invocationId = invokeOptions.invocationId;
  env.dispatch(route.functionId, payload, invokeOptions, request);
}

const TRIGGER_REQUEST = Symbol('eng.http.triggerRequest');
type TrackedResponse = ServerResponse & { [TRIGGER_REQUEST]?: TriggerRequest };

/** Called by the server's shared 'close' listener of every response. */
export function responseClosed(res: ServerResponse): void {
  (res as TrackedResponse)[TRIGGER_REQUEST]?.closed();
}

/**
 * One trigger request from its span to its response: the handler call's outcome arrives here
 * (`settle`, called by the invoker as the result frame is read), and the response's close ends the
 * span and frees the channels.
 */
class TriggerRequest implements Settle {
  requestBodyChannel?: string;
  responseChannel?: ResponseChannel;
  /** The handler's call while it runs (cleared when its outcome arrives). */
  invocationId?: string;

  constructor(
    private readonly env: PipelineEnv,
    private readonly res: ServerResponse,
    private readonly span: EngineSpan | undefined,
    private readonly functionId: string,
    private readonly deadline: number,
    private readonly timeoutMs: number,
  ) {}

  closed(): void {
    if (this.requestBodyChannel !== undefined) this.env.channels.readerGone(this.requestBodyChannel);
    this.responseChannel?.abandon();
    if (this.invocationId !== undefined && !this.res.writableFinished) {
      // the client went away before its answer: the handler's call is cancelled and its worker told
      // (an @eng/sdk handler's ctx.signal aborts); the outcome finds the channel abandoned and says nothing
      const id = this.invocationId;
      this.invocationId = undefined;
      this.env.cancel(id, 'the HTTP client closed the connection before the response');
    }
    const { span, res } = this;
    if (!span) return;
    const status = res.statusCode;
    span.setAttribute('http.response.status_code', status);
    if (status >= 500) span.end({ error: { code: `HTTP_${status}`, message: `responded ${status}` } });
    else span.end({ status: res.writableFinished ? 'ok' : 'unset' });
  }

  /** The handler's outcome. Runs inside the invoker's completion: it answers, it never throws. */
  settle(outcome: InvokeOutcome): void {
    this.invocationId = undefined;
    try {
      this.respond(outcome);
    } catch (err) {
      failRequest(this.env, this.res, err as Error);
    }
  }

  private respond(outcome: InvokeOutcome): void {
    const { env, res } = this;
    const channel = this.responseChannel as ResponseChannel;
    if (channel.state !== 'pending' || res.writableEnded) {
      // the channel won; a failed handler must not leave a stream open forever
      if (!outcome.ok && channel.state === 'streaming') {
        channel.abandon();
        res.end();
      }
      return;
    }
    if (!outcome.ok) {
      channel.abandon();
      sendFailure(env, res, outcome.error, this.functionId);
      return;
    }
    if (outcome.result !== undefined && outcome.result !== null) {
      channel.abandon();
      sendResult(env, res, outcome.result, this.functionId);
      return;
    }
    awaitChannel(channel, res, this.deadline, this.timeoutMs).catch((err: Error) => failRequest(env, res, err));
  }
}

/** Something went wrong answering a request: a 500 naming it (or the end of a response already started). */
export function failRequest(env: Pick<PipelineEnv, 'log'>, res: ServerResponse, err: Error): void {
  const errorId = newErrorId();
  env.log.error(`request failed: ${err.message}`, { error_id: errorId, stack: err.stack });
  if (res.headersSent) res.end();
  else sendError(res, 500, ErrorCode.InternalError, err.message, { error_id: errorId });
}

/**
 * A route's span name (`<METHOD> /<route>`) and `http.route` value, made once per route and method
 * rather than per request (the span store then looks one string up, not a fresh one each time).
 */
const SPAN_NAMES = new WeakMap<TriggerRoute, Map<string, { span: string; route: string }>>();
function spanNames(route: TriggerRoute, pattern: string, method: string): { span: string; route: string } {
  let byMethod = SPAN_NAMES.get(route);
  if (!byMethod) {
    byMethod = new Map();
    SPAN_NAMES.set(route, byMethod);
  }
  let names = byMethod.get(method);
  if (!names) {
    names = { span: `${method} /${pattern}`, route: `/${pattern}` };
    // a method outside the usual few is kept per request only once the map is small
    if (byMethod.size < 16) byMethod.set(method, names);
  }
  return names;
}

/** ms left until the request's deadline (at least 1: a call is always attempted). */
function remaining(deadline: number): number {
  return Math.max(1, deadline - Date.now());
}

/** Options of an engine-originated call: what is left of the deadline, and the caller's trace context (§2.6). */
function callOptions(trace: { traceparent?: string; baggage?: string }, deadline: number): InvokeOptions {
  const options: InvokeOptions = { timeoutMs: remaining(deadline) };
  if (trace.traceparent) options.traceparent = trace.traceparent;
  if (trace.baggage) options.baggage = trace.baggage;
  return options;
}

/** §6.1 middleware input. */
function middlewareInput(
  path_params: Record<string, string>,
  query_params: Record<string, string>,
  headers: Record<string, string>,
  method: string,
) {
  return { phase: 'preHandler', request: { path_params, query_params, headers, method }, context: {} };
}

/** The handler returned nothing: the response comes through the channel, or it is `{}`. */
async function awaitChannel(channel: ResponseChannel, res: ServerResponse, deadline: number, timeoutMs: number): Promise<void> {
  while (channel.state === 'pending' && !res.destroyed) {
    const budget = channel.active ? remaining(deadline) : Math.min(NO_RESULT_GRACE_MS, remaining(deadline));
    let timer: NodeJS.Timeout | undefined;
    const woke = await Promise.race([
      channel.nextActivity().then(() => true),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), budget);
      }),
    ]);
    clearTimeout(timer);
    if (woke) continue;
    if (channel.state !== 'pending') return;
    channel.abandon();
    if (channel.active || remaining(deadline) <= 1) sendTimeout(res, timeoutMs);
    else sendShaped(res, shapeResult(undefined));
    return;
  }
}

async function runMiddleware(
  env: PipelineEnv,
  res: ServerResponse,
  functionId: string,
  input: unknown,
  options: InvokeOptions,
): Promise<boolean> {
  const outcome = await env.invoke(functionId, input, options);
  if (res.destroyed) return false;
  if (!outcome.ok) {
    if (outcome.error.code === ErrorCode.Timeout) {
      sendError(res, 504, ErrorCode.MiddlewareTimeout, `Middleware ${functionId} timed out after ${options.timeoutMs} ms`);
    } else {
      sendFailure(env, res, outcome.error, `middleware ${functionId}`);
    }
    return false;
  }
  const result = outcome.result as { action?: unknown; response?: unknown } | null | undefined;
  if (result?.action === 'respond') {
    const response = (result.response ?? {}) as Record<string, unknown>;
    sendResult(env, res, { ...response, body: response.body ?? null }, `middleware ${functionId}`);
    return false;
  }
  if (result?.action !== 'continue') {
    env.log.warn(`middleware ${functionId} returned no valid action; continuing`, { action: String(result?.action) });
  }
  return true;
}

/** A handler's result as the response; one that cannot be written as JSON is a 500 saying so. */
function sendResult(env: PipelineEnv, res: ServerResponse, result: unknown, what: string): void {
  let shaped: ShapedResponse;
  try {
    shaped = shapeResult(result);
  } catch (err) {
    const message = `the result of ${what} could not be written as JSON: ${(err as Error).message}`;
    sendFailure(env, res, { code: ErrorCode.SerializationError, message }, what);
    return;
  }
  sendShaped(res, shaped);
}

/** 500 with the failing call's code and message (504 for a timeout), logged under an error id. */
function sendFailure(env: PipelineEnv, res: ServerResponse, error: ErrorBody, what: string): void {
  if (error.code === ErrorCode.Timeout) {
    sendTimeout(res, env.config.default_timeout);
    return;
  }
  const errorId = newErrorId();
  env.log.error(`${what} failed: ${error.code}: ${error.message}`, { error_id: errorId });
  sendError(res, 500, error.code, error.message, { error_id: errorId });
}

function sendTimeout(res: ServerResponse, timeoutMs: number): void {
  sendError(res, 504, ErrorCode.Timeout, `Request timed out after ${timeoutMs} ms`);
}
