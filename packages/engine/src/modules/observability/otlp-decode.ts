import type { SpanStatus, StoredLog, StoredSpan } from '@eng/protocol';
import { normaliseId } from './trace-context.ts';

// spec: engine-protocol §8.1 — OTLP/JSON as `@opentelemetry/otlp-transformer` 0.57 serializes it
// (camelCase keys, hex ids, nanosecond timestamps as numbers or numeric strings), plus what other
// OTLP/JSON producers send: base64 ids, `{low, high}` longs, enum names for kind and status.

/** What one decoded payload yields: good records and, per dropped record, a reason. */
export interface Decoded<T> {
  items: T[];
  dropped: number;
  reasons: string[];
}

export interface MetricPoint {
  name: string;
  unit?: string;
  value: number;
  timestamp_ms: number;
  attributes: Record<string, unknown>;
  service_name: string;
}

// Timestamps outside [2000-01-01, now + 1 day] are absurd: a clock in another unit, or garbage.
const MIN_NS = 946_684_800_000 * 1e6;
const FUTURE_SLACK_NS = 86_400_000 * 1e6;
const MAX_SPAN_NS = 30 * 86_400_000 * 1e6;

type Obj = Record<string, unknown>;

// Names, keys and short values repeat across spans (service names, function ids, tenants): one
// shared string per distinct text keeps 100k stored spans small and their comparisons cheap.
const pool = new Map<string, string>();
export function intern(text: string): string {
  if (text.length > 64) return text;
  const hit = pool.get(text);
  if (hit !== undefined) return hit;
  if (pool.size >= 50_000) pool.clear();
  pool.set(text, text);
  return text;
}
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** Nanoseconds from a number, a numeric string or a protobuf `{low, high}` long; NaN when none. */
export function toNanos(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && /^\d+$/.test(value)) return Number(value);
  if (isObj(value) && typeof value.low === 'number' && typeof value.high === 'number') {
    return (value.high >>> 0) * 4294967296 + (value.low >>> 0);
  }
  return Number.NaN;
}

function plausibleNanos(ns: number): boolean {
  return Number.isFinite(ns) && ns >= MIN_NS && ns <= Date.now() * 1e6 + FUTURE_SLACK_NS;
}

/** An OTLP AnyValue as plain JSON (kvlists become objects). */
export function anyValue(value: unknown, depth = 0): unknown {
  if (!isObj(value) || depth > 16) return null;
  if ('stringValue' in value) return typeof value.stringValue === 'string' ? value.stringValue : String(value.stringValue ?? '');
  if ('boolValue' in value) return value.boolValue === true || value.boolValue === 'true';
  if ('intValue' in value) {
    const n = typeof value.intValue === 'string' ? Number(value.intValue) : toNanos(value.intValue);
    return Number.isFinite(n) ? n : null;
  }
  if ('doubleValue' in value) {
    const n = Number(value.doubleValue);
    return Number.isFinite(n) ? n : String(value.doubleValue);
  }
  if ('arrayValue' in value) return arr((value.arrayValue as Obj | undefined)?.values).map((v) => anyValue(v, depth + 1));
  if ('kvlistValue' in value) return keyValues((value.kvlistValue as Obj | undefined)?.values, depth + 1);
  if ('bytesValue' in value) return String(value.bytesValue);
  return null;
}

/** `[{key, value: AnyValue}]` as an object. */
export function keyValues(list: unknown, depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of arr(list)) {
    if (isObj(kv) && typeof kv.key === 'string') out[kv.key] = anyValue(kv.value, depth);
  }
  return out;
}

