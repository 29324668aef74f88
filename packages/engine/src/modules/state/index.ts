import { z } from 'zod';
import type { EngineModule, ModuleContext } from '../../core/module.ts';
import { BridgeAdapterSchema, type BridgeClient } from '../../stores/bridge.ts';
import { openStore, StoreAdapterSchema } from '../../stores/open.ts';
import { RedisEventFanout } from '../../stores/redis-events.ts';
import type { KvStore } from '../../stores/types.ts';
import { startStateBridge } from './bridge.ts';
import {
  fastKeyInput,
  fastSetInput,
  parseInput,
  StateKeyInput,
  StateListGroupsInput,
  StateListInput,
  StateSetInput,
  StateTriggerConfig,
  StateUpdateInput,
} from './schemas.ts';
import { StateService } from './state-service.ts';
import { type StateEvent, StateTriggers } from './triggers.ts';

// spec: engine-protocol §4.4 (functions), §5.6 (trigger type), §7.2 (config).

export const StateConfig = z
  .object({
    adapter: z
      .discriminatedUnion('name', [...StoreAdapterSchema.options, BridgeAdapterSchema])
      .default({ name: 'kv', config: { store_method: 'file_based', synchronous: 'full' } }),
    max_value_bytes: z
      .number()
      .int()
      .positive()
      .default(16 * 1024 * 1024),
    triggers_enabled: z.boolean().default(true),
  })
  .strict();
export type StateConfig = z.infer<typeof StateConfig>;

/** Other modules (the console's helpers, tests) find the state store under this service name. */
export const STATE_STORE_SERVICE = 'store.state';
/** The state module's `adapter:` (the configuration module keeps its entries in the same store). */
export const STATE_ADAPTER_SERVICE = 'store.state.adapter';

/** Made when first read (core/module.ts). */
const jsonSchema = (schema: z.ZodType) => () => z.toJSONSchema(schema, { unrepresentable: 'any', io: 'input' });

export function stateModule(): EngineModule<StateConfig> {
  let store: KvStore | undefined;
  let fanout: RedisEventFanout<StateEvent> | undefined;
  let bridge: BridgeClient | undefined;
  return {
    name: 'eng-state',
    aliases: ['iii-state'],
    description: 'key-value state: state::* functions and the state trigger type',
    configSchema: StateConfig,
    async start(ctx) {
      const adapter = ctx.config.adapter;
      if (adapter.name === 'bridge') {
        // another engine holds the state; this one's own entries (configuration) stay in a local file
        ctx.services.set(STATE_ADAPTER_SERVICE, { name: 'kv', config: { store_method: 'file_based', synchronous: 'full' } });
        const triggers = new StateTriggers(ctx as ModuleContext<unknown>, ctx.config.triggers_enabled);
        bridge = await startStateBridge(ctx as ModuleContext<unknown>, adapter, {
          maxValueBytes: ctx.config.max_value_bytes,
          triggers,
          triggersEnabled: ctx.config.triggers_enabled,
        });
        ctx.log.info(`state: bridged to ${bridge.shownUrl}`);
        registerStateTriggerType(ctx, triggers);
        return;
      }
      const opened = await openStore(adapter, { dataDir: ctx.dataDir, namespace: 'state', defaultFile: 'state.db' });
      store = opened.store;
      ctx.log.info(`state store: ${opened.description}`);
      ctx.services.set(STATE_STORE_SERVICE, store);
      ctx.services.set(STATE_ADAPTER_SERVICE, adapter);

      const triggers = new StateTriggers(ctx as ModuleContext<unknown>, ctx.config.triggers_enabled);
      if (opened.redis) {
        // engines sharing one Redis fire each other's state triggers
        fanout = await RedisEventFanout.open<StateEvent>(opened.redis.url, opened.redis.channel, ctx.log, (event) =>
          triggers.dispatch(event),
        );
      }
      const emit = (event: StateEvent, traceparent?: string) => {
        triggers.dispatch(event, traceparent);
        fanout?.publish(event);
      };
      const service = new StateService(store, ctx.config.max_value_bytes, emit, () => triggers.active || fanout !== undefined);
      registerStateFunctions(ctx, service);
      registerStateTriggerType(ctx, triggers);
    },
    async stop() {
      await bridge?.close();
      await fanout?.close();
      await store?.close();
    },
  };
}

function registerStateTriggerType(ctx: ModuleContext<StateConfig>, triggers: StateTriggers): void {
  ctx.registerTriggerType(
    {
      id: 'state',
      description: 'Fires after state::set, state::update and state::delete (filters: scope, key)',
      trigger_request_format: jsonSchema(StateTriggerConfig),
    },
    { register: (binding) => triggers.register(binding), unregister: (binding) => triggers.unregister(binding) },
  );
}

function registerStateFunctions(ctx: ModuleContext<StateConfig>, service: StateService): void {
  ctx.registerFunction(
    { id: 'state::set', description: 'Store a value under scope/key', request_format: jsonSchema(StateSetInput) },
    // not async: a store that writes in place answers without a promise (core/invoker.ts)
    (input, info) => {
      const { scope, key, value, data } = fastSetInput(input) ?? parseInput('state::set', StateSetInput, input);
      return service.setJson(scope, key, value !== undefined ? value : (data ?? null), info.traceparent);
    },
  );
  ctx.registerFunction(
    { id: 'state::get', description: 'Read the value under scope/key (no result when missing)', request_format: jsonSchema(StateKeyInput) },
    (input) => {
      const { scope, key } = fastKeyInput(input) ?? parseInput('state::get', StateKeyInput, input);
      return service.getJson(scope, key);
    },
  );
  ctx.registerFunction(
    { id: 'state::delete', description: 'Delete scope/key; returns the previous value', request_format: jsonSchema(StateKeyInput) },
    async (input, info) => {
      const { scope, key } = parseInput('state::delete', StateKeyInput, input);
      return service.delete(scope, key, info.traceparent);
    },
  );
  ctx.registerFunction(
    { id: 'state::update', description: 'Apply update ops atomically to scope/key', request_format: jsonSchema(StateUpdateInput) },
    async (input, info) => {
      const { scope, key, ops } = parseInput('state::update', StateUpdateInput, input);
      return service.update(scope, key, ops, info.traceparent);
    },
  );
  ctx.registerFunction(
    {
      id: 'state::list',
      description: 'Values of a scope; with_keys: true gives {items:[{key,value}], total} with offset/limit/prefix',
      request_format: jsonSchema(StateListInput),
    },
    async (input) => {
      const { scope, with_keys, offset, limit, prefix } = parseInput('state::list', StateListInput, input);
      const items = await service.list(scope, { offset, limit, prefix });
      if (!with_keys) return items.map((item) => item.value);
      return { items, total: await service.count(scope, prefix) };
    },
  );
  ctx.registerFunction(
    { id: 'state::list_groups', description: 'Scopes that hold at least one key', request_format: jsonSchema(StateListGroupsInput) },
    async (input) => {
      parseInput('state::list_groups', StateListGroupsInput, input);
      return { groups: await service.groups() };
    },
  );
}
