import type { StoredSpan } from '@eng/protocol';
import { type IndexEntry, TimeIndex } from './time-index.ts';

// Lower-cased names repeat (service names, function ids): cache them rather than allocate per span.
const lowered = new Map<string, string>();
export function lowerCase(text: string): string {
  let value = lowered.get(text);
  if (value === undefined) {
    if (lowered.size > 50_000) lowered.clear();
    value = text.toLowerCase();
    lowered.set(text, value);
  }
  return value;
}

/** A stored span with its index bookkeeping. */
export interface SpanRec {
  span: StoredSpan;
  trace: TraceRec;
  /** Position in the eviction ring (and in `sizes`). */
  slot: number;
  allEntry: IndexEntry<SpanRec>;
  /** Set while the span is a root: no parent, or its parent is not in the store (§4.3). */
  rootEntry: IndexEntry<SpanRec> | null;
  internal: boolean;
  /** Lower-cased service and span name (shared strings), for substring filters. */
  serviceLc: string;
  nameLc: string;
}

/** Everything stored for one trace id. */
export interface TraceRec {
  traceId: string;
  spans: Map<string, SpanRec>;
  /** parent span id → children present, so roots update in O(1) when a parent arrives or leaves; made at the first child. */
  childrenOf: Map<string, SpanRec[]> | null;
  errorCount: number;
  pendingCount: number;
}

/** §4.3: internal spans are engine built-ins (`*.function.kind=internal` or `function_id` `engine::*`). */
export function isInternalSpan(span: StoredSpan): boolean {
  for (const [key, value] of span.attributes) {
    if ((key === 'eng.function.kind' || key === 'iii.function.kind') && value === 'internal') return true;
    if (key === 'function_id' && value.startsWith('engine::')) return true;
  }
  return false;
}

/**
 * Traces holding spans with one indexed value, with the number of such spans per trace. Most
 * values (ids, urls) belong to one trace only, so one trace is held without a Map: that is most of
 * the index's allocation per stored span.
 */
export class TraceSet {
  private one: TraceRec | null = null;
  private oneCount = 0;
  private many: Map<TraceRec, number> | null = null;

  get size(): number {
    return this.many ? this.many.size : this.one ? 1 : 0;
  }
  has(trace: TraceRec): boolean {
    return this.many ? this.many.has(trace) : this.one === trace;
  }
  keys(): IterableIterator<TraceRec> {
    if (this.many) return this.many.keys();
    return (this.one ? [this.one] : []).values();
  }
  add(trace: TraceRec): void {
    if (this.many) this.many.set(trace, (this.many.get(trace) ?? 0) + 1);
    else if (this.one === null) {
      this.one = trace;
      this.oneCount = 1;
    } else if (this.one === trace) this.oneCount++;
    else {
      this.many = new Map([
        [this.one, this.oneCount],
        [trace, 1],
      ]);
      this.one = null;
    }
  }
  /** Count one span less; true when no trace is left. */
  remove(trace: TraceRec): boolean {
    if (this.many) {
      const n = (this.many.get(trace) ?? 0) - 1;
      if (n > 0) this.many.set(trace, n);
      else this.many.delete(trace);
      return this.many.size === 0;
    }
    if (this.one === trace && --this.oneCount <= 0) this.one = null;
    return this.one === null;
  }
}

/** Attribute values longer than this are not indexed (a filter on one scans instead). */
export const MAX_INDEXED_VALUE = 128;

/** Trace sets by one string (a lower-cased service or span name). */
class TraceIndex {
  readonly entries = new Map<string, TraceSet>();
  add(key: string, trace: TraceRec): void {
    let set = this.entries.get(key);
    if (!set) {
      set = new TraceSet();
      this.entries.set(key, set);
    }
    set.add(trace);
  }
  remove(key: string, trace: TraceRec): void {
    const set = this.entries.get(key);
    if (set?.remove(trace)) this.entries.delete(key);
  }
  clear(): void {
    this.entries.clear();
  }
}

/** Trace sets by attribute key, then value (nested: no key+value string is built per span). */
class AttributeIndex {
  private readonly keys = new Map<string, Map<string, TraceSet>>();
  get(key: string, value: string): TraceSet | undefined {
    return this.keys.get(key)?.get(value);
  }
  add(key: string, value: string, trace: TraceRec): void {
    let values = this.keys.get(key);
    if (!values) {
      values = new Map();
      this.keys.set(key, values);
    }
    let set = values.get(value);
    if (!set) {
      set = new TraceSet();
      values.set(value, set);
    }
    set.add(trace);
  }
  remove(key: string, value: string, trace: TraceRec): void {
    const values = this.keys.get(key);
    const set = values?.get(value);
    if (!values || !set?.remove(trace)) return;
    values.delete(value);
    if (values.size === 0) this.keys.delete(key);
  }
  clear(): void {
    this.keys.clear();
  }
}

