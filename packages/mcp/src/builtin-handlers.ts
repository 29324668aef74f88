import { Script } from 'node:vm';
import { describeZodError, redactText } from '@eng/protocol';
import type { EngClient, TriggerAction, TriggerRef } from '@eng/sdk';
import { z } from 'zod';
import type { BuiltinName } from './builtins.ts';
import type { EngineView } from './engine-view.ts';
import { type ExposurePolicy, floorText, inHardFloor, toolName } from './exposure.ts';
import { checkGate, functionIdFromArgument } from './gate.ts';
import type { Log } from './log.ts';
import { engineFailureText, fail, ok, type ToolResult } from './tool-result.ts';
import { languageOf, type WorkerManager } from './worker-manager.ts';

// spec: mcp.md §7 with our names — what the six built-in tools do.

const REGISTER_WAIT_MS = 20_000;
const TRIGGER_WAIT_MS = 3_000;
const POLL_MS = 50;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const WorkerRegisterArgs = z.object({
  language: z.string().min(1),
  code: z.string().min(1),
  function_name: z.string().trim().min(1),
  description: z.string().optional(),
});
const IdArgs = z.object({ id: z.string().min(1) });
const TriggerRegisterArgs = z.object({
  trigger_type: z.string().min(1),
  function_id: z.string().min(1),
  config: z.record(z.string(), z.unknown()),
});
const Payload = z.record(z.string(), z.unknown()).optional();
const VoidArgs = z.object({ function_id: z.string(), payload: Payload });
const EnqueueArgs = z.object({ function_id: z.string(), payload: Payload, queue: z.string().min(1).optional() });

function parse<T>(schema: z.ZodType<T>, args: unknown): T | ToolResult {
  const parsed = schema.safeParse(args ?? {});
  return parsed.success ? parsed.data : fail(`Invalid arguments: ${describeZodError(parsed.error)}`);
}
const isResult = (value: unknown): value is ToolResult =>
  typeof value === 'object' && value !== null && 'isError' in value && 'content' in value;

export interface BuiltinDeps {
  client: EngClient;
  view: EngineView;
  policy: ExposurePolicy;
  workers: WorkerManager;
  log: Log;
}

export class BuiltinHandlers {
  /** Triggers attached through eng_trigger_register, by the id returned to the client. */
  private readonly triggers = new Map<string, { ref: TriggerRef; trigger_type: string; function_id: string }>();

  constructor(private readonly deps: BuiltinDeps) {}

  run(name: BuiltinName, args: unknown): Promise<ToolResult> {
    switch (name) {
      case 'eng_worker_register':
        return this.workerRegister(args);
      case 'eng_worker_stop':
        return this.workerStop(args);
      case 'eng_trigger_register':
        return this.triggerRegister(args);
      case 'eng_trigger_unregister':
        return Promise.resolve(this.triggerUnregister(args));
      case 'eng_trigger_void':
        return this.triggerVoid(args);
      case 'eng_trigger_enqueue':
        return this.triggerEnqueue(args);
    }
  }

  /** Drop every trigger this process attached (shutdown). */
  unregisterAll(): void {
    for (const { ref } of this.triggers.values()) ref.unregister();
    this.triggers.clear();
  }

  private async workerRegister(args: unknown): Promise<ToolResult> {
    const parsed = parse(WorkerRegisterArgs, args);
    if (isResult(parsed)) return parsed;
    // checked before anything is written (mcp.md §7)
    const language = languageOf(parsed.language);
    if (!language) return fail(`Unsupported language: ${parsed.language}`);
    const functionId = parsed.function_name;
    // a spawned worker must never take over an engine-internal id (last writer wins on the engine)
    if (inHardFloor(functionId)) return fail(floorText(functionId));
    if (language === 'node') {
      // a syntax error is reported now, with its message, instead of as a dead worker
      try {
        new Script(`(\n${parsed.code}\n)`, { filename: 'code' });
      } catch (err) {
        return fail(
          `Invalid code: ${(err as Error).message} (node code must be a JavaScript expression, e.g. async (input) => ({ ok: true }))`,
        );
      }
    }
    const { view, policy, workers } = this.deps;
    try {
      if (await view.functionInfo(functionId)) {
        return fail(`Function '${functionId}' is already registered on the engine; choose another function_name or stop its worker first`);
      }
    } catch (err) {
      return fail(engineFailureText(err));
    }
    const metadata: Record<string, unknown> = { 'mcp.expose': true };
    if (policy.tier !== undefined) metadata['mcp.tier'] = policy.tier;
    let worker: ReturnType<WorkerManager['spawn']>;
    try {
      worker = workers.spawn(language, {
        functionId,
        description: parsed.description?.trim() || 'Auto-generated function',
        metadata,
        code: parsed.code,
      });
    } catch (err) {
      return fail((err as Error).message);
    }
    // answer once the function is callable, so the client can list and call it right away
    const deadline = Date.now() + REGISTER_WAIT_MS;
    while (Date.now() < deadline) {
      if (worker.exited) {
        const status = worker.exited.code ?? worker.exited.signal ?? 'unknown';
        // a worker failing to connect may print ENG_URL, credentials included
        const stderr = redactText(worker.stderr.trim());
        await workers.stop(worker.id);
        return fail(`Worker exited immediately with status: ${status}${stderr ? `\n${stderr}` : ''}`);
      }
      const row = await view.functionInfo(functionId).catch(() => null);
      if (row) {
        return ok({
          id: worker.id,
          function_name: functionId,
          tool: toolName(functionId),
          language,
          message: 'Worker created and connected to the eng engine',
        });
      }
      await sleep(POLL_MS);
    }
    const stderr = redactText(worker.stderr.trim());
    await workers.stop(worker.id);
    return fail(`Worker did not register ${functionId} within ${REGISTER_WAIT_MS / 1000}s${stderr ? `\n${stderr}` : ''}`);
  }

