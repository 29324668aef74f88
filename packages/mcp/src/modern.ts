import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { type JSONRPCNotification, type JSONRPCRequest, LoggingLevelSchema, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { builtinsVisible, type Transport } from './builtins.ts';
import { listedPrompt, listedResource, listedTemplate, RESOURCE_NOT_FOUND } from './contributions.ts';
import { errorMessage } from './jsonrpc.ts';
import type { Leg } from './leg.ts';
import type { MrtrStore } from './mrtr.ts';
import { paginate } from './pagination.ts';
import { getPrompt, isBuiltinPrompt, listPrompts, promptCompletions } from './prompts.ts';
import { type ContextInfo, RESOURCE_TEMPLATES, RESOURCES, ResourceService } from './resources.ts';
import { ErrorCode, RpcError } from './rpc-error.ts';
import { INSTRUCTIONS, resourceCompletions, SERVER_VERSION, type ServerDeps, SUPPORTED_VERSIONS } from './server.ts';
import type { McpSession, SubscriptionFilter } from './sessions.ts';
import { requireTasks, type TaskService } from './tasks.ts';

// spec: MCP 2026-07-28 (SEPs 2575, 2567, 2243, 2549, 2322, 2164) — the stateless revision. No
// initialize, no session: every request carries its protocol version, client capabilities (and,
// SHOULD, client info) in `_meta`, and is answered on its own. eng-mcp keeps nothing between two
// such requests that the engine does not hold, except a function still running while it waits for
// the client's input (MRTR, mrtr.ts), which any instance reaches through the engine.

export const MODERN_VERSION = '2026-07-28';
export const MODERN_VERSIONS: readonly string[] = [MODERN_VERSION];
/** Every revision eng-mcp speaks, newest first (server/discover, UnsupportedProtocolVersionError). */
export const ALL_VERSIONS: readonly string[] = [MODERN_VERSION, ...SUPPORTED_VERSIONS];

export const META = {
  version: 'io.modelcontextprotocol/protocolVersion',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  capabilities: 'io.modelcontextprotocol/clientCapabilities',
  logLevel: 'io.modelcontextprotocol/logLevel',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
} as const;

export const HEADER_MISMATCH = -32020;
export const MISSING_CLIENT_CAPABILITY = -32021;
export const UNSUPPORTED_PROTOCOL_VERSION = -32022;

/** spec 2026-07-28 server/utilities/caching: how long a list or read stays fresh. */
export const CACHE_TTL_MS = 5000;
export const SERVER_INFO = { name: 'eng-mcp', title: 'eng MCP server', version: SERVER_VERSION };

export const CAPABILITIES = {
  tools: { listChanged: true },
  resources: { subscribe: true, listChanged: true },
  prompts: { listChanged: true },
  completions: {},
  logging: {},
  extensions: { 'io.modelcontextprotocol/tasks': {}, 'io.modelcontextprotocol/skills': { directoryRead: true } },
};

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** A refusal before dispatch: the JSON-RPC error and the HTTP status it goes out with. */
export interface Refusal {
  status: number;
  code: number;
  message: string;
  data?: unknown;
}

export interface Envelope {
  version: string;
  capabilities: Record<string, unknown>;
  clientInfo?: unknown;
  logLevel?: z.infer<typeof LoggingLevelSchema>;
}

/** The `_meta` of a message's params, when it has one. */
function metaOf(message: unknown): Record<string, unknown> | undefined {
  const params = (message as { params?: unknown } | null)?.params;
  if (!isObject(params)) return undefined;
  return isObject(params._meta) ? params._meta : undefined;
}

/** Whether a message claims the per-request envelope (a modern request), whatever its value. */
export function claimsEnvelope(message: unknown): boolean {
  const meta = metaOf(message);
  return meta !== undefined && META.version in meta;
}

/** The protocol version a request's `_meta` claims, when it claims one. */
export function claimedVersion(message: unknown): unknown {
  return metaOf(message)?.[META.version];
}

export function isModernVersion(version: unknown): boolean {
  return typeof version === 'string' && MODERN_VERSIONS.includes(version);
}

export const unsupportedVersion = (requested: unknown): Refusal => ({
  status: 400,
  code: UNSUPPORTED_PROTOCOL_VERSION,
  message: `Unsupported protocol version: ${String(requested)} (supported versions: ${ALL_VERSIONS.join(', ')})`,
  data: { supported: [...ALL_VERSIONS], requested: typeof requested === 'string' ? requested : String(requested) },
});

/** spec 2026-07-28 basic §_meta: protocolVersion and clientCapabilities are required, clientInfo SHOULD. */
export function readEnvelope(message: unknown): Envelope | Refusal {
  const meta = metaOf(message);
  if (!meta || !(META.version in meta)) {
    return {
      status: 400,
      code: ErrorCode.InvalidParams,
      message: `Invalid params: params._meta["${META.version}"] is required on every ${MODERN_VERSION} request`,
    };
  }
  const version = meta[META.version];
  if (typeof version !== 'string') {
    return { status: 400, code: ErrorCode.InvalidParams, message: `Invalid params: _meta["${META.version}"] must be a string` };
  }
  if (!isModernVersion(version)) return unsupportedVersion(version);
  const capabilities = meta[META.capabilities];
  if (!isObject(capabilities)) {
    return {
      status: 400,
      code: ErrorCode.InvalidParams,
      message: `Invalid params: params._meta["${META.capabilities}"] must be an object (send {} for none)`,
    };
  }
  const envelope: Envelope = { version, capabilities, clientInfo: meta[META.clientInfo] };
  if (META.logLevel in meta) {
    const level = LoggingLevelSchema.safeParse(meta[META.logLevel]);
    if (!level.success) {
      return { status: 400, code: ErrorCode.InvalidParams, message: `Invalid params: unknown _meta["${META.logLevel}"]` };
    }
    envelope.logLevel = level.data;
  }
  return envelope;
}

/** The methods of 2026-07-28 eng-mcp serves; anything else is -32601 (HTTP 404). */
export const MODERN_METHODS = new Set([
  'server/discover',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'prompts/list',
  'prompts/get',
  'completion/complete',
  'subscriptions/listen',
  'tasks/get',
  'tasks/update',
  'tasks/cancel',
  'skills/list',
  'skills/get',
  'resources/directory/read',
]);

/** SEP-2243: the body field `Mcp-Name` mirrors. */
export function mcpNameOf(method: string, params: unknown): string | undefined {
  if (!isObject(params)) return undefined;
  const value =
    method === 'tools/call' || method === 'prompts/get'
      ? params.name
      : method === 'resources/read'
        ? params.uri
        : method === 'tasks/get' || method === 'tasks/update' || method === 'tasks/cancel'
          ? params.taskId
          : undefined;
  return typeof value === 'string' ? value : undefined;
}

/** What a transport gives one modern request. */
export interface ModernIo {
  transport: Transport;
  /** A request-scoped message (progress, log, subscription notifications) on the request's own stream. */
  notify(message: JSONRPCNotification): void;
  /** Cancelled when the client cancels (closes the stream, or notifications/cancelled on stdio). */
  leg: Leg;
}

export type ModernAnswer = { result: Record<string, unknown> } | { error: Refusal };

const Cursor = z.object({ cursor: z.string().optional() }).passthrough();
const Uri = z.object({ uri: z.string().min(1) }).passthrough();
const DirectoryRead = z.object({ uri: z.string().min(1), cursor: z.string().optional() }).passthrough();
const GetPrompt = z.object({ name: z.string().min(1), arguments: z.record(z.string(), z.string()).optional() }).passthrough();
const Complete = z
  .object({
    ref: z.union([
      z.object({ type: z.literal('ref/prompt'), name: z.string() }).passthrough(),
      z.object({ type: z.literal('ref/resource'), uri: z.string() }).passthrough(),
    ]),
    argument: z.object({ name: z.string(), value: z.string() }),
  })
  .passthrough();
const Listen = z
  .object({
    notifications: z
      .object({
        toolsListChanged: z.boolean().optional(),
        promptsListChanged: z.boolean().optional(),
        resourcesListChanged: z.boolean().optional(),
        resourceSubscriptions: z.array(z.string()).max(256).optional(),
        // the tasks extension (SEP-2663): notifications/tasks for these tasks
        taskIds: z.array(z.string().min(1).max(128)).max(256).optional(),
      })
      .passthrough()
      .optional(),
  })
  .passthrough();

function params<T>(schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value ?? {});
  if (!parsed.success)
    throw new RpcError(ErrorCode.InvalidParams, `Invalid params: ${parsed.error.issues.map((i) => i.message).join('; ')}`);
  return parsed.data;
}