/**
 * Bounded in-memory span store (`memory_max_spans`, `memory_max_bytes`). Spans live in a ring in
 * arrival order; when it is full, or the spans' estimated bytes would pass the budget, the oldest
 * spans are evicted whole, with their index entries. Indexes: by trace id, by
 * start time over all spans and over root spans (maintained incrementally, so a trace listing
 * never derives roots by scanning), and trace sets by lower-cased service name, by lower-cased
 * span name and by attribute pair, so filters start from the matching traces.
 */
export class SpanStore {
  private ring: Array<SpanRec | undefined>;
  /** Estimated bytes of the span in each ring slot (limits.ts): a typed array, not a field per record. */
  private sizes: Uint32Array;
  private head = 0;
  private count = 0;
  private readonly traces = new Map<string, TraceRec>();
  readonly roots = new TimeIndex<SpanRec>();
  readonly all = new TimeIndex<SpanRec>();
  readonly byService = new TraceIndex();
  readonly byName = new TraceIndex();
  readonly byAttribute = new AttributeIndex();
  /** Spans dropped by the ring since start (reported by `engine::health::check`). */
  evicted = 0;
  /** Estimated bytes of the stored spans. */
  bytes = 0;
  /** Internal spans among all spans and among roots, so an unfiltered listing counts without a scan. */
  internalSpans = 0;
  internalRoots = 0;

  constructor(
    readonly capacity: number,
    readonly maxBytes = Number.POSITIVE_INFINITY,
  ) {
    this.ring = new Array(capacity);
    this.sizes = new Uint32Array(capacity);
  }

  get size(): number {
    return this.count;
  }
  get traceCount(): number {
    return this.traces.size;
  }

  trace(traceId: string): TraceRec | undefined {
    return this.traces.get(traceId);
  }

  get(traceId: string, spanId: string): SpanRec | undefined {
    return this.traces.get(traceId)?.spans.get(spanId);
  }

  /**
   * Add a span, or replace the stored one with the same ids (a pending span that ended). `bytes`:
   * its estimated cost (the collector's limiter computes it). The span is stored even when it alone
   * is over the budget; everything older then goes.
   */
  upsert(span: StoredSpan, estimate = 0): void {
    const bytes = Math.min(estimate, 0xffffffff);
    const existing = this.get(span.trace_id, span.span_id);
    if (existing) {
      this.bytes += bytes - (this.sizes[existing.slot] as number);
      this.sizes[existing.slot] = bytes;
      this.trim(existing);
      const old = existing.span;
      if (old.start_time_unix_nano === span.start_time_unix_nano && old.parent_span_id === span.parent_span_id) {
        this.count_(existing.trace, old, -1);
        this.reindex(existing.trace, old, span);
        span.trace_id = existing.trace.traceId;
        existing.span = span;
        const internal = isInternalSpan(span);
        if (internal !== existing.internal) {
          const delta = internal ? 1 : -1;
          this.internalSpans += delta;
          if (existing.rootEntry) this.internalRoots += delta;
          existing.internal = internal;
        }
        existing.serviceLc = lowerCase(span.service_name);
        existing.nameLc = lowerCase(span.name);
        this.count_(existing.trace, span, 1);
        return;
      }
      // moved in time or re-parented: re-index from scratch, in the same ring slot
      const slot = existing.slot;
      this.unlink(existing);
      const rec = this.link(span, slot);
      this.ring[slot] = rec;
      return;
    }
    if (this.count === this.capacity) this.evictOldest();
    this.bytes += bytes;
    this.trim(null);
    const rec = this.link(span, this.head);
    this.ring[this.head] = rec;
    this.sizes[this.head] = bytes;
    this.head = (this.head + 1) % this.capacity;
    this.count++;
  }

  /** Evict oldest first while the estimated bytes are over the budget, never `keep` (the span being stored). */
  private trim(keep: SpanRec | null): void {
    while (this.bytes > this.maxBytes && this.count > 0) {
      const oldest = this.ring[(this.head - this.count + this.capacity) % this.capacity];
      if (oldest === keep) return;
      this.evictOldest();
    }
  }

  private evictOldest(): void {
    const slot = (this.head - this.count + this.capacity) % this.capacity;
    const oldest = this.ring[slot];
    this.ring[slot] = undefined;
    this.count--;
    this.bytes -= this.sizes[slot] as number;
    this.sizes[slot] = 0;
    if (!oldest) return;
    this.unlink(oldest);
    this.evicted++;
  }

  clear(): void {
    this.ring = new Array(this.capacity);
    this.sizes = new Uint32Array(this.capacity);
    this.head = 0;
    this.count = 0;
    this.bytes = 0;
    this.traces.clear();
    this.roots.clear();
    this.all.clear();
    this.byService.clear();
    this.byName.clear();
    this.byAttribute.clear();
    this.internalSpans = 0;
    this.internalRoots = 0;
  }

