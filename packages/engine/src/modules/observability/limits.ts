import { getHeapStatistics } from 'node:v8';
import type { StoredLog, StoredSpan } from '@eng/protocol';
import type { MetricPoint } from './otlp-decode.ts';
import type { Scrub } from './scrub.ts';

// Issue 12 item 5: what one span or log record may hold, and what it is reckoned to cost. Every
// record passes through here on its way into the stores (collector.ts), whatever sent it; the
// stores evict oldest first once the estimates add up to their byte budgets.

export interface TelemetryLimits {
  /** Longest attribute value (and key, name, description) kept, in UTF-8 bytes. */
  attributeValueBytes: number;
  /** Attributes kept per span, per event, per link and per log record. */
  attributes: number;
  events: number;
  links: number;
  /** One record's whole content (attributes, events, links, body); what comes after is dropped. */
  recordBytes: number;
  logBodyBytes: number;
}

export const DEFAULT_LIMITS: TelemetryLimits = {
  attributeValueBytes: 16 * 1024,
  attributes: 128,
  events: 128,
  links: 128,
  recordBytes: 1024 * 1024,
  logBodyBytes: 64 * 1024,
};

const MiB = 1024 * 1024;
/**
 * Store budgets when the config sets none: 256 MiB of spans and 128 MiB of logs, but never more
 * than a quarter (spans) and an eighth (logs) of the heap limit, so a small `--max-old-space-size`
 * still leaves room for the engine itself.
 */
export function defaultStoreBudgets(): { spans: number; logs: number } {
  const heap = getHeapStatistics().heap_size_limit;
  return { spans: Math.min(256 * MiB, Math.floor(heap / 4)), logs: Math.min(128 * MiB, Math.floor(heap / 8)) };
}

// Estimated bytes beyond the strings' own length, measured with 100k stored records (objects,
// index entries, ids): ~0.4 KB per typical span with three attributes in the compact span store
// (span-store.ts: ~340 B before its postings are built, ~380 B after), ~0.9 KB per log record.
const SPAN_BASE = 320;
const PAIR_BASE = 32;
const EVENT_BASE = 96;
const LINK_BASE = 160;
const LOG_BASE = 700;
const VALUE_BASE = 16;
const MAX_DEPTH = 64;
/** A metric point is a name, a number and a few labels: 4 KiB each keeps `metrics_max_count` points small. */
export const METRIC_POINT_BYTES = 4096;

/** Cost of a string: its length, or its UTF-8 size when long (two-byte strings take 2 bytes a char). */
function size(text: string): number {
  return text.length <= 1024 ? text.length : Buffer.byteLength(text);
}

/**
 * `text` cut to at most `maxBytes` UTF-8 bytes, ending with `…[truncated N bytes]`; the same string
 * when it fits. The kept part is a fresh copy: a slice would keep the whole original alive.
 */
export function truncate(text: string, maxBytes: number): string {
  if (text.length * 3 <= maxBytes) return text;
  const total = Buffer.byteLength(text);
  if (total <= maxBytes) return text;
  // already cut (a record restored from disk): keep it and its count rather than cut the marker
  if (
    total <= maxBytes + MARKER_SLACK &&
    text.endsWith(' bytes]') &&
    text.lastIndexOf('…[truncated ', text.length - 8) >= text.length - MARKER_SLACK
  ) {
    return text;
  }
  const head = Buffer.from(text.slice(0, Math.max(0, maxBytes)));
  let cut = Math.min(Math.max(0, maxBytes), head.length);
  // back off to a character boundary (never end inside a UTF-8 sequence)
  while (cut > 0 && cut < head.length && ((head[cut] as number) & 0xc0) === 0x80) cut--;
  return `${head.toString('utf8', 0, cut)}…[truncated ${total - cut} bytes]`;
}

type Pairs = [string, string][];

/** Room for the `…[truncated N bytes]` marker past a value's limit. */
const MARKER_SLACK = 40;
/** Attributes the limiter itself adds; a record clamped before (restored from disk) keeps them past the count. */
const NOTE_PREFIX = 'eng.dropped_';

/**
 * Applies the limits to one record at a time; `bytes` is then the record's estimated cost. One
 * instance per collector (it keeps the running budget of the record being clamped).
 */
export class RecordLimiter {
  /** Estimated cost of the last record clamped. */
  bytes = 0;
  /** Known credential values cut out of every string first (scrub.ts); null: none known. */
  scrub: Scrub | null = null;
  private remaining = 0;
  private droppedAttributes = 0;
  /** Resources already clamped (the records of one OTLP request share theirs), by the object received. */
  private readonly resources = new WeakMap<object, Record<string, unknown>>();

  constructor(readonly limits: TelemetryLimits) {}

