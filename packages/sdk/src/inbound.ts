import {
  EngError,
  type ErrorBody,
  ErrorCode,
  type InvokeFunction,
  type RegisterTrigger,
  type TriggerRegistrationResult,
  type UnregisterTrigger,
} from '@eng/protocol';
import { type ChannelHost, resolveChannelRefs } from './channels.ts';
import { type ActiveContext, type ContextStore, payloadPreview, type SdkTracer } from './tracing.ts';
import type { FunctionHandler, InvocationContext, Logger, TriggerBinding, TriggerTypeProvider, WorkerLogger } from './types.ts';

// What the engine asks of this worker: run a function (spec §2.3.9/§2.3.10), and, as the provider
// of a trigger type, accept or drop bindings (§2.3.6-§2.3.8, §5.11).

export interface InboundHost {
  logger: Logger;
  tracer: SdkTracer | null;
  contextStore: ContextStore;
  workerLogger(ctx: ActiveContext | undefined): WorkerLogger;
  channelHost: ChannelHost;
  /** Sends one encoded frame; false when there is no open socket. */
  sendText(text: string): boolean;
  /** Changes whenever the connection does, so work that outlived its connection can tell. */
  connection(): number;
  functionEntry(id: string): { handler: FunctionHandler } | undefined;
  triggerType(id: string): TriggerTypeProvider | undefined;
  /** True for a trigger binding this client registered. */
  ownsTrigger(id: string): boolean;
  emitError(error: EngError): void;
}

interface ProvidedBinding {
  binding: TriggerBinding;
  triggerType: string;
  provider: TriggerTypeProvider;
}

function describe(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === 'string') return err;
  try {
    return JSON.stringify(err) ?? String(err);
  } catch {
    return String(err);
  }
}

/** spec §2.4: a handler's failure as the caller sees it. An EngError keeps its code. */
export function toErrorBody(err: unknown): ErrorBody {
  // by name too: a second copy of @eng/protocol in the tree would defeat instanceof
  if (err instanceof EngError || (err instanceof Error && err.name === 'EngError' && typeof (err as EngError).code === 'string')) {
    const e = err as EngError;
    return e.stacktrace ? { code: e.code, message: e.message, stacktrace: e.stacktrace } : { code: e.code, message: e.message };
  }
  if (err instanceof Error) return { code: ErrorCode.InvocationFailed, message: err.message, stacktrace: err.stack };
  return { code: ErrorCode.InvocationFailed, message: describe(err) };
}

function callerOf(data: unknown): string | undefined {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return undefined;
  const caller = (data as Record<string, unknown>)._caller_worker_id;
  return typeof caller === 'string' ? caller : undefined;
}

/**
 * One running invocation's cancellation: the AbortController is made only when the handler reads
 * `ctx.signal` (most never do), and a cancel that came first gives it an aborted one.
 */
class RunningCall {
  controller?: AbortController;
  cancelled = false;
  reason?: string;

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.cancelled) this.controller.abort(this.abortReason());
    }
    return this.controller.signal;
  }

  cancel(reason: string | undefined): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.reason = reason;
    this.controller?.abort(this.abortReason());
  }

  private abortReason(): EngError {
    return new EngError(ErrorCode.InvocationCancelled, this.reason ? `cancelled by the caller: ${this.reason}` : 'cancelled by the caller');
  }
}

/** What a handler is told about its call; `signal` is made on first read. */
class CallContext implements InvocationContext {
  constructor(
    readonly invocationId: string | undefined,
    readonly functionId: string,
    readonly metadata: unknown,
    readonly traceparent: string | undefined,
    readonly baggage: string | undefined,
    readonly callerWorkerId: string | undefined,
    readonly log: WorkerLogger,
    private readonly running: RunningCall,
  ) {}

  get signal(): AbortSignal {
    return this.running.signal;
  }
}