  private makeRoot(rec: SpanRec): void {
    if (rec.rootEntry) return;
    rec.rootEntry = this.roots.insert(rec.span.start_time_unix_nano, rec);
    if (rec.internal) this.internalRoots++;
  }
  private unmakeRoot(rec: SpanRec): void {
    if (!rec.rootEntry) return;
    this.roots.remove(rec.rootEntry);
    rec.rootEntry = null;
    if (rec.internal) this.internalRoots--;
  }

  private index(trace: TraceRec, span: StoredSpan, add: boolean): void {
    const op = add ? 'add' : 'remove';
    this.byService[op](lowerCase(span.service_name), trace);
    this.byName[op](lowerCase(span.name), trace);
    for (const [key, value] of span.attributes) {
      if (value.length <= MAX_INDEXED_VALUE) this.byAttribute[op](key, value, trace);
    }
  }

  /**
   * Move a span's index entries from `old` to `next` (a Pending snapshot that ended). Only what
   * changed is touched: the ended span usually keeps the snapshot's attributes and adds a few.
   */
  private reindex(trace: TraceRec, old: StoredSpan, next: StoredSpan): void {
    const oldService = lowerCase(old.service_name);
    const nextService = lowerCase(next.service_name);
    if (oldService !== nextService) {
      this.byService.remove(oldService, trace);
      this.byService.add(nextService, trace);
    }
    const oldName = lowerCase(old.name);
    const nextName = lowerCase(next.name);
    if (oldName !== nextName) {
      this.byName.remove(oldName, trace);
      this.byName.add(nextName, trace);
    }
    const a = old.attributes;
    const b = next.attributes;
    let common = 0;
    while (
      common < a.length &&
      common < b.length &&
      (a[common] as [string, string])[0] === (b[common] as [string, string])[0] &&
      (a[common] as [string, string])[1] === (b[common] as [string, string])[1]
    )
      common++;
    for (let i = common; i < a.length; i++) {
      const [key, value] = a[i] as [string, string];
      if (value.length <= MAX_INDEXED_VALUE) this.byAttribute.remove(key, value, trace);
    }
    for (let i = common; i < b.length; i++) {
      const [key, value] = b[i] as [string, string];
      if (value.length <= MAX_INDEXED_VALUE) this.byAttribute.add(key, value, trace);
    }
  }

  private count_(trace: TraceRec, span: StoredSpan, delta: 1 | -1): void {
    if (span.status === 'error') trace.errorCount += delta;
    if (span.pending) trace.pendingCount += delta;
  }

  private link(span: StoredSpan, slot: number): SpanRec {
    let trace = this.traces.get(span.trace_id);
    if (!trace) {
      trace = { traceId: span.trace_id, spans: new Map(), childrenOf: null, errorCount: 0, pendingCount: 0 };
      this.traces.set(span.trace_id, trace);
    }
    // one trace id string per trace, not one per span
    span.trace_id = trace.traceId;
    this.index(trace, span, true);
    const t = span.start_time_unix_nano;
    const rec: SpanRec = {
      span,
      trace,
      slot,
      allEntry: undefined as never,
      rootEntry: null,
      internal: isInternalSpan(span),
      serviceLc: lowerCase(span.service_name),
      nameLc: lowerCase(span.name),
    };
    rec.allEntry = this.all.insert(t, rec);
    trace.spans.set(span.span_id, rec);
    this.count_(trace, span, 1);
    const parentId = span.parent_span_id;
    if (parentId) {
      if (!trace.childrenOf) trace.childrenOf = new Map();
      const siblings = trace.childrenOf.get(parentId);
      if (siblings) siblings.push(rec);
      else trace.childrenOf.set(parentId, [rec]);
    }
    if (rec.internal) this.internalSpans++;
    if (!parentId || !trace.spans.has(parentId)) this.makeRoot(rec);
    // children that arrived first (OTel exports a child before its parent ends) stop being roots
    const children = trace.childrenOf?.get(span.span_id);
    if (children) for (const child of children) this.unmakeRoot(child);
    return rec;
  }

  private unlink(rec: SpanRec): void {
    const { trace, span } = rec;
    trace.spans.delete(span.span_id);
    this.count_(trace, span, -1);
    this.index(trace, span, false);
    this.all.remove(rec.allEntry);
    if (rec.internal) this.internalSpans--;
    this.unmakeRoot(rec);
    const parentId = span.parent_span_id;
    if (parentId && trace.childrenOf) {
      const siblings = trace.childrenOf.get(parentId);
      if (siblings) {
        const index = siblings.indexOf(rec);
        if (index >= 0) siblings.splice(index, 1);
        if (siblings.length === 0) trace.childrenOf.delete(parentId);
      }
    }
    // its children lose their parent and become (orphan) roots
    const children = trace.childrenOf?.get(span.span_id);
    if (children) for (const child of children) this.makeRoot(child);
    if (trace.spans.size === 0) this.traces.delete(trace.traceId);
  }
}