function stringify(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** `[{key, value}]` as §4.3 `[[key, string]]` pairs. */
function attributePairs(list: unknown): [string, string][] {
  const pairs: [string, string][] = [];
  for (const kv of arr(list)) {
    if (isObj(kv) && typeof kv.key === 'string') pairs.push([intern(kv.key), intern(stringify(anyValue(kv.value)))]);
  }
  return pairs;
}

const KIND_NAMES = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'];
function spanKind(value: unknown): string | undefined {
  if (typeof value === 'number') return KIND_NAMES[value];
  if (typeof value === 'string') return value.replace(/^SPAN_KIND_/i, '').toLowerCase();
  return undefined;
}

function spanStatus(value: unknown): { status: SpanStatus; description?: string } {
  if (!isObj(value)) return { status: 'unset' };
  const code = value.code;
  const description = typeof value.message === 'string' && value.message ? value.message : undefined;
  if (code === 2 || code === 'STATUS_CODE_ERROR' || code === 'ERROR') return { status: 'error', description };
  if (code === 1 || code === 'STATUS_CODE_OK' || code === 'OK') return { status: 'ok', description };
  return { status: 'unset', description };
}

function resourceOf(entry: Obj): Record<string, unknown> {
  return isObj(entry.resource) ? keyValues(entry.resource.attributes) : {};
}
function scopeOf(entry: Obj): { name?: string; version?: string } {
  const scope = isObj(entry.scope) ? entry.scope : isObj(entry.instrumentationLibrary) ? entry.instrumentationLibrary : {};
  return {
    name: typeof scope.name === 'string' && scope.name ? intern(scope.name) : undefined,
    version: typeof scope.version === 'string' && scope.version ? intern(scope.version) : undefined,
  };
}

function expectObject(payload: unknown, key: string): Obj {
  if (!isObj(payload)) throw new Error('payload is not a JSON object');
  if (!Array.isArray(payload[key])) throw new Error(`payload has no "${key}" array`);
  return payload;
}

/** ExportTraceServiceRequest → spans. Throws when the payload itself is not one. */
export function decodeTraces(payload: unknown, fallbackService: string): Decoded<StoredSpan> {
  const root = expectObject(payload, 'resourceSpans');
  const out: Decoded<StoredSpan> = { items: [], dropped: 0, reasons: [] };
  const drop = (reason: string) => {
    out.dropped++;
    if (out.reasons.length < 5) out.reasons.push(reason);
  };
  for (const resourceSpans of arr(root.resourceSpans)) {
    if (!isObj(resourceSpans)) continue;
    const resource = resourceOf(resourceSpans);
    const service = intern(typeof resource['service.name'] === 'string' ? resource['service.name'] : fallbackService);
    const scopes = arr(resourceSpans.scopeSpans ?? resourceSpans.instrumentationLibrarySpans);
    for (const scopeSpans of scopes) {
      if (!isObj(scopeSpans)) continue;
      const scope = scopeOf(scopeSpans);
      for (const raw of arr(scopeSpans.spans)) {
        if (!isObj(raw)) {
          drop('span is not an object');
          continue;
        }
        const span = decodeSpan(raw, service, scope);
        if (typeof span === 'string') drop(span);
        else out.items.push(span);
      }
    }
  }
  return out;
}

// Most spans have no events or links: they share one frozen empty array (never mutated).
const NONE = Object.freeze([]) as unknown as never[];
const orNone = <T>(list: T[]): T[] => (list.length === 0 ? NONE : list);

function decodeSpan(raw: Obj, service: string, scope: { name?: string; version?: string }): StoredSpan | string {
  const traceId = normaliseId(raw.traceId, 16);
  const spanId = normaliseId(raw.spanId, 8);
  if (!traceId || !spanId) return `span "${String(raw.name)}" has an invalid traceId or spanId`;
  const parent = raw.parentSpanId === undefined || raw.parentSpanId === '' ? null : normaliseId(raw.parentSpanId, 8);
  const start = toNanos(raw.startTimeUnixNano);
  const end = toNanos(raw.endTimeUnixNano);
  if (!plausibleNanos(start)) return `span ${spanId} has an absurd startTimeUnixNano (${String(raw.startTimeUnixNano)})`;
  if (!plausibleNanos(end) || end < start || end - start > MAX_SPAN_NS) {
    return `span ${spanId} has an absurd endTimeUnixNano (${String(raw.endTimeUnixNano)})`;
  }
  const { status, description } = spanStatus(raw.status);
  const span: StoredSpan = {
    trace_id: traceId,
    span_id: spanId,
    parent_span_id: parent,
    name: intern(typeof raw.name === 'string' ? raw.name : String(raw.name ?? '')),
    kind: spanKind(raw.kind),
    start_time_unix_nano: start,
    end_time_unix_nano: end,
    status,
    attributes: attributePairs(raw.attributes),
    service_name: service,
    events: orNone(
      arr(raw.events)
        .filter(isObj)
        .map((e) => ({
          name: intern(typeof e.name === 'string' ? e.name : ''),
          timestamp_unix_nano: toNanos(e.timeUnixNano) || start,
          attributes: attributePairs(e.attributes),
        })),
    ),
    links: orNone(
      arr(raw.links)
        .filter(isObj)
        .map((l) => ({
          trace_id: normaliseId(l.traceId, 16) ?? '',
          span_id: normaliseId(l.spanId, 8) ?? '',
          trace_state: typeof l.traceState === 'string' && l.traceState ? l.traceState : null,
          attributes: attributePairs(l.attributes),
        })),
    ),
  };
  if (description) span.status_description = description;
  if (scope.name) span.instrumentation_scope_name = scope.name;
  if (scope.version) span.instrumentation_scope_version = scope.version;
  if (typeof raw.flags === 'number') span.flags = raw.flags;
  if (typeof raw.traceState === 'string' && raw.traceState) span.trace_state = raw.traceState;
  return span;
}

const SEVERITY_TEXTS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'FATAL'];
/** OTel severity number → the seed's level names (1–4 TRACE … 17–20 ERROR, 21–24 FATAL). */
export function severityTextOf(number: number): string {
  if (!Number.isFinite(number) || number <= 0) return 'INFO';
  return SEVERITY_TEXTS[Math.min(5, Math.floor((number - 1) / 4))] as string;
}
/** Upper-case and fold spellings (`warning` → WARN) so filters match one name per level. */
export function normaliseSeverityText(text: string): string {
  const upper = text.trim().toUpperCase();
  if (upper === 'WARNING') return 'WARN';
  if (upper === 'ERR') return 'ERROR';
  if (upper === 'CRITICAL') return 'FATAL';
  return upper;
}

