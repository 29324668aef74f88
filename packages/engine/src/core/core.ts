import { randomUUID } from 'node:crypto';
import { type ErrorBody, ErrorCode, type HttpInvocationRef } from '@eng/protocol';
import type { Logger } from '../log.ts';
import { type FunctionEntry, FunctionRegistry, type InProcessHandler, reservedFunctionReason } from './functions.ts';
import { Invoker, toErrorBody } from './invoker.ts';
import { idTooLong, preview } from './json-limits.ts';
import { isReservedTriggerTypeId } from './reserved-ids.ts';
import {
  type TriggerBinding,
  TriggerBindingRegistry,
  type TriggerProvider,
  type TriggerTypeEntry,
  TriggerTypeRegistry,
} from './triggers.ts';
import { type WorkerEntry, type WorkerInfoUpdate, type WorkerPeer, WorkerRegistry } from './workers.ts';

export type WorkerEvent =
  | { event: 'worker_connected'; worker_id: string }
  | { event: 'worker_disconnected'; worker_id: string }
  | { event: 'worker_metadata_updated'; worker_id: string };

export type BindResult = { ok: true; binding: TriggerBinding } | { ok: false; error: ErrorBody };

/** A worker's registration the engine refused: it is not stored and the built-in keeps serving. */
export type RegistrationResult = { ok: true } | { ok: false; error: ErrorBody };

const ACK_TIMEOUT_MS = 10_000;

/** Serves the `invocation` of a `registerfunction` (spec §3.4); provided by eng-http-functions. */
export interface HttpFunctionsProvider {
  /** Check the invocation (URL rules, auth variables) and build the handler that calls it; throw an EngError to refuse. */
  prepare(functionId: string, invocation: HttpInvocationRef): Promise<InProcessHandler>;
}

/**
 * Registries and routing. The core knows nothing about HTTP, cron or any other trigger type:
 * those are providers (modules or workers) it forwards bindings to.
 */
export class Core {
  readonly functions = new FunctionRegistry();
  readonly workers = new WorkerRegistry();
  readonly triggerTypes = new TriggerTypeRegistry();
  readonly bindings = new TriggerBindingRegistry();
  readonly invoker: Invoker;
  private readonly workerListeners = new Set<(event: WorkerEvent) => void>();
  private readonly disconnectHooks = new Set<(workerId: string) => void>();
  private readonly ackWaiters = new Map<string, (error: ErrorBody | null) => void>();
  /** Set by eng-http-functions; without it HTTP-invoked registrations are refused. */
  httpFunctions?: HttpFunctionsProvider;

  constructor(
    readonly log: Logger,
    readonly version: string,
  ) {
    this.invoker = new Invoker(this.functions, this.workers, log.child('invoke'));
    // eng's cancelinvocation (protocol messages.ts): the executing worker hears it; iii SDKs ignore it
    this.invoker.onCancel = (executorWorkerId, invocationId, functionId, reason) => {
      const frame: Record<string, unknown> = { type: 'cancelinvocation', invocation_id: invocationId, function_id: functionId };
      if (reason) frame.reason = reason;
      this.workers.get(executorWorkerId)?.peer.send(frame);
    };
  }

  // ── workers ──────────────────────────────────────────────────────────────

  connectWorker(peer: WorkerPeer): WorkerEntry {
    const entry = this.workers.add(peer, randomUUID());
    this.emitWorker({ event: 'worker_connected', worker_id: peer.id });
    return entry;
  }

  updateWorkerInfo(workerId: string, info: WorkerInfoUpdate): boolean {
    const entry = this.workers.get(workerId);
    if (!entry) return false;
    entry.info = { ...entry.info, ...stripUndefined(info) };
    this.emitWorker({ event: 'worker_metadata_updated', worker_id: workerId });
    return true;
  }

  /** spec §2.3.2: evict the previous connection on a matching token and wait for its cleanup. */
  async reattach(currentWorkerId: string, previousWorkerId: string, token: string): Promise<boolean> {
    if (previousWorkerId === currentWorkerId) return false;
    const previous = this.workers.get(previousWorkerId);
    if (!previous || previous.reattachToken !== token) return false;
    const evicted = previous.peer.evict('replaced by a reattaching connection');
    await Promise.race([evicted, new Promise((r) => setTimeout(r, 5000))]);
    return true;
  }

