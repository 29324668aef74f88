import { evaluateCondition } from '../../core/condition.ts';
import type { CallSpanHints, InvokeOutcome } from '../../core/invoker.ts';
import type { ModuleContext } from '../../core/module.ts';
import type { TriggerBinding } from '../../core/triggers.ts';

export type FireOutcome = { fired: false; reason: 'condition_false' | 'condition_failed' } | { fired: true; outcome: InvokeOutcome };

/**
 * Invoke a binding's function with `payload`, honouring `condition_function_id` (spec §5.1, see
 * core/condition.ts); a failing condition skips the handler and is logged. The binding's metadata
 * travels with both calls (§2.5 step 7). `trace` puts both calls under a trigger span
 * (`traceparent`) and gives the handler's call span its hints.
 */
export async function fireBinding(
  ctx: ModuleContext<unknown>,
  binding: TriggerBinding,
  payload: unknown,
  timeoutMs?: number,
  trace?: { traceparent?: string; span?: CallSpanHints },
): Promise<FireOutcome> {
  const metadata = binding.metadata;
  const traceparent = trace?.traceparent;
  const condition = conditionOf(binding.config);
  if (condition) {
    const verdict = await evaluateCondition(ctx.invoke, condition, payload, { metadata, timeoutMs, traceparent });
    if (!verdict.pass && verdict.error) {
      ctx.log.warn(`condition ${condition} of trigger ${binding.id} failed: ${verdict.error.code}: ${verdict.error.message}`);
      return { fired: false, reason: 'condition_failed' };
    }
    if (!verdict.pass) return { fired: false, reason: 'condition_false' };
  }
  const outcome = await ctx.invoke(binding.functionId, payload, { metadata, timeoutMs, traceparent, span: trace?.span });
  if (!outcome.ok) {
    ctx.log.warn(
      `trigger ${binding.id} (${binding.triggerType}) handler ${binding.functionId} failed: ${outcome.error.code}: ${outcome.error.message}`,
    );
  }
  return { fired: true, outcome };
}

function conditionOf(config: unknown): string | undefined {
  if (typeof config !== 'object' || config === null) return undefined;
  const id = (config as { condition_function_id?: unknown }).condition_function_id;
  return typeof id === 'string' && id.length > 0 ? id : undefined;
}
