import {
  type ChannelRef,
  EngError,
  EngineFunction,
  ErrorCode,
  type Message,
  type RegisterFunction,
  type RegisterTrigger,
  type RegisterTriggerType,
} from '@eng/protocol';
import { reconnectPolicy } from './backoff.ts';
import { Calls, MAX_TIMER_MS } from './calls.ts';
import { type Channel, type ChannelEnd, type ChannelHost, ChannelReader, ChannelWriter } from './channels.ts';
import { Connection } from './connection.ts';
import { ClientEmitter } from './events.ts';
import { randomId } from './ids.ts';
import { Inbound } from './inbound.ts';
import { consoleLogger, guardLogger, printableUrl } from './logger.ts';
import type { SocketFactory } from './socket.ts';
import { type LogLevel, newTraceparent, noopSpan, parseTraceparent, SdkTracer, type WorkerSpan } from './tracing.ts';
import type {
  CallOptions,
  ClientEventName,
  ClientEvents,
  ConnectOptions,
  FunctionHandler,
  FunctionRef,
  Logger,
  RegisterFunctionOptions,
  RuntimeInfo,
  TriggerConfig,
  TriggerRef,
  TriggerRequest,
  TriggerTypeInfo,
  TriggerTypeProvider,
  TriggerTypeRef,
  WorkerLogger,
} from './types.ts';
import { SDK_VERSION } from './version.ts';
import { workerInfo } from './worker-info.ts';

/**
 * The worker client, whatever the runtime. It keeps every registration in maps and replays them
 * on each open (spec: engine-protocol §2.7), queues calls while disconnected (§2.9), matches
 * results to calls, and serves the engine's invocations through `Inbound`.
 */
export class EngClient {
  readonly url: string;
  private readonly logger: Logger;
  private readonly invocationTimeoutMs: number;
  private readonly connection: Connection;
  private readonly inbound: Inbound;
  private readonly channelHost: ChannelHost;
  private readonly events: ClientEmitter;
  /** Null when tracing is off. */
  private readonly tracer: SdkTracer | null;
  /** Logs that reach the engine's log store, carrying the current span's ids. */
  readonly log: WorkerLogger;

  private currentWorkerId?: string;
  private reattachFrom?: { workerId: string; token: string };
  private failure?: EngError;
  private closed = false;

  private readonly functions = new Map<string, { message: RegisterFunction; handler: FunctionHandler }>();
  private readonly triggers = new Map<string, RegisterTrigger>();
  private readonly triggerTypes = new Map<string, { message: RegisterTriggerType; provider: TriggerTypeProvider }>();
  private readonly calls: Calls;
  private readonly readyWaiters = new Set<{ resolve(): void; reject(error: EngError): void }>();
  private readonly channelEnds = new Set<ChannelEnd>();

  constructor(
    url: string,
    private readonly options: ConnectOptions,
    private readonly runtime: RuntimeInfo,
    createSocket: SocketFactory,
  ) {
    this.url = url;
    this.logger = guardLogger(options.logger ?? consoleLogger);
    this.events = new ClientEmitter(this.logger);
    this.invocationTimeoutMs = options.invocationTimeoutMs ?? 30_000;
    this.channelHost = {
      busUrl: url,
      createSocket,
      headers: options.headers,
      logger: this.logger,
      track: (end) => this.channelEnds.add(end),
      untrack: (end) => this.channelEnds.delete(end),
    };
    this.connection = new Connection(
      {
        url,
        createSocket,
        headers: options.headers,
        policy: reconnectPolicy(options.reconnect),
        heartbeatMs: options.heartbeatMs ?? 20_000,
        logger: this.logger,
      },
      {
        onOpen: () => this.onOpen(),
        onMessage: (message) => this.onMessage(message),
        onClosed: (code, reason, wasOpen) => this.onClosed(code, reason, wasOpen),
        onReconnecting: (attempt, delayMs) => this.events.emit('reconnecting', { attempt, delayMs }),
        onFailed: (error) => this.onFailed(error),
      },
    );
    this.calls = new Calls(this.connection, this.logger);
    this.tracer = this.createTracer();
    this.log = this.workerLogger(() => runtime.contextStore.current());
    this.inbound = new Inbound({
      tracer: this.tracer,
      contextStore: runtime.contextStore,
      workerLogger: (ctx) => this.workerLogger(() => ctx),
      logger: this.logger,
      channelHost: this.channelHost,
      sendText: (text) => this.connection.sendText(text),
      connection: () => this.connection.generation,
      functionEntry: (id) => this.functions.get(id),
      triggerType: (id) => this.triggerTypes.get(id)?.provider,
      ownsTrigger: (id) => this.triggers.has(id),
      emitError: (error) => this.events.emit('error', error),
    });
    this.connection.start();
  }

