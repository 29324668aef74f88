import { EngError } from '@eng/protocol';
import type { EngClient, WorkerSpan } from '@eng/sdk';
import { engineLookup, isValidFunctionId, resolveChain } from '../approval/targets.ts';
import type { FunctionResultMessage } from '../router/types.ts';
import type { FunctionCall } from './generation.ts';
import type { FunctionPolicy } from './policy.ts';

// spec: console-worker §2.3, §2.7, §2.8 — a model's function call: the policy first, then the
// approval gate's hook (`approval::gate` → continue | deny | hold), then the call itself. Every
// outcome becomes a function_result entry the model sees on its next step.

const CALL_TIMEOUT_MS = 120_000;
const RESULT_LIMIT = 60_000;

export type GateDecision = { decision: 'continue' } | { decision: 'deny'; reason: string } | { decision: 'hold' };

export interface CallScope {
  client: EngClient;
  sessionId: string;
  turnId: string;
  step: number;
  metadata?: Record<string, unknown>;
  /** The turn span: each call gets a child span. */
  span: WorkerSpan;
}

function text(value: unknown): string {
  let out: string;
  try {
    out = typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null');
  } catch {
    out = String(value);
  }
  return out.length > RESULT_LIMIT ? `${out.slice(0, RESULT_LIMIT)}… [${out.length - RESULT_LIMIT} more characters]` : out;
}

export function resultMessage(
  call: { id: string; function_id: string },
  body: string,
  isError: boolean,
  details?: unknown,
): FunctionResultMessage {
  const message: FunctionResultMessage = {
    role: 'function_result',
    function_call_id: call.id,
    function_id: call.function_id,
    content: [{ type: 'text', text: body }],
    is_error: isError,
    timestamp: Date.now(),
  };
  if (details !== undefined) message.details = details;
  return message;
}

export function deniedResult(call: { id: string; function_id: string }, reason: string): FunctionResultMessage {
  return resultMessage(call, `Denied: ${reason}`, true, { error: { kind: 'denied', message: reason } });
}

/**
 * Policy and gate: what happens to this call before anything runs. The policy judges every
 * function the call would run (a wrapper such as `engine::functions::invoke` and what it wraps),
 * and the gate, which resolves the same chain itself, decides on all of it.
 */
export async function screen(scope: CallScope, call: FunctionCall, policy: FunctionPolicy): Promise<GateDecision> {
  if (call.invalid) return { decision: 'deny', reason: call.invalid };
  if (!isValidFunctionId(call.function_id))
    return { decision: 'deny', reason: `${JSON.stringify(String(call.function_id).slice(0, 80))} is not a valid function id` };
  const chain = await resolveChain(
    call.function_id,
    call.arguments,
    engineLookup((functionId, payload) => scope.client.call(functionId, payload, { timeoutMs: 5000 })),
  );
  for (const fn of chain.functions) {
    const refused = policy.refusal(fn);
    if (refused)
      return { decision: 'deny', reason: fn === call.function_id ? refused : `${refused} (reached through ${call.function_id})` };
  }
  if (chain.refusal) return { decision: 'deny', reason: chain.refusal };
  try {
    const out = await scope.client.call<GateDecision>(
      'approval::gate',
      {
        point: 'pre_trigger',
        session_id: scope.sessionId,
        turn_id: scope.turnId,
        step: scope.step,
        depth: 0,
        metadata: scope.metadata,
        call: { id: call.id, function_id: call.function_id, arguments: call.arguments },
      },
      { timeoutMs: 15_000 },
    );
    if (out?.decision === 'continue' || out?.decision === 'hold') return out;
    if (out?.decision === 'deny') return { decision: 'deny', reason: out.reason || 'denied by the approval gate' };
    return { decision: 'deny', reason: 'the approval gate gave no decision' };
  } catch (err) {
    // no gate installed: nothing to ask. A gate that fails closes (spec §2.7: fail closed), and so
    // does one that is installed (its configuration entry exists) but not running right now
    if ((err as EngError).code === 'function_not_found' && !(await gateInstalled(scope.client))) return { decision: 'continue' };
    return { decision: 'deny', reason: `the approval gate failed: ${(err as Error).message}` };
  }
}

/** Whether the approval gate was ever installed: it registered its configuration entry (kept by the engine). */
async function gateInstalled(client: EngClient): Promise<boolean> {
  try {
    await client.call('configuration::get', { id: 'approval-gate' }, { timeoutMs: 5000 });
    return true;
  } catch (err) {
    // only a definite "no such entry" means no gate; anything else fails closed
    return !/not[ _]?found/i.test(`${(err as EngError).code ?? ''} ${(err as Error).message ?? ''}`);
  }
}

/** Run the function and describe its outcome as a function_result. */
export async function execute(
  scope: CallScope,
  call: { id: string; function_id: string; arguments: unknown },
): Promise<FunctionResultMessage> {
  const span = scope.client.startSpan(`function ${call.function_id}`, { parent: scope.span.traceparent });
  span
    .setAttribute('eng.session.id', scope.sessionId)
    .setAttribute('eng.turn.id', scope.turnId)
    .setAttribute('eng.function.id', call.function_id);
  span.setAttribute('eng.function_call.id', call.id);
  try {
    const result = await scope.client.withSpan(span, () =>
      scope.client.call(call.function_id, call.arguments ?? {}, { timeoutMs: CALL_TIMEOUT_MS }),
    );
    span.end();
    return resultMessage(call, text(result === undefined ? null : result), false);
  } catch (err) {
    const e = EngError.from(err);
    span.end({ error: e });
    return resultMessage(call, `Error: ${e.code}: ${e.message}`, true, {
      error: { kind: 'function_error', code: e.code, message: e.message },
    });
  }
}

/** Store a function_result under a deterministic entry id (a replay does not duplicate it). */
export async function appendResult(
  scope: { client: EngClient; sessionId: string; turnId: string; step: number },
  message: FunctionResultMessage,
): Promise<void> {
  await scope.client.call(
    'session::append',
    {
      session_id: scope.sessionId,
      entry_id: `e_${scope.turnId}_${scope.step}_r_${message.function_call_id}`,
      origin: { turn_id: scope.turnId, step: scope.step },
      message,
    },
    { timeoutMs: 15_000 },
  );
}