/** Every complete result: `resultType` and who answered (spec: servers SHOULD identify themselves). */
function complete(result: Record<string, unknown>, cacheable?: 'public' | 'private'): Record<string, unknown> {
  const meta = isObject(result._meta) ? result._meta : {};
  const out: Record<string, unknown> = { ...result, resultType: 'complete', _meta: { ...meta, [META.serverInfo]: SERVER_INFO } };
  if (cacheable) {
    out.ttlMs = CACHE_TTL_MS;
    out.cacheScope = cacheable;
  }
  return out;
}

/** `complete()` for a result object made for this request alone (a tool call's): marked in place, not copied. */
export function completeOwned(result: Record<string, unknown>): Record<string, unknown> {
  const meta = isObject(result._meta) ? result._meta : {};
  meta[META.serverInfo] = SERVER_INFO;
  result._meta = meta;
  result.resultType = 'complete';
  return result;
}

export interface ModernDeps extends ServerDeps {
  mrtr: MrtrStore;
  tasks: TaskService;
}

/**
 * What a subscriptions/listen is refused with before its event stream opens (HTTP), so the refusal
 * keeps its status: a bad envelope, bad params, task notifications without the tasks extension.
 */
export function listenRefusal(message: JSONRPCRequest): Refusal | undefined {
  const envelope = readEnvelope(message);
  if ('code' in envelope) return envelope;
  const parsed = Listen.safeParse(message.params ?? {});
  if (!parsed.success) return { status: 200, code: ErrorCode.InvalidParams, message: `Invalid params: ${parsed.error.issues[0]?.message}` };
  if (parsed.data.notifications?.taskIds === undefined) return undefined;
  try {
    requireTasks(envelope.capabilities, 'subscriptions/listen with notifications.taskIds');
  } catch (err) {
    return refusalOf(err);
  }
  return undefined;
}