  /** spec §2.8: everything a connection owned goes away, once. */
  disconnectWorker(workerId: string): void {
    const entry = this.workers.get(workerId);
    if (!entry) return;
    this.functions.removeOwner(workerId);
    this.invoker.workerGone(workerId);
    for (const binding of this.bindings.ownedBy(workerId)) void this.unbindTrigger(binding.id);
    for (const type of this.triggerTypes.providedBy(workerId)) {
      this.triggerTypes.delete(type.id);
      for (const binding of this.bindings.ofType(type.id)) {
        binding.status = 'inactive';
        binding.error = undefined;
      }
    }
    for (const hook of this.disconnectHooks) hook(workerId);
    this.workers.remove(workerId);
    this.emitWorker({ event: 'worker_disconnected', worker_id: workerId });
  }

  onWorkerEvent(listener: (event: WorkerEvent) => void): () => void {
    this.workerListeners.add(listener);
    return () => this.workerListeners.delete(listener);
  }
  onWorkerDisconnect(hook: (workerId: string) => void): () => void {
    this.disconnectHooks.add(hook);
    return () => this.disconnectHooks.delete(hook);
  }
  private emitWorker(event: WorkerEvent): void {
    for (const listener of this.workerListeners) {
      try {
        listener(event);
      } catch (err) {
        this.log.warn('worker event listener failed', { error: (err as Error).message });
      }
    }
  }

  // ── functions ────────────────────────────────────────────────────────────

  /**
   * A worker's `registerfunction`. Ids served by an engine module, and the exact built-in ids of
   * `reserved-ids.ts` (loaded or not), are refused (a worker could otherwise intercept every `state::set`, and take the built-in
   * away when it leaves). Another worker's id is taken over; see FunctionRegistry for the rule.
   */
  registerWorkerFunction(entry: FunctionEntry & { ownerWorkerId: string }): RegistrationResult {
    const tooLong = idTooLong('the function id', entry.id);
    if (tooLong) {
      this.log.warn(
        `registration of function ${preview(entry.id)} by worker ${this.workerLabel(entry.ownerWorkerId)} refused: ${tooLong.message}`,
      );
      return { ok: false, error: tooLong };
    }
    const current = this.functions.get(entry.id);
    const reason = reservedFunctionReason(entry.id, current);
    if (reason) {
      this.log.warn(`registration of function ${entry.id} by worker ${this.workerLabel(entry.ownerWorkerId)} refused: ${reason}`);
      return { ok: false, error: { code: ErrorCode.ReservedId, message: reason } };
    }
    if (current && current.ownerWorkerId !== entry.ownerWorkerId) {
      this.log.info(
        `function ${entry.id} already registered by worker ${this.workerLabel(current.ownerWorkerId)}. Overwriting; it serves ${entry.id} again if worker ${this.workerLabel(entry.ownerWorkerId)} leaves first.`,
      );
    }
    this.functions.set(entry);
    return { ok: true };
  }

  /**
   * A worker's `registerfunction` with an `invocation` (spec §3.4): the engine calls the URL. It is
   * owned by the worker like any of its functions (gone on `unregisterfunction` or when it leaves).
   */
  async registerHttpFunction(entry: FunctionEntry & { ownerWorkerId: string; invocation: HttpInvocationRef }): Promise<RegistrationResult> {
    const provider = this.httpFunctions;
    if (!provider) {
      const message = `function ${entry.id} is HTTP-invoked (invocation.url), which needs the eng-http-functions module: run \`eng worker add eng-http-functions\` (and allow the URL under its security config), then restart the engine`;
      this.log.warn(`registration of function ${entry.id} by worker ${this.workerLabel(entry.ownerWorkerId)} refused: ${message}`);
      return { ok: false, error: { code: ErrorCode.FunctionNotInvokable, message } };
    }
    let handler: InProcessHandler;
    try {
      handler = await provider.prepare(entry.id, entry.invocation);
    } catch (err) {
      const error = toErrorBody(err);
      this.log.warn(
        `registration of HTTP function ${entry.id} by worker ${this.workerLabel(entry.ownerWorkerId)} refused: ${error.message}`,
      );
      return { ok: false, error };
    }
    // the worker left while its URL was being checked: nothing of it may stay behind
    if (!this.workers.get(entry.ownerWorkerId)) return { ok: true };
    return this.registerWorkerFunction({ ...entry, handler });
  }

