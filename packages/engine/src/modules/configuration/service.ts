import { EngError } from '@eng/protocol';
import type { ValidateFunction } from 'ajv';
import type { KvStore } from '../../stores/types.ts';
import { expandSecrets, hasSecrets, mergeSecrets, redact, secretStrings } from './secrets.ts';
import { compileSchema, describeErrors, type SchemaProblem } from './validate.ts';

// spec: engine-protocol §4.8 and the reference configuration worker: named entries, each a JSON
// Schema and a value validated against it, persisted in the engine's store, every change fired.

export const ConfigErrorCode = {
  NotRegistered: 'NOT_REGISTERED',
  InvalidId: 'INVALID_ID',
  SchemaInvalid: 'SCHEMA_INVALID',
  NotFound: 'NOT_FOUND',
  AdapterError: 'ADAPTER_ERROR',
} as const;

export interface StoredConfiguration {
  id: string;
  name: string;
  description: string;
  schema: Record<string, unknown>;
  value: unknown;
  metadata?: unknown;
  updated_at: number;
}

export type ConfigEventType = 'configuration:registered' | 'configuration:updated' | 'configuration:deleted';

/** The `configuration` trigger payload; values are redacted (secrets read as `{"set": true}`). */
export interface ConfigEvent {
  type: 'configuration';
  event_type: ConfigEventType;
  id: string;
  name: string;
  description: string;
  schema: Record<string, unknown>;
  old_value: unknown;
  new_value: unknown;
  metadata?: unknown;
}

export interface RegisterRequest {
  id: string;
  name?: string;
  description?: string;
  schema: Record<string, unknown>;
  /** Replaces the stored value (secrets it omits are kept). */
  initial_value?: unknown;
  /** Seeds the value only when nothing is stored yet. */
  defaults?: unknown;
  metadata?: unknown;
}

const SCOPE = 'entries';

export class ConfigurationService {
  private readonly entries = new Map<string, StoredConfiguration>();
  private readonly validators = new Map<string, ValidateFunction>();
  /** Mutations of one id run one after another (the value written depends on the value stored). */
  private readonly chains = new Map<string, Promise<unknown>>();

  constructor(
    private readonly store: KvStore,
    private readonly emit: (event: ConfigEvent) => void,
    /** Told the secret strings of an entry (as revealed) whenever they may have changed; `[]` once deleted. */
    private readonly publishSecrets: (id: string, values: string[]) => void = () => {},
  ) {}

  async load(): Promise<number> {
    for (const { key, value } of await this.store.list(SCOPE)) {
      const entry = value as StoredConfiguration;
      this.entries.set(key, entry);
      this.publish(entry);
      try {
        this.validators.set(key, compileSchema(entry.schema));
      } catch {
        // a stored schema this build cannot compile: the entry is readable, set waits for a re-register
      }
    }
    return this.entries.size;
  }

  register(request: RegisterRequest, { seedOnly = false } = {}): Promise<unknown> {
    return this.serialized(request.id, async () => {
      let validate: ValidateFunction;
      try {
        validate = compileSchema(request.schema);
      } catch (err) {
        throw new EngError(ConfigErrorCode.SchemaInvalid, `configuration::register ${request.id}: ${(err as SchemaProblem).message}`);
      }
      const existing = this.entries.get(request.id);
      const seed = seedOnly ? (request.initial_value ?? request.defaults) : request.defaults;
      let value: unknown;
      if (request.initial_value !== undefined && !seedOnly)
        value = mergeSecrets(request.schema, structuredClone(request.initial_value), existing?.value);
      else if (existing && existing.value !== null && existing.value !== undefined) value = existing.value;
      else if (seed !== undefined) value = structuredClone(seed);
      else value = schemaSeed(request.schema, validate);
      if (value !== null && !(existing && value === existing.value) && !validate(value)) {
        throw new EngError(
          ConfigErrorCode.SchemaInvalid,
          `configuration::register ${request.id}: the ${request.initial_value !== undefined ? 'initial_value' : 'defaults'} do not match the schema: ${describeErrors(validate.errors, validate.schema)}`,
        );
      }
      const entry: StoredConfiguration = {
        id: request.id,
        name: request.name ?? existing?.name ?? request.id,
        description: request.description ?? existing?.description ?? '',
        schema: request.schema,
        value,
        ...(request.metadata !== undefined
          ? { metadata: request.metadata }
          : existing?.metadata !== undefined
            ? { metadata: existing.metadata }
            : {}),
        updated_at: Date.now(),
      };
      this.validators.set(request.id, validate);
      const changed = !existing || JSON.stringify({ ...existing, updated_at: 0 }) !== JSON.stringify({ ...entry, updated_at: 0 });
      if (changed) {
        await this.persist(entry);
        this.emit(this.event(existing ? 'configuration:updated' : 'configuration:registered', entry, existing?.value ?? null, entry.value));
      }
      return this.describe(changed ? entry : existing!, true);
    });
  }

