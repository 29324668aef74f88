import { randomHex } from './ids.ts';

// spec: engine-protocol §2.6 and §8.1 — the SDK opens an `execute <function_id>` span around every
// handler run, propagates W3C trace context on its calls, and ships finished spans and log
// records to the engine as binary frames (`OTLP` / `LOGS` + OTLP/JSON) on the worker socket.
// No OpenTelemetry dependency: the same code runs in Node and in browsers.

export interface SpanContext {
  traceId: string;
  spanId: string;
  sampled: boolean;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

export function parseTraceparent(value: string | undefined | null): SpanContext | undefined {
  if (!value) return undefined;
  const match = TRACEPARENT.exec(value.trim().toLowerCase());
  if (!match || match[1] === 'ff') return undefined;
  const traceId = match[2] as string;
  const spanId = match[3] as string;
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined;
  return { traceId, spanId, sampled: (Number.parseInt(match[4] as string, 16) & 1) === 1 };
}

export function formatTraceparent(ctx: SpanContext): string {
  return `00-${ctx.traceId}-${ctx.spanId}-${ctx.sampled ? '01' : '00'}`;
}

/** A fresh root context: what a caller outside any span sends, so it knows the trace id. */
export function newTraceparent(): string {
  return formatTraceparent({ traceId: randomHex(16), spanId: randomHex(8), sampled: true });
}

/** The ambient trace context of the code running now (AsyncLocalStorage on Node; none in browsers). */
export interface ContextStore {
  current(): ActiveContext | undefined;
  run<T>(ctx: ActiveContext, fn: () => T): T;
}

export interface ActiveContext {
  traceparent: string;
  baggage?: string;
  spanId: string;
  traceId: string;
}

export const noContextStore: ContextStore = {
  current: () => undefined,
  run: (_ctx, fn) => fn(),
};

type AttrValue = string | number | boolean;

interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; intValue?: string; doubleValue?: number; boolValue?: boolean };
}

function attribute(key: string, value: AttrValue): OtlpAttribute {
  if (typeof value === 'boolean') return { key, value: { boolValue: value } };
  if (typeof value === 'number')
    return Number.isInteger(value) ? { key, value: { intValue: String(value) } } : { key, value: { doubleValue: value } };
  return { key, value: { stringValue: value } };
}

/** Epoch nanoseconds from the monotonic clock, so a span never ends before it starts. */
function nowNanos(): string {
  const perf = globalThis.performance;
  const ms = perf?.timeOrigin ? perf.timeOrigin + perf.now() : Date.now();
  return `${Math.floor(ms * 1000)}000`;
}

export interface SpanEndOptions {
  error?: unknown;
}

/** What a worker holds of a span it opened itself (`client.startSpan`). */
export interface WorkerSpan {
  readonly traceparent: string;
  setAttribute(key: string, value: AttrValue): WorkerSpan;
  addEvent(name: string, attributes?: Record<string, AttrValue>): WorkerSpan;
  end(options?: SpanEndOptions): void;
}

/** The span of a worker with tracing off: it keeps the caller's trace context and records nothing. */
export function noopSpan(parent: string | undefined): WorkerSpan {
  const span: WorkerSpan = {
    traceparent: parent ?? newTraceparent(),
    setAttribute: () => span,
    addEvent: () => span,
    end: () => {},
  };
  return span;
}

export class LiveSpan implements WorkerSpan {
  readonly context: SpanContext;
  private readonly startNanos = nowNanos();
  private readonly attributes: OtlpAttribute[] = [];
  private readonly events: Array<{ name: string; timeUnixNano: string; attributes: OtlpAttribute[] }> = [];
  private ended = false;

  constructor(
    private readonly tracer: SdkTracer,
    readonly name: string,
    readonly parentSpanId: string | undefined,
    context: SpanContext,
    private readonly kind: number,
  ) {
    this.context = context;
  }

  get traceparent(): string {
    return formatTraceparent(this.context);
  }

  setAttribute(key: string, value: AttrValue): this {
    this.attributes.push(attribute(key, value));
    return this;
  }

  addEvent(name: string, attributes: Record<string, AttrValue> = {}): this {
    this.events.push({ name, timeUnixNano: nowNanos(), attributes: Object.entries(attributes).map(([k, v]) => attribute(k, v)) });
    return this;
  }

  /** End the span: status ok, or error with an `exception` event when `error` is given. */
  end(options: SpanEndOptions = {}): void {
    if (this.ended) return;
    this.ended = true;
    let status: { code: number; message?: string } = { code: 1 };
    if (options.error !== undefined) {
      const { type, message, stack } = describeError(options.error);
      this.addEvent('exception', {
        'exception.type': type,
        'exception.message': message,
        ...(stack ? { 'exception.stacktrace': stack } : {}),
      });
      status = { code: 2, message };
    }
    if (!this.context.sampled) return;
    this.tracer.record({
      traceId: this.context.traceId,
      spanId: this.context.spanId,
      ...(this.parentSpanId ? { parentSpanId: this.parentSpanId } : {}),
      name: this.name,
      kind: this.kind,
      startTimeUnixNano: this.startNanos,
      endTimeUnixNano: nowNanos(),
      attributes: this.attributes,
      events: this.events,
      status,
    });
  }
}

