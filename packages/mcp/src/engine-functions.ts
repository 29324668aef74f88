import { randomBytes } from 'node:crypto';
import { describeZodError, EngError, ErrorCode, redactText } from '@eng/protocol';
import type { EngClient } from '@eng/sdk';
import {
  CreateMessageRequestParamsSchema,
  ElicitRequestParamsSchema,
  ElicitResultSchema,
  type LoggingLevel,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { validateAgainst } from './json-schema.ts';
import { CANCELLED_TEXT, type CallSlot, LOG_LEVELS, type SessionHub } from './sessions.ts';

// The functions eng-mcp registers on the engine for functions it calls (mcp.md §10 had fixed ids
// `mcp::progress` / `mcp::log_message`; ours carry an instance id so several eng-mcp processes on
// one engine do not take each other's over — the ids reach a called function in its invocation
// metadata, `metadata.mcp.<name>_function`, with the call's `metadata.mcp.token`). They sit under
// `mcp::`, inside the hard floor, so they are never tools themselves. Each one acts on the call
// its token names: the session and request it belongs to, and nothing else.

export interface EngineFunctionIds {
  /** The instance id the others are built from (8 hex digits). */
  instance: string;
  progress: string;
  log: string;
  sampling: string;
  elicitation: string;
  closeStream: string;
  roots: string;
  task: string;
  functionsChanged: string;
  workersChanged: string;
}

export function engineFunctionIds(instance = randomBytes(4).toString('hex')): EngineFunctionIds {
  return {
    instance,
    progress: `mcp::${instance}::progress`,
    log: `mcp::${instance}::log`,
    sampling: `mcp::${instance}::sampling`,
    elicitation: `mcp::${instance}::elicitation`,
    closeStream: `mcp::${instance}::close_stream`,
    roots: `mcp::${instance}::roots`,
    task: `mcp::${instance}::task`,
    functionsChanged: `mcp::${instance}::functions_changed`,
    workersChanged: `mcp::${instance}::workers_changed`,
  };
}

const Token = z.string({ error: 'token is required: pass metadata.mcp.token of the call' }).min(1, 'token must not be empty');
const ProgressInput = z.object({
  token: Token,
  progress: z.number().finite(),
  total: z.number().finite().optional(),
  message: z.string().optional(),
});
const LogInput = z.object({
  level: z.enum(LOG_LEVELS as [LoggingLevel, ...LoggingLevel[]]),
  data: z.unknown(),
  logger: z.string().optional(),
  token: z.string().optional(),
});
const TimeoutMs = z
  .number()
  .int()
  .positive()
  .max(24 * 3_600_000)
  .optional();
const InputKey = z.string().min(1).max(128).optional();
const ClientRequestInput = z.object({ token: Token, timeout_ms: TimeoutMs, input_key: InputKey }).passthrough();

/** The request params a function passed: its input without our keys and what the engine adds (`_caller_worker_id`). */
function clientParams(input: unknown): { token: string; timeout_ms?: number; input_key?: string; params: Record<string, unknown> } {
  const {
    token,
    timeout_ms,
    input_key,
    _caller_worker_id: _caller,
    ...params
  } = parse(ClientRequestInput, input) as Record<string, unknown> & {
    token: string;
    timeout_ms?: number;
    input_key?: string;
  };
  return { token, timeout_ms, input_key, params };
}
const CloseStreamInput = z.object({ token: Token, retry_ms: z.number().int().min(0).max(3_600_000).optional() });
/** How long a client is told to wait before it reconnects to a stream eng-mcp closed (SSE `retry`). */
export const DEFAULT_RETRY_MS = 1000;

function parse<T>(schema: z.ZodType<T>, input: unknown): T {
  const parsed = schema.safeParse(input ?? {});
  if (!parsed.success) throw new EngError(ErrorCode.InvalidArguments, describeZodError(parsed.error));
  return parsed.data;
}

export interface EngineFunctionOptions {
  /** How long a request to the client (sampling, elicitation) may wait for its answer, unless the caller says. */
  clientRequestTimeoutMs: number;
}

/** The call a token names, or an error saying it is gone. */
function callOf(hub: SessionHub, token: string): CallSlot {
  const slot = hub.call(token);
  if (slot?.signal.aborted || (!slot && hub.wasCancelled(token))) throw new EngError('CANCELLED', CANCELLED_TEXT);
  if (!slot) throw new EngError(ErrorCode.NotFound, 'unknown or finished call token: the tool call this token belonged to has ended');
  return slot;
}

/** A client's refusal, a timeout, a cancelled call, or a failure to reach it, as an error the calling function can read. */
function clientFailure(method: string, err: unknown, slot: CallSlot): EngError {
  if (slot.signal.aborted) return new EngError('CANCELLED', `the client cancelled the tool call while it was asked for ${method}`);
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  const text = redactText(typeof message === 'string' ? message : String(err));
  if (code === -32001) return new EngError(ErrorCode.Timeout, `the MCP client did not answer ${method} in time: ${text}`);
  if (typeof code === 'number') return new EngError('CLIENT_ERROR', `the MCP client answered ${method} with an error (${code}): ${text}`);
  return new EngError('CLIENT_UNREACHABLE', `cannot ask the MCP client (${method}): ${text}`);
}

/** Also tells a 2026-07-28 request, which then answers -32021 (MissingRequiredClientCapability). */
const missingCapability = (capability: string, method: string, slot?: CallSlot) => {
  slot?.session.onMissingCapability?.(capability.split('.')[0] as string);
  return missingCapabilityError(capability, method);
};
const missingCapabilityError = (capability: string, method: string) =>
  new EngError(
    'CLIENT_CAPABILITY_MISSING',
    `the MCP client did not declare the "${capability}" capability, so it cannot be asked for ${method}`,
  );

export function registerEngineFunctions(
  client: EngClient,
  hub: SessionHub,
  ids: EngineFunctionIds,
  onChange: () => void,
  options: EngineFunctionOptions,
): void {
  client.registerFunction(
    ids.progress,
    (input) => {
      const q = parse(ProgressInput, input);
      return hub.reportProgress(q.token, q.progress, q.total, q.message);
    },
    {
      description: 'Report progress of an MCP tool call: {token: metadata.mcp.progress_token, progress, total?, message?}',
      request_format: z.toJSONSchema(ProgressInput),
    },
  );
  client.registerFunction(
    ids.log,
    (input) => {
      const q = parse(LogInput, input);
      // a log line belongs to the call that sent it: without the call's token there is no one to tell
      if (q.token === undefined) return { ok: false, delivered: 0, error: 'token is required: pass metadata.mcp.token of the call' };
      const slot = hub.call(q.token);
      if (slot?.signal.aborted || (!slot && hub.wasCancelled(q.token)))
        return { ok: false, delivered: 0, cancelled: true, error: CANCELLED_TEXT };
      if (!slot) return { ok: false, delivered: 0, error: 'unknown or finished call token' };
      return { ok: true, delivered: hub.log(q.level, q.data, q.logger, slot) };
    },
    {
      description: 'Send an MCP log message (notifications/message) to the client of the calling tool call: {level, data, logger?, token}',
      request_format: z.toJSONSchema(LogInput),
    },
  );
  client.registerFunction(
    ids.sampling,
    async (input) => {
      const { token, timeout_ms, input_key, params } = clientParams(input);
      const slot = callOf(hub, token);
      if (!slot.session.server.getClientCapabilities()?.sampling) throw missingCapability('sampling', 'sampling/createMessage', slot);
      const checked = CreateMessageRequestParamsSchema.safeParse(params);
      if (!checked.success)
        throw new EngError(ErrorCode.InvalidArguments, `sampling/createMessage params: ${describeZodError(checked.error)}`);
      try {
        return await slot.session.server.createMessage(
          params as never,
          {
            relatedRequestId: slot.requestId,
            signal: slot.signal,
            timeout: timeout_ms ?? options.clientRequestTimeoutMs,
            inputKey: input_key,
          } as never,
        );
      } catch (err) {
        throw clientFailure('sampling/createMessage', err, slot);
      }
    },
    {
      description:
        'Ask the MCP client of the calling tool call for an LLM completion (sampling/createMessage): {token: metadata.mcp.token, messages, maxTokens, systemPrompt?, …, timeout_ms?}; answers the client reply',
      request_format: { type: 'object', properties: { token: { type: 'string' }, timeout_ms: { type: 'integer' } }, required: ['token'] },
    },
  );
  client.registerFunction(
    ids.elicitation,
    async (input) => {
      const { token, timeout_ms, input_key, params } = clientParams(input);
      const slot = callOf(hub, token);
      const checked = ElicitRequestParamsSchema.safeParse(params);
      if (!checked.success) throw new EngError(ErrorCode.InvalidArguments, `elicitation/create params: ${describeZodError(checked.error)}`);
      const declared = slot.session.server.getClientCapabilities()?.elicitation as { form?: object; url?: object } | undefined;
      const url = params.mode === 'url';
      // an empty `elicitation: {}` (2025-06-18 clients) means form mode
      if (!declared || (url && !declared.url) || (!url && !declared.form && declared.url)) {
        throw missingCapability(url ? 'elicitation.url' : 'elicitation', `elicitation/create (${url ? 'url' : 'form'} mode)`, slot);
      }
      let result: z.infer<typeof ElicitResultSchema>;
      try {
        result = await slot.session.server.request({ method: 'elicitation/create', params: params as never }, ElicitResultSchema, {
          relatedRequestId: slot.requestId,
          signal: slot.signal,
          timeout: timeout_ms ?? options.clientRequestTimeoutMs,
          inputKey: input_key,
        } as never);
      } catch (err) {
        throw clientFailure('elicitation/create', err, slot);
      }
      const schema = (params as { requestedSchema?: Record<string, unknown> }).requestedSchema;
      if (result.action === 'accept' && result.content && schema) {
        const problem = validateAgainst(schema, result.content, 'content');
        if (problem)
          throw new EngError('CLIENT_ERROR', `the MCP client accepted with content that does not match requestedSchema: ${problem}`);
      }
      return result;
    },
    {
      description:
        'Ask the user of the calling tool call for input (elicitation/create): {token: metadata.mcp.token, message, requestedSchema} (or mode "url" with url and elicitationId), timeout_ms?; answers {action, content?}',
      request_format: { type: 'object', properties: { token: { type: 'string' }, timeout_ms: { type: 'integer' } }, required: ['token'] },
    },
  );
  client.registerFunction(
    ids.roots,
    async (input) => {
      const { token, timeout_ms, input_key } = clientParams(input);
      const slot = callOf(hub, token);
      if (!slot.session.server.getClientCapabilities()?.roots) throw missingCapability('roots', 'roots/list', slot);
      try {
        return await slot.session.server.listRoots(undefined, {
          relatedRequestId: slot.requestId,
          signal: slot.signal,
          timeout: timeout_ms ?? options.clientRequestTimeoutMs,
          inputKey: input_key,
        } as never);
      } catch (err) {
        throw clientFailure('roots/list', err, slot);
      }
    },
    {
      description:
        'Ask the MCP client of the calling tool call for its roots (roots/list): {token: metadata.mcp.token, timeout_ms?, input_key?}; answers {roots: [{uri, name?}]}',
      request_format: { type: 'object', properties: { token: { type: 'string' }, timeout_ms: { type: 'integer' } }, required: ['token'] },
    },
  );
  client.registerFunction(
    ids.task,
    (input) => {
      const q = parse(z.object({ token: Token }), input);
      const slot = callOf(hub, q.token);
      const reason = slot.session.escalate
        ? slot.session.escalate()
        : `a ${slot.session.protocolVersion ?? '2025'} request cannot become a task`;
      return reason ? { task: false, reason } : { task: true };
    },
    {
      description:
        'Continue the calling 2026-07-28 tool call as a task (tasks extension): the client gets a CreateTaskResult now and polls tasks/get: {token: metadata.mcp.token}; answers {task: true} or {task: false, reason}',
      request_format: { type: 'object', properties: { token: { type: 'string' } }, required: ['token'] },
    },
  );
  client.registerFunction(
    ids.closeStream,
    (input) => {
      const q = parse(CloseStreamInput, input);
      const slot = callOf(hub, q.token);
      if (!slot.session.releaseStream) return { closed: false, reason: `the ${slot.session.transport} transport has no stream to close` };
      const reason = slot.session.releaseStream(slot.requestId, q.retry_ms ?? DEFAULT_RETRY_MS);
      return reason ? { closed: false, reason } : { closed: true };
    },
    {
      description:
        'Close the HTTP stream that carries the calling tool call (SSE polling, SEP-1699): the client reconnects with Last-Event-ID after retry_ms and gets the result there: {token: metadata.mcp.token, retry_ms?}',
      request_format: z.toJSONSchema(CloseStreamInput),
    },
  );
  // plumbing: `internal` keeps their calls out of traces, lists and charts unless System is shown
  const plumbing = { internal: true };
  client.registerFunction(ids.functionsChanged, () => onChange(), {
    description: 'eng-mcp: the engine function set changed',
    metadata: plumbing,
  });
  client.registerFunction(ids.workersChanged, () => onChange(), { description: 'eng-mcp: a worker connected or left', metadata: plumbing });
  client.registerTrigger({ type: 'engine::functions-available', function_id: ids.functionsChanged, config: {} });
  client.registerTrigger({ type: 'engine::workers-available', function_id: ids.workersChanged, config: {} });
}
