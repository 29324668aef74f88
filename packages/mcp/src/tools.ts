import { redactText } from '@eng/protocol';
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { BuiltinHandlers } from './builtin-handlers.ts';
import { BUILTIN_NAMES, BUILTIN_TOOLS, type BuiltinVisibility, builtinRefusal, builtinsVisible, isBuiltin } from './builtins.ts';
import type { EngineView } from './engine-view.ts';
import { contributesNonTool, type ExposurePolicy, type FunctionRow, functionIdOf, isExposed } from './exposure.ts';
import { type Invoker, NOT_RUN } from './invoker.ts';
import { validateAgainst } from './json-schema.ts';
import { ErrorCode, RpcError } from './rpc-error.ts';
import type { McpSession, SessionHub } from './sessions.ts';
import { engineFailureText, fail, ok, richResult, type ToolResult } from './tool-result.ts';
import { inputMapping, inputSchemaOf, outputSchemaOf, supportsStructuredTools, type ToolDefinition, toolOf } from './tool-schema.ts';

// spec: seed §4.3 rules 1-4 and §7 — tools/list and the tools/call sequence.

export interface CallContext {
  session: McpSession;
  requestId: RequestId;
  progressToken?: string | number;
  signal: AbortSignal;
  /** A function that throws (or the engine fails it) rejects instead of an isError result (tasks: status failed). */
  throwFailures?: boolean;
}

/** `"mcp.task"` metadata: whether a tool runs as a task (tasks extension) and when it becomes one. */
export interface TaskMode {
  support: 'optional' | 'required';
  /** `immediate`: the call is a task from the start; `on_request`: when the function calls `task_function`. */
  start: 'immediate' | 'on_request';
}

export function taskModeOf(metadata: Record<string, unknown> | null | undefined): TaskMode | undefined {
  const value = metadata?.['mcp.task'];
  if (value === 'optional' || value === 'required') return { support: value, start: 'immediate' };
  if (value === true) return { support: 'optional', start: 'immediate' };
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const { support, start } = value as { support?: unknown; start?: unknown };
    return { support: support === 'required' ? 'required' : 'optional', start: start === 'on_request' ? 'on_request' : 'immediate' };
  }
  return undefined;
}

/** The per-call engine functions a called function finds in `metadata.mcp.*_function`. */
export interface CallFunctionIds {
  progress: string;
  log: string;
  sampling: string;
  elicitation: string;
  closeStream: string;
  roots: string;
  task: string;
}

/** What a called function finds in `metadata.mcp`: the call's token and the per-call functions. */
export function callMetadata(ids: CallFunctionIds, session: McpSession, token: string, progress = false): Record<string, unknown> {
  return {
    session: session.id,
    transport: session.transport,
    protocol_version: session.protocolVersion,
    client_capabilities: session.server.getClientCapabilities() ?? {},
    token,
    log_function: ids.log,
    sampling_function: ids.sampling,
    elicitation_function: ids.elicitation,
    roots_function: ids.roots,
    close_stream_function: ids.closeStream,
    task_function: ids.task,
    ...(progress ? { progress_token: token, progress_function: ids.progress } : {}),
  };
}

export interface ToolServiceDeps {
  view: EngineView;
  policy: ExposurePolicy;
  flags: BuiltinVisibility;
  builtins: BuiltinHandlers;
  hub: SessionHub;
  invoker: Invoker;
  functionIds: CallFunctionIds;
  /** Told when a listing went out without function tools because the engine was unreachable. */
  onDegradedList?: () => void;
}

/** A row's input schema, made once per `request_format` object (a new listing brings new objects). */
const inputSchemas = new WeakMap<object, Record<string, unknown>>();
function inputSchemaFor(requestFormat: unknown): Record<string, unknown> {
  if (requestFormat === null || typeof requestFormat !== 'object') return inputSchemaOf(requestFormat);
  let schema = inputSchemas.get(requestFormat);
  if (!schema) {
    schema = inputSchemaOf(requestFormat);
    inputSchemas.set(requestFormat, schema);
  }
  return schema;
}

