import { type EngClient, EngError, ErrorCode } from '@eng/sdk';

export interface ConfigurationOptions<T extends Record<string, unknown>> {
  /** Entry id (`approval-gate`, `session-manager`, `llm-router`). */
  id: string;
  name: string;
  description: string;
  /** JSON Schema of the value; `writeOnly` / `format: "password"` fields are secrets. */
  schema: Record<string, unknown>;
  /** Seeded when nothing is stored yet, and filled in for keys a stored value lacks. */
  defaults: T;
  /** Read secret fields too (`configuration::reveal`): only for the worker that uses them. */
  secrets?: boolean;
  /** Function id of the change handler this worker registers (`approval::on-config-change`). */
  handlerId: string;
  onChange?(value: T): void;
  log?(line: string): void;
}

export interface ConfigurationBinding<T> {
  current(): T;
  /** False when the engine has no `configuration::*` (the defaults are used). */
  readonly available: boolean;
}

const ATTEMPTS = 3;

/**
 * A worker's settings kept in the engine's `configuration` entry `id`: registered with its schema
 * (seeding the defaults once), read, and reloaded live through a `configuration` trigger. Without
 * a configuration module (an iii 0.11 engine) the worker runs on its defaults and says so.
 */
export async function bindConfiguration<T extends Record<string, unknown>>(
  client: EngClient,
  options: ConfigurationOptions<T>,
): Promise<ConfigurationBinding<T>> {
  const withDefaults = (value: unknown): T =>
    typeof value === 'object' && value !== null && !Array.isArray(value) ? { ...options.defaults, ...(value as object) } : options.defaults;
  const read = async (): Promise<unknown> => {
    const fn = options.secrets ? 'configuration::reveal' : 'configuration::get';
    const entry = await client.call<{ value: unknown } | null>(fn, { id: options.id }, { timeoutMs: 5000 });
    return entry?.value;
  };

  let current = options.defaults;
  try {
    await retry(() =>
      client.call(
        'configuration::register',
        { id: options.id, name: options.name, description: options.description, schema: options.schema, defaults: options.defaults },
        { timeoutMs: 5000 },
      ),
    );
    current = withDefaults(await retry(read));
  } catch (err) {
    const e = EngError.from(err);
    options.log?.(`configuration entry ${options.id} unavailable (${e.code}: ${e.message}); using the defaults`);
    return { current: () => current, available: false };
  }

  client.registerFunction(
    options.handlerId,
    async () => {
      try {
        current = withDefaults(await read());
        options.onChange?.(current);
      } catch (err) {
        options.log?.(`reloading configuration ${options.id} failed: ${(err as Error).message}`);
      }
      return {};
    },
    { description: `reloads the ${options.id} configuration entry`, metadata: { internal: true } },
  );
  client.registerTrigger({ type: 'configuration', function_id: options.handlerId, config: { configuration_id: options.id } });
  return { current: () => current, available: true };
}

async function retry<T>(run: () => Promise<T>): Promise<T> {
  let last: unknown;
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    try {
      return await run();
    } catch (err) {
      last = err;
      // a missing function will not appear by retrying quickly; bad input never will
      const code = EngError.from(err).code;
      if (code === ErrorCode.FunctionNotFound || code.startsWith('SCHEMA') || code === 'INVALID_ID') break;
      await new Promise((r) => setTimeout(r, 250 * attempt));
    }
  }
  throw last;
}
