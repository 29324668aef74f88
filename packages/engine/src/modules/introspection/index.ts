import { randomUUID } from 'node:crypto';
import {
  describeZodError,
  EngError,
  EngineFunction,
  EngineTriggerType,
  ErrorCode,
  type FunctionDetail,
  type FunctionRecord,
  FunctionsInfoInput,
  FunctionsInvokeInput,
  FunctionsListInput,
  RegisteredTriggersListInput,
  RegisterTriggerInput,
  type TriggerRecord,
  TriggersInfoInput,
  TriggersListInput,
  type TriggerTypeRecord,
  UnregisterTriggerInput,
  type WorkerRecord,
  WorkersInfoInput,
  WorkersListInput,
  WorkersRegisterInput,
} from '@eng/protocol';
import { z } from 'zod';
import type { Core } from '../../core/core.ts';
import { type FunctionEntry, functionKind, isInternalFunction } from '../../core/functions.ts';
import { Forward } from '../../core/invoker.ts';
import type { EngineModule, ModuleContext } from '../../core/module.ts';
import { summariseConfig, type TriggerBinding, type TriggerTypeEntry } from '../../core/triggers.ts';
import { redactUrl } from '../http-functions/url-security.ts';
import { compileScrubber } from '../observability/scrub.ts';
import { secretRegistry } from '../observability/secret-registry.ts';
import { type RunningConfig, redactConfig } from './running-config.ts';

// spec: engine-protocol §4.1, §4.2, §5.10 — the engine's own view of itself.

/** iii SDK versions whose `engine::triggers::list` is the 0.22.1 type summary `{id, worker_name, description}`. */
const III_LISTING_VERSION = /^0\.(1[2-9]|[2-9]\d)\./;
const Config = z.object({ functions_debounce_ms: z.number().int().min(0).default(250) }).strict();
type Config = z.infer<typeof Config>;

/** How long after connecting a worker's calls may still precede its engine::workers::register. */
const REGISTER_GRACE_MS = 500;

function parse<T>(schema: z.ZodType<T>, input: unknown): T {
  const parsed = schema.safeParse(input ?? {});
  if (!parsed.success) throw new EngError(ErrorCode.DeserializationError, describeZodError(parsed.error));
  return parsed.data;
}

/** Longer worker names are refused outright; shorter ones are cut to 280 characters. */
const MAX_WORKER_NAME_INPUT = 4096;

/** Strip control and bidi characters and cut to 280 characters (0.22.1 sanitising of names). */
function sanitise(text: string | null | undefined): string | null | undefined {
  if (typeof text !== 'string') return text;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping them is the point
  return text.replace(/[\u0000-\u001f\u007f\u202a-\u202e\u2066-\u2069]/g, '').slice(0, 280);
}

export class Introspection {
  constructor(private readonly core: Core) {}

  workerNameOf(entry: FunctionEntry): string {
    if (entry.remote) return entry.remote.workerName;
    if (entry.ownerWorkerId) {
      const name = this.core.workers.nameOf(entry.ownerWorkerId);
      if (name) return name;
    }
    if (entry.moduleName) return entry.moduleName;
    return entry.id.split('::')[0] ?? entry.id;
  }

  functionRecord(entry: FunctionEntry): FunctionRecord {
    return {
      function_id: entry.id,
      worker_name: this.workerNameOf(entry),
      worker_id: entry.remote ? entry.remote.workerId : entry.ownerWorkerId,
      description: entry.description,
      request_format: entry.requestFormat ?? null,
      response_format: entry.responseFormat ?? null,
      metadata: entry.metadata,
      kind: functionKind(entry),
      ...(entry.invocation
        ? {
            invocation: {
              url: redactUrl(entry.invocation.url),
              method: (entry.invocation.method ?? 'POST').toUpperCase(),
              timeout_ms: entry.invocation.timeout_ms ?? null,
            },
          }
        : {}),
      ...this.whereItRuns(entry),
    };
  }