  private createTracer(): SdkTracer | null {
    const option = this.options.tracing;
    const env = (name: string) => this.runtime.env(name)?.toLowerCase();
    const disabledByEnv = env('ENG_TRACING') === 'false' || env('OTEL_ENABLED') === 'false' || env('OTEL_SDK_DISABLED') === 'true';
    const enabled = option === undefined ? this.runtime.runtime === 'node' && !disabledByEnv : option !== false;
    if (!enabled) return null;
    const settings = typeof option === 'object' ? option : {};
    return new SdkTracer({
      serviceName: settings.serviceName ?? this.runtime.env('OTEL_SERVICE_NAME') ?? this.options.name ?? this.runtime.defaultName(),
      serviceVersion: SDK_VERSION,
      payloads: settings.payloads ?? env('ENG_DISABLE_TRACE_PAYLOADS') !== '1',
      send: (frame) => this.connection.sendBinary(frame),
    });
  }

  private workerLogger(context: () => import('./tracing.ts').ActiveContext | undefined): WorkerLogger {
    const emit = (level: LogLevel) => (message: string, data?: unknown) => {
      if (this.tracer) this.tracer.log(level, message, data, context());
      else
        (level === 'error'
          ? this.logger.error
          : level === 'warn'
            ? this.logger.warn
            : level === 'info'
              ? this.logger.info
              : this.logger.debug)(message, ...(data === undefined ? [] : [data]));
    };
    return { trace: emit('trace'), debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') };
  }

  /** The id the engine gave this connection; undefined while disconnected. */
  get workerId(): string | undefined {
    return this.currentWorkerId;
  }

  /** Resolves once the engine has sent `workerregistered` on the current connection. */
  ready(options: { timeoutMs?: number } = {}): Promise<void> {
    if (this.closed) return Promise.reject(new EngError(ErrorCode.NotConnected, 'client is closed'));
    if (this.failure) return Promise.reject(this.failure);
    if (this.currentWorkerId) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const waiter = {
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject: (error: EngError) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      if (options.timeoutMs !== undefined) {
        timer = setTimeout(
          () => {
            this.readyWaiters.delete(waiter);
            reject(
              new EngError(
                ErrorCode.NotConnected,
                `no connection to the engine at ${printableUrl(this.url)} within ${options.timeoutMs}ms`,
              ),
            );
          },
          Math.min(options.timeoutMs, MAX_TIMER_MS),
        );
      }
      this.readyWaiters.add(waiter);
    });
  }

  // ── registrations (kept in maps, replayed on every open: spec §2.7) ──────

  registerFunction<TInput = unknown, TOutput = unknown>(
    id: string,
    handler: FunctionHandler<TInput, TOutput>,
    options: RegisterFunctionOptions = {},
  ): FunctionRef {
    if (typeof id !== 'string' || id.trim() === '') throw new EngError(ErrorCode.InvalidArguments, 'function id is required');
    if (typeof handler !== 'function') throw new EngError(ErrorCode.InvalidArguments, `handler of ${id} is not a function`);
    // spec §2.3.3: the engine lets the last writer win; locally a second registration is a bug
    if (this.functions.has(id)) throw new EngError(ErrorCode.InvalidArguments, `function id already registered: ${id}`);
    const message: RegisterFunction = {
      type: 'registerfunction',
      id,
      description: options.description,
      request_format: options.request_format,
      response_format: options.response_format,
      metadata: options.metadata,
    };
    this.functions.set(id, { message, handler: handler as unknown as FunctionHandler });
    this.sendIfOpen(message);
    return {
      id,
      unregister: () => {
        if (this.functions.get(id)?.message !== message) return;
        this.functions.delete(id);
        this.sendIfOpen({ type: 'unregisterfunction', id });
      },
    };
  }

  registerTrigger(trigger: TriggerConfig): TriggerRef {
    if (!trigger?.type || !trigger.function_id)
      throw new EngError(ErrorCode.InvalidArguments, 'registerTrigger needs type and function_id');
    const id = randomId();
    const message: RegisterTrigger = {
      type: 'registertrigger',
      id,
      trigger_type: trigger.type,
      function_id: trigger.function_id,
      // the iii engine cannot decode a binding without config (serde), so send an empty one
      config: trigger.config ?? {},
      metadata: trigger.metadata,
    };
    this.triggers.set(id, message);
    this.sendIfOpen(message);
    return {
      id,
      unregister: () => {
        if (!this.triggers.delete(id)) return;
        this.sendIfOpen({ type: 'unregistertrigger', id, trigger_type: trigger.type });
      },
    };
  }

