import type { ErrorBody, SpanStatus, StoredSpan } from '@eng/protocol';
import type { ObservabilityConfig, SamplingRule } from './config.ts';
import { formatTraceparent, newSpanId, newTraceId, parseTraceparent, type SpanContext } from './trace-context.ts';

// spec: engine-protocol §2.6 (engine spans, W3C context), §8.1 (engine spans in the store).
// This is the API other modules use through `services.get('observability.tracer')`; see README.md.

export type SpanKind = 'server' | 'internal' | 'client' | 'producer' | 'consumer';
export type AttributeValue = string | number | boolean | null | undefined;

export interface StartSpanOptions {
  /** Incoming W3C traceparent: the new span becomes its child. Absent → a new trace. */
  traceparent?: string | null;
  kind?: SpanKind;
  /**
   * A function is called once, when the span is first stored: hot paths defer building them. It
   * may give the stored form itself, a fresh array of `[key, value]` string pairs (no key twice).
   */
  attributes?: Record<string, AttributeValue> | (() => Record<string, AttributeValue> | [string, string][]);
  /** The attributes already as the stored pairs (a fresh array, no key twice): taken as they are. */
  pairs?: [string, string][];
  /** Defaults to the module's `service_name` (`eng`). */
  serviceName?: string;
}

export interface EndSpanOptions {
  status?: SpanStatus;
  /** Marks the span Error and records an `exception` event (code, message, stack). */
  error?: ErrorBody | Error | string;
  attributes?: Record<string, AttributeValue>;
}

/** A span the engine opened. Cheap when not sampled: nothing is stored, only the context travels. */
export interface EngineSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly sampled: boolean;
  /** The context to hand to whatever runs inside this span (invoke options, outgoing headers). */
  readonly traceparent: string;
  setAttribute(key: string, value: AttributeValue): void;
  addEvent(name: string, attributes?: Record<string, AttributeValue>): void;
  /** End once; later calls are ignored. */
  end(options?: EndSpanOptions): void;
}

export interface EngineTracer {
  startSpan(name: string, options?: StartSpanOptions): EngineSpan;
  endSpan(span: EngineSpan, options?: EndSpanOptions): void;
}

function nowNs(): number {
  return Math.round((performance.timeOrigin + performance.now()) * 1e6);
}

/** Attribute values as the stored pairs: null and undefined skipped, a key given again replaced. */
function toPairs(attributes: Record<string, AttributeValue> | undefined, into: [string, string][] = []): [string, string][] {
  if (!attributes) return into;
  const fresh = into.length === 0;
  for (const key in attributes) {
    const value = attributes[key];
    if (value === undefined || value === null) continue;
    if (fresh) into.push([key, typeof value === 'string' ? value : String(value)]);
    else setPair(into, key, value);
  }
  return into;
}

/** Set `key` in stored pairs: replaced where it is, else appended. */
export function setPair(pairs: [string, string][], key: string, value: Exclude<AttributeValue, null | undefined>): void {
  const text = typeof value === 'string' ? value : String(value);
  for (let i = 0; i < pairs.length; i++) {
    if ((pairs[i] as [string, string])[0] === key) {
      pairs[i] = [key, text];
      return;
    }
  }
  pairs.push([key, text]);
}

function errorEvent(error: ErrorBody | Error | string, at: number): { description: string; event: StoredSpan['events'][number] } {
  let code = 'Error';
  let message: string;
  let stack: string | undefined;
  if (typeof error === 'string') message = error;
  else if (error instanceof Error) {
    code = error.name;
    message = error.message;
    stack = error.stack;
  } else {
    code = error.code;
    message = error.message;
    stack = error.stacktrace;
  }
  const attributes: [string, string][] = [
    ['exception.type', code],
    ['exception.message', message],
  ];
  if (stack) attributes.push(['exception.stacktrace', stack]);
  return { description: `${code}: ${message}`, event: { name: 'exception', timestamp_unix_nano: at, attributes } };
}

/** Sampling rules' glob patterns, compiled once (a rule is matched against every root span). */
const globs = new Map<string, RegExp>();