  private async workerStop(args: unknown): Promise<ToolResult> {
    const parsed = parse(IdArgs, args);
    if (isResult(parsed)) return parsed;
    if (!(await this.deps.workers.stop(parsed.id))) return fail(`Worker not found: ${parsed.id}`);
    return ok({ id: parsed.id, message: 'Worker stopped and cleaned up' });
  }

  private async triggerRegister(args: unknown): Promise<ToolResult> {
    const parsed = parse(TriggerRegisterArgs, args);
    if (isResult(parsed)) return parsed;
    const { client, view, policy } = this.deps;
    const functionId = functionIdFromArgument(parsed.function_id, this.deps.view);
    const gate = await checkGate(view, policy, functionId);
    if (!gate.ok) return fail(gate.text);
    // bind exactly the function the gate checked, never a spelling the engine might resolve otherwise
    const ref = client.registerTrigger({ type: parsed.trigger_type, function_id: gate.row.function_id, config: parsed.config });
    // the engine answers a refused binding with a triggerregistrationresult error (engine-protocol §2.3.7)
    let refusal: string | undefined;
    const off = client.on('error', (error) => {
      const details = error.details as { trigger_id?: string } | undefined;
      if (details?.trigger_id === ref.id) refusal = error.message;
    });
    try {
      const deadline = Date.now() + TRIGGER_WAIT_MS;
      let status = 'unknown';
      while (Date.now() < deadline && refusal === undefined) {
        const info = await view.triggerInfo(ref.id).catch(() => undefined);
        if (info === undefined) break; // an engine without registered-triggers::info
        if (info) {
          status = typeof info.status === 'string' ? info.status : 'active';
          if (status === 'error') refusal = typeof info.error === 'string' ? info.error : 'the trigger provider refused the binding';
          break;
        }
        await sleep(POLL_MS);
      }
      if (refusal !== undefined) {
        ref.unregister();
        return fail(`Error: ${refusal}`);
      }
      const bound = gate.row.function_id;
      this.triggers.set(ref.id, { ref, trigger_type: parsed.trigger_type, function_id: bound });
      const result: Record<string, unknown> = { id: ref.id, trigger_type: parsed.trigger_type, function_id: bound, status };
      if (status === 'inactive') result.note = `trigger type '${parsed.trigger_type}' has no provider yet; the trigger waits for one`;
      return ok(result);
    } finally {
      off();
    }
  }

  private triggerUnregister(args: unknown): ToolResult {
    const parsed = parse(IdArgs, args);
    if (isResult(parsed)) return parsed;
    const entry = this.triggers.get(parsed.id);
    if (!entry) return fail(`Trigger not found: ${parsed.id}`);
    entry.ref.unregister();
    this.triggers.delete(parsed.id);
    return ok({ id: parsed.id, message: 'Unregistered' });
  }

  private triggerVoid(args: unknown): Promise<ToolResult> {
    return this.gatedTrigger(
      args,
      VoidArgs,
      () => ({ type: 'void' }),
      (functionId) => `Triggered (void): ${functionId}`,
    );
  }

  private triggerEnqueue(args: unknown): Promise<ToolResult> {
    return this.gatedTrigger(
      args,
      EnqueueArgs,
      (parsed) => ({ type: 'enqueue', queue: parsed.queue ?? 'default' }),
      (_functionId, receipt) => receipt,
    );
  }

  /** void / enqueue: the same checks as a function tool (mcp.md §19), then the routed call. */
  private async gatedTrigger<T extends z.infer<typeof VoidArgs>>(
    args: unknown,
    schema: z.ZodType<T>,
    action: (parsed: T) => TriggerAction,
    answer: (functionId: string, result: unknown) => unknown,
  ): Promise<ToolResult> {
    if (!hasFunctionId(args)) return fail('Missing required field: function_id');
    const parsed = parse(schema, args);
    if (isResult(parsed)) return parsed;
    const functionId = functionIdFromArgument(parsed.function_id, this.deps.view);
    const gate = await checkGate(this.deps.view, this.deps.policy, functionId);
    if (!gate.ok) return fail(gate.text);
    const checked = gate.row.function_id; // the id the gate approved, as the engine spells it
    try {
      const result = await this.deps.client.trigger({ function_id: checked, payload: parsed.payload ?? {}, action: action(parsed) });
      return ok(answer(checked, result));
    } catch (err) {
      return fail(engineFailureText(err));
    }
  }
}

function hasFunctionId(args: unknown): boolean {
  const value = (args as { function_id?: unknown } | null | undefined)?.function_id;
  if (value === undefined || value === null) return false;
  // a wrongly typed value is left to the schema, which names the field
  return typeof value !== 'string' || value.trim() !== '';
}
