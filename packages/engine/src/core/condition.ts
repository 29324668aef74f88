import type { ErrorBody } from '@eng/protocol';
import type { InvokeOptions, InvokeOutcome } from './invoker.ts';

export type ConditionVerdict = { pass: true } | { pass: false; error?: ErrorBody };

/**
 * spec: engine-protocol §5.1 `condition_function_id`. The condition function gets the would-be
 * payload; only a literal `false` result skips the handler, anything else (no result included)
 * proceeds. A failed condition call also skips; the caller decides how to report `error`.
 */
export async function evaluateCondition(
  invoke: (functionId: string, data: unknown, options?: InvokeOptions) => Promise<InvokeOutcome>,
  functionId: string,
  payload: unknown,
  options?: InvokeOptions,
): Promise<ConditionVerdict> {
  const outcome = await invoke(functionId, payload, options);
  if (!outcome.ok) return { pass: false, error: outcome.error };
  return outcome.result === false ? { pass: false } : { pass: true };
}