/** ExportLogsServiceRequest → log records. */
export function decodeLogs(payload: unknown, fallbackService: string): Decoded<StoredLog> {
  const root = expectObject(payload, 'resourceLogs');
  const out: Decoded<StoredLog> = { items: [], dropped: 0, reasons: [] };
  const nowNs = Date.now() * 1e6;
  for (const resourceLogs of arr(root.resourceLogs)) {
    if (!isObj(resourceLogs)) continue;
    const resource = resourceOf(resourceLogs);
    const resourceService = typeof resource['service.name'] === 'string' ? resource['service.name'] : fallbackService;
    for (const scopeLogs of arr(resourceLogs.scopeLogs ?? resourceLogs.instrumentationLibraryLogs)) {
      if (!isObj(scopeLogs)) continue;
      const scope = scopeOf(scopeLogs);
      for (const raw of arr(scopeLogs.logRecords)) {
        if (!isObj(raw)) {
          out.dropped++;
          continue;
        }
        const observed = toNanos(raw.observedTimeUnixNano);
        let time = toNanos(raw.timeUnixNano);
        // OTel allows an unset time (0): the observed time stands in for it
        if (!time && plausibleNanos(observed)) time = observed;
        if (!plausibleNanos(time)) {
          out.dropped++;
          if (out.reasons.length < 5) out.reasons.push(`log record has an absurd timeUnixNano (${String(raw.timeUnixNano)})`);
          continue;
        }
        const attributes = keyValues(raw.attributes);
        const severityNumber = Number(raw.severityNumber) || 0;
        const text =
          typeof raw.severityText === 'string' && raw.severityText
            ? normaliseSeverityText(raw.severityText)
            : severityTextOf(severityNumber);
        const body = anyValue(raw.body);
        const attrService = attributes['service.name'];
        const log: StoredLog = {
          timestamp_unix_nano: time,
          observed_timestamp_unix_nano: plausibleNanos(observed) ? observed : nowNs,
          severity_number: severityNumber || severityNumberOf(text),
          severity_text: text,
          body: stringify(body),
          attributes,
          // the iii Logger also puts the ids in attributes (§8.1)
          trace_id: normaliseId(raw.traceId, 16) ?? normaliseId(attributes.trace_id, 16),
          span_id: normaliseId(raw.spanId, 8) ?? normaliseId(attributes.span_id, 8),
          resource,
          service_name: typeof attrService === 'string' && attrService ? attrService : resourceService,
        };
        if (scope.name) log.instrumentation_scope_name = scope.name;
        if (scope.version) log.instrumentation_scope_version = scope.version;
        out.items.push(log);
      }
    }
  }
  return out;
}

export function severityNumberOf(text: string): number {
  switch (text) {
    case 'TRACE':
      return 1;
    case 'DEBUG':
      return 5;
    case 'WARN':
      return 13;
    case 'ERROR':
      return 17;
    case 'FATAL':
      return 21;
    default:
      return 9;
  }
}

/** ExportMetricsServiceRequest → one point per gauge/sum data point (histograms keep their sum). */
export function decodeMetrics(payload: unknown, fallbackService: string): Decoded<MetricPoint> {
  const root = expectObject(payload, 'resourceMetrics');
  const out: Decoded<MetricPoint> = { items: [], dropped: 0, reasons: [] };
  for (const resourceMetrics of arr(root.resourceMetrics)) {
    if (!isObj(resourceMetrics)) continue;
    const resource = resourceOf(resourceMetrics);
    const service = typeof resource['service.name'] === 'string' ? resource['service.name'] : fallbackService;
    for (const scopeMetrics of arr(resourceMetrics.scopeMetrics ?? resourceMetrics.instrumentationLibraryMetrics)) {
      if (!isObj(scopeMetrics)) continue;
      for (const metric of arr(scopeMetrics.metrics)) {
        if (!isObj(metric) || typeof metric.name !== 'string') {
          out.dropped++;
          continue;
        }
        const data = (metric.gauge ?? metric.sum ?? metric.histogram) as Obj | undefined;
        for (const point of arr(data?.dataPoints)) {
          if (!isObj(point)) continue;
          const raw = point.asDouble ?? point.asInt ?? point.sum;
          const value = typeof raw === 'string' ? Number(raw) : typeof raw === 'number' ? raw : toNanos(raw);
          const ns = toNanos(point.timeUnixNano);
          if (!Number.isFinite(value) || !plausibleNanos(ns)) {
            out.dropped++;
            continue;
          }
          out.items.push({
            name: metric.name,
            unit: typeof metric.unit === 'string' && metric.unit ? metric.unit : undefined,
            value,
            timestamp_ms: Math.floor(ns / 1e6),
            attributes: keyValues(point.attributes),
            service_name: service,
          });
        }
      }
    }
  }
  return out;
}