  registerTriggerType(info: TriggerTypeInfo, provider: TriggerTypeProvider): TriggerTypeRef {
    if (!info?.id) throw new EngError(ErrorCode.InvalidArguments, 'trigger type id is required');
    if (typeof provider?.registerTrigger !== 'function' || typeof provider.unregisterTrigger !== 'function') {
      throw new EngError(ErrorCode.InvalidArguments, `provider of ${info.id} needs registerTrigger and unregisterTrigger`);
    }
    if (this.triggerTypes.has(info.id)) throw new EngError(ErrorCode.InvalidArguments, `trigger type already registered: ${info.id}`);
    const message: RegisterTriggerType = { type: 'registertriggertype', id: info.id, description: info.description };
    const entry = { message, provider };
    this.triggerTypes.set(info.id, entry);
    this.sendIfOpen(message);
    return {
      id: info.id,
      unregister: () => {
        if (this.triggerTypes.get(info.id) !== entry) return;
        this.sendIfOpen({ type: 'unregistertriggertype', id: info.id });
        // the engine parks the type's bindings; our provider stops serving them now
        void this.inbound.dropBindings(info.id);
        this.triggerTypes.delete(info.id);
      },
    };
  }

  // ── calls ────────────────────────────────────────────────────────────────

  /**
   * Invoke a function. Without `action` it resolves the function's result; with `Void()` it
   * resolves undefined once sent or queued; with `Enqueue({queue})` it resolves `{messageReceiptId}`.
   */
  trigger<T = unknown>(request: TriggerRequest): Promise<T> {
    if (this.closed) return Promise.reject(new EngError(ErrorCode.NotConnected, 'client is closed'));
    if (this.failure) return Promise.reject(this.failure);
    if (!request?.function_id) return Promise.reject(new EngError(ErrorCode.InvalidArguments, 'function_id is required'));
    const { function_id, action } = request;
    // spec §2.2: the iii engine drops an invoke without `data`, so an absent payload is sent as null
    const frame: Record<string, unknown> = { type: 'invokefunction', function_id, data: request.payload ?? null };
    if (action) frame.action = action;
    if (request.metadata !== undefined) frame.metadata = request.metadata;
    // spec §2.6: calls carry the current span's context, so one trace crosses workers
    const ambient = this.runtime.contextStore.current();
    const traceparent = request.traceparent ?? ambient?.traceparent ?? (this.tracer ? newTraceparent() : undefined);
    if (traceparent) frame.traceparent = traceparent;
    const baggage = request.baggage ?? ambient?.baggage;
    if (baggage) frame.baggage = baggage;
    // spec §2.3.9: fire-and-forget calls carry no invocation id and get no reply
    const invocationId = action?.type === 'void' ? undefined : randomId();
    if (invocationId) frame.invocation_id = invocationId;
    let text: string;
    try {
      text = JSON.stringify(frame);
    } catch (err) {
      return Promise.reject(
        new EngError(ErrorCode.SerializationError, `payload of ${function_id} is not serialisable: ${(err as Error).message}`),
      );
    }
    if (!invocationId) {
      this.calls.fire(text);
      return Promise.resolve(undefined as T);
    }
    return this.calls.request<T>(invocationId, text, request.timeoutMs ?? this.invocationTimeoutMs, request.signal);
  }

  /**
   * A span of the worker's own (a chat turn, a generation step) under `parent` (a traceparent), else
   * under the current span, else in a new trace. Its calls carry it once run through `withSpan`.
   * With tracing off it is a span that records nothing.
   */
  startSpan(name: string, options: { parent?: string; kind?: 'internal' | 'server' | 'client' } = {}): WorkerSpan {
    const parent = options.parent ?? this.runtime.contextStore.current()?.traceparent;
    return this.tracer ? this.tracer.startSpan(name, parent, options.kind) : noopSpan(parent);
  }

  /** Run `fn` with `span` as the current context: calls and logs made inside belong to it. */
  withSpan<T>(span: WorkerSpan, fn: () => T): T {
    const ctx = parseTraceparent(span.traceparent);
    if (!ctx) return fn();
    const baggage = this.runtime.contextStore.current()?.baggage;
    return this.runtime.contextStore.run({ traceparent: span.traceparent, baggage, traceId: ctx.traceId, spanId: ctx.spanId }, fn);
  }

  /** Shorthand for a synchronous `trigger`. */
  call<T = unknown>(functionId: string, payload?: unknown, options: CallOptions = {}): Promise<T> {
    return this.trigger<T>({ function_id: functionId, payload, ...options });
  }

  /** spec §2.11: a channel from `engine::channels::create`, with both ends ready to use or hand on. */
  async createChannel(bufferSize?: number): Promise<Channel> {
    const refs = await this.call<{ writer: ChannelRef; reader: ChannelRef }>(
      EngineFunction.ChannelsCreate,
      bufferSize === undefined ? {} : { buffer_size: bufferSize },
    );
    return {
      writer: new ChannelWriter(this.channelHost, refs.writer),
      reader: new ChannelReader(this.channelHost, refs.reader),
      writerRef: refs.writer,
      readerRef: refs.reader,
    };
  }

