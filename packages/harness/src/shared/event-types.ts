import { describeZodError } from '@eng/protocol';
import { type EngClient, TriggerAction, type TriggerBinding } from '@eng/sdk';
import type { z } from 'zod';

interface Definition<F, E> {
  id: string;
  description: string;
  /** Binding config schema; a mismatch refuses the binding with the field named. */
  config: z.ZodType<F>;
  matches(filter: F, event: E): boolean;
  bindings: Map<string, { functionId: string; filter: F; metadata: Record<string, unknown> | undefined }>;
}

/**
 * Trigger types a worker provides (spec engine-protocol §5.11): bindings are validated against a
 * config schema when they are registered, kept by id, and fired fire-and-forget with the event
 * payload (delivery is at-least-once and unordered for the consumer, as the reference workers say).
 */
export class EventTypes {
  private readonly types = new Map<string, Definition<any, any>>();

  constructor(private readonly client: EngClient) {}

  define<F, E>(id: string, description: string, config: z.ZodType<F>, matches: (filter: F, event: E) => boolean): void {
    const definition: Definition<F, E> = { id, description, config, matches, bindings: new Map() };
    this.types.set(id, definition);
    this.client.registerTriggerType(
      { id, description },
      {
        registerTrigger: (binding: TriggerBinding) => {
          const parsed = config.safeParse(binding.config ?? {});
          if (!parsed.success) throw new Error(`invalid ${id} trigger config: ${describeZodError(parsed.error)}`);
          definition.bindings.set(binding.id, { functionId: binding.function_id, filter: parsed.data, metadata: binding.metadata });
        },
        unregisterTrigger: (binding: TriggerBinding) => {
          definition.bindings.delete(binding.id);
        },
      },
    );
  }

  /** Number of bindings of a type (0 lets a caller skip building an expensive payload). */
  count(id: string): number {
    return this.types.get(id)?.bindings.size ?? 0;
  }

  /** Fire every binding of `id` whose filter matches `event`; returns how many were fired. */
  emit<E>(id: string, event: E, payload: unknown = event): number {
    const definition = this.types.get(id);
    if (!definition) return 0;
    let fired = 0;
    for (const binding of definition.bindings.values()) {
      if (!definition.matches(binding.filter, event)) continue;
      fired++;
      this.client
        .trigger({ function_id: binding.functionId, payload, action: TriggerAction.Void(), metadata: binding.metadata })
        .catch(() => undefined); // a closed client drops events; durable state is the record
    }
    return fired;
  }
}

/** Deep JSON equality (objects by keys, arrays by position). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((v, i) => jsonEqual(v, other[i]));
  }
  const ka = Object.keys(a as object);
  const kb = Object.keys(b as object);
  return ka.length === kb.length && ka.every((k) => jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/** Subset equality: every key of `filter` is deep-equal in `metadata` (the reference's tenancy filter). */
export function metadataMatches(
  filter: Record<string, unknown> | undefined,
  metadata: Record<string, unknown> | null | undefined,
): boolean {
  if (!filter) return true;
  const m = metadata ?? {};
  return Object.entries(filter).every(([key, value]) => jsonEqual(m[key], value));
}