export class ModernServer {
  private readonly resources: ResourceService;

  constructor(private readonly deps: ModernDeps) {
    this.resources = new ResourceService(deps.view, deps.policy);
  }

  /** One modern request, already past the transport's checks; its envelope is read here. */
  async request(message: JSONRPCRequest, io: ModernIo): Promise<ModernAnswer> {
    const envelope = readEnvelope(message);
    if ('code' in envelope) return { error: envelope };
    if (!MODERN_METHODS.has(message.method)) {
      return { error: { status: 404, code: ErrorCode.MethodNotFound, message: `Method not found: ${message.method}` } };
    }
    try {
      return { result: await this.dispatch(message, envelope, io) };
    } catch (err) {
      return { error: refusalOf(err) };
    }
  }

  /** A session-shaped view of one request, for the services written for sessions. */
  session(id: RequestId, envelope: Envelope, io: ModernIo): McpSession {
    return this.deps.mrtr.session(id, envelope, io);
  }

  private context = (transport: Transport): ContextInfo => ({
    server: { name: 'eng-mcp', version: SERVER_VERSION },
    transport,
    engineUrl: this.deps.engineUrl,
    policy: this.deps.policy,
    builtinsVisible: builtinsVisible(transport, this.deps.flags),
    functionIds: this.deps.functionIds,
  });

