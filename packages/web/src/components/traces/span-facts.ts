import type { StoredSpan } from '@eng/protocol';

/**
 * What the span detail tabs read out of a StoredSpan. Attributes are an ARRAY of [key, value]
 * pairs (engine-protocol §4.3), so every lookup goes through these helpers.
 */

type Attributes = StoredSpan['attributes'];

export function attr(attributes: Attributes, key: string): string | undefined {
  for (const [k, v] of attributes) if (k === key) return v;
  return undefined;
}

export function firstAttr(attributes: Attributes, keys: string[]): string | undefined {
  for (const key of keys) {
    const value = attr(attributes, key);
    if (value !== undefined && value !== '') return value;
  }
  return undefined;
}

/** The function a span ran, from the engine's and OTel's attribute names. */
export function functionIdOf(span: Pick<StoredSpan, 'attributes' | 'name'>): string | undefined {
  const fromAttr = firstAttr(span.attributes, ['function_id', 'faas.invoked_name', 'eng.function.id', 'iii.function.id']);
  if (fromAttr) return fromAttr;
  const match = /^(?:call|execute|invoke)\s+(\S+)$/.exec(span.name);
  return match?.[1];
}

/**
 * Seed 2.6 "Root Span": the function a trace ran, `enqueue: <topic>` for a message, else the name.
 * A cron firing (`cron_trigger`, named by engine-protocol §8.1) names the function it fired.
 */
export function displayName(span: Pick<StoredSpan, 'attributes' | 'name'>): string {
  const topic = attr(span.attributes, 'messaging.destination.name');
  if (topic && /enqueue|publish|send/i.test(span.name)) return `enqueue: ${topic}`;
  if (span.name === 'cron_trigger') {
    const fn = firstAttr(span.attributes, ['function_id', 'eng.trigger.function_id', 'iii.trigger.function_id']);
    if (fn) return `cron_trigger · ${fn}`;
  }
  return span.name;
}

export type SpanStatusLabel = 'OK' | 'Error' | 'Pending';

export function statusOf(span: Pick<StoredSpan, 'status' | 'pending' | 'end_time_unix_nano'>, errorCount = 0): SpanStatusLabel {
  if (span.status === 'error' || errorCount > 0) return 'Error';
  if (span.pending || !span.end_time_unix_nano) return 'Pending';
  return 'OK';
}

/** Attributes grouped by namespace (`http.request.method` → `http`), for the Attributes tab. */
export function groupAttributes(attributes: Attributes): Array<{ namespace: string; entries: Array<[string, string]> }> {
  const groups = new Map<string, Array<[string, string]>>();
  for (const [k, v] of [...attributes].sort((a, b) => a[0].localeCompare(b[0]))) {
    const dot = k.indexOf('.');
    const namespace = dot > 0 ? k.slice(0, dot) : 'general';
    const list = groups.get(namespace) ?? [];
    list.push([k, v]);
    groups.set(namespace, list);
  }
  return [...groups.entries()].map(([namespace, entries]) => ({ namespace, entries }));
}

export interface SpanError {
  type?: string;
  message: string;
  stack?: string;
  timeMs?: number;
  source: 'event' | 'status' | 'attributes';
}

/** Errors tab: `exception` events first, then `exception.*`/`error.*` attributes, then the status text. */
export function errorsOf(span: StoredSpan): SpanError[] {
  const out: SpanError[] = [];
  for (const event of span.events) {
    if (event.name !== 'exception') continue;
    out.push({
      type: attr(event.attributes, 'exception.type'),
      message: attr(event.attributes, 'exception.message') ?? 'exception',
      stack: attr(event.attributes, 'exception.stacktrace'),
      timeMs: event.timestamp_unix_nano / 1e6,
      source: 'event',
    });
  }
  if (out.length === 0) {
    const message = firstAttr(span.attributes, ['exception.message', 'error.message']);
    const type = firstAttr(span.attributes, ['exception.type', 'error.type']);
    if (message || type) {
      out.push({
        type,
        message: message ?? type ?? 'error',
        stack: firstAttr(span.attributes, ['exception.stacktrace', 'error.stack']),
        source: 'attributes',
      });
    }
  }
  if (out.length === 0 && span.status === 'error') {
    out.push({ message: span.status_description || 'the span ended with status error', source: 'status' });
  }
  return out;
}

/** Context tab: `baggage.*` attributes (how OTel SDKs record baggage on spans) and session/tag keys. */
export function baggageOf(span: StoredSpan): Array<[string, string]> {
  return span.attributes
    .filter(([k]) => k.startsWith('baggage.'))
    .map(([k, v]) => [k.slice('baggage.'.length), v] as [string, string])
    .sort((a, b) => a[0].localeCompare(b[0]));
}

export function traceparentOf(span: StoredSpan): string {
  const flags = (span.flags ?? 1) & 0xff;
  return `00-${span.trace_id}-${span.span_id}-${flags.toString(16).padStart(2, '0')}`;
}

/** Node kinds of the trace Flow view (console spec §4 Traces "Flow": trigger / enqueue / function). */
export type SpanRole = 'trigger' | 'enqueue' | 'function' | 'state' | 'span';

export function roleOf(span: StoredSpan): SpanRole {
  const fn = functionIdOf(span);
  if (fn?.startsWith('state::')) return 'state';
  if (span.kind === 'producer' || attr(span.attributes, 'messaging.destination.name') || /enqueue/i.test(span.name)) return 'enqueue';
  if (span.kind === 'server' || attr(span.attributes, 'http.request.method') || /^cron|trigger/i.test(span.name)) return 'trigger';
  if (fn) return 'function';
  return 'span';
}

/** A stable colour per service, readable on the light and the dark surface. */
export function serviceHue(service: string): number {
  let h = 2166136261;
  for (let i = 0; i < service.length; i++) {
    h ^= service.charCodeAt(i);
    h = Math.imul(h, 16777619);
  }
  return Math.abs(h) % 360;
}

export function serviceColor(service: string, alpha = 1): string {
  return `hsl(${serviceHue(service)} 62% 52% / ${alpha})`;
}

export function shortId(id: string, n = 8): string {
  return id.length > n ? id.slice(0, n) : id;
}