  /**
   * In a cluster (eng-cluster), where a function runs: `engine_id` (the engine its calls go to),
   * `engines` (every engine serving it) and `remote: true` for another engine's. Nothing outside
   * a cluster, so iii's shapes stay as they are.
   */
  private whereItRuns(entry: FunctionEntry): { engine_id?: string; engines?: string[]; remote?: boolean } {
    if (entry.remote) return { engine_id: entry.remote.engineId, engines: entry.remote.engineIds, remote: true };
    const cluster = this.core.functions.cluster;
    return cluster ? { engine_id: cluster.engineId, remote: false } : {};
  }

  functionDetail(entry: FunctionEntry): FunctionDetail {
    const record = this.functionRecord(entry);
    const registered_triggers = [...this.core.bindings.all()]
      .filter((b) => b.functionId === entry.id)
      .map((b) => ({ id: b.id, trigger_type: b.triggerType, config: b.config }));
    return {
      ...record,
      ...(entry.requestFormat != null ? { request_schema: entry.requestFormat } : {}),
      ...(entry.responseFormat != null ? { response_schema: entry.responseFormat } : {}),
      registered_triggers,
    };
  }

  listFunctions(input: z.infer<typeof FunctionsListInput>): FunctionRecord[] {
    const search = input.search?.toLowerCase();
    const workers = new Set([...(input.workers ?? []), ...(input.worker ? [input.worker] : [])]);
    const scored: Array<{ record: FunctionRecord; score: number }> = [];
    for (const entry of this.core.functions.everywhere()) {
      if (!input.include_internal && isInternalFunction(entry)) continue;
      if (input.prefix && !entry.id.startsWith(input.prefix)) continue;
      const record = this.functionRecord(entry);
      if (workers.size && !workers.has(record.worker_name) && !workers.has(record.worker_id ?? '')) continue;
      let score = 0;
      if (search) {
        const id = entry.id.toLowerCase();
        if (id === search) score = 3;
        else if (id.startsWith(search)) score = 2;
        else if (id.includes(search)) score = 1;
        else if (entry.description?.toLowerCase().includes(search)) score = 0.5;
        else continue;
      }
      scored.push({ record, score });
    }
    scored.sort((a, b) => b.score - a.score || (a.record.function_id < b.record.function_id ? -1 : 1));
    return scored.map((s) => s.record);
  }

  workerRecords(includeAll = false): WorkerRecord[] {
    const records: WorkerRecord[] = [];
    const byOwner = new Map<string, string[]>();
    for (const fn of this.core.functions.all()) {
      const key = fn.ownerWorkerId ?? `module:${fn.moduleName}`;
      const list = byOwner.get(key) ?? [];
      list.push(fn.id);
      byOwner.set(key, list);
    }
    for (const entry of this.core.workers.all()) {
      // spec §4.1: bus workers without a pid stay hidden until they call engine::workers::register
      if (!includeAll && (entry.info.pid === undefined || entry.info.pid === null)) continue;
      records.push(this.core.workers.toRecord(entry, (byOwner.get(entry.peer.id) ?? []).sort()));
    }
    for (const module of this.core.workers.modules.values()) {
      records.push(this.core.workers.moduleRecord(module, (byOwner.get(`module:${module.name}`) ?? []).sort(), this.core.version));
    }
    records.sort((a, b) => (a.name === b.name ? (a.id < b.id ? -1 : 1) : a.name < b.name ? -1 : 1));
    return records;
  }

  triggerTypeRecord(type: TriggerTypeEntry): TriggerTypeRecord {
    const worker_name =
      type.provider.kind === 'module'
        ? type.provider.moduleName
        : (this.core.workers.nameOf(type.provider.workerId) ?? type.provider.workerId);
    return {
      id: type.id,
      worker_name,
      description: type.description,
      ...(type.triggerRequestFormat !== undefined
        ? { trigger_request_format: type.triggerRequestFormat, configuration_schema: type.triggerRequestFormat }
        : {}),
      ...(type.callRequestFormat !== undefined
        ? { call_request_format: type.callRequestFormat, request_schema: type.callRequestFormat }
        : {}),
      instance_count: this.core.bindings.countOfType(type.id),
    };
  }

