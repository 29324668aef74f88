import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { ModuleContext } from '../../core/module.ts';
import { type BridgeAdapterConfig, BridgeClient } from '../../stores/bridge.ts';
import {
  checkValueSize,
  parseInput,
  StateKeyInput,
  StateListGroupsInput,
  StateListInput,
  StateSetInput,
  StateUpdateInput,
} from './schemas.ts';
import type { StateEvent, StateTriggers } from './triggers.ts';

// spec: engine-protocol §4.4, §7.2 — `adapter: {name: bridge, config: {bridge_url}}`.

/** Made when first read (core/module.ts). */
const jsonSchema = (schema: z.ZodType) => () => z.toJSONSchema(schema, { unrepresentable: 'any', io: 'input' });

const StateEventSchema = z.object({
  type: z.literal('state'),
  event_type: z.enum(['state:created', 'state:updated', 'state:deleted']),
  scope: z.string(),
  key: z.string(),
  old_value: z.unknown(),
  new_value: z.unknown(),
});

/**
 * `state::*` answered by another engine: each call is checked here (so errors name the field as
 * they always do), then forwarded to the same function there, and its answer is this call's.
 * This engine's `state` triggers fire for every change of that engine's state — made through
 * this engine, through another bridged engine or there directly — because the bridge binds a
 * `state` trigger there and dispatches what it receives here.
 */
export async function startStateBridge(
  ctx: ModuleContext<unknown>,
  adapter: BridgeAdapterConfig,
  options: { maxValueBytes: number; triggers: StateTriggers; triggersEnabled: boolean },
): Promise<BridgeClient> {
  const bridge = new BridgeClient(adapter.config, 'eng-state', ctx.log, (id) => ctx.core.workers.get(id) !== undefined);
  if (options.triggersEnabled) {
    const eventsId = `eng::bridge::state_events::${randomUUID()}`;
    bridge.client.registerFunction(
      eventsId,
      (input, info) => {
        const parsed = StateEventSchema.safeParse(input);
        if (!parsed.success) {
          ctx.log.warn(`bridge ${bridge.shownUrl}: ignored a state event that is not one (${parsed.error.issues[0]?.message})`);
          return null;
        }
        options.triggers.dispatch(parsed.data as StateEvent, info.traceparent);
        return null;
      },
      { description: 'State changes of this engine, fired as state triggers of a bridged engine', metadata: { internal: true } },
    );
    bridge.client.registerTrigger({ type: 'state', function_id: eventsId, config: {} });
  }
  await bridge.start();

  const forward = (id: string, schema: z.ZodType, description: string, build: (input: any) => unknown) =>
    ctx.registerFunction(
      { id, description: `${description} (bridged to ${bridge.shownUrl})`, request_format: jsonSchema(schema) },
      (input, info) => bridge.call(id, build(parseInput(id, schema, input)), info.traceparent),
    );
  forward('state::set', StateSetInput, 'Store a value under scope/key', ({ scope, key, value, data }) => {
    const stored = value !== undefined ? value : (data ?? null);
    checkValueSize(stored, options.maxValueBytes);
    return { scope, key, value: stored };
  });
  forward('state::get', StateKeyInput, 'Read the value under scope/key (no result when missing)', ({ scope, key }) => ({ scope, key }));
  forward('state::delete', StateKeyInput, 'Delete scope/key; returns the previous value', ({ scope, key }) => ({ scope, key }));
  forward('state::update', StateUpdateInput, 'Apply update ops atomically to scope/key', ({ scope, key, ops }) => ({ scope, key, ops }));
  forward('state::list', StateListInput, 'Values of a scope', (input) => input);
  forward('state::list_groups', StateListGroupsInput, 'Scopes that hold at least one key', () => ({}));
  return bridge;
}