function describeError(error: unknown): { type: string; message: string; stack?: string } {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return { type: typeof code === 'string' ? code : error.name, message: error.message, stack: error.stack };
  }
  if (error && typeof error === 'object' && typeof (error as { message?: unknown }).message === 'string') {
    const e = error as { code?: string; message: string; stacktrace?: string };
    return { type: e.code ?? 'Error', message: e.message, stack: e.stacktrace };
  }
  return { type: 'Error', message: String(error) };
}

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';
const SEVERITY: Record<LogLevel, number> = { trace: 1, debug: 5, info: 9, warn: 13, error: 17 };

export interface TracerOptions {
  serviceName: string;
  serviceVersion: string;
  /** Sends one binary frame on the worker socket; false when it is not open. */
  send(frame: Uint8Array): boolean;
  /** Record handler input/output as span events (truncated). */
  payloads: boolean;
  flushIntervalMs?: number;
}

const MAX_BUFFERED = 2048;
const encoder = new TextEncoder();

/** Collects finished spans and log records and ships them in batches. */
export class SdkTracer {
  private spans: unknown[] = [];
  private logs: unknown[] = [];
  private timer?: ReturnType<typeof setTimeout>;
  /** Spans and log records dropped because the buffer was full (the engine unreachable for long). */
  dropped = 0;

  constructor(private readonly options: TracerOptions) {}

  get payloads(): boolean {
    return this.options.payloads;
  }

  /** Start a span under `parent` (a traceparent), or a new trace when there is none. */
  startSpan(name: string, parent: string | undefined, kind: 'internal' | 'server' | 'client' = 'internal'): LiveSpan {
    const parentCtx = parseTraceparent(parent);
    const context: SpanContext = {
      traceId: parentCtx?.traceId ?? randomHex(16),
      spanId: randomHex(8),
      sampled: parentCtx?.sampled ?? true,
    };
    const kindNumber = kind === 'server' ? 2 : kind === 'client' ? 3 : 1;
    return new LiveSpan(this, name, parentCtx?.spanId, context, kindNumber);
  }

  record(span: unknown): void {
    if (this.spans.length >= MAX_BUFFERED) {
      this.dropped++;
      return;
    }
    this.spans.push(span);
    this.schedule();
  }

  log(level: LogLevel, message: string, data: unknown, ctx: ActiveContext | undefined): void {
    if (this.logs.length >= MAX_BUFFERED) {
      this.dropped++;
      return;
    }
    const attributes: OtlpAttribute[] = [];
    if (data !== undefined) {
      let text: string;
      try {
        text = JSON.stringify(data) ?? 'null';
      } catch {
        text = String(data);
      }
      attributes.push(attribute('log.data', text));
    }
    const now = nowNanos();
    this.logs.push({
      timeUnixNano: now,
      observedTimeUnixNano: now,
      severityNumber: SEVERITY[level],
      severityText: level.toUpperCase(),
      body: { stringValue: message },
      attributes,
      ...(ctx ? { traceId: ctx.traceId, spanId: ctx.spanId } : {}),
    });
    this.schedule();
  }

  /** Ship everything buffered now. Frames that cannot be sent (socket down) are kept for later. */
  flush(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const resource = {
      attributes: [attribute('service.name', this.options.serviceName), attribute('service.version', this.options.serviceVersion)],
    };
    const scope = { name: '@eng/sdk', version: this.options.serviceVersion };
    if (this.spans.length) {
      const body = { resourceSpans: [{ resource, scopeSpans: [{ scope, spans: this.spans }] }] };
      if (this.send('OTLP', body)) this.spans = [];
    }
    if (this.logs.length) {
      const body = { resourceLogs: [{ resource, scopeLogs: [{ scope, logRecords: this.logs }] }] };
      if (this.send('LOGS', body)) this.logs = [];
    }
  }

  stop(): void {
    this.flush();
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private send(prefix: string, body: unknown): boolean {
    const json = encoder.encode(JSON.stringify(body));
    const frame = new Uint8Array(4 + json.length);
    frame.set(encoder.encode(prefix), 0);
    frame.set(json, 4);
    return this.options.send(frame);
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush();
      if (this.spans.length || this.logs.length) this.schedule(); // not sent yet: try again later
    }, this.options.flushIntervalMs ?? 100);
    // never keep a process alive just to ship telemetry
    (this.timer as { unref?: () => void }).unref?.();
  }
}

const SECRET_VALUE = /("[^"]*(?:pass(?:word)?|secret|token|api[_-]?key|authorization|cookie)[^"]*"\s*:\s*)"(?:[^"\\]|\\.)*"/gi;

/**
 * A payload as a short JSON string for span events, string values under secret-looking keys
 * redacted. One plain `JSON.stringify` and one regex pass: a replacer function was a visible
 * share of a worker's CPU per call.
 */
export function payloadPreview(value: unknown, limit = 2048): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? 'undefined';
  } catch {
    text = '[unserialisable]';
  }
  if (text.length > limit * 4) text = text.slice(0, limit * 4); // bound the regex work on huge payloads
  text = text.replace(SECRET_VALUE, '$1"[redacted]"');
  return text.length > limit ? `${text.slice(0, limit)}…` : text;
}