  triggerRecord(binding: TriggerBinding): TriggerRecord {
    const fn = this.core.functions.lookup(binding.functionId);
    const worker_name = binding.ownerWorkerId
      ? (this.core.workers.nameOf(binding.ownerWorkerId) ?? binding.ownerWorkerId)
      : fn
        ? this.workerNameOf(fn)
        : 'engine';
    return {
      id: binding.id,
      trigger_type: binding.triggerType,
      function_id: binding.functionId,
      worker_name,
      worker_id: binding.ownerWorkerId,
      config: binding.config ?? {},
      config_summary: summariseConfig(binding.config),
      ...(binding.metadata ? { metadata: binding.metadata } : {}),
      ...bindingStatus(binding, fn !== undefined),
    };
  }

  /**
   * Bindings of engine built-ins and of functions marked `internal: true` (the UI's own listeners),
   * and HTTP routes under `_console/` (iii's console backend serves its pages' API there).
   */
  private isInternalBinding(binding: TriggerBinding): boolean {
    if (binding.functionId.startsWith('engine::')) return true;
    if (binding.triggerType === 'http' && isConsoleRoute((binding.config as { api_path?: unknown } | null)?.api_path)) return true;
    const fn = this.core.functions.lookup(binding.functionId);
    return !!fn && isInternalFunction(fn);
  }

  listTriggers(input: z.infer<typeof RegisteredTriggersListInput>): TriggerRecord[] {
    const search = input.search?.toLowerCase();
    const out: TriggerRecord[] = [];
    for (const binding of this.core.bindings.all()) {
      if (!input.include_internal && this.isInternalBinding(binding)) continue;
      if (input.trigger_type && binding.triggerType !== input.trigger_type) continue;
      if (input.function_id && binding.functionId !== input.function_id) continue;
      const record = this.triggerRecord(binding);
      if (input.worker && record.worker_name !== input.worker && record.worker_id !== input.worker) continue;
      if (search && !`${record.function_id} ${record.trigger_type} ${record.config_summary}`.toLowerCase().includes(search)) continue;
      out.push(record);
    }
    return out.sort((a, b) =>
      a.trigger_type === b.trigger_type ? (a.function_id < b.function_id ? -1 : 1) : a.trigger_type < b.trigger_type ? -1 : 1,
    );
  }

  listTriggerTypes(input: z.infer<typeof TriggersListInput>): TriggerTypeRecord[] {
    const search = input.search?.toLowerCase();
    const out: TriggerTypeRecord[] = [];
    for (const type of this.core.triggerTypes.all()) {
      if (!input.include_internal && type.id.startsWith('engine::')) continue;
      if (input.prefix && !type.id.startsWith(input.prefix)) continue;
      const record = this.triggerTypeRecord(type);
      if (input.worker && record.worker_name !== input.worker) continue;
      if (search && !`${type.id} ${type.description ?? ''}`.toLowerCase().includes(search)) continue;
      out.push(record);
    }
    return out.sort((a, b) => (a.id < b.id ? -1 : 1));
  }
}

/**
 * A binding's status as listed: what its provider made of it, except that a delivered binding whose
 * function is not registered (its worker left, or has not connected yet) fires nothing useful, so it
 * is Inactive and says why.
 */
function bindingStatus(binding: TriggerBinding, functionRegistered: boolean): { status: TriggerBinding['status']; error?: string } {
  if (binding.status === 'active' && !functionRegistered) {
    return { status: 'inactive', error: `function ${binding.functionId} is not registered: no worker serves it` };
  }
  return binding.error ? { status: binding.status, error: binding.error } : { status: binding.status };
}

type InvokeInput = z.infer<typeof FunctionsInvokeInput>;
const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * `engine::functions::invoke`'s input when it is well formed, by FunctionsInvokeInput's rules
 * (unknown keys ignored); undefined otherwise, for the schema to say what is wrong.
 */