export class Inbound {
  /** Invocations running here, by id, so a `cancelinvocation` reaches the handler's signal. */
  private readonly running = new Map<string, RunningCall>();
  /** Bindings our providers accepted, so `unregistertrigger` can pass the real function_id and config. */
  private readonly bindings = new Map<string, ProvidedBinding>();
  private readonly warnedTriggers = new Set<string>();

  constructor(private readonly host: InboundHost) {}

  async execute(message: InvokeFunction): Promise<void> {
    const functionId = message.function_id;
    const entry = this.host.functionEntry(functionId);
    if (!entry) {
      // spec §2.4: the engine routed an id we do not (or no longer) serve
      this.reply(message, { error: { code: ErrorCode.FunctionNotFound, message: `Function ${functionId} not found` } });
      return;
    }
    const data = message.data === undefined ? null : message.data;
    // spec §2.6 (0.22.1): the handler runs inside an `execute <function_id>` span, child of the caller's context
    const span = this.host.tracer?.startSpan(`execute ${functionId}`, message.traceparent ?? undefined);
    const active: ActiveContext | undefined = span
      ? { traceparent: span.traceparent, baggage: message.baggage ?? undefined, traceId: span.context.traceId, spanId: span.context.spanId }
      : undefined;
    if (span) {
      span.setAttribute('function_id', functionId).setAttribute('faas.invoked_name', functionId);
      if (message.invocation_id) span.setAttribute('eng.invocation.id', message.invocation_id);
      const caller = callerOf(data);
      if (caller) span.setAttribute('eng.caller.worker_id', caller);
      if (this.host.tracer?.payloads) span.addEvent('eng.invocation.input', { 'eng.payload': payloadPreview(data) });
    }
    const invocationId = message.invocation_id ?? undefined;
    const running = new RunningCall();
    // a repeated id (a misbehaving engine) keeps the first call's entry
    const tracked = invocationId !== undefined && !this.running.has(invocationId);
    if (tracked) this.running.set(invocationId, running);
    const ctx = new CallContext(
      invocationId,
      functionId,
      message.metadata,
      active?.traceparent ?? message.traceparent ?? undefined,
      message.baggage ?? undefined,
      callerOf(data),
      this.host.workerLogger(active),
      running,
    );
    let outcome: { result?: unknown; error?: ErrorBody };
    try {
      const input = resolveChannelRefs(data, this.host.channelHost);
      const run = () => entry.handler(input, ctx);
      outcome = { result: await (active ? this.host.contextStore.run(active, run) : run()) };
      if (span && this.host.tracer?.payloads) span.addEvent('eng.invocation.output', { 'eng.payload': payloadPreview(outcome.result) });
      span?.end();
    } catch (err) {
      outcome = { error: toErrorBody(err) };
      span?.end({ error: outcome.error });
      // with an invocation id the caller hears about it; without one, only the log does
      if (message.invocation_id) this.host.logger.debug(`function ${functionId} failed: ${describe(err)}`);
      else this.host.logger.warn(`function ${functionId} failed: ${describe(err)}`);
    }
    if (tracked) this.running.delete(invocationId);
    // a cancelled call was answered by the engine already: nobody waits for this result
    if (running.cancelled) return;
    this.reply(message, outcome, active?.traceparent);
  }

  /** eng's `cancelinvocation`: the caller gave up a call running here. Unknown ids are ignored. */
  cancel(invocationId: string, reason: string | undefined): void {
    const running = this.running.get(invocationId);
    if (!running) {
      this.host.logger.debug(`cancel for invocation ${invocationId} ignored: not running here`);
      return;
    }
    running.cancel(reason);
  }

