import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describeZodError, redactText } from '@eng/protocol';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { InitializeRequestSchema, LoggingLevelSchema } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { z } from 'zod';
import type { BuiltinVisibility, Transport } from './builtins.ts';
import { builtinsVisible } from './builtins.ts';
import { type ContributionService, listedPrompt, listedResource, listedTemplate, RESOURCE_NOT_FOUND } from './contributions.ts';
import type { EngineView } from './engine-view.ts';
import { CONTROL_PLANE_FLOOR, type ExposurePolicy, HARD_FLOOR, isExposed } from './exposure.ts';
import type { Log } from './log.ts';
import { paginate } from './pagination.ts';
import { getPrompt, isBuiltinPrompt, listPrompts, promptCompletions } from './prompts.ts';
import { type ContextInfo, RESOURCE_TEMPLATES, RESOURCES, ResourceService } from './resources.ts';
import { ErrorCode, RpcError } from './rpc-error.ts';
import { DEFAULT_LOG_LEVEL, MAX_SUBSCRIPTION_URI, MAX_SUBSCRIPTIONS, type McpSession, type SessionHub } from './sessions.ts';
import type { CallFunctionIds, ToolService } from './tools.ts';

// One MCP `Server` (the SDK's low-level class) per session, with every handler of mcp.md §4-§10
// and the fixes of §19. Params are validated here, so bad params are -32602 (the SDK alone
// answers -32603 for a request that fails its schema, mcp.md §15).

export const SERVER_VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string })
  .version;

/** spec: basic/lifecycle version negotiation — the revisions we implement, newest first. */
export const SUPPORTED_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'] as const;
export const LATEST_VERSION = SUPPORTED_VERSIONS[0];

export const INSTRUCTIONS =
  'eng engine MCP server. Only functions whose metadata has `"mcp.expose": true` are exposed as tools; a tool name is the ' +
  'function id with every `::` written `__` (orders::place → orders__place; ids that do not give a portable name that way ' +
  'get a hash suffix). Functions with `"mcp.resource"` / `"mcp.prompt"` metadata are resources and prompts. Infra namespaces (' +
  HARD_FLOOR.map((p) => `${p}*`).join(', ') +
  '), the chat control plane (' +
  CONTROL_PLANE_FLOOR.map((p) => `${p}*`).join(', ') +
  ') and functions marked `"internal": true` are always hidden. Optional `mcp.tier` metadata is filtered by the server --tier flag. Resources eng://functions, ' +
  'eng://workers, eng://triggers and eng://context describe the engine.';

export interface ServerDeps {
  tools: ToolService;
  view: EngineView;
  policy: ExposurePolicy;
  flags: BuiltinVisibility;
  hub: SessionHub;
  log: Log;
  engineUrl: string;
  functionIds: CallFunctionIds;
  contributions: ContributionService;
  /** Called after a subscription is recorded (the watcher takes its baseline). */
  onSubscribe?: (uri: string) => Promise<void>;
}

/** A schema matching only the method, so the handler validates params itself (→ -32602, not -32603). */
const methodSchemas = new Map<string, z.ZodType>();
const method = <M extends string>(name: M) => {
  // built once per method, not once per session: zod objects are not small and HTTP opens many sessions
  let schema = methodSchemas.get(name);
  if (!schema) {
    schema = z.object({ method: z.literal(name), params: z.unknown().optional() });
    methodSchemas.set(name, schema);
  }
  return schema as z.ZodObject<{ method: z.ZodLiteral<M>; params: z.ZodOptional<z.ZodUnknown> }>;
};
/**
 * The SDK builds an Ajv instance (with formats) per Server unless given one: most of a session's
 * ~90 KB. It only validates elicitation answers, which this server never requests, so one is shared.
 */
let sharedValidator: AjvJsonSchemaValidator | undefined;
function jsonSchemaValidator(): AjvJsonSchemaValidator {
  sharedValidator ??= new AjvJsonSchemaValidator();
  return sharedValidator;
}

function params<T>(schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value ?? {});
  if (!parsed.success) throw new RpcError(ErrorCode.InvalidParams, `Invalid params: ${describeZodError(parsed.error)}`);
  return parsed.data;
}

const Cursor = z.object({ cursor: z.string().optional() }).passthrough();
const Uri = z.object({ uri: z.string().min(1) }).passthrough();
const GetPrompt = z.object({ name: z.string().min(1), arguments: z.record(z.string(), z.string()).optional() }).passthrough();
const Complete = z
  .object({
    ref: z.union([
      z.object({ type: z.literal('ref/prompt'), name: z.string() }).passthrough(),
      z.object({ type: z.literal('ref/resource'), uri: z.string() }).passthrough(),
    ]),
    argument: z.object({ name: z.string(), value: z.string() }),
    context: z.object({ arguments: z.record(z.string(), z.string()).optional() }).optional(),
  })
  .passthrough();