function globMatch(pattern: string, text: string): boolean {
  if (!pattern.includes('*')) return pattern === text;
  let regex = globs.get(pattern);
  if (regex) return regex.test(text);
  regex = new RegExp(
    `^${pattern
      .split('*')
      .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );
  if (globs.size < 1024) globs.set(pattern, regex);
  return regex.test(text);
}

/**
 * Whether a trace falls inside `rate`, decided on the trace id (its last 8 hex digits, random in
 * W3C ids) as OpenTelemetry's TraceIdRatioBased sampler does: every span of a trace sampled at
 * the same rate gets the same answer, so `parent_based: false` does not tear traces apart.
 */
function traceIdInRate(traceId: string, rate: number): boolean {
  if (rate >= 1) return true;
  if (rate <= 0) return false;
  const value = Number.parseInt(traceId.slice(-8), 16);
  return Number.isFinite(value) ? value / 0x1_0000_0000 < rate : Math.random() < rate;
}

/** Root sampling: the first matching rule's rate, else the default; then the traces/s limit. */
export class Sampler {
  private readonly rules: SamplingRule[];
  private readonly ratio: number;
  readonly parentBased: boolean;
  private readonly maxPerSecond?: number;
  private windowStart = 0;
  private windowCount = 0;

  constructor(config: ObservabilityConfig) {
    this.rules = config.sampling?.rules ?? [];
    this.ratio = config.sampling?.default ?? config.sampling_ratio;
    this.parentBased = config.sampling?.parent_based ?? true;
    this.maxPerSecond = config.sampling?.rate_limit?.max_traces_per_second;
  }

  sampleRoot(name: string, service: string, traceId: string): boolean {
    let rate = this.ratio;
    for (const r of this.rules) {
      if ((!r.operation || globMatch(r.operation, name)) && (!r.service || globMatch(r.service, service))) {
        rate = r.rate;
        break;
      }
    }
    if (!traceIdInRate(traceId, rate)) return false;
    if (this.maxPerSecond !== undefined) {
      const second = Math.floor(Date.now() / 1000);
      if (second !== this.windowStart) {
        this.windowStart = second;
        this.windowCount = 0;
      }
      if (this.windowCount >= this.maxPerSecond) return false;
      this.windowCount++;
    }
    return true;
  }

  describe(): { default_ratio: number; rules: SamplingRule[]; parent_based: boolean } {
    return { default_ratio: this.ratio, rules: this.rules, parent_based: this.parentBased };
  }
}

// engine spans rarely have events and never links: they share these (frozen) until one is added
const NO_EVENTS: readonly StoredSpan['events'][number][] = Object.freeze([]);
const NO_LINKS: readonly StoredSpan['links'][number][] = Object.freeze([]);

/** A span still open this long gets its Pending snapshot stored; faster ones are stored once, ended. */
export const PENDING_AFTER_MS = 50;

/**
 * Opens engine spans and writes them to `record` (the collector) when they end. A span that is
 * still open after PENDING_AFTER_MS is also stored as a Pending snapshot (`pending: true`, end 0,
 * §4.3 [0.22.1] live spans), replaced when it ends. Most calls end well before that, so they cost
 * one store write instead of two.
 */
export class Tracer implements EngineTracer {
  readonly sampler: Sampler;
  /** Spans opened since the last sweep and still open then, in start order; ended ones leave at the next sweep. */
  private open: RecordingSpan[] = [];
  private openLimit = 1024;
  private sweeper?: ReturnType<typeof setInterval>;

  constructor(
    private readonly config: ObservabilityConfig,
    private readonly record: (span: StoredSpan) => void,
  ) {
    this.sampler = new Sampler(config);
  }

  /** Store Pending snapshots of spans open longer than PENDING_AFTER_MS; forget the ended ones. */
  private snapshotOpenSpans(): void {
    const cutoffNs = (Date.now() - PENDING_AFTER_MS) * 1e6;
    const kept: RecordingSpan[] = [];
    for (const span of this.open) {
      if (span.ended) continue;
      if (span.startNs <= cutoffNs) span.snapshot();
      else kept.push(span);
    }
    this.open = kept;
    if (kept.length === 0 && this.sweeper) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }

  /** Watched for a Pending snapshot: one array push, no per-span bookkeeping when it ends. */
  private track(span: RecordingSpan): void {
    // many spans opened within one sweep interval: drop the ended ones now (not only at the sweep)
    if (this.open.length >= this.openLimit) {
      this.open = this.open.filter((s) => !s.ended);
      this.openLimit = Math.max(1024, this.open.length * 2);
    }
    this.open.push(span);
    if (!this.sweeper) {
      this.sweeper = setInterval(() => this.snapshotOpenSpans(), PENDING_AFTER_MS / 2);
      this.sweeper.unref();
    }
  }

  stop(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    this.open = [];
  }

  startSpan(name: string, options: StartSpanOptions = {}): EngineSpan {
    const parent = parseTraceparent(options.traceparent);
    const service = options.serviceName ?? this.config.service_name;
    const traceId = parent?.traceId ?? newTraceId();
    let sampled: boolean;
    if (!this.config.enabled) sampled = false;
    // an unsampled parent is always respected (the caller asked for nothing, and the `log`/`trace`
    // trigger deliveries rely on it to avoid feedback loops); `parent_based: false` only lets the
    // rules and the ratio drop spans under a sampled parent
    else if (parent && (this.sampler.parentBased || !parent.sampled)) sampled = parent.sampled;
    else sampled = this.sampler.sampleRoot(name, service, traceId);
    const context: SpanContext = { traceId, spanId: newSpanId(), sampled };
    const traceparent = formatTraceparent(context);
    if (!sampled) return new UnsampledSpan(context.traceId, context.spanId, traceparent);

    const span: StoredSpan = {
      trace_id: context.traceId,
      span_id: context.spanId,
      parent_span_id: parent?.spanId ?? null,
      name,
      kind: options.kind ?? 'internal',
      start_time_unix_nano: nowNs(),
      end_time_unix_nano: 0,
      status: 'unset',
      attributes: options.pairs ?? (typeof options.attributes === 'function' ? [] : toPairs(options.attributes)),
      service_name: service,
      events: NO_EVENTS as StoredSpan['events'],
      links: NO_LINKS as StoredSpan['links'],
      instrumentation_scope_name: 'eng-engine',
      flags: 1,
    };
    const recording = new RecordingSpan(span, traceparent, this.record);
    if (typeof options.attributes === 'function') recording.lazyAttributes = options.attributes;
    if (this.config.live_spans) this.track(recording);
    return recording;
  }

  endSpan(span: EngineSpan, options?: EndSpanOptions): void {
    span.end(options);
  }
}

class UnsampledSpan implements EngineSpan {
  readonly sampled = false;
  constructor(
    readonly traceId: string,
    readonly spanId: string,
    readonly traceparent: string,
  ) {}
  setAttribute(): void {}
  addEvent(): void {}
  end(): void {}
}

class RecordingSpan implements EngineSpan {
  readonly sampled = true;
  ended = false;
  /** Attributes given as a function: merged in before the span's first write (snapshot or end). */
  lazyAttributes?: () => Record<string, AttributeValue> | [string, string][];
  readonly traceId: string;
  readonly spanId: string;
  /**
   * The record being built; dropped once stored, so an ended span kept a little longer (in the
   * tracer's open list until its sweep) holds no attributes, events or record.
   */
  private span: StoredSpan | null;

  constructor(
    span: StoredSpan,
    readonly traceparent: string,
    private readonly record: (span: StoredSpan) => void,
  ) {
    this.span = span;
    this.traceId = span.trace_id;
    this.spanId = span.span_id;
  }

  get startNs(): number {
    return this.span ? this.span.start_time_unix_nano : 0;
  }

  /** Store the in-progress state (called by the tracer for spans that run long enough to be seen). */
  private applyLazyAttributes(span: StoredSpan): void {
    const lazy = this.lazyAttributes;
    if (!lazy) return;
    this.lazyAttributes = undefined;
    // attributes set meanwhile with setAttribute win over the deferred ones
    const given = lazy();
    const pairs = Array.isArray(given) ? given : toPairs(given);
    for (const pair of span.attributes) {
      const index = pairs.findIndex(([k]) => k === pair[0]);
      if (index >= 0) pairs[index] = pair;
      else pairs.push(pair);
    }
    span.attributes = pairs;
  }

  snapshot(): void {
    const span = this.span;
    if (this.ended || !span) return;
    this.applyLazyAttributes(span);
    this.record({ ...span, attributes: [...span.attributes], events: [...span.events], pending: true });
  }

  setAttribute(key: string, value: AttributeValue): void {
    if (this.span && value !== undefined && value !== null) setPair(this.span.attributes, key, value);
  }

  addEvent(name: string, attributes?: Record<string, AttributeValue>): void {
    const span = this.span;
    if (!span) return;
    if (span.events === NO_EVENTS) span.events = [];
    span.events.push({ name, timestamp_unix_nano: nowNs(), attributes: toPairs(attributes) });
  }

  end(options: EndSpanOptions = {}): void {
    const span = this.span;
    if (this.ended || !span) return;
    this.ended = true;
    this.span = null;
    this.applyLazyAttributes(span);
    span.end_time_unix_nano = Math.max(nowNs(), span.start_time_unix_nano);
    toPairs(options.attributes, span.attributes);
    if (options.error !== undefined) {
      const { description, event } = errorEvent(options.error, span.end_time_unix_nano);
      span.status = 'error';
      span.status_description = description;
      span.events = span.events === NO_EVENTS ? [event] : [...span.events, event];
    } else {
      span.status = options.status ?? 'ok';
    }
    this.record(span);
  }
}
