import { EngError } from '@eng/protocol';
import type { z } from 'zod';
import type { Logger } from '../log.ts';
import type { Core } from './core.ts';
import type { FunctionEntry, InProcessHandler } from './functions.ts';
import type { InvokeOptions, InvokeOutcome } from './invoker.ts';
import type { TriggerBinding, TriggerTypeEntry } from './triggers.ts';

/**
 * An engine module: the in-process equivalent of a worker. It registers functions and trigger
 * types through its context, the same shapes an external worker sends on the wire.
 */
export interface EngineModule<Config = unknown> {
  /** Config name in `config.yaml` (`eng-http`, …). */
  readonly name: string;
  /** Other names accepted in config.yaml (for example the iii spelling `iii-http`). */
  readonly aliases?: readonly string[];
  readonly description?: string;
  /** Validates the entry's `config:` block; defaults are filled by the schema. */
  readonly configSchema: z.ZodType<Config>;
  /** Always started, even when not listed in config.yaml. */
  readonly mandatory?: boolean;
  start(ctx: ModuleContext<Config>): void | Promise<void>;
  /** Called once every module has started (the bus opens its port here, so workers find everything). */
  afterStart?(): void | Promise<void>;
  stop?(): void | Promise<void>;
}

/**
 * A JSON Schema, or a function that makes it: a built-in's schema is made from its zod schema the
 * first time something reads it (a function list, a cluster announcement), not at every start.
 */
export type Format = unknown;

export interface FunctionDefinition {
  id: string;
  description?: string;
  request_format?: Format;
  response_format?: Format;
  metadata?: Record<string, unknown>;
}

export interface TriggerTypeDefinition {
  id: string;
  description?: string;
  trigger_request_format?: Format;
  call_request_format?: Format;
}

/** Defines `key` on `target` as `format`, made on first read when it is a function (then kept). */
function defineFormat<T extends object>(target: T, key: keyof T & string, format: Format): T {
  if (typeof format !== 'function') {
    (target as Record<string, unknown>)[key] = format;
    return target;
  }
  let made: { value: unknown } | undefined;
  Object.defineProperty(target, key, {
    enumerable: true,
    configurable: true,
    get: () => {
      made ??= { value: (format as () => unknown)() };
      return made.value;
    },
  });
  return target;
}

export interface TriggerTypeHandlers {
  /** Validate and start firing; throw an Error with a readable message to refuse. */
  register(binding: TriggerBinding): void | Promise<void>;
  unregister(binding: TriggerBinding): void | Promise<void>;
}

/** Shared facilities modules may publish for each other (stores, the HTTP router, …). */
export interface EngineServices {
  get<T>(name: string): T | undefined;
  set<T>(name: string, value: T): void;
}

export interface ModuleContext<Config = unknown> {
  readonly name: string;
  readonly config: Config;
  readonly log: Logger;
  readonly core: Core;
  readonly services: EngineServices;
  /** Directory for persistent data (file-based stores). */
  readonly dataDir: string;
  readonly engineVersion: string;
  registerFunction(definition: FunctionDefinition, handler: InProcessHandler): void;
  registerTriggerType(definition: TriggerTypeDefinition, handlers: TriggerTypeHandlers): void;
  /** Invoke and resolve the outcome (never rejects). */
  invoke(functionId: string, data: unknown, options?: InvokeOptions): Promise<InvokeOutcome>;
  /** Invoke and resolve the result, or throw an EngError. */
  call(functionId: string, data: unknown, options?: InvokeOptions): Promise<unknown>;
}

export function createModuleContext<Config>(
  module: EngineModule<Config>,
  config: Config,
  deps: { core: Core; services: EngineServices; dataDir: string; log: Logger },
): ModuleContext<Config> {
  const { core } = deps;
  const log = deps.log.child(module.name);
  return {
    name: module.name,
    config,
    log,
    core,
    services: deps.services,
    dataDir: deps.dataDir,
    engineVersion: core.version,
    registerFunction(definition, handler) {
      const entry: FunctionEntry = {
        id: definition.id,
        description: definition.description ?? null,
        requestFormat: null,
        responseFormat: null,
        metadata: definition.metadata ?? null,
        ownerWorkerId: null,
        moduleName: module.name,
        handler,
        registeredAtMs: Date.now(),
      };
      defineFormat(entry, 'requestFormat', definition.request_format ?? null);
      defineFormat(entry, 'responseFormat', definition.response_format ?? null);
      core.functions.set(entry);
    },
    registerTriggerType(definition, handlers) {
      const entry: TriggerTypeEntry = {
        id: definition.id,
        description: definition.description ?? null,
        provider: { kind: 'module', moduleName: module.name, register: handlers.register, unregister: handlers.unregister },
      };
      if (definition.trigger_request_format !== undefined) defineFormat(entry, 'triggerRequestFormat', definition.trigger_request_format);
      if (definition.call_request_format !== undefined) defineFormat(entry, 'callRequestFormat', definition.call_request_format);
      core.registerTriggerType(entry);
    },
    invoke(functionId, data, options) {
      return core.invoker.invoke(functionId, data, options);
    },
    async call(functionId, data, options) {
      const outcome = await core.invoker.invoke(functionId, data, options);
      if (!outcome.ok) throw new EngError(outcome.error.code, outcome.error.message, { stacktrace: outcome.error.stacktrace });
      return outcome.result;
    },
  };
}

export class ServiceMap implements EngineServices {
  private readonly values = new Map<string, unknown>();
  entries(): IterableIterator<[string, unknown]> {
    return this.values.entries();
  }
  get<T>(name: string): T | undefined {
    return this.values.get(name) as T | undefined;
  }
  set<T>(name: string, value: T): void {
    this.values.set(name, value);
  }
}