const SetLevel = z.object({ level: z.string() }).passthrough();
const MAX_COMPLETIONS = 100;

export function createSession(transport: Transport, deps: ServerDeps, id: string = randomUUID()): McpSession {
  const server = new Server(
    { name: 'eng-mcp', title: 'eng MCP server', version: SERVER_VERSION },
    {
      capabilities: {
        tools: { listChanged: true },
        resources: { subscribe: true, listChanged: true },
        prompts: { listChanged: true },
        completions: {},
      },
      instructions: INSTRUCTIONS,
      jsonSchemaValidator: jsonSchemaValidator(),
    },
  );
  // registered after construction so the SDK's own setLevel (which accepts any level) is not installed
  server.registerCapabilities({ logging: {} });
  // requests to the client (sampling, elicitation) are numbered from 1: the SDK client ignores a
  // notifications/cancelled whose requestId is 0 (`if (!requestId) return`), so a first request
  // numbered 0 could never be cancelled at the client
  (server as unknown as { _requestMessageId: number })._requestMessageId = 1;
  const session: McpSession = {
    id,
    transport,
    server,
    initialized: false,
    logLevel: DEFAULT_LOG_LEVEL,
    subscriptions: new Set(),
    subscriptionBytes: 0,
    lastActiveMs: Date.now(),
  };
  const resources = new ResourceService(deps.view, deps.policy);
  const context = (): ContextInfo => ({
    server: { name: 'eng-mcp', version: SERVER_VERSION },
    transport,
    engineUrl: deps.engineUrl,
    policy: deps.policy,
    builtinsVisible: builtinsVisible(transport, deps.flags),
    functionIds: deps.functionIds,
  });
  server.onerror = (err) => deps.log.debug(`session ${id}: ${err.message}`);

  server.setRequestHandler(method('initialize'), async (request) => {
    const parsed = InitializeRequestSchema.safeParse(request);
    if (!parsed.success) throw new RpcError(ErrorCode.InvalidParams, `Invalid params: ${describeZodError(parsed.error as never)}`);
    const requested = parsed.data.params.protocolVersion;
    const version = (SUPPORTED_VERSIONS as readonly string[]).includes(requested) ? requested : LATEST_VERSION;
    // the SDK records the client's capabilities and info; we only narrow the version set
    const result = await (server as unknown as { _oninitialize(r: unknown): Promise<Record<string, unknown>> })._oninitialize(parsed.data);
    session.protocolVersion = version;
    session.initialized = true;
    return { ...result, protocolVersion: version };
  });

  server.setRequestHandler(method('tools/list'), async (request) => {
    const { cursor } = params(Cursor, request.params);
    const { page, nextCursor } = paginate('tools', await deps.tools.list(session), cursor);
    return nextCursor ? { tools: page, nextCursor } : { tools: page };
  });

  // Registered on the Protocol base, past Server's tools/call wrapper: that wrapper re-parses the
  // request and the result with zod (costly with big arguments); the shape is checked here instead.
  const protocolSetRequestHandler = Object.getPrototypeOf(Server.prototype).setRequestHandler as Server['setRequestHandler'];
  protocolSetRequestHandler.call(server, method('tools/call'), async (request, extra) => {
    const p = (request.params ?? {}) as { name?: unknown; arguments?: unknown; _meta?: { progressToken?: string | number } };
    if (typeof p.name !== 'string' || p.name === '')
      throw new RpcError(ErrorCode.InvalidParams, 'Invalid params: name must be a non-empty string');
    if (p.arguments !== undefined && (p.arguments === null || typeof p.arguments !== 'object' || Array.isArray(p.arguments))) {
      throw new RpcError(ErrorCode.InvalidParams, 'Invalid params: arguments must be an object');
    }
    return deps.tools.call(p.name, p.arguments as Record<string, unknown> | undefined, {
      session,
      requestId: extra.requestId,
      progressToken:
        typeof p._meta?.progressToken === 'string' || typeof p._meta?.progressToken === 'number' ? p._meta.progressToken : undefined,
      signal: extra.signal,
    });
  });

  server.setRequestHandler(method('resources/list'), async (request) => {
    const { cursor } = params(Cursor, request.params);
    const own = (await deps.contributions.list()).resources.map(listedResource);
    const { page, nextCursor } = paginate('resources', [...RESOURCES, ...own], cursor);
    return nextCursor ? { resources: page, nextCursor } : { resources: page };
  });
  server.setRequestHandler(method('resources/templates/list'), async (request) => {
    const { cursor } = params(Cursor, request.params);
    const own = (await deps.contributions.list()).templates.map(listedTemplate);
    const { page, nextCursor } = paginate('templates', [...RESOURCE_TEMPLATES, ...own], cursor);
    return nextCursor ? { resourceTemplates: page, nextCursor } : { resourceTemplates: page };
  });
  server.setRequestHandler(method('resources/read'), async (request) => {
    const { uri } = params(Uri, request.params);
    if (uri.toLowerCase().startsWith('eng:')) return resources.read(uri, context);
    const read = await deps.contributions.read(uri);
    if (!read) throw new RpcError(RESOURCE_NOT_FOUND, `Resource not found: ${uri}`, { uri });
    return read;
  });
  server.setRequestHandler(method('resources/subscribe'), async (request) => {
    const { uri } = params(Uri, request.params);
    if (!ResourceService.validUri(uri)) throw new RpcError(ErrorCode.InvalidParams, `Invalid URI: ${uri}`);
    if (uri.length > MAX_SUBSCRIPTION_URI) {
      throw new RpcError(ErrorCode.InvalidParams, `Invalid params: uri is longer than ${MAX_SUBSCRIPTION_URI} characters`);
    }
    if (!session.subscriptions.has(uri)) {
      if (session.subscriptions.size >= MAX_SUBSCRIPTIONS) {
        throw new RpcError(
          ErrorCode.InvalidParams,
          `Invalid params: a session may hold ${MAX_SUBSCRIPTIONS} subscriptions; unsubscribe from one first`,
        );
      }
      session.subscriptions.add(uri);
      session.subscriptionBytes += uri.length;
    }
    await deps.onSubscribe?.(uri).catch((err) => deps.log.debug(`cannot take a baseline of ${uri}: ${(err as Error).message}`));
    return {};
  });
  server.setRequestHandler(method('resources/unsubscribe'), async (request) => {
    const { uri } = params(Uri, request.params);
    if (!ResourceService.validUri(uri)) throw new RpcError(ErrorCode.InvalidParams, `Invalid URI: ${uri}`);
    if (session.subscriptions.delete(uri)) session.subscriptionBytes -= uri.length;
    return {};
  });

  server.setRequestHandler(method('prompts/list'), async (request) => {
    const { cursor } = params(Cursor, request.params);
    const own = (await deps.contributions.list()).prompts.map(listedPrompt);
    const { page, nextCursor } = paginate('prompts', [...listPrompts(), ...own], cursor);
    return nextCursor ? { prompts: page, nextCursor } : { prompts: page };
  });
  server.setRequestHandler(method('prompts/get'), async (request) => {
    const p = params(GetPrompt, request.params);
    if (isBuiltinPrompt(p.name)) return getPrompt(p.name, p.arguments);
    const rendered = await deps.contributions.getPrompt(p.name, p.arguments);
    if (!rendered) throw new RpcError(ErrorCode.InvalidParams, `Unknown prompt: ${p.name}`);
    return rendered;
  });

  server.setRequestHandler(method('completion/complete'), async (request) => {
    const p = params(Complete, request.params);
    const candidates =
      p.ref.type === 'ref/prompt'
        ? promptCompletions(p.ref.name, p.argument.name)
        : await resourceCompletions(deps, p.ref.uri, p.argument.name);
    const matches = candidates.filter((value) => value.startsWith(p.argument.value));
    return { completion: { values: matches.slice(0, MAX_COMPLETIONS), total: matches.length, hasMore: matches.length > MAX_COMPLETIONS } };
  });

  server.setRequestHandler(method('logging/setLevel'), async (request) => {
    const { level } = params(SetLevel, request.params);
    const parsed = LoggingLevelSchema.safeParse(level);
    if (!parsed.success) throw new RpcError(ErrorCode.InvalidParams, `Unknown log level: ${level}`);
    session.logLevel = parsed.data;
    return {};
  });

  return session;
}

/** Completion of a resource template's `{id}`: exposed function ids, worker names, triggers of exposed functions. */
export async function resourceCompletions(deps: ServerDeps, uri: string, argument: string): Promise<string[]> {
  if (argument !== 'id') return [];
  try {
    if (uri === 'eng://function/{id}') {
      return (await deps.view.listFunctions()).filter((row) => isExposed(row, deps.policy)).map((row) => row.function_id);
    }
    if (uri === 'eng://worker/{id}') {
      return [...new Set((await deps.view.listWorkers()).flatMap((w) => [w.name, w.id]).filter((v): v is string => typeof v === 'string'))];
    }
    if (uri === 'eng://trigger/{id}') {
      const exposed = new Set((await deps.view.listFunctions()).filter((row) => isExposed(row, deps.policy)).map((r) => r.function_id));
      return (await deps.view.listTriggers()).filter((t) => exposed.has(t.function_id)).map((t) => t.id);
    }
  } catch (err) {
    throw new RpcError(ErrorCode.InternalError, `cannot read completions from the eng engine: ${redactText((err as Error).message)}`);
  }
  return [];
}