  /** A worker's name and id for log lines. */
  private workerLabel(workerId: string | null): string {
    if (!workerId) return 'engine';
    const name = this.workers.nameOf(workerId);
    return name ? `${name} (${workerId})` : workerId;
  }

  // ── trigger types ────────────────────────────────────────────────────────

  /** Register (or replace) a trigger type's provider, then hand it every binding of that type (§2.3.5, §5.1). */
  registerTriggerType(entry: TriggerTypeEntry): RegistrationResult {
    const tooLong = entry.provider.kind === 'worker' ? idTooLong('the trigger type id', entry.id) : undefined;
    if (tooLong) {
      this.log.warn(`registration of trigger type ${preview(entry.id)} refused: ${tooLong.message}`);
      return { ok: false, error: tooLong };
    }
    const previous = this.triggerTypes.get(entry.id);
    if (entry.provider.kind === 'worker' && (previous?.provider.kind === 'module' || isReservedTriggerTypeId(entry.id))) {
      // a worker taking over `http` or `state` would receive every binding of the built-in; the
      // exact built-in ids stay the engine's even when the module serving them is not loaded
      const message =
        previous?.provider.kind === 'module'
          ? `trigger type "${entry.id}" is provided by the engine module ${previous.provider.moduleName}; a worker cannot register it (choose another id)`
          : `trigger type "${entry.id}" is reserved: it is an engine built-in (served by an engine module, loaded or not, or by iii's engine); a worker cannot register it (choose another id)`;
      this.log.warn(`registration of trigger type ${entry.id} by worker ${this.workerLabel(entry.provider.workerId)} refused: ${message}`);
      return { ok: false, error: { code: ErrorCode.ReservedId, message } };
    }
    if (previous && previous.provider.kind === 'worker' && entry.provider.kind === 'worker') {
      this.log.info(`trigger type ${entry.id} provider replaced`);
    }
    this.triggerTypes.set(entry);
    for (const binding of this.bindings.ofType(entry.id)) void this.deliver(binding, entry.provider);
    return { ok: true };
  }

  /** spec §9 row 16: `unregistertriggertype` removes the type; its bindings are parked. */
  unregisterTriggerType(id: string, byWorkerId: string | null): boolean {
    const type = this.triggerTypes.get(id);
    if (!type) return false;
    if (byWorkerId !== null && !(type.provider.kind === 'worker' && type.provider.workerId === byWorkerId)) return false;
    this.triggerTypes.delete(id);
    for (const binding of this.bindings.ofType(id)) {
      binding.status = 'inactive';
      binding.error = undefined;
    }
    return true;
  }

  // ── bindings ─────────────────────────────────────────────────────────────

  /**
   * Bind a function to a trigger. Unknown types are parked (§5.1). A module provider may refuse
   * synchronously (error returned; a worker's binding is kept as `error` with the reason). For
   * worker providers, `waitForAck` waits up
   * to 10 s for their `triggerregistrationresult` (as `engine::register_trigger` does).
   */
  async bindTrigger(
    input: Omit<TriggerBinding, 'status' | 'createdAtMs' | 'error'>,
    options: { waitForAck?: boolean } = {},
  ): Promise<BindResult> {
    const tooLong =
      idTooLong('the trigger id', input.id) ??
      idTooLong('the trigger type id', input.triggerType) ??
      idTooLong('the function id', input.functionId);
    if (tooLong) return { ok: false, error: tooLong };
    const existing = this.bindings.get(input.id);
    if (existing) await this.unbindTrigger(existing.id);
    const binding: TriggerBinding = { ...input, status: 'inactive', createdAtMs: Date.now() };
    const type = this.triggerTypes.get(binding.triggerType);
    if (!type) {
      this.bindings.set(binding);
      this.log.debug(`trigger ${binding.id} parked: type "${binding.triggerType}" has no provider yet`);
      return { ok: true, binding };
    }
    if (type.provider.kind === 'module') {
      try {
        await type.provider.register(binding);
      } catch (err) {
        const message = (err as Error).message ?? String(err);
        // a worker's refused binding stays listed as Error with the reason (a bad cron expression
        // must not just vanish from Triggers); it leaves with its worker like any other binding
        if (binding.ownerWorkerId) {
          binding.status = 'error';
          binding.error = message;
          this.bindings.set(binding);
          this.log.warn(`trigger ${binding.id} (${binding.triggerType}) refused: ${message}`);
        }
        return { ok: false, error: { code: ErrorCode.TriggerRegistrationFailed, message } };
      }
      binding.status = 'active';
      this.bindings.set(binding);
      return { ok: true, binding };
    }
    this.bindings.set(binding);
    const ack = options.waitForAck ? this.waitForAck(binding.id) : null;
    await this.deliver(binding, type.provider);
    if (ack) {
      const error = await ack;
      if (error) return { ok: false, error };
    }
    return { ok: true, binding };
  }