  private reply(message: InvokeFunction, outcome: { result?: unknown; error?: ErrorBody }, traceparent?: string): void {
    const invocationId = message.invocation_id;
    if (!invocationId) return; // spec §2.3.9: no id, nobody waiting
    const base = {
      type: 'invocationresult',
      invocation_id: invocationId,
      function_id: message.function_id,
      traceparent: traceparent ?? message.traceparent ?? undefined,
      baggage: message.baggage ?? undefined,
    };
    let text: string;
    try {
      text = JSON.stringify({ ...base, ...outcome });
    } catch (err) {
      const error = {
        code: ErrorCode.SerializationError,
        message: `result of ${message.function_id} is not serialisable: ${describe(err)}`,
      };
      text = JSON.stringify({ ...base, error });
    }
    // the engine halts invocations of a closed connection (§2.8), so a late result has no taker
    if (!this.host.sendText(text)) this.host.logger.debug(`result of ${message.function_id} dropped: not connected`);
  }

  async provideTrigger(message: RegisterTrigger): Promise<void> {
    const base = {
      type: 'triggerregistrationresult',
      id: message.id,
      trigger_type: message.trigger_type,
      function_id: message.function_id,
    };
    const provider = this.host.triggerType(message.trigger_type);
    if (!provider) {
      this.send({ ...base, error: { code: ErrorCode.TriggerTypeNotFound, message: 'Trigger type not found' } });
      return;
    }
    const previous = this.bindings.get(message.id);
    if (previous) {
      this.bindings.delete(message.id);
      await this.unregister(previous);
    }
    const binding: TriggerBinding = {
      id: message.id,
      function_id: message.function_id,
      config: message.config,
      metadata: message.metadata ?? undefined,
    };
    const connection = this.host.connection();
    try {
      await provider.registerTrigger(binding);
    } catch (err) {
      this.send({ ...base, error: { code: ErrorCode.TriggerRegistrationFailed, message: describe(err) } });
      return;
    }
    const provided = { binding, triggerType: message.trigger_type, provider };
    if (connection !== this.host.connection()) {
      // the connection dropped while the provider worked: the engine forgot this binding already
      await this.unregister(provided);
      return;
    }
    this.bindings.set(message.id, provided);
    this.send(base);
  }

  async withdrawTrigger(message: UnregisterTrigger): Promise<void> {
    const provided = this.bindings.get(message.id);
    if (!provided) {
      this.host.logger.debug(`unregistertrigger for unknown binding ${message.id} ignored`);
      return;
    }
    this.bindings.delete(message.id);
    await this.unregister(provided);
  }

  /** spec §2.3.7 (0.22.1): the provider of a type refused one of our bindings. */
  triggerResult(message: TriggerRegistrationResult): void {
    if (!message.error || !this.host.ownsTrigger(message.id)) return;
    const error = new EngError(
      message.error.code,
      `trigger ${message.id} (${message.trigger_type ?? 'unknown type'}) for ${message.function_id ?? 'unknown function'} was refused: ${message.error.message}`,
      { details: { trigger_id: message.id, trigger_type: message.trigger_type, function_id: message.function_id } },
    );
    if (!this.warnedTriggers.has(message.id)) {
      this.warnedTriggers.add(message.id);
      this.host.logger.warn(error.message);
    }
    this.host.emitError(error);
  }

  /** Tell providers that bindings are gone: all of them (disconnect, close) or one type's. */
  async dropBindings(triggerType?: string): Promise<void> {
    const dropped: ProvidedBinding[] = [];
    for (const [id, provided] of this.bindings) {
      if (triggerType !== undefined && provided.triggerType !== triggerType) continue;
      this.bindings.delete(id);
      dropped.push(provided);
    }
    await Promise.all(dropped.map((provided) => this.unregister(provided)));
  }

  private async unregister(provided: ProvidedBinding): Promise<void> {
    try {
      await provided.provider.unregisterTrigger(provided.binding);
    } catch (err) {
      this.host.logger.warn(`provider of ${provided.triggerType} failed to unregister ${provided.binding.id}: ${describe(err)}`);
    }
  }

  private send(frame: object): void {
    if (!this.host.sendText(JSON.stringify(frame))) this.host.logger.debug('trigger registration result dropped: not connected');
  }
}