  /** The span within the limits: the same object when nothing was over, else a copy. */
  span(span: StoredSpan): StoredSpan {
    const limits = this.limits;
    this.remaining = limits.recordBytes;
    this.droppedAttributes = 0;
    this.bytes = SPAN_BASE + span.span_id.length + span.trace_id.length;
    const name = this.text(span.name, limits.attributeValueBytes);
    const service = this.text(span.service_name, limits.attributeValueBytes);
    const description = span.status_description === undefined ? undefined : this.text(span.status_description, limits.attributeValueBytes);
    const attributes = this.pairs(span.attributes);
    let events = span.events;
    let droppedEvents = 0;
    for (let i = 0; i < events.length; i++) {
      const event = events[i] as StoredSpan['events'][number];
      if (i >= limits.events || this.remaining <= 0) {
        droppedEvents = events.length - i;
        events = events.slice(0, i);
        break;
      }
      this.bytes += EVENT_BASE;
      this.remaining -= EVENT_BASE;
      const eventName = this.text(event.name, limits.attributeValueBytes);
      const eventAttributes = this.pairs(event.attributes);
      if (eventName !== event.name || eventAttributes !== event.attributes) {
        if (events === span.events) events = events.slice();
        events[i] = { ...event, name: eventName, attributes: eventAttributes };
      }
    }
    let links = span.links;
    let droppedLinks = 0;
    for (let i = 0; i < links.length; i++) {
      const link = links[i] as StoredSpan['links'][number];
      if (i >= limits.links || this.remaining <= 0) {
        droppedLinks = links.length - i;
        links = links.slice(0, i);
        break;
      }
      this.bytes += LINK_BASE;
      this.remaining -= LINK_BASE;
      const state = link.trace_state === null ? null : this.text(link.trace_state, limits.attributeValueBytes);
      const linkAttributes = this.pairs(link.attributes);
      if (state !== link.trace_state || linkAttributes !== link.attributes) {
        if (links === span.links) links = links.slice();
        links[i] = { ...link, trace_state: state, attributes: linkAttributes };
      }
    }
    const traceState = span.trace_state === undefined ? undefined : this.text(span.trace_state, limits.attributeValueBytes);
    const scope = span.instrumentation_scope_name === undefined ? undefined : this.text(span.instrumentation_scope_name, 256);
    const changed =
      name !== span.name ||
      service !== span.service_name ||
      description !== span.status_description ||
      attributes !== span.attributes ||
      events !== span.events ||
      links !== span.links ||
      traceState !== span.trace_state ||
      scope !== span.instrumentation_scope_name ||
      this.droppedAttributes > 0;
    if (!changed) return span;
    const out: StoredSpan = { ...span, name, service_name: service, attributes, events, links };
    if (description !== undefined) out.status_description = description;
    if (traceState !== undefined) out.trace_state = traceState;
    if (scope !== undefined) out.instrumentation_scope_name = scope;
    // say what was left out, as OTel's dropped_*_count fields would
    const notes: Pairs = [];
    if (this.droppedAttributes > 0) notes.push(['eng.dropped_attributes_count', String(this.droppedAttributes)]);
    if (droppedEvents > 0) notes.push(['eng.dropped_events_count', String(droppedEvents)]);
    if (droppedLinks > 0) notes.push(['eng.dropped_links_count', String(droppedLinks)]);
    if (notes.length) out.attributes = (attributes === span.attributes ? attributes.slice() : attributes).concat(notes);
    return out;
  }

  /** The log record within the limits: the same object when nothing was over, else a copy. */
  log(log: StoredLog): StoredLog {
    const limits = this.limits;
    this.remaining = limits.recordBytes;
    this.droppedAttributes = 0;
    this.bytes = LOG_BASE;
    const body = this.text(log.body, Math.min(limits.logBodyBytes, this.remaining));
    const service = this.text(log.service_name, limits.attributeValueBytes);
    const severity = this.text(log.severity_text, 64);
    const attributes = this.object(log.attributes, limits.attributes, 0);
    // the records of one OTLP request share their resource: clamp and count it once
    let resource = log.resource;
    if (typeof resource === 'object' && resource !== null) {
      const seen = this.resources.get(resource);
      if (seen) resource = seen;
      else {
        const remaining = this.remaining;
        const dropped = this.droppedAttributes;
        this.remaining = limits.recordBytes;
        resource = this.object(log.resource, limits.attributes, 0);
        this.remaining = remaining;
        this.droppedAttributes = dropped;
        this.resources.set(log.resource, resource);
      }
    }
    if (
      body === log.body &&
      service === log.service_name &&
      severity === log.severity_text &&
      attributes === log.attributes &&
      resource === log.resource
    ) {
      return log;
    }
    const out: StoredLog = { ...log, body, service_name: service, severity_text: severity, attributes, resource };
    // attributes were dropped only when they were copied: the note goes on the copy
    if (this.droppedAttributes > 0) attributes['eng.dropped_attributes_count'] = this.droppedAttributes;
    return out;
  }