  private async dispatch(message: JSONRPCRequest, envelope: Envelope, io: ModernIo): Promise<Record<string, unknown>> {
    const p = message.params;
    const { deps } = this;
    switch (message.method) {
      case 'server/discover':
        return complete(
          { supportedVersions: [...ALL_VERSIONS], capabilities: CAPABILITIES, serverInfo: SERVER_INFO, instructions: INSTRUCTIONS },
          'public',
        );
      case 'tools/list': {
        const { cursor } = params(Cursor, p);
        const session = this.session(message.id, envelope, io);
        const { page, nextCursor } = paginate('tools', await deps.tools.list(session), cursor);
        return complete(nextCursor ? { tools: page, nextCursor } : { tools: page }, 'public');
      }
      case 'tools/call':
        return deps.mrtr.callTool(message, envelope, io);
      case 'resources/list': {
        const { cursor } = params(Cursor, p);
        const own = (await deps.contributions.list()).resources.map(listedResource);
        const { page, nextCursor } = paginate('resources', [...RESOURCES, ...own], cursor);
        return complete(nextCursor ? { resources: page, nextCursor } : { resources: page }, 'public');
      }
      case 'resources/templates/list': {
        const { cursor } = params(Cursor, p);
        const own = (await deps.contributions.list()).templates.map(listedTemplate);
        const { page, nextCursor } = paginate('templates', [...RESOURCE_TEMPLATES, ...own], cursor);
        return complete(nextCursor ? { resourceTemplates: page, nextCursor } : { resourceTemplates: page }, 'public');
      }
      case 'resources/read': {
        const { uri } = params(Uri, p);
        if (uri.toLowerCase().startsWith('eng:'))
          return complete(await this.resources.read(uri, () => this.context(io.transport)), 'public');
        return deps.mrtr.readResource(message, uri, envelope, io);
      }
      case 'prompts/list': {
        const { cursor } = params(Cursor, p);
        const own = (await deps.contributions.list()).prompts.map(listedPrompt);
        const { page, nextCursor } = paginate('prompts', [...listPrompts(), ...own], cursor);
        return complete(nextCursor ? { prompts: page, nextCursor } : { prompts: page }, 'public');
      }
      case 'prompts/get': {
        const q = params(GetPrompt, p);
        if (isBuiltinPrompt(q.name)) return complete(getPrompt(q.name, q.arguments));
        return deps.mrtr.getPrompt(message, q.name, q.arguments, envelope, io);
      }
      case 'completion/complete': {
        const q = params(Complete, p);
        const candidates =
          q.ref.type === 'ref/prompt'
            ? promptCompletions(q.ref.name, q.argument.name)
            : await resourceCompletions(deps, q.ref.uri, q.argument.name);
        const matches = candidates.filter((value) => value.startsWith(q.argument.value));
        return complete({ completion: { values: matches.slice(0, 100), total: matches.length, hasMore: matches.length > 100 } });
      }
      case 'subscriptions/listen':
        return this.listen(message, io, envelope);
      case 'tasks/get':
        requireTasks(envelope.capabilities, message.method);
        return deps.tasks.get((p as { taskId?: unknown } | undefined)?.taskId);
      case 'tasks/update': {
        requireTasks(envelope.capabilities, message.method);
        const q = (p ?? {}) as { taskId?: unknown; inputResponses?: unknown };
        return deps.tasks.update_(q.taskId, q.inputResponses);
      }
      case 'tasks/cancel':
        requireTasks(envelope.capabilities, message.method);
        return deps.tasks.cancel((p as { taskId?: unknown } | undefined)?.taskId);
      // the skills extension (SEP-2640, skills.ts)
      case 'skills/list':
        return complete(await deps.contributions.listSkills(params(Cursor, p).cursor), 'public');
      case 'skills/get':
        return complete({ skill: await deps.contributions.getSkill(params(Uri, p).uri) }, 'public');
      case 'resources/directory/read': {
        const q = params(DirectoryRead, p);
        return complete(await deps.contributions.readDirectory(q.uri, q.cursor));
      }
    }
    throw new RpcError(ErrorCode.MethodNotFound, `Method not found: ${message.method}`);
  }

