import { describeZodError, EngError, ErrorCode } from '@eng/protocol';
import { z } from 'zod';
import { UpdateOpsSchema } from '../../stores/update-ops.ts';

// spec: engine-protocol §4.4. Unknown fields are ignored (bus calls carry `_caller_worker_id`).

/** A required, non-empty string field whose error says which it is. */
export function nameField(field: string) {
  return z
    .string({ error: (issue) => (issue.input === undefined ? `${field} is required` : `${field} must be a string`) })
    .min(1, { error: `${field} must not be empty` });
}

const scope = nameField('scope');
const key = nameField('key');

export const StateSetInput = z
  .object({ scope, key, value: z.unknown().optional(), data: z.unknown().optional() })
  .refine((input) => 'value' in input || 'data' in input, { error: 'value is required (data is accepted as an alias)', path: ['value'] });
export const StateKeyInput = z.object({ scope, key });
export const StateUpdateInput = z.object({
  scope,
  key,
  ops: z
    .array(z.unknown(), { error: (issue) => (issue.input === undefined ? 'ops is required' : 'ops must be an array') })
    .pipe(UpdateOpsSchema),
});
export const StateListInput = z.object({
  scope,
  /** Console listing: `{items:[{key,value}], total}` instead of a bare array of values. */
  with_keys: z.boolean({ error: 'with_keys must be a boolean' }).optional(),
  offset: z.number({ error: 'offset must be a number' }).int().min(0).optional(),
  limit: z.number({ error: 'limit must be a number' }).int().min(1).max(10_000).optional(),
  prefix: z.string({ error: 'prefix must be a string' }).optional(),
});
export const StateListGroupsInput = z.object({});

export const StateTriggerConfig = z.object({
  scope: z.string({ error: 'scope must be a string' }).optional(),
  key: z.string({ error: 'key must be a string' }).optional(),
  condition_function_id: z.string({ error: 'condition_function_id must be a string' }).min(1).optional(),
});
export type StateTriggerConfig = z.infer<typeof StateTriggerConfig>;

const nonEmpty = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

/**
 * `{scope, key}` when the input is plainly valid (the schema's own rules, checked by hand: the
 * calls of every state operation take this path); undefined to let the schema decide and explain.
 */
export function fastKeyInput(input: unknown): { scope: string; key: string } | undefined {
  if (input === null || typeof input !== 'object') return undefined;
  const { scope, key } = input as Record<string, unknown>;
  return nonEmpty(scope) && nonEmpty(key) ? { scope, key } : undefined;
}

/** The same for `state::set`: scope, key, and a value (or `data`, its alias) present. */
export function fastSetInput(input: unknown): { scope: string; key: string; value?: unknown; data?: unknown } | undefined {
  const ids = fastKeyInput(input);
  if (!ids) return undefined;
  const record = input as Record<string, unknown>;
  if (!('value' in record) && !('data' in record)) return undefined;
  return { scope: ids.scope, key: ids.key, value: record.value, data: record.data };
}

/** Parse a function's input; a mismatch is `deserialization_error` naming the field (§2.4). */
export function parseInput<T>(functionId: string, schema: z.ZodType<T>, input: unknown): T {
  const parsed = schema.safeParse(input === null || input === undefined ? {} : input);
  if (!parsed.success) throw new EngError(ErrorCode.DeserializationError, `${functionId}: ${describeZodError(parsed.error)}`);
  return parsed.data;
}

/** Parse a trigger binding's config; the thrown Error's message is what the binder sees. */
export function parseTriggerConfig<T>(triggerType: string, schema: z.ZodType<T>, config: unknown): T {
  const parsed = schema.safeParse(config === null || config === undefined ? {} : config);
  if (!parsed.success) throw new Error(`invalid ${triggerType} trigger config: ${describeZodError(parsed.error)}`);
  return parsed.data;
}

/** JSON byte size of a value, checked against `max_value_bytes` (0.22.1 `VALUE_TOO_LARGE`). */
export function checkValueSize(value: unknown, maxBytes: number): void {
  const bytes = Buffer.byteLength(JSON.stringify(value ?? null));
  if (bytes > maxBytes)
    throw new EngError(ErrorCode.ValueTooLarge, `value is ${bytes} bytes, over the limit of ${maxBytes} (max_value_bytes)`);
}

/** Store failures surface with the function's error code (GET_ERROR, SET_ERROR, …). */
export async function storeCall<T>(code: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw storeError(code, err);
  }
}

/** A store failure as the function's error (an EngError passes as it is). */
export function storeError(code: string, err: unknown): EngError {
  if (err instanceof EngError) return err;
  return new EngError(code, (err as Error)?.message ?? String(err));
}
