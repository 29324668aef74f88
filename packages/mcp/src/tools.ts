import { redactText } from '@eng/protocol';
import type { EngClient } from '@eng/sdk';
import { ErrorCode, McpError, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { BuiltinHandlers } from './builtin-handlers.ts';
import { BUILTIN_NAMES, BUILTIN_TOOLS, type BuiltinVisibility, builtinRefusal, builtinsVisible, isBuiltin } from './builtins.ts';
import { type EngineView, GUARDED_INVOKE } from './engine-view.ts';
import { type ExposurePolicy, type FunctionRow, functionIdOf, inHardFloor, isExposed, toolName } from './exposure.ts';
import { checkGate } from './gate.ts';
import type { McpSession, SessionHub } from './sessions.ts';
import { engineFailureText, fail, ok, type ToolResult } from './tool-result.ts';
import {
  inputMapping,
  inputSchemaOf,
  outputSchemaOf,
  supportsStructuredTools,
  type ToolDefinition,
  toolOf,
  validateAgainst,
} from './tool-schema.ts';

// spec: seed §4.3 rules 1-4 and §7 — tools/list and the tools/call sequence.

export interface CallContext {
  session: McpSession;
  requestId: RequestId;
  progressToken?: string | number;
  signal: AbortSignal;
}

export interface ToolServiceDeps {
  client: EngClient;
  view: EngineView;
  policy: ExposurePolicy;
  flags: BuiltinVisibility;
  builtins: BuiltinHandlers;
  hub: SessionHub;
  invocationTimeoutMs: number;
  /** Function ids a called function may use to report progress and log lines (passed in its metadata). */
  progressFunctionId: string;
  logFunctionId: string;
  /** Told when a listing went out without function tools because the engine was unreachable. */
  onDegradedList?: () => void;
  /** Told when the mirrored function rows turned out stale (the guarded call refused). */
  onStaleMirror?: () => void;
}

/** A guarded call that did not run: the engine refused it before dispatch. */
const NOT_RUN = Symbol('not run');

/** The exposed functions as tools, in engine order; a function whose name collides with an earlier one is skipped. */
export function exposedTools(rows: FunctionRow[], policy: ExposurePolicy, protocolVersion?: string): ToolDefinition[] {
  const seen = new Set<string>(BUILTIN_NAMES);
  const tools: ToolDefinition[] = [];
  // `ns::x` and a literal `ns__x` mangle alike; the `::` form wins because the reverse mangling leads to it
  const ordered = [...rows].sort((a, b) => Number(b.function_id.includes('::')) - Number(a.function_id.includes('::')));
  const keep = new Set<FunctionRow>();
  for (const row of ordered) {
    if (!isExposed(row, policy)) continue;
    const name = toolName(row.function_id);
    if (seen.has(name)) continue;
    seen.add(name);
    keep.add(row);
  }
  for (const row of rows) if (keep.has(row)) tools.push(toolOf(row, protocolVersion));
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
      throw new McpError(ErrorCode.InternalError, `cannot list functions from the eng engine: ${redactText((err as Error).message)}`);
    }
    return [...builtins, ...exposedTools(rows, this.deps.policy, session.protocolVersion)];
  }

  async call(name: string, args: Record<string, unknown> | undefined, ctx: CallContext): Promise<ToolResult> {
    if (isBuiltin(name)) {
      const refusal = builtinRefusal(name, ctx.session.transport, this.deps.flags);
      return refusal ? fail(refusal) : this.deps.builtins.run(name, args ?? {});
    }
    const input = args ?? {};
    const fast = await this.callGuarded(name, input, ctx);
    if (fast !== NOT_RUN) return fast;
    const gate = await checkGate(this.deps.view, this.deps.policy, functionIdOf(name), name);
    if (!gate.ok) {
      // spec 2025-06-18 server/tools §error handling: an unknown tool is a protocol error
      if (gate.reason === 'unknown') throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
      return fail(gate.text);
    }
    const row = gate.row;
    const problem = validateAgainst(inputSchemaOf(row.request_format), input);
    if (problem) return fail(`Invalid arguments for tool '${name}': ${problem}`);
    const payload = inputMapping(row.request_format) === 'wrapped' ? input.input : input;
    return (await this.invoke(row, payload, ctx)) as ToolResult;
  }

  /**
   * The fast path of seed §4.3 rule 4 on an eng engine: the row comes from the mirror and the
   * re-check (c) happens inside the engine, atomically with the dispatch (GUARDED_INVOKE with the
   * metadata the policy requires), so a call costs one engine round trip instead of two. NOT_RUN
   * when the path does not apply or the engine refused before running anything (the mirror was
   * stale): the caller then takes the full path, which decides afresh.
   */
  private async callGuarded(name: string, input: Record<string, unknown>, ctx: CallContext): Promise<ToolResult | typeof NOT_RUN> {
    const { view, policy } = this.deps;
    if (!view.connected || !view.guardedInvokeReady()) return NOT_RUN;
    let functionId = functionIdOf(name);
    let row = view.mirrored(functionId);
    if (!row && name !== functionId) {
      functionId = name;
      row = view.mirrored(functionId);
    }
    if (!row || inHardFloor(functionId) || !isExposed(row, policy)) return NOT_RUN;
    // a problem may come from a stale schema: the full path checks against the current one
    if (validateAgainst(inputSchemaOf(row.request_format), input)) return NOT_RUN;
    const payload = inputMapping(row.request_format) === 'wrapped' ? input.input : input;
    const expected: Record<string, unknown> = {};
    if (!policy.exposeAll) expected['mcp.expose'] = true;
    if (policy.tier !== undefined) expected['mcp.tier'] = policy.tier;
    const refused = (err: unknown): boolean => {
      const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
      const text = typeof message === 'string' ? message : '';
      if (code === 'function_not_found' && text.includes(GUARDED_INVOKE)) {
        view.guardedInvokeMissing();
        return true;
      }
      // the engine's own refusals name the function first; a failure of the function itself does not
      const ours = text.startsWith(`Function ${functionId}:`) || text === `Function ${functionId} not found`;
      if (ours && (code === 'PRECONDITION_FAILED' || code === 'NOT_FOUND')) {
        this.deps.onStaleMirror?.();
        return true;
      }
      return false;
    };
    return this.invoke(row, payload, ctx, { functionId, expected, refused });
  }

  private async invoke(
    row: FunctionRow,
    payload: unknown,
    ctx: CallContext,
    guard?: { functionId: string; expected: Record<string, unknown>; refused(err: unknown): boolean },
  ): Promise<ToolResult | typeof NOT_RUN> {
    const { hub } = this.deps;
    const progress = ctx.progressToken !== undefined ? hub.openProgress(ctx.session, ctx.requestId, ctx.progressToken) : undefined;
    const metadata = {
      mcp: {
        session: ctx.session.id,
        transport: ctx.session.transport,
        log_function: this.deps.logFunctionId,
        ...(progress ? { progress_token: progress.key, progress_function: this.deps.progressFunctionId } : {}),
      },
    };
    try {
      const call = this.deps.client.trigger({
        ...(guard
          ? { function_id: GUARDED_INVOKE, payload: { function_id: guard.functionId, payload, expect: { metadata: guard.expected } } }
          : { function_id: row.function_id, payload }),
        timeoutMs: this.deps.invocationTimeoutMs,
        metadata,
      });
      const result = await abortable(call, ctx.signal);
      return this.shape(row, result, ctx.session);
    } catch (err) {
      if (ctx.signal.aborted) return fail('Request cancelled');
      if (guard?.refused(err)) return NOT_RUN;
      return fail(engineFailureText(err));
    } finally {
      progress?.close();
    }
  }

  /** One text item; with an advertised output schema also `structuredContent`, which must match it. */
  private shape(row: FunctionRow, result: unknown, session: McpSession): ToolResult {
    const outputSchema = supportsStructuredTools(session.protocolVersion) ? outputSchemaOf(row.response_format) : undefined;
    if (!outputSchema) return ok(result);
    const problem =
      result !== null && typeof result === 'object' && !Array.isArray(result)
        ? validateAgainst(outputSchema, result)
        : 'the result is not an object';
    if (problem) return fail(`Error: result of ${row.function_id} does not match its response_format: ${problem}`);
    return ok(result, result as Record<string, unknown>);
  }
}

/** Stop waiting when the client cancels (the engine call itself cannot be recalled). */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new Error('cancelled'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Error('cancelled'));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}