  /** A metric point within METRIC_POINT_BYTES (name, unit, service and attributes). */
  metric(point: MetricPoint): MetricPoint {
    this.remaining = METRIC_POINT_BYTES;
    this.droppedAttributes = 0;
    this.bytes = VALUE_BASE;
    const name = this.text(point.name, METRIC_POINT_BYTES);
    const unit = point.unit === undefined ? undefined : this.text(point.unit, 256);
    const service = this.text(point.service_name, 1024);
    const attributes = this.object(point.attributes, this.limits.attributes, 0);
    if (name === point.name && unit === point.unit && service === point.service_name && attributes === point.attributes) return point;
    if (this.droppedAttributes > 0) attributes['eng.dropped_attributes_count'] = this.droppedAttributes;
    return { ...point, name, unit, service_name: service, attributes };
  }

  /** A string within `maxBytes` and the record's remaining budget, counted (scrubbed before it is cut: no partial secret survives). */
  private text(value: string, maxBytes: number): string {
    const kept = truncate(this.scrub === null ? value : this.scrub(value), Math.min(maxBytes, Math.max(0, this.remaining)));
    const cost = size(kept);
    this.bytes += cost;
    this.remaining -= cost;
    return kept;
  }

  private pairs(list: Pairs): Pairs {
    let out = list;
    for (let i = 0; i < list.length; i++) {
      if (i >= this.limits.attributes || this.remaining <= 0) {
        if (list.slice(i).every(([key]) => key.startsWith(NOTE_PREFIX))) return out;
        this.droppedAttributes += list.length - i;
        return out.slice(0, i);
      }
      const pair = list[i] as [string, string];
      this.bytes += PAIR_BASE;
      this.remaining -= PAIR_BASE;
      const key = this.text(pair[0], this.limits.attributeValueBytes);
      const value = this.text(pair[1], this.limits.attributeValueBytes);
      if (key !== pair[0] || value !== pair[1]) {
        if (out === list) out = list.slice();
        out[i] = [key, value];
      }
    }
    return out;
  }

  /** A JSON value (log attributes, resource) within the limits: the same reference when nothing was over. */
  private value(value: unknown, depth: number): unknown {
    if (typeof value === 'string') return this.text(value, this.limits.attributeValueBytes);
    if (value === null || typeof value !== 'object') {
      this.bytes += VALUE_BASE;
      this.remaining -= VALUE_BASE;
      return value;
    }
    if (depth >= MAX_DEPTH) return this.text('[truncated: nested too deep]', 64);
    if (Array.isArray(value)) {
      let out = value;
      for (let i = 0; i < value.length; i++) {
        if (this.remaining <= 0) {
          out = out.slice(0, i);
          out.push(`…[truncated ${value.length - i} items]`);
          return out;
        }
        this.bytes += VALUE_BASE;
        this.remaining -= VALUE_BASE;
        const item = this.value(value[i], depth + 1);
        if (item !== value[i]) {
          if (out === value) out = value.slice();
          out[i] = item;
        }
      }
      return out;
    }
    return this.object(value as Record<string, unknown>, Number.POSITIVE_INFINITY, depth + 1);
  }

  /** An object's entries, at most `maxKeys` (top level: the attribute count limit), within the budget. */
  private object(record: Record<string, unknown>, maxKeys: number, depth: number): Record<string, unknown> {
    let out: Record<string, unknown> | null = null;
    let index = 0;
    const keys = Object.keys(record);
    for (const key of keys) {
      if (index >= maxKeys || this.remaining <= 0) {
        const rest = keys.slice(index);
        if (depth === 0 && rest.every((k) => k.startsWith(NOTE_PREFIX))) {
          if (out) for (const k of rest) out[k] = record[k];
          return out ?? record;
        }
        out ??= copyFirst(record, keys, index);
        if (depth === 0) this.droppedAttributes += keys.length - index;
        else out['…'] = `[truncated ${keys.length - index} keys]`;
        return out;
      }
      this.bytes += PAIR_BASE;
      this.remaining -= PAIR_BASE;
      const shortKey = this.text(key, this.limits.attributeValueBytes);
      const item = this.value(record[key], depth);
      if (out === null && (shortKey !== key || item !== record[key])) out = copyFirst(record, keys, index);
      if (out !== null) out[shortKey] = item;
      index++;
    }
    return out ?? record;
  }
}

function copyFirst(record: Record<string, unknown>, keys: string[], count: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let i = 0; i < count; i++) out[keys[i] as string] = record[keys[i] as string];
  return out;
}