/** A name that ends like a generated one (`_` and 8 hex digits): only the listing can reverse it. */
const HASHED_NAME = /_[0-9a-f]{8}$/;

/** The exposed functions as tools, in engine order; a function whose name collides with an earlier one is skipped. */
export function exposedTools(rows: FunctionRow[], policy: ExposurePolicy, protocolVersion?: string): ToolDefinition[] {
  const seen = new Set<string>(BUILTIN_NAMES);
  const tools: ToolDefinition[] = [];
  for (const row of rows) {
    if (!isExposed(row, policy) || contributesNonTool(row)) continue;
    const tool = toolOf(row, protocolVersion);
    if (seen.has(tool.name)) continue;
    seen.add(tool.name);
    tools.push(tool);
  }
  return tools;
}

export class ToolService {
  constructor(private readonly deps: ToolServiceDeps) {}

  /**
   * Built-ins first (when visible on this transport), then the exposed functions. While the engine
   * is unreachable only the built-ins are listed; `notifications/tools/list_changed` follows once
   * it is back (the watcher). A listing that fails on a live connection fails the request.
   */
  async list(session: McpSession): Promise<ToolDefinition[]> {
    const builtins = builtinsVisible(session.transport, this.deps.flags) ? BUILTIN_NAMES.map((name) => BUILTIN_TOOLS[name]) : [];
    if (!(await this.deps.view.waitConnected())) {
      this.deps.onDegradedList?.();
      return builtins;
    }
    let rows: FunctionRow[];
    try {
      rows = await this.deps.view.listFunctions();
    } catch (err) {
      throw new RpcError(ErrorCode.InternalError, `cannot list functions from the eng engine: ${redactText((err as Error).message)}`);
    }
    return [...builtins, ...exposedTools(rows, this.deps.policy, session.protocolVersion)];
  }

  /** The input schema of an exposed function tool (for SEP-2243 `x-mcp-header` checks); undefined for anything else. */
  async inputSchemaOfTool(name: string): Promise<Record<string, unknown> | undefined> {
    if (isBuiltin(name)) return undefined;
    const functionId = this.resolve(name);
    const row = this.deps.view.mirrored(functionId) ?? (await this.deps.view.functionInfo(functionId).catch(() => null));
    if (!row || !isExposed(row, this.deps.policy) || contributesNonTool(row)) return undefined;
    return inputSchemaFor(row.request_format);
  }

  /** How an exposed function tool runs as a task (`"mcp.task"` metadata), if it does. */
  async taskModeOf(name: string): Promise<TaskMode | undefined> {
    if (isBuiltin(name)) return undefined;
    const functionId = this.resolve(name);
    const row = this.deps.view.mirrored(functionId) ?? (await this.deps.view.functionInfo(functionId).catch(() => null));
    if (!row || !isExposed(row, this.deps.policy)) return undefined;
    return taskModeOf(row.metadata);
  }

  /** The function behind a tool name: the listing's own table first, then the plain reverse mangling. */
  private resolve(name: string): string {
    return this.deps.view.idForTool(name) ?? functionIdOf(name);
  }

