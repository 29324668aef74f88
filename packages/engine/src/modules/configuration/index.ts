import { EngError } from '@eng/protocol';
import { z } from 'zod';
import type { EngineModule, ModuleContext } from '../../core/module.ts';
import { openStore, type StoreAdapterInput, StoreAdapterSchema } from '../../stores/open.ts';
import type { KvStore } from '../../stores/types.ts';
import { secretRegistry } from '../observability/secret-registry.ts';
import { STATE_ADAPTER_SERVICE } from '../state/index.ts';
import { parseInput } from '../state/schemas.ts';
import { ConfigErrorCode, ConfigurationService } from './service.ts';
import { ConfigurationTriggerConfig, ConfigurationTriggers } from './triggers.ts';

// spec: engine-protocol §4.8 (iii 0.22.1's mandatory `configuration` worker), §7.2.

export const ConfigurationConfig = z
  .object({
    /** Where entries are kept; default: the state module's adapter (its SQLite file, its Redis), else memory. */
    adapter: StoreAdapterSchema.optional(),
  })
  .strict();
export type ConfigurationConfig = z.infer<typeof ConfigurationConfig>;

const ID = /^[a-z0-9_-]{1,64}$/;
const MAX_SCHEMA_BYTES = 256 * 1024;
const MAX_VALUE_BYTES = 4 * 1024 * 1024;

const idField = z
  .string({ error: (i) => (i.input === undefined ? 'id is required' : 'id must be a string') })
  .min(1, { error: 'id must not be empty' });
const JsonObject = z.record(z.string(), z.unknown(), {
  error: (i) => (i.input === undefined ? 'schema is required' : 'schema must be an object (a JSON Schema)'),
});
const RegisterInput = z.object({
  id: idField,
  name: z.string({ error: 'name must be a string' }).optional(),
  description: z.string({ error: 'description must be a string' }).optional(),
  schema: JsonObject,
  initial_value: z.unknown().optional(),
  defaults: z.unknown().optional(),
  metadata: z.unknown().optional(),
});
const IdInput = z.object({ id: idField, raw: z.boolean({ error: 'raw must be a boolean' }).optional() });
const SetInput = z
  .object({ id: idField, value: z.unknown().optional() })
  .refine((input) => input.value !== undefined, { error: 'value is required', path: ['value'] });

function checkId(fn: string, id: string): void {
  if (!ID.test(id))
    throw new EngError(ConfigErrorCode.InvalidId, `${fn}: id ${JSON.stringify(id.slice(0, 80))} must match [a-z0-9_-]{1,64}`);
}

function checkSize(fn: string, field: string, value: unknown, max: number): void {
  const bytes = Buffer.byteLength(JSON.stringify(value ?? null));
  if (bytes > max) throw new EngError(ConfigErrorCode.SchemaInvalid, `${fn}: ${field} is ${bytes} bytes, over the limit of ${max}`);
}

/** Made when first read (core/module.ts). */
const jsonSchema = (schema: z.ZodType) => () => z.toJSONSchema(schema, { unrepresentable: 'any', io: 'input' });

export function configurationModule(): EngineModule<ConfigurationConfig> {
  let store: KvStore | undefined;
  let withdrawSecrets = () => {};
  return {
    name: 'eng-configuration',
    aliases: ['configuration'],
    description: 'configuration entries: configuration::* with JSON Schema validation, write-only secrets, the configuration trigger type',
    configSchema: ConfigurationConfig,
    mandatory: true,
    async start(ctx) {
      const adapter: StoreAdapterInput = ctx.config.adapter ??
        ctx.services.get<StoreAdapterInput>(STATE_ADAPTER_SERVICE) ?? { name: 'memory' };
      const opened = await openStore(adapter, { dataDir: ctx.dataDir, namespace: 'configuration', defaultFile: 'state.db' });
      store = opened.store;
      const triggers = new ConfigurationTriggers(ctx as ModuleContext<unknown>);
      // secret values go to the engine's registry, so telemetry scrubs them wherever they are quoted
      const secrets = secretRegistry(ctx.services);
      const published = new Set<string>();
      const service = new ConfigurationService(
        store,
        (event) => triggers.dispatch(event),
        (id, values) => {
          secrets.set(`configuration:${id}`, values);
          if (values.length) published.add(id);
          else published.delete(id);
        },
      );
      withdrawSecrets = () => {
        for (const id of published) secrets.set(`configuration:${id}`, []);
        published.clear();
      };
      const count = await service.load();
      ctx.log.info(
        `configuration store: ${opened.description}${opened.description === 'memory' ? ' (values are lost on restart)' : ''}; ${count} entries`,
      );
      registerFunctions(ctx, service);
      ctx.registerTriggerType(
        {
          id: 'configuration',
          description: 'Fires when a configuration entry is registered, updated or deleted (filters: configuration_id, event_types)',
          trigger_request_format: jsonSchema(ConfigurationTriggerConfig),
        },
        { register: (binding) => triggers.register(binding), unregister: (binding) => triggers.unregister(binding) },
      );
    },
    async stop() {
      withdrawSecrets();
      await store?.close();
    },
  };
}

