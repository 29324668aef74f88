import type { EngError, TriggerAction as WireTriggerAction } from '@eng/protocol';
import type { ReconnectOptions } from './backoff.ts';
import type { WebSocketConstructor } from './socket.ts';

export type { ReconnectOptions } from './backoff.ts';

/** Where the SDK writes what it has to say. Defaults to the console, silent on debug. */
export interface Logger {
  debug(message: string, ...details: unknown[]): void;
  info(message: string, ...details: unknown[]): void;
  warn(message: string, ...details: unknown[]): void;
  error(message: string, ...details: unknown[]): void;
}

export interface ConnectOptions {
  /** Worker name shown by `engine::workers::list`. Default `ENG_WORKER_NAME`, else `<hostname>:<pid>`. */
  name?: string;
  description?: string;
  /** Call `engine::workers::register` on every open, so the engine lists this worker (spec §4.2). Default true. */
  registerWorker?: boolean;
  reconnect?: ReconnectOptions;
  /** Caller-side deadline of `trigger()` calls (spec §2.4: the engine has none). Default 30000. */
  invocationTimeoutMs?: number;
  /** Heartbeat interval; the socket is dropped and reopened after 3x this without inbound traffic. 0 disables. Default 20000. */
  heartbeatMs?: number;
  /** Upgrade request headers (Node only). */
  headers?: Record<string, string>;
  /** WebSocket implementation to use instead of `ws` (Node) or the global one (browser). */
  WebSocket?: WebSocketConstructor;
  logger?: Logger;
  /**
   * Traces and logs shipped to the engine (spec §2.6, §8.1): an `execute <function_id>` span per
   * handler run, trace context on every call. Default on in Node (off with `ENG_TRACING=false` or
   * `OTEL_ENABLED=false`), off in browsers.
   */
  tracing?: boolean | { serviceName?: string; payloads?: boolean };
}

/** Structured logs that reach the engine's log store, correlated with the current span. */
export interface WorkerLogger {
  trace(message: string, data?: unknown): void;
  debug(message: string, data?: unknown): void;
  info(message: string, data?: unknown): void;
  warn(message: string, data?: unknown): void;
  error(message: string, data?: unknown): void;
}

/** What a function handler learns about the call besides its input. */
export interface InvocationContext {
  /** Absent only for fire-and-forget deliveries from engines that send none. */
  invocationId: string | undefined;
  functionId: string;
  /** The caller's `trigger({metadata})`, or the trigger binding's metadata (spec §2.3.6, §2.3.9). */
  metadata: unknown;
  traceparent?: string;
  baggage?: string;
  /** Worker id of the calling worker; absent for engine-originated calls (HTTP, cron, …). */
  callerWorkerId?: string;
  /** Logs bound to this invocation's span (they carry its trace_id and span_id). */
  log: WorkerLogger;
  /**
   * Aborts when the caller cancels the call (eng's `cancelinvocation`, sent by an @eng/sdk caller's
   * `signal`, eng-mcp for a cancelled tool call or task). The caller has its answer by then; what
   * the handler returns afterwards is not sent. Never aborts on an iii engine, which has no cancel.
   */
  readonly signal: AbortSignal;
}

export type FunctionHandler<TInput = unknown, TOutput = unknown> = (input: TInput, ctx: InvocationContext) => TOutput | Promise<TOutput>;

export interface RegisterFunctionOptions {
  description?: string;
  metadata?: Record<string, unknown>;
  /** JSON schema of the input (spec §3.1). */
  request_format?: unknown;
  /** JSON schema of the output. */
  response_format?: unknown;
}

export interface FunctionRef {
  id: string;
  unregister(): void;
}

export interface TriggerConfig {
  /** Trigger type id: `http`, `cron`, or a worker-provided type. */
  type: string;
  function_id: string;
  config: unknown;
  metadata?: Record<string, unknown>;
}

export interface TriggerRef {
  id: string;
  unregister(): void;
}

export interface TriggerTypeInfo {
  id: string;
  description?: string;
}

/** A binding the engine hands to the provider of its trigger type (spec §5.11). */
export interface TriggerBinding {
  id: string;
  function_id: string;
  config: unknown;
  metadata: Record<string, unknown> | undefined;
}

/** The side that makes a worker-provided trigger type fire (spec §5.11). */
export interface TriggerTypeProvider {
  /** Start firing for this binding. Throw to refuse it (the binder is told why). */
  registerTrigger(trigger: TriggerBinding): void | Promise<void>;
  unregisterTrigger(trigger: TriggerBinding): void | Promise<void>;
}

export interface TriggerTypeRef {
  id: string;
  unregister(): void;
}

export interface TriggerRequest {
  function_id: string;
  payload?: unknown;
  /** Absent: wait for the result. `void`: fire and forget. `enqueue`: resolves `{messageReceiptId}`. */
  action?: WireTriggerAction;
  timeoutMs?: number;
  metadata?: unknown;
  /** W3C trace context to send; default: the current span's, else a new trace (so the caller knows its id). */
  traceparent?: string;
  baggage?: string;
  /**
   * Cancels the call when it aborts: the promise rejects with `invocation_cancelled`, and an eng
   * engine ends the invocation and tells the executing worker (its handler's `ctx.signal`). An iii
   * engine ignores the cancel: the function runs on there and its result is discarded.
   */
  signal?: AbortSignal;
}

export interface CallOptions {
  timeoutMs?: number;
  metadata?: unknown;
  traceparent?: string;
  baggage?: string;
  signal?: AbortSignal;
}

export interface ClientEvents {
  connected: { workerId: string };
  disconnected: { code: number; reason: string };
  reconnecting: { attempt: number; delayMs: number };
  error: EngError;
}
export type ClientEventName = keyof ClientEvents;

/** What differs between runtimes besides the socket: defaults and what the worker reports about itself. */
export interface RuntimeInfo {
  runtime: 'node' | 'browser';
  /** Ambient trace context (AsyncLocalStorage on Node). */
  contextStore: import('./tracing.ts').ContextStore;
  /** `ENG_*` / `OTEL_*` settings where the runtime has an environment. */
  env(name: string): string | undefined;
  defaultUrl(): string;
  defaultName(): string;
  os(): string;
  pid(): number | undefined;
}