  set(id: string, next: unknown): Promise<{ old_value: unknown; new_value: unknown }> {
    return this.serialized(id, async () => {
      const existing = this.entries.get(id);
      if (!existing)
        throw new EngError(
          ConfigErrorCode.NotRegistered,
          `configuration::set: ${id} is not registered (configuration::register declares it)`,
        );
      const validate = this.validators.get(id);
      if (!validate)
        throw new EngError(
          ConfigErrorCode.SchemaInvalid,
          `configuration::set: the stored schema of ${id} cannot be compiled; register it again`,
        );
      const value = mergeSecrets(existing.schema, structuredClone(next), existing.value);
      if (!validate(value))
        throw new EngError(ConfigErrorCode.SchemaInvalid, `configuration::set ${id}: ${describeErrors(validate.errors, validate.schema)}`);
      const entry = { ...existing, value, updated_at: Date.now() };
      await this.persist(entry);
      this.emit(this.event('configuration:updated', entry, existing.value, value));
      return { old_value: redact(entry.schema, existing.value ?? null), new_value: redact(entry.schema, value) };
    });
  }

  delete(id: string): Promise<{ deleted: boolean }> {
    return this.serialized(id, async () => {
      const existing = this.entries.get(id);
      if (!existing) return { deleted: false };
      try {
        await this.store.delete(SCOPE, id);
      } catch (err) {
        throw new EngError(ConfigErrorCode.AdapterError, `deleting ${id} failed: ${(err as Error).message}`);
      }
      this.entries.delete(id);
      this.validators.delete(id);
      this.publishSecrets(id, []);
      this.emit(this.event('configuration:deleted', existing, existing.value, null));
      return { deleted: true };
    });
  }

  /**
   * `{id, value}` with secrets shown as `{"set": true}`. Nothing is expanded: `${VAR}` in a readable
   * field reads back as written (only `reveal` expands, and only declared secret fields).
   */
  get(id: string): { id: string; value: unknown } {
    const entry = this.require(id, 'configuration::get');
    return { id, value: redact(entry.schema, entry.value ?? null) };
  }

  /**
   * The value with its secrets, for the worker that uses them (never logged, never traced);
   * `${VAR}` expanded in the secret fields that declare `x-eng-env`, unless `raw`.
   */
  reveal(id: string, raw = false): { id: string; value: unknown } {
    const entry = this.require(id, 'configuration::reveal');
    return { id, value: raw ? entry.value : expandSecrets(entry.schema, entry.value ?? null) };
  }

  list(): { configurations: unknown[] } {
    const ids = [...this.entries.keys()].sort();
    return { configurations: ids.map((id) => this.describe(this.entries.get(id)!, false)) };
  }

  schema(id: string): unknown {
    return this.describe(this.require(id, 'configuration::schema'), false);
  }

  private require(id: string, fn: string): StoredConfiguration {
    const entry = this.entries.get(id);
    if (!entry) throw new EngError(ConfigErrorCode.NotFound, `${fn}: no configuration is registered under ${id}`);
    return entry;
  }

  private describe(entry: StoredConfiguration, withValue: boolean): Record<string, unknown> {
    return {
      id: entry.id,
      name: entry.name,
      description: entry.description,
      schema: entry.schema,
      ...(withValue ? { value: redact(entry.schema, entry.value ?? null) } : {}),
      ...(entry.metadata !== undefined ? { metadata: entry.metadata } : {}),
      ...(!withValue && hasSecrets(entry.schema) ? { has_secrets: true } : {}),
    };
  }

  private event(type: ConfigEventType, entry: StoredConfiguration, oldValue: unknown, newValue: unknown): ConfigEvent {
    return {
      type: 'configuration',
      event_type: type,
      id: entry.id,
      name: entry.name,
      description: entry.description,
      schema: entry.schema,
      old_value: redact(entry.schema, oldValue ?? null),
      new_value: redact(entry.schema, newValue ?? null),
      ...(entry.metadata !== undefined ? { metadata: entry.metadata } : {}),
    };
  }

  private async persist(entry: StoredConfiguration): Promise<void> {
    try {
      await this.store.set(SCOPE, entry.id, entry);
    } catch (err) {
      throw new EngError(ConfigErrorCode.AdapterError, `storing ${entry.id} failed: ${(err as Error).message}`);
    }
    this.entries.set(entry.id, entry);
    this.publish(entry);
  }

  /** Hand the entry's secret strings, as the worker using them sees them, to telemetry scrubbing. */
  private publish(entry: StoredConfiguration): void {
    if (!hasSecrets(entry.schema)) {
      this.publishSecrets(entry.id, []);
      return;
    }
    this.publishSecrets(entry.id, secretStrings(entry.schema, expandSecrets(entry.schema, entry.value ?? null)));
  }

  private serialized<T>(id: string, run: () => Promise<T>): Promise<T> {
    const previous = this.chains.get(id) ?? Promise.resolve();
    const next = previous.then(run, run);
    const settled = next.catch(() => undefined);
    this.chains.set(id, settled);
    void settled.then(() => {
      if (this.chains.get(id) === settled) this.chains.delete(id);
    });
    return next;
  }
}

/** A value for an entry registered without one: `{}` with the schema's defaults, when that validates. */
function schemaSeed(schema: Record<string, unknown>, validate: ValidateFunction): unknown {
  if (schema.type !== 'object') return null;
  const value = {};
  return validate(value) ? value : null;
}