function registerFunctions(ctx: ModuleContext<ConfigurationConfig>, service: ConfigurationService): void {
  const register = (seedOnly: boolean) => async (input: unknown) => {
    const fn = seedOnly ? 'configuration::ensure' : 'configuration::register';
    const request = parseInput(fn, RegisterInput, input);
    checkId(fn, request.id);
    checkSize(fn, 'schema', request.schema, MAX_SCHEMA_BYTES);
    checkSize(fn, 'initial_value', request.initial_value, MAX_VALUE_BYTES);
    checkSize(fn, 'defaults', request.defaults, MAX_VALUE_BYTES);
    return service.register(request, { seedOnly });
  };
  ctx.registerFunction(
    {
      id: 'configuration::register',
      description:
        'Declare an entry with a JSON Schema; initial_value replaces the stored value, defaults seed it when none is stored. Returns the entry (secrets as {"set": true})',
      request_format: jsonSchema(RegisterInput),
    },
    register(false),
  );
  ctx.registerFunction(
    {
      id: 'configuration::ensure',
      description: 'Like register, but initial_value (or defaults) is written only when no value is stored yet',
      request_format: jsonSchema(RegisterInput),
    },
    register(true),
  );
  ctx.registerFunction(
    {
      id: 'configuration::set',
      description:
        'Replace the value of a registered entry, validated against its schema; secrets omitted (or sent as {"set": true}) are kept',
      request_format: jsonSchema(SetInput),
    },
    async (input) => {
      const { id, value } = parseInput('configuration::set', SetInput, input);
      checkSize('configuration::set', 'value', value, MAX_VALUE_BYTES);
      return service.set(id, value);
    },
  );
  ctx.registerFunction(
    {
      id: 'configuration::get',
      description: 'Read an entry: {id, value}; secret fields read as {"set": true}; values as written, placeholders never expanded',
      request_format: jsonSchema(IdInput),
    },
    // `raw` is accepted for compatibility: get never expands, so it changes nothing
    (input) => service.get(parseInput('configuration::get', IdInput, input).id),
  );
  ctx.registerFunction(
    {
      id: 'configuration::reveal',
      description:
        'Read an entry with its secrets, for the worker that uses them (deny it to models and UIs); env placeholders expanded in secret fields declaring x-eng-env unless raw',
      request_format: jsonSchema(IdInput),
      metadata: { internal: true },
    },
    (input) => {
      const { id, raw } = parseInput('configuration::reveal', IdInput, input);
      return service.reveal(id, raw);
    },
  );
  ctx.registerFunction(
    { id: 'configuration::list', description: 'Every entry (id, name, description, schema, metadata), sorted by id; never values' },
    () => service.list(),
  );
  ctx.registerFunction(
    {
      id: 'configuration::schema',
      description: "An entry's schema, name, description and metadata (no value)",
      request_format: jsonSchema(IdInput),
    },
    (input) => service.schema(parseInput('configuration::schema', IdInput, input).id),
  );
  ctx.registerFunction(
    { id: 'configuration::delete', description: 'Remove an entry; fires configuration:deleted', request_format: jsonSchema(IdInput) },
    (input) => service.delete(parseInput('configuration::delete', IdInput, input).id),
  );
}