function readInvokeInput(input: unknown): InvokeInput | undefined {
  if (!isRecord(input)) return undefined;
  const { function_id, payload, expect, timeout_ms } = input;
  if (typeof function_id !== 'string' || function_id.length === 0) return undefined;
  if (timeout_ms !== undefined && !(Number.isSafeInteger(timeout_ms) && (timeout_ms as number) > 0)) return undefined;
  if (expect === undefined) return { function_id, payload, timeout_ms: timeout_ms as number | undefined };
  if (!isRecord(expect) || (expect.metadata !== undefined && !isRecord(expect.metadata))) return undefined;
  return {
    function_id,
    payload,
    expect: { metadata: expect.metadata as Record<string, unknown> | undefined },
    timeout_ms: timeout_ms as number | undefined,
  };
}

/** Why `metadata` does not hold the `expected` values (JSON equality per flat key), or undefined when it does. */
export function metadataMismatch(
  metadata: Record<string, unknown> | null,
  expected: Record<string, unknown> | undefined,
): string | undefined {
  if (!expected) return undefined;
  for (const key of Object.keys(expected)) {
    const want = expected[key] ?? null;
    const have = metadata?.[key] ?? null;
    if (!sameJson(have, want)) return `metadata "${key}" is ${JSON.stringify(have)}, expected ${JSON.stringify(want)}`;
  }
  return undefined;
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (const k of ka) if (!sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  return true;
}

export function introspectionModule(): EngineModule<Config> {
  let timer: NodeJS.Timeout | undefined;
  const unsubscribers: Array<() => void> = [];
  return {
    name: 'eng-engine-functions',
    aliases: ['iii-engine-functions'],
    description: 'introspection: functions, workers and triggers of this engine',
    configSchema: Config,
    mandatory: true,
    start(ctx: ModuleContext<Config>) {
      const core = ctx.core;
      const view = new Introspection(core);
      // The SDK version a calling worker registered. SDKs send calls queued before the socket opened
      // ahead of their engine::workers::register (spec §2.7), so early on we wait for it briefly.
      const callerVersion = (workerId?: string): Promise<string | null | undefined> => {
        const entry = workerId ? core.workers.get(workerId) : undefined;
        if (!workerId || !entry) return Promise.resolve(undefined);
        const remainingMs = entry.peer.connectedAtMs + REGISTER_GRACE_MS - Date.now();
        if (entry.info.version !== undefined || remainingMs <= 0) return Promise.resolve(entry.info.version);
        return new Promise((resolve) => {
          const unsubscribe = core.onWorkerEvent((event) => {
            if (event.worker_id === workerId && event.event !== 'worker_connected') done();
          });
          const timer = setTimeout(() => done(), remainingMs);
          function done() {
            clearTimeout(timer);
            unsubscribe();
            resolve(core.workers.get(workerId as string)?.info.version);
          }
        });
      };

      ctx.registerFunction(
        {
          id: EngineFunction.FunctionsList,
          description: 'List registered functions',
          request_format: () => z.toJSONSchema(FunctionsListInput),
        },
        (input) => ({ functions: view.listFunctions(parse(FunctionsListInput, input)) }),
      );
      ctx.registerFunction(
        {
          id: EngineFunction.FunctionsInfo,
          description: 'Details of one or more functions',
          request_format: () => z.toJSONSchema(FunctionsInfoInput),
        },
        (input) => {
          const parsed = parse(FunctionsInfoInput, input);
          if ('function_id' in parsed) {
            const entry = core.functions.lookup(parsed.function_id);
            if (!entry) throw new EngError(ErrorCode.NotFound, `Function ${parsed.function_id} not found`);
            return view.functionDetail(entry);
          }
          return {
            functions: parsed.function_ids.map((id) => {
              const entry = core.functions.lookup(id);
              return entry ? view.functionDetail(entry) : { function_id: id, error: 'not_found' };
            }),
          };
        },
      );
      ctx.registerFunction(
        {
          id: EngineFunction.FunctionsInvoke,
          description: 'Invoke a function only if its metadata still holds the expected values (checked and dispatched in one step)',
          request_format: () => z.toJSONSchema(FunctionsInvokeInput),
        },
        (input, info) => {
          // eng-mcp's every tools/call comes here: read by hand, and zod only for the error message
          const q = readInvokeInput(input) ?? parse(FunctionsInvokeInput, input);
          const entry = core.functions.lookup(q.function_id);
          if (!entry) throw new EngError(ErrorCode.NotFound, `Function ${q.function_id} not found`);
          const mismatch = metadataMismatch(entry.metadata, q.expect?.metadata);
          if (mismatch) throw new EngError(ErrorCode.PreconditionFailed, `Function ${q.function_id}: ${mismatch}`);
          // the inner call is the caller's call: same caller, context and invocation metadata; its
          // outcome, result or error, is this call's own
          return new Forward(q.function_id, q.payload ?? {}, {
            callerWorkerId: info.callerWorkerId,
            traceparent: info.traceparent,
            baggage: info.baggage,
            metadata: info.metadata,
            timeoutMs: q.timeout_ms,
            // a part of this call's own input, when that was parsed for it alone
            payloadOwned: info.inputOwned === true,
          });
        },
      );
      ctx.registerFunction(
        {
          id: EngineFunction.WorkersList,
          description: 'List connected workers and engine modules',
          request_format: () => z.toJSONSchema(WorkersListInput),
        },
        (input) => {
          const q = parse(WorkersListInput, input);
          let workers = view.workerRecords(!!q.worker_id);
          if (q.worker_id) workers = workers.filter((w) => w.id === q.worker_id);
          if (q.runtime) workers = workers.filter((w) => w.runtime === q.runtime);
          if (q.status) workers = workers.filter((w) => w.status === q.status);
          if (q.search) {
            const s = q.search.toLowerCase();
            workers = workers.filter((w) => w.name.toLowerCase().includes(s) || (w.description ?? '').toLowerCase().includes(s));
          }
          return { workers, timestamp: Date.now() };
        },
      );
      ctx.registerFunction(
        {
          id: EngineFunction.WorkersInfo,
          description: 'Details of a worker by name (or id)',
          request_format: () => z.toJSONSchema(WorkersInfoInput),
        },
        (input) => {
          const q = parse(WorkersInfoInput, input);
          const worker = view.workerRecords(true).find((w) => ('name' in q ? w.name === q.name || w.id === q.name : w.id === q.id));
          if (!worker) throw new EngError(ErrorCode.NotFound, `Worker ${'name' in q ? q.name : q.id} not found`);
          const functions = worker.functions.map((id) => core.functions.get(id)).filter((f): f is FunctionEntry => !!f);
          return {
            worker,
            functions: functions.map((f) => view.functionRecord(f)),
            trigger_types: [...core.triggerTypes.all()]
              .filter((t) => (t.provider.kind === 'worker' ? t.provider.workerId === worker.id : t.provider.moduleName === worker.id))
              .map((t) => view.triggerTypeRecord(t)),
            registered_triggers: [...core.bindings.all()]
              .filter((b) => b.ownerWorkerId === worker.id || worker.functions.includes(b.functionId))
              .map((b) => view.triggerRecord(b)),
          };
        },
      );
      ctx.registerFunction(
        { id: EngineFunction.WorkersRegister, description: 'Record runtime facts about the calling worker' },
        (input, info) => {
          const q = parse(WorkersRegisterInput, input);
          // the worker the engine knows made the call (or sent the message being delivered), never
          // one named in data: the invoker stamps the same id, this does not depend on it
          const caller = info.callerWorkerId;
          if (!caller) throw new EngError(ErrorCode.NotFound, 'engine::workers::register records the calling worker: this call has none');
          // a name is cut to 280 characters as iii does (iii-sdk sends names that long); one far
          // beyond any real name is refused, naming the limit
          if (typeof q.name === 'string' && q.name.length > MAX_WORKER_NAME_INPUT) {
            throw new EngError(
              ErrorCode.IdTooLong,
              `the worker name is ${Buffer.byteLength(q.name)} bytes long; the engine accepts names of at most ${MAX_WORKER_NAME_INPUT} characters and keeps the first 280`,
            );
          }
          const ok = core.updateWorkerInfo(caller, {
            name: sanitise(q.name),
            description: sanitise(q.description),
            runtime: q.runtime,
            version: q.version,
            os: q.os,
            pid: q.pid,
            isolation: q.isolation,
            telemetry: q.telemetry,
          });
          if (!ok) throw new EngError(ErrorCode.NotFound, `Worker ${caller} is not connected`);
          return { success: true };
        },
      );
      ctx.registerFunction(
        {
          id: EngineFunction.ConfigGet,
          description: 'The configuration file this engine runs: its path and its text as written, credentials redacted',
        },
        (): RunningConfig => {
          const path = ctx.services.get<string | null>('engine.configPath') ?? null;
          const text = ctx.services.get<string | null>('engine.configText') ?? null;
          // no file: the default modules, as started
          if (path === null) return { path: null, text: null, workers: [...core.workers.modules.keys()].map((name) => ({ name })) };
          if (text === null) return { path, text: null, workers: null };
          // values the engine knows to be secrets (configuration entries, credential-named env) too
          return { path, ...redactConfig(text, compileScrubber(secretRegistry(ctx.services).values())) };
        },
      );
      ctx.registerFunction(
        { id: EngineFunction.TriggersList, description: 'List trigger types (0.22.1); trigger instances for 0.11 SDK callers' },
        async (input, info) => {
          const q = parse(TriggersListInput, input);
          // spec §9: 0.11.6 callers expect instances under the same key
          const version = await callerVersion(info.callerWorkerId);
          if (version?.startsWith('0.11.')) {
            return { triggers: view.listTriggers({ include_internal: q.include_internal }) };
          }
          const types = view.listTriggerTypes(q);
          // spec §4.1: an iii SDK of 0.12 or later gets exactly what 0.22.1 lists (schemas are on
          // engine::triggers::info); our own SDK (0.1.x, the console) keeps the superset with counts
          if (version && III_LISTING_VERSION.test(version)) {
            return {
              triggers: types.map((t) =>
                t.description == null
                  ? { id: t.id, worker_name: t.worker_name }
                  : { id: t.id, worker_name: t.worker_name, description: t.description },
              ),
            };
          }
          return { triggers: types };
        },
      );
      ctx.registerFunction({ id: EngineFunction.TriggerTypesList, description: 'List trigger types (0.11.6 name)' }, (input) => ({
        trigger_types: view.listTriggerTypes(parse(TriggersListInput, input)),
      }));
      ctx.registerFunction({ id: EngineFunction.TriggersInfo, description: 'Details of a trigger type' }, (input) => {
        const q = parse(TriggersInfoInput, input);
        const type = core.triggerTypes.get(q.id);
        if (!type) throw new EngError(ErrorCode.NotFound, `Trigger type ${q.id} not found`);
        return view.triggerTypeRecord(type);
      });
      ctx.registerFunction({ id: EngineFunction.RegisteredTriggersList, description: 'List trigger instances (bindings)' }, (input) => ({
        registered_triggers: view.listTriggers(parse(RegisteredTriggersListInput, input)),
      }));
      ctx.registerFunction({ id: EngineFunction.RegisteredTriggersInfo, description: 'Details of a trigger instance' }, (input) => {
        const q = parse(TriggersInfoInput, input);
        const binding = core.bindings.get(q.id);
        if (!binding) throw new EngError(ErrorCode.NotFound, `Trigger ${q.id} not found`);
        const type = core.triggerTypes.get(binding.triggerType);
        const fn = core.functions.lookup(binding.functionId);
        return {
          ...view.triggerRecord(binding),
          trigger: type ? view.triggerTypeRecord(type) : null,
          function: fn ? view.functionDetail(fn) : null,
        };
      });
      ctx.registerFunction(
        { id: EngineFunction.RegisterTrigger, description: 'Bind a function to a trigger; the binding outlives the caller' },
        async (input) => {
          const q = parse(RegisterTriggerInput, input);
          const result = await core.bindTrigger(
            {
              id: randomUUID(),
              triggerType: q.trigger_type,
              functionId: q.function_id,
              config: q.config ?? {},
              metadata: q.metadata,
              ownerWorkerId: null,
            },
            { waitForAck: true },
          );
          if (!result.ok) throw new EngError(result.error.code, result.error.message);
          return { id: result.binding.id };
        },
      );
      ctx.registerFunction({ id: EngineFunction.UnregisterTrigger, description: 'Remove a trigger binding' }, async (input) => {
        const q = parse(UnregisterTriggerInput, input);
        return { removed: !!(await core.unbindTrigger(q.id)) };
      });

      // §5.10 trigger types. Fired on change (debounced), not by polling.
      const functionsBindings = new Map<string, TriggerBinding>();
      const workersBindings = new Map<string, TriggerBinding>();
      ctx.registerTriggerType(
        {
          id: EngineTriggerType.FunctionsAvailable,
          description: 'Fires when functions are added or removed, or re-registered with other metadata, description or schemas',
        },
        { register: (b) => void functionsBindings.set(b.id, b), unregister: (b) => void functionsBindings.delete(b.id) },
      );
      ctx.registerTriggerType(
        { id: EngineTriggerType.WorkersAvailable, description: 'Fires when a worker connects, disconnects or updates its metadata' },
        { register: (b) => void workersBindings.set(b.id, b), unregister: (b) => void workersBindings.delete(b.id) },
      );
      const fire = (bindings: Map<string, TriggerBinding>, payload: unknown) => {
        for (const binding of bindings.values()) {
          void ctx.invoke(binding.functionId, payload, { metadata: binding.metadata, action: { type: 'void' } });
        }
      };
      let lastSignature = '';
      // the set of ids and what listeners show of each function (description, metadata, schemas):
      // a function re-registered with other metadata (e.g. losing `mcp.expose`) is a change too,
      // while a worker replaying the same registrations after a reconnect is not
      const signature = () =>
        [...core.functions.everywhere()]
          .map((f) => {
            // an engine module's function is what its registration made (its schemas are made from
            // zod only when something reads them): its registration stands for it
            if (f.moduleName !== null && f.handler && !f.remote) return JSON.stringify([f.id, f.moduleName, f.registeredAtMs]);
            try {
              return JSON.stringify([f.id, f.description, f.metadata, f.requestFormat, f.responseFormat]);
            } catch {
              // metadata the engine cannot write out must not take it down in a timer: the
              // registration time stands in, so a re-registration still counts as a change
              return JSON.stringify([f.id, f.registeredAtMs, 'unserialisable']);
            }
          })
          .sort()
          .join('\n');
      lastSignature = signature();
      unsubscribers.push(
        core.functions.onChange(() => {
          if (timer) return;
          timer = setTimeout(() => {
            timer = undefined;
            const next = signature();
            if (next === lastSignature) return;
            lastSignature = next;
            if (functionsBindings.size)
              fire(functionsBindings, { event: 'functions_changed', functions: view.listFunctions({ include_internal: true }) });
          }, ctx.config.functions_debounce_ms);
        }),
      );
      unsubscribers.push(core.onWorkerEvent((event) => fire(workersBindings, event)));
    },
    stop() {
      if (timer) clearTimeout(timer);
      for (const unsubscribe of unsubscribers) unsubscribe();
    },
  };
}

export type { Core };

/** iii's console backend's routes (`_console/…`, with or without a leading slash): internal, like its `engine::console::*` functions. */
function isConsoleRoute(path: unknown): boolean {
  return typeof path === 'string' && /^\/*_console(\/|$)/.test(path);
}