  async unbindTrigger(id: string): Promise<TriggerBinding | undefined> {
    const binding = this.bindings.delete(id);
    if (!binding) return undefined;
    const type = this.triggerTypes.get(binding.triggerType);
    // a module may hold a binding it lists as inactive (an HTTP route shadowed by a later binding)
    const held = binding.status === 'active' || (type?.provider.kind === 'module' && binding.status === 'inactive');
    if (type && held) {
      if (type.provider.kind === 'module') {
        try {
          await type.provider.unregister(binding);
        } catch (err) {
          this.log.warn(`provider of ${binding.triggerType} failed to unregister ${id}`, { error: (err as Error).message });
        }
      } else {
        this.workers.get(type.provider.workerId)?.peer.send({ type: 'unregistertrigger', id, trigger_type: binding.triggerType });
      }
    }
    return binding;
  }

  /** A provider (or any worker) answered a delivered binding (§2.3.7, 0.22.1 semantics). */
  handleTriggerResult(fromWorkerId: string, id: string, error: ErrorBody | null | undefined): void {
    const waiter = this.ackWaiters.get(id);
    if (waiter) {
      this.ackWaiters.delete(id);
      waiter(error ?? null);
    }
    const binding = this.bindings.get(id);
    if (!binding) return;
    const type = this.triggerTypes.get(binding.triggerType);
    if (type?.provider.kind !== 'worker' || type.provider.workerId !== fromWorkerId) return;
    if (!error) {
      binding.status = 'active';
      binding.error = undefined;
      return;
    }
    binding.status = 'error';
    binding.error = `${error.code}: ${error.message}`;
    if (binding.ownerWorkerId && binding.ownerWorkerId !== fromWorkerId) {
      this.workers.get(binding.ownerWorkerId)?.peer.send({
        type: 'triggerregistrationresult',
        id: binding.id,
        trigger_type: binding.triggerType,
        function_id: binding.functionId,
        error,
      });
    }
  }

  private async deliver(binding: TriggerBinding, provider: TriggerProvider): Promise<void> {
    if (provider.kind === 'module') {
      try {
        await provider.register(binding);
        binding.status = 'active';
        binding.error = undefined;
      } catch (err) {
        binding.status = 'error';
        binding.error = (err as Error).message;
        this.log.warn(`trigger ${binding.id} (${binding.triggerType}) refused: ${binding.error}`);
      }
      return;
    }
    const providerWorker = this.workers.get(provider.workerId);
    if (!providerWorker) return;
    const frame: Record<string, unknown> = {
      type: 'registertrigger',
      id: binding.id,
      trigger_type: binding.triggerType,
      function_id: binding.functionId,
      config: binding.config ?? {},
    };
    if (binding.metadata) frame.metadata = binding.metadata;
    try {
      binding.status = providerWorker.peer.send(frame) ? 'active' : 'inactive';
    } catch (err) {
      // a config the engine cannot write out again: the binding says why instead of taking the engine down
      binding.status = 'error';
      binding.error = `could not be sent to the provider of ${binding.triggerType}: ${(err as Error).message}`;
      this.log.warn(`trigger ${binding.id} (${binding.triggerType}) ${binding.error}`);
    }
  }

  private waitForAck(id: string): Promise<ErrorBody | null> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.ackWaiters.delete(id);
        resolve(null); // no ack within 10 s: the binding stays, as in iii
      }, ACK_TIMEOUT_MS);
      this.ackWaiters.set(id, (error) => {
        clearTimeout(timer);
        resolve(error);
      });
    });
  }
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  const out: Partial<T> = {};
  for (const [k, v] of Object.entries(value)) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}