  // ── events ───────────────────────────────────────────────────────────────

  on<E extends ClientEventName>(event: E, listener: (payload: ClientEvents[E]) => void): () => void {
    return this.events.on(event, listener);
  }

  /** Stop reconnecting, fail pending calls with `not_connected`, close the socket and channel ends. */
  close(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      this.tracer?.stop(); // ship what is buffered while the socket is still open
      this.abandon(new EngError(ErrorCode.NotConnected, 'client closed'));
      for (const end of [...this.channelEnds]) end.abort('client closed');
      void this.inbound.dropBindings();
    }
    return this.connection.close();
  }

  // ── connection events ────────────────────────────────────────────────────

  private onOpen(): void {
    // spec §2.7 on-open order: reattach, trigger types, functions, triggers, queued calls, worker info
    if (this.reattachFrom) {
      this.sendNow({ type: 'reattach', previous_worker_id: this.reattachFrom.workerId, reattach_token: this.reattachFrom.token });
    }
    for (const { message } of this.triggerTypes.values()) this.sendNow(message);
    for (const { message } of this.functions.values()) this.sendNow(message);
    for (const message of this.triggers.values()) this.sendNow(message);
    this.calls.flush();
    if (this.options.registerWorker !== false) {
      void this.trigger({
        function_id: EngineFunction.WorkersRegister,
        payload: workerInfo(this.options, this.runtime),
        action: { type: 'void' },
      });
    }
  }

  private onMessage(message: Message): void {
    switch (message.type) {
      case 'workerregistered':
        this.currentWorkerId = message.worker_id;
        // spec §2.3.2: only a 0.22.1-style engine sends a token; without one there is nothing to reattach
        this.reattachFrom = message.reattach_token ? { workerId: message.worker_id, token: message.reattach_token } : undefined;
        for (const waiter of this.readyWaiters) waiter.resolve();
        this.readyWaiters.clear();
        this.events.emit('connected', { workerId: message.worker_id });
        return;
      case 'invocationresult':
        this.calls.settle(message);
        return;
      case 'invokefunction':
        void this.inbound.execute(message);
        return;
      case 'cancelinvocation':
        this.inbound.cancel(message.invocation_id, message.reason ?? undefined);
        return;
      case 'registertrigger':
        void this.inbound.provideTrigger(message);
        return;
      case 'unregistertrigger':
        void this.inbound.withdrawTrigger(message);
        return;
      case 'triggerregistrationresult':
        this.inbound.triggerResult(message);
        return;
      case 'ping':
        this.sendNow({ type: 'pong' });
        return;
      case 'pong':
        return;
      case 'registrationrejected': {
        // the engine kept its own function or type (an id reserved to built-ins): say so loudly, once per open
        const subject = message.function_id ? `function ${message.function_id}` : `trigger type ${message.trigger_type ?? '(unknown)'}`;
        const error = new EngError(message.code, `the engine refused to register ${subject}: ${message.message ?? message.code}`, {
          details: { function_id: message.function_id ?? undefined, trigger_type: message.trigger_type ?? undefined },
        });
        this.logger.error(error.message);
        this.events.emit('error', error);
        return;
      }
      case 'error':
        // spec §2.1: the engine's session step refused us; the close that follows reconnects
        this.logger.warn(`the engine refused the connection: ${message.error.code}: ${message.error.message}`);
        this.events.emit('error', EngError.from(message.error));
        return;
      default:
        this.logger.debug(`ignored "${message.type}" frame from the engine`);
    }
  }

  private onClosed(code: number, reason: string, wasOpen: boolean): void {
    this.currentWorkerId = undefined;
    this.calls.connectionClosed();
    // spec §2.8: the engine unbinds everything this connection provided; our providers follow suit
    // and get every binding again once the type is replayed on the next open
    void this.inbound.dropBindings();
    if (wasOpen) this.events.emit('disconnected', { code, reason });
  }

  /** Reconnecting gave up: everything waiting on the connection fails now. */
  private onFailed(error: EngError): void {
    this.failure = error;
    this.abandon(error);
    this.events.emit('error', error);
  }

  private abandon(error: EngError): void {
    for (const waiter of this.readyWaiters) waiter.reject(error);
    this.readyWaiters.clear();
    this.calls.abandon(error);
  }

  // ── sending ──────────────────────────────────────────────────────────────

  /** Registrations: sent when open, otherwise left to the replay (spec §2.7, not queued). */
  private sendIfOpen(message: object): void {
    if (this.connection.isOpen) this.sendNow(message);
  }

  private sendNow(message: object): boolean {
    return this.connection.sendText(JSON.stringify(message));
  }
}