  /**
   * spec 2026-07-28 basic/patterns/subscriptions: acknowledge with the filter eng-mcp honours, then
   * the list_changed / resources/updated notifications asked for, each tagged with the
   * subscription id, until the client goes away (answered then, for a graceful end).
   */
  private async listen(message: JSONRPCRequest, io: ModernIo, envelope: Envelope): Promise<Record<string, unknown>> {
    const q = params(Listen, message.params);
    const asked = q.notifications ?? {};
    // tasks extension: task notifications only for a client that declares it (-32021 otherwise)
    if (asked.taskIds !== undefined) requireTasks(envelope.capabilities, 'subscriptions/listen with notifications.taskIds');
    const filter: SubscriptionFilter = {};
    if (asked.toolsListChanged) filter.toolsListChanged = true;
    if (asked.promptsListChanged) filter.promptsListChanged = true;
    if (asked.resourcesListChanged) filter.resourcesListChanged = true;
    const uris = (asked.resourceSubscriptions ?? []).filter((uri) => ResourceService.validUri(uri) && uri.length <= 2048);
    if (uris.length) filter.resourceSubscriptions = uris;
    if (asked.taskIds?.length) filter.taskIds = [...new Set(asked.taskIds)];
    const tag = { [META.subscriptionId]: message.id };
    io.notify({ jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: { _meta: tag, notifications: filter } });
    for (const uri of uris) await this.deps.onSubscribe?.(uri).catch(() => undefined);
    await new Promise<void>((resolve) => {
      const listener = this.deps.hub.listen(filter, (method, extra) =>
        io.notify({ jsonrpc: '2.0', method, params: { ...extra, _meta: tag } }),
      );
      io.leg.onCancel(() => {
        this.deps.hub.unlisten(listener);
        resolve();
      });
    });
    return complete({ _meta: tag });
  }
}

/** A thrown error as the JSON-RPC error it answers with (in-band: HTTP 200, except -32021). */
export function refusalOf(err: unknown): Refusal {
  const { code, message, data } = (err ?? {}) as { code?: unknown; message?: unknown; data?: unknown };
  if (typeof code === 'number') {
    // spec 2026-07-28 (SEP-2164): a resource that does not exist is invalid params
    const mapped = code === RESOURCE_NOT_FOUND ? ErrorCode.InvalidParams : code;
    const status = mapped === MISSING_CLIENT_CAPABILITY ? 400 : 200;
    return { status, code: mapped, message: String(message), ...(data !== undefined ? { data } : {}) };
  }
  return { status: 200, code: ErrorCode.InternalError, message: typeof message === 'string' ? message : String(err) };
}

/** A JSON-RPC response for a modern answer. */
export function responseOf(id: RequestId | null, answer: ModernAnswer): Record<string, unknown> {
  if ('result' in answer) return { jsonrpc: '2.0', id, result: answer.result };
  const { code, message, data } = answer.error;
  const out = errorMessage(id, code, message) as unknown as { error: Record<string, unknown> };
  if (data !== undefined) out.error.data = data;
  return out as unknown as Record<string, unknown>;
}

/** The Server methods the per-call engine functions use, for a modern request (mrtr.ts implements it). */
export type ModernPeer = Pick<Server, 'notification' | 'getClientCapabilities' | 'createMessage' | 'request' | 'listRoots'>;
export { complete as completeResult };