  async call(name: string, args: Record<string, unknown> | undefined, ctx: CallContext): Promise<ToolResult> {
    if (isBuiltin(name)) {
      const refusal = builtinRefusal(name, ctx.session.transport, this.deps.flags);
      return refusal ? fail(refusal) : this.deps.builtins.run(name, args ?? {});
    }
    const input = args ?? {};
    const { invoker, view } = this.deps;
    let functionId = this.resolve(name);

    // one round trip on an eng engine: the mirrored row, the engine re-checking at dispatch
    const mirrored = invoker.fastRow(functionId);
    // a problem may come from a stale schema: the full path checks against the current one
    if (mirrored && !contributesNonTool(mirrored) && !validateAgainst(inputSchemaFor(mirrored.request_format), input, 'arguments')) {
      const fast = await this.run(mirrored, functionId, input, ctx, true);
      if (fast !== NOT_RUN) return fast;
    }

    let gate = await invoker.gate(functionId);
    if (!gate.ok && gate.reason === 'unknown' && HASHED_NAME.test(name) && view.idForTool(name) === undefined) {
      // a generated name the mirror does not know (yet): read the listing once and look again
      await view.listFunctions().catch(() => undefined);
      const listed = view.idForTool(name);
      if (listed !== undefined) {
        functionId = listed;
        gate = await invoker.gate(functionId);
      }
    }
    if (!gate.ok) {
      // spec 2025-06-18 server/tools §error handling: an unknown tool is a protocol error
      if (gate.reason === 'unknown') throw new RpcError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
      return fail(gate.text);
    }
    const row = gate.row;
    // listed as a resource or a prompt, so not listed as a tool: calling it as one agrees with the list
    if (contributesNonTool(row)) throw new RpcError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    const problem = validateAgainst(inputSchemaFor(row.request_format), input, 'arguments');
    if (problem) return fail(`Invalid arguments for tool '${name}': ${problem}`);
    return (await this.run(row, row.function_id, input, ctx, false)) as ToolResult;
  }

  /** Invoke with the call's metadata; NOT_RUN only on the guarded path, when the engine refused before running. */
  private async run(
    row: FunctionRow,
    functionId: string,
    input: Record<string, unknown>,
    ctx: CallContext,
    guarded: boolean,
  ): Promise<ToolResult | typeof NOT_RUN> {
    const { hub, invoker, functionIds } = this.deps;
    const payload = inputMapping(row.request_format) === 'wrapped' ? input.input : input;
    const call = hub.openCall(ctx.session, ctx.requestId, ctx.signal, ctx.progressToken);
    const metadata = { mcp: callMetadata(functionIds, ctx.session, call.key, ctx.progressToken !== undefined) };
    try {
      const options = { metadata, signal: ctx.signal };
      const result = guarded ? await invoker.guarded(functionId, payload, options) : await invoker.direct(functionId, payload, options);
      if (result === NOT_RUN) return NOT_RUN;
      return this.shape(row, result, ctx.session);
    } catch (err) {
      if (ctx.signal.aborted) return fail('Request cancelled');
      if (ctx.throwFailures) throw new RpcError(ErrorCode.InternalError, engineFailureText(err).replace(/^Error: /, ''));
      return fail(engineFailureText(err));
    } finally {
      call.close();
    }
  }

  /**
   * A result that is MCP content already (`{content: [...]}`, mcp README) goes out as it is; anything
   * else as one text item. With an advertised output schema, `structuredContent` must match it.
   */
  private shape(row: FunctionRow, result: unknown, session: McpSession): ToolResult {
    const outputSchema = supportsStructuredTools(session.protocolVersion) ? outputSchemaOf(row.response_format) : undefined;
    const rich = richResult(result);
    if (rich) {
      if (rich.isError || !outputSchema) return rich;
      if (!rich.structuredContent) {
        return fail(
          `Error: result of ${row.function_id} has content but no structuredContent, which its response_format (outputSchema) requires`,
        );
      }
      const problem = validateAgainst(outputSchema, rich.structuredContent, 'structuredContent');
      return problem ? fail(`Error: result of ${row.function_id} does not match its response_format: ${problem}`) : rich;
    }
    if (!outputSchema) return ok(result);
    const problem =
      result !== null && typeof result === 'object' && !Array.isArray(result)
        ? validateAgainst(outputSchema, result)
        : 'the result is not an object';
    if (problem) return fail(`Error: result of ${row.function_id} does not match its response_format: ${problem}`);
    return ok(result, result as Record<string, unknown>);
  }
}
