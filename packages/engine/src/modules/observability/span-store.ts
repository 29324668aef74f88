import type { StoredSpan } from '@eng/protocol';
import { SlotTimeIndex } from './time-index.ts';

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

type Status = StoredSpan['status'];
type SpanEvent = StoredSpan['events'][number];
type SpanLink = StoredSpan['links'][number];

// SpanRec.bits: the status, flags and the record's place in the indexes, in one small integer
const STATUS_NAMES: readonly Status[] = ['unset', 'ok', 'error'];
const STATUS_MASK = 3;
const PENDING = 4;
const INTERNAL = 8;
const ROOT = 16;
const HAS_FLAGS = 32;
const FLAGS_SHIFT = 8;
const MAX_PACKED_FLAGS = 0xffff;

function statusBits(status: Status): number {
  return status === 'ok' ? 1 : status === 'error' ? 2 : 0;
}

/** The rare parts of a span, kept off the record while absent (most spans have none of them). */
interface SpanExtra {
  events?: SpanEvent[];
  links?: SpanLink[];
  status_description?: string;
  instrumentation_scope_version?: string;
  trace_state?: string;
  /** Trace flags that do not fit the packed bits. */
  flags?: number;
}

/** The rare fields of a span, or null when it has none. */
function extraOf(span: StoredSpan): SpanExtra | null {
  if (
    span.events.length === 0 &&
    span.links.length === 0 &&
    span.status_description === undefined &&
    span.instrumentation_scope_version === undefined &&
    span.trace_state === undefined
  ) {
    return null;
  }
  const extra: SpanExtra = {};
  if (span.events.length > 0) extra.events = span.events;
  if (span.links.length > 0) extra.links = span.links;
  if (span.status_description !== undefined) extra.status_description = span.status_description;
  if (span.instrumentation_scope_version !== undefined) extra.instrumentation_scope_version = span.instrumentation_scope_version;
  if (span.trace_state !== undefined) extra.trace_state = span.trace_state;
  return extra;
}

/**
 * §4.3: internal spans are engine built-ins (`*.function.kind=internal` or `function_id` `engine::*`),
 * and requests to iii's console backend's `_console/*` routes (issue 26 item 4: its polling).
 */
export function isInternalSpan(span: StoredSpan): boolean {
  for (const [key, value] of span.attributes) if (isInternalAttribute(key, value)) return true;
  return false;
}

function isInternalAttribute(key: string, value: string): boolean {
  if ((key === 'eng.function.kind' || key === 'iii.function.kind') && value === 'internal') return true;
  if (key === 'function_id' && value.startsWith('engine::')) return true;
  return key === 'http.route' && CONSOLE_ROUTE.test(value);
}

const CONSOLE_ROUTE = /^\/*_console(\/|$)/;

function isInternalFlat(attrs: readonly string[]): boolean {
  for (let i = 0; i < attrs.length; i += 2) if (isInternalAttribute(attrs[i] as string, attrs[i + 1] as string)) return true;
  return false;
}

/** Attribute pairs as one flat array `[k0, v0, k1, v1, …]` of the exact length (a pair array each costs ~80 bytes). */
function flatten(pairs: ReadonlyArray<[string, string]>): string[] {
  const flat = new Array<string>(pairs.length * 2);
  for (let i = 0; i < pairs.length; i++) {
    const pair = pairs[i] as [string, string];
    flat[2 * i] = pair[0];
    flat[2 * i + 1] = pair[1];
  }
  return flat;
}

/**
 * A stored span. Spans are kept compact (100k of them sit in memory by default): attributes as one
 * flat string array, start and end times in the store's typed arrays (by ring slot), status and
 * flags packed in `bits`, the rare fields in `extra`. `toSpan()` gives the wire record back.
 */
export class SpanRec {
  constructor(
    readonly trace: TraceRec,
    /** Position in the eviction ring (and in the store's per-slot arrays). */
    public slot: number,
    readonly spanId: string,
    public parentId: string | null,
    public name: string,
    public service: string,
    public kind: string | undefined,
    public scope: string | undefined,
    public attrs: string[],
    public extra: SpanExtra | null,
    public bits: number,
    /** Lower-cased service and span name (shared strings), for substring filters. */
    public nameLc: string,
    public serviceLc: string,
  ) {}

  get start(): number {
    return this.trace.store.startNs[this.slot] as number;
  }
  get end(): number {
    return this.trace.store.endNs[this.slot] as number;
  }
  get status(): Status {
    return STATUS_NAMES[this.bits & STATUS_MASK] as Status;
  }
  get pending(): boolean {
    return (this.bits & PENDING) !== 0;
  }
  get internal(): boolean {
    return (this.bits & INTERNAL) !== 0;
  }
  /** Set while the span is a root: no parent, or its parent is not in the store (§4.3). */
  get isRoot(): boolean {
    return (this.bits & ROOT) !== 0;
  }

  hasPair(key: string, value: string): boolean {
    const attrs = this.attrs;
    for (let i = 0; i < attrs.length; i += 2) if (attrs[i] === key && attrs[i + 1] === value) return true;
    return false;
  }

  /** The attribute pairs as the wire record has them. */
  attributes(): [string, string][] {
    const attrs = this.attrs;
    const pairs = new Array<[string, string]>(attrs.length / 2);
    for (let i = 0; i < pairs.length; i++) pairs[i] = [attrs[2 * i] as string, attrs[2 * i + 1] as string];
    return pairs;
  }

  /** The stored span as the wire record (a fresh object). */
  toSpan(): StoredSpan {
    const extra = this.extra;
    const span: StoredSpan = {
      trace_id: this.trace.traceId,
      span_id: this.spanId,
      parent_span_id: this.parentId,
      name: this.name,
      kind: this.kind,
      start_time_unix_nano: this.start,
      end_time_unix_nano: this.end,
      status: this.status,
      attributes: this.attributes(),
      service_name: this.service,
      events: extra?.events ? extra.events : [],
      links: extra?.links ? extra.links : [],
    };
    if (this.kind === undefined) delete span.kind;
    if (extra?.status_description !== undefined) span.status_description = extra.status_description;
    if (this.scope !== undefined) span.instrumentation_scope_name = this.scope;
    if (extra?.instrumentation_scope_version !== undefined) span.instrumentation_scope_version = extra.instrumentation_scope_version;
    if (this.bits & HAS_FLAGS) span.flags = this.bits >>> FLAGS_SHIFT;
    else if (extra?.flags !== undefined) span.flags = extra.flags;
    if (extra?.trace_state !== undefined) span.trace_state = extra.trace_state;
    if (this.bits & PENDING) span.pending = true;
    return span;
  }
}

/** Above this many spans a trace keeps maps by span id and by parent id; below, a scan is cheaper than a Map. */
const BIG_TRACE = 32;

/** Everything stored for one trace id. */
export class TraceRec {
  /** The only member while there is one (most engine traces: one HTTP request, one call). */
  private one: SpanRec | null = null;
  /** Members in arrival order, from the second one on. */
  private many: SpanRec[] | null = null;
  private byId: Map<string, SpanRec> | null = null;
  /** parent span id → children present (big traces only). */
  private childrenOf: Map<string, SpanRec[]> | null = null;
  errorCount = 0;
  pendingCount = 0;

  constructor(
    readonly store: SpanStore,
    readonly traceId: string,
  ) {}

  get size(): number {
    return this.many ? this.many.length : this.one ? 1 : 0;
  }

  /** Members in arrival order (a fresh array for a one-span trace: for queries, not hot paths). */
  get spans(): readonly SpanRec[] {
    return this.many ?? (this.one ? [this.one] : []);
  }

  find(spanId: string): SpanRec | undefined {
    if (this.byId) return this.byId.get(spanId);
    if (this.many) {
      for (const rec of this.many) if (rec.spanId === spanId) return rec;
      return undefined;
    }
    return this.one?.spanId === spanId ? this.one : undefined;
  }

  /** Children of `spanId` present in the trace. */
  children(spanId: string): readonly SpanRec[] {
    if (this.childrenOf) return this.childrenOf.get(spanId) ?? NO_SPANS;
    if (!this.many) return this.one?.parentId === spanId ? [this.one] : NO_SPANS;
    let out: SpanRec[] | undefined;
    for (const rec of this.many) {
      if (rec.parentId !== spanId) continue;
      if (out) out.push(rec);
      else out = [rec];
    }
    return out ?? NO_SPANS;
  }

  add(rec: SpanRec): void {
    if (!this.many) {
      if (!this.one) {
        this.one = rec;
        return;
      }
      this.many = [this.one, rec];
      this.one = null;
      return;
    }
    const many = this.many;
    many.push(rec);
    if (this.byId) {
      this.byId.set(rec.spanId, rec);
      this.addChild(rec);
    } else if (many.length > BIG_TRACE) {
      this.byId = new Map();
      this.childrenOf = new Map();
      for (const member of many) {
        this.byId.set(member.spanId, member);
        this.addChild(member);
      }
    }
  }

  private addChild(rec: SpanRec): void {
    if (!rec.parentId || !this.childrenOf) return;
    const siblings = this.childrenOf.get(rec.parentId);
    if (siblings) siblings.push(rec);
    else this.childrenOf.set(rec.parentId, [rec]);
  }

  remove(rec: SpanRec): void {
    if (!this.many) {
      if (this.one === rec) this.one = null;
      return;
    }
    const index = this.many.indexOf(rec);
    if (index >= 0) this.many.splice(index, 1);
    if (!this.byId) return;
    this.byId.delete(rec.spanId);
    if (rec.parentId && this.childrenOf) {
      const siblings = this.childrenOf.get(rec.parentId);
      if (siblings) {
        const at = siblings.indexOf(rec);
        if (at >= 0) siblings.splice(at, 1);
        if (siblings.length === 0) this.childrenOf.delete(rec.parentId);
      }
    }
  }
}

const NO_SPANS: readonly SpanRec[] = Object.freeze([]) as readonly SpanRec[];

/** Attribute values longer than this are not indexed (a filter on one scans instead). */
export const MAX_INDEXED_VALUE = 128;

/** The spans holding one indexed value, as entry codes (slot and generation), oldest first. */
class PostingList {
  codes: number[];
  start = 0;
  constructor(first: number, second: number) {
    this.codes = [first, second];
  }
  get length(): number {
    return this.codes.length - this.start;
  }
}
/** One span: the code itself (most values — ids, paths — belong to one span only); more: a list. */
type Posting = number | PostingList;

/**
 * Postings by one string (a lower-cased service or span name, or an attribute value). Entries are
 * only ever appended: an evicted span's entries die with its slot generation and are dropped later
 * (from the front of a list, which is where eviction takes them, or by the incremental sweep), so
 * storing a span costs a few appends and evicting one costs nothing here.
 */
class ValueIndex {
  readonly entries = new Map<string, Posting>();
  private sweeper: Iterator<string> | null = null;
  private adds = 0;

  constructor(private readonly store: SpanStore) {}

  add(value: string, code: number): void {
    const entries = this.entries;
    const posting = entries.get(value);
    if (posting === undefined) entries.set(value, code);
    else if (typeof posting === 'number') {
      if (this.store.resolve(posting) === undefined) entries.set(value, code);
      else if (posting !== code) entries.set(value, new PostingList(posting, code));
    } else {
      const codes = posting.codes;
      if (codes[codes.length - 1] !== code) {
        codes.push(code);
        this.trimFront(posting);
      }
    }
    // one value looked at per value added keeps the values of evicted spans from piling up
    if ((++this.adds & 7) === 0) this.sweep(8);
  }

  /** Drop dead entries off the front of a list (eviction is oldest first). */
  private trimFront(posting: PostingList): void {
    const codes = posting.codes;
    let start = posting.start;
    while (start < codes.length && this.store.resolve(codes[start] as number) === undefined) start++;
    posting.start = start;
    // the dropped front is given back once it is a quarter of what is left
    if (start > 32 && start * 4 > codes.length - start) {
      codes.copyWithin(0, start);
      codes.length -= start;
      posting.start = 0;
    }
  }

  /** Visit up to `steps` values, dropping the ones whose spans are all gone. */
  sweep(steps: number): void {
    for (let i = 0; i < steps; i++) {
      if (!this.sweeper) this.sweeper = this.entries.keys();
      const next = this.sweeper.next();
      if (next.done) {
        this.sweeper = null;
        return;
      }
      const value = next.value;
      const posting = this.entries.get(value) as Posting;
      if (typeof posting === 'number') {
        if (this.store.resolve(posting) === undefined) this.entries.delete(value);
        continue;
      }
      this.trimFront(posting);
      if (posting.length === 0) this.entries.delete(value);
    }
  }

  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
    this.sweeper = null;
  }
}

/** Traces found through an index: candidates from postings, membership checked on the trace itself. */
export interface TraceLookup {
  /** An upper bound of the traces (the postings' length). */
  readonly size: number;
  has(trace: TraceRec): boolean;
  keys(): IterableIterator<TraceRec>;
}

class PostingLookup implements TraceLookup {
  private traces: Set<TraceRec> | null = null;
  constructor(
    private readonly store: SpanStore,
    private readonly postings: Posting[],
    /** Whether a span matches (checked again: a replaced span keeps entries of values it lost). */
    private readonly test: (rec: SpanRec) => boolean,
  ) {}
  get size(): number {
    if (this.traces) return this.traces.size;
    let n = 0;
    for (const p of this.postings) n += typeof p === 'number' ? 1 : p.length;
    return n;
  }
  has(trace: TraceRec): boolean {
    return this.resolved().has(trace);
  }
  keys(): IterableIterator<TraceRec> {
    return this.resolved().values();
  }
  /** The matching traces, found once per query from the postings. */
  private resolved(): Set<TraceRec> {
    if (this.traces) return this.traces;
    const traces = new Set<TraceRec>();
    const add = (code: number) => {
      const rec = this.store.resolve(code);
      if (rec && this.test(rec)) traces.add(rec.trace);
    };
    for (const p of this.postings) {
      if (typeof p === 'number') add(p);
      else for (let i = p.start; i < p.codes.length; i++) add(p.codes[i] as number);
    }
    this.traces = traces;
    return traces;
  }
}

/**
 * Bounded in-memory span store (`memory_max_spans`, `memory_max_bytes`). Spans live in a ring in
 * arrival order; when it is full, or the spans' estimated bytes would pass the budget, the oldest
 * spans are evicted whole. Indexes: by trace id; by start time over all spans and over root spans
 * (kept incrementally, so a trace listing never derives roots by scanning); postings by
 * lower-cased service name, by lower-cased span name and by attribute pair, so filters start
 * from the matching spans' traces.
 *
 * Index entries name a span by its ring slot and the slot's generation (bumped when the slot's
 * span goes), packed in one number: an entry of an evicted span is simply dead, and is dropped
 * when met. Storing a span allocates its record, its attribute array and its trace's record
 * (the first span of a trace), nothing per index.
 */
export class SpanStore {
  private ring: Array<SpanRec | undefined>;
  /** Per ring slot: estimated bytes (limits.ts), start and end times, generations of the slot's span and of its root entry. */
  private sizes: Uint32Array;
  startNs: Float64Array;
  endNs: Float64Array;
  private allGen: Uint32Array;
  private rootGen: Uint32Array;
  /** Generations wrap at this, so that generation × capacity + slot stays an exact double. */
  private readonly genRange: number;
  private head = 0;
  private count = 0;
  private readonly traces = new Map<string, TraceRec>();
  readonly roots: SlotTimeIndex<SpanRec>;
  readonly all: SlotTimeIndex<SpanRec>;
  readonly byService: ValueIndex;
  readonly byName: ValueIndex;
  private readonly byAttribute = new Map<string, ValueIndex>();
  private attributeSweeper: Iterator<[string, ValueIndex]> | null = null;
  /** Spans put in a new ring slot since start (or `clear`), and how many of them the postings cover. */
  private inserted = 0;
  private indexed = 0;
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
    const initial = Math.min(capacity, 1024);
    this.sizes = new Uint32Array(initial);
    this.startNs = new Float64Array(initial);
    this.endNs = new Float64Array(initial);
    this.allGen = new Uint32Array(initial);
    this.rootGen = new Uint32Array(initial);
    this.genRange = Math.min(2 ** 32, Math.floor(2 ** 53 / capacity));
    this.all = new SlotTimeIndex((code) => this.resolve(code));
    this.roots = new SlotTimeIndex((code) => this.resolveRoot(code));
    this.byService = new ValueIndex(this);
    this.byName = new ValueIndex(this);
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
    return this.traces.get(traceId)?.find(spanId);
  }

  private code(slot: number, gen: number): number {
    return (gen % this.genRange) * this.capacity + slot;
  }

  /** The live span an index entry names, or undefined when it has gone. */
  resolve(code: number): SpanRec | undefined {
    const slot = code % this.capacity;
    const rec = this.ring[slot];
    if (rec === undefined || ((this.allGen[slot] as number) % this.genRange) * this.capacity + slot !== code) return undefined;
    return rec;
  }

  private resolveRoot(code: number): SpanRec | undefined {
    const slot = code % this.capacity;
    const rec = this.ring[slot];
    if (rec === undefined || ((this.rootGen[slot] as number) % this.genRange) * this.capacity + slot !== code) return undefined;
    return rec;
  }

  /** Traces with a span whose lower-cased service contains `needle`. */
  tracesWithService(needle: string): TraceLookup {
    this.catchUp();
    return this.matching(this.byService, needle, (rec) => rec.serviceLc.includes(needle));
  }
  /** Traces with a span whose lower-cased name contains `needle`. */
  tracesWithName(needle: string): TraceLookup {
    this.catchUp();
    return this.matching(this.byName, needle, (rec) => rec.nameLc.includes(needle));
  }
  /** Traces with a span carrying the attribute pair (values up to MAX_INDEXED_VALUE characters). */
  tracesWithAttribute(key: string, value: string): TraceLookup {
    this.catchUp();
    const posting = this.byAttribute.get(key)?.entries.get(value);
    return new PostingLookup(this, posting === undefined ? [] : [posting], (rec) => rec.hasPair(key, value));
  }

  private matching(index: ValueIndex, needle: string, test: (rec: SpanRec) => boolean): TraceLookup {
    const postings: Posting[] = [];
    for (const [key, posting] of index.entries) if (key.includes(needle)) postings.push(posting);
    return new PostingLookup(this, postings, test);
  }

  /**
   * Add a span, or replace the stored one with the same ids (a pending span that ended). `bytes`:
   * its estimated cost (the collector's limiter computes it). The span is stored even when it alone
   * is over the budget; everything older then goes.
   */
  upsert(span: StoredSpan, estimate = 0): void {
    const bytes = Math.min(estimate, 0xffffffff);
    const trace = this.traces.get(span.trace_id);
    const existing = trace?.find(span.span_id);
    if (existing) {
      this.bytes += bytes - (this.sizes[existing.slot] as number);
      this.sizes[existing.slot] = bytes;
      this.trim(existing);
      if (existing.start === span.start_time_unix_nano && existing.parentId === span.parent_span_id) {
        this.replace(existing, span);
        return;
      }
      // moved in time or re-parented: re-index from scratch, in the same ring slot
      const slot = existing.slot;
      const indexed = this.isIndexed(slot);
      this.unlink(existing);
      const rec = this.link(span, slot);
      if (indexed) this.indexRec(rec, 0);
      return;
    }
    if (this.count === this.capacity) this.evictOldest();
    this.bytes += bytes;
    this.trim(null);
    const slot = this.head;
    this.grow(slot);
    this.sizes[slot] = bytes;
    // the trace found above, unless making room evicted its last span (then, as when none was
    // found, the trace is known to be absent: null saves looking it up again)
    this.link(span, slot, trace !== undefined && trace.size > 0 ? trace : null);
    this.head = (this.head + 1) % this.capacity;
    this.count++;
    this.inserted++;
  }

  /** Per-slot arrays grow with the ring's use, up to the capacity. */
  private grow(slot: number): void {
    if (slot < this.startNs.length) return;
    const length = Math.min(this.capacity, Math.max(slot + 1, this.startNs.length * 2));
    const widen = <T extends Uint32Array | Float64Array>(old: T, make: (n: number) => T): T => {
      const next = make(length);
      next.set(old);
      return next;
    };
    this.sizes = widen(this.sizes, (n) => new Uint32Array(n));
    this.startNs = widen(this.startNs, (n) => new Float64Array(n));
    this.endNs = widen(this.endNs, (n) => new Float64Array(n));
    this.allGen = widen(this.allGen, (n) => new Uint32Array(n));
    this.rootGen = widen(this.rootGen, (n) => new Uint32Array(n));
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
    this.count--;
    this.bytes -= this.sizes[slot] as number;
    this.sizes[slot] = 0;
    if (!oldest) return;
    this.unlink(oldest);
    this.ring[slot] = undefined;
    this.evicted++;
  }

  clear(): void {
    this.ring = new Array(this.capacity);
    const initial = Math.min(this.capacity, 1024);
    this.sizes = new Uint32Array(initial);
    this.startNs = new Float64Array(initial);
    this.endNs = new Float64Array(initial);
    this.allGen = new Uint32Array(initial);
    this.rootGen = new Uint32Array(initial);
    this.head = 0;
    this.count = 0;
    this.inserted = 0;
    this.indexed = 0;
    this.bytes = 0;
    this.traces.clear();
    this.roots.clear();
    this.all.clear();
    this.byService.clear();
    this.byName.clear();
    this.byAttribute.clear();
    this.attributeSweeper = null;
    this.internalSpans = 0;
    this.internalRoots = 0;
  }

  private makeRoot(rec: SpanRec): void {
    if (rec.bits & ROOT) return;
    rec.bits |= ROOT;
    const slot = rec.slot;
    this.rootGen[slot] = (this.rootGen[slot] as number) + 1;
    this.roots.insert(this.startNs[slot] as number, this.code(slot, this.rootGen[slot] as number));
    if (rec.bits & INTERNAL) this.internalRoots++;
  }
  private unmakeRoot(rec: SpanRec): void {
    if (!(rec.bits & ROOT)) return;
    rec.bits &= ~ROOT;
    const slot = rec.slot;
    this.rootGen[slot] = (this.rootGen[slot] as number) + 1;
    this.roots.kill();
    if (rec.bits & INTERNAL) this.internalRoots--;
  }

  private attributeIndex(key: string): ValueIndex {
    let index = this.byAttribute.get(key);
    if (!index) {
      index = new ValueIndex(this);
      this.byAttribute.set(key, index);
    }
    return index;
  }

  /** A little of every attribute's postings, round robin: values no span holds any more go. */
  private sweepAttributes(): void {
    if (!this.attributeSweeper) this.attributeSweeper = this.byAttribute.entries();
    const next = this.attributeSweeper.next();
    if (next.done) {
      this.attributeSweeper = null;
      return;
    }
    const [key, index] = next.value;
    index.sweep(64);
    if (index.size === 0) this.byAttribute.delete(key);
  }

  /**
   * The postings (service, name, attributes) are built in batches, when a query needs them: spans
   * evicted before anyone asked are never indexed, and storing a span costs no index work.
   */
  private catchUp(): void {
    const from = Math.max(this.indexed, this.inserted - this.count);
    const cap = this.capacity;
    for (let seq = from; seq < this.inserted; seq++) {
      const slot = (((this.head - (this.inserted - seq)) % cap) + cap) % cap;
      const rec = this.ring[slot];
      if (rec) this.indexRec(rec, 0);
    }
    const done = this.inserted - from;
    this.indexed = this.inserted;
    // values of evicted spans leave the postings at the same pace
    for (let i = 0; i < done; i += 256) this.sweepAttributes();
  }

  /** Whether the span in `slot` (a stored one) is covered by the postings. */
  private isIndexed(slot: number): boolean {
    const age = (this.head - 1 - slot + this.capacity) % this.capacity;
    return this.inserted - 1 - age < this.indexed;
  }

  private indexRec(rec: SpanRec, from: number): void {
    const code = this.code(rec.slot, this.allGen[rec.slot] as number);
    if (from === 0) {
      this.byService.add(rec.serviceLc, code);
      this.byName.add(rec.nameLc, code);
    }
    this.indexValues(rec, code, from);
  }

  private indexValues(rec: SpanRec, code: number, from: number): void {
    const attrs = rec.attrs;
    for (let i = from; i < attrs.length; i += 2) {
      const value = attrs[i + 1] as string;
      if (value.length <= MAX_INDEXED_VALUE) this.attributeIndex(attrs[i] as string).add(value, code);
    }
  }

  /** The fields of `span` that may change while a span keeps its place (a Pending snapshot that ended). */
  private fill(rec: SpanRec, span: StoredSpan): void {
    rec.name = span.name;
    rec.service = span.service_name;
    rec.kind = span.kind;
    rec.scope = span.instrumentation_scope_name;
    rec.attrs = flatten(span.attributes);
    rec.nameLc = lowerCase(span.name);
    rec.serviceLc = lowerCase(span.service_name);
    rec.extra = extraOf(span);
    let bits = (rec.bits & ROOT) | statusBits(span.status);
    if (span.pending) bits |= PENDING;
    if (isInternalFlat(rec.attrs)) bits |= INTERNAL;
    const flags = span.flags;
    if (flags !== undefined) {
      if (Number.isInteger(flags) && flags >= 0 && flags <= MAX_PACKED_FLAGS) bits |= HAS_FLAGS | (flags << FLAGS_SHIFT);
      else rec.extra = { ...rec.extra, flags };
    }
    rec.bits = bits;
    this.endNs[rec.slot] = span.end_time_unix_nano;
  }

  /** Same ids, start and parent: the record is updated in place; only new index values are added. */
  private replace(rec: SpanRec, span: StoredSpan): void {
    const trace = rec.trace;
    this.count_(trace, rec, -1);
    const wasInternal = rec.internal;
    const { serviceLc, nameLc, attrs } = rec;
    this.fill(rec, span);
    if (rec.internal !== wasInternal) {
      const delta = rec.internal ? 1 : -1;
      this.internalSpans += delta;
      if (rec.isRoot) this.internalRoots += delta;
    }
    this.count_(trace, rec, 1);
    // not indexed yet: the catch-up indexes what the span holds then
    if (!this.isIndexed(rec.slot)) return;
    const code = this.code(rec.slot, this.allGen[rec.slot] as number);
    if (rec.serviceLc !== serviceLc) this.byService.add(rec.serviceLc, code);
    if (rec.nameLc !== nameLc) this.byName.add(rec.nameLc, code);
    // the ended span usually keeps the snapshot's attributes and adds a few: index past the common prefix
    let common = 0;
    const next = rec.attrs;
    while (common < attrs.length && common < next.length && attrs[common] === next[common] && attrs[common + 1] === next[common + 1])
      common += 2;
    this.indexValues(rec, code, common);
  }

  private count_(trace: TraceRec, rec: SpanRec, delta: 1 | -1): void {
    if ((rec.bits & STATUS_MASK) === 2) trace.errorCount += delta;
    if (rec.bits & PENDING) trace.pendingCount += delta;
  }

  /** `known`: the span's trace when the caller has it, null when the caller knows it is not stored. */
  private link(span: StoredSpan, slot: number, known?: TraceRec | null): SpanRec {
    let trace = known === undefined ? this.traces.get(span.trace_id) : known;
    if (!trace) {
      trace = new TraceRec(this, span.trace_id);
      this.traces.set(span.trace_id, trace);
    }
    const start = span.start_time_unix_nano;
    this.startNs[slot] = start;
    const rec = new SpanRec(trace, slot, span.span_id, span.parent_span_id, '', '', undefined, undefined, [], null, 0, '', '');
    this.fill(rec, span);
    this.ring[slot] = rec;
    this.allGen[slot] = (this.allGen[slot] as number) + 1;
    const code = this.code(slot, this.allGen[slot] as number);
    this.all.insert(start, code);
    trace.add(rec);
    this.count_(trace, rec, 1);
    if (rec.bits & INTERNAL) this.internalSpans++;
    const parentId = rec.parentId;
    const parent = parentId ? trace.find(parentId) : undefined;
    // one id string for the parent and its children's parent_span_id
    if (parent && parent !== rec) rec.parentId = parent.spanId;
    else this.makeRoot(rec);
    // children that arrived first (OTel exports a child before its parent ends) stop being roots
    for (const child of trace.children(rec.spanId)) {
      if (child === rec) continue;
      child.parentId = rec.spanId;
      this.unmakeRoot(child);
    }
    return rec;
  }

  private unlink(rec: SpanRec): void {
    const trace = rec.trace;
    const slot = rec.slot;
    trace.remove(rec);
    this.count_(trace, rec, -1);
    this.allGen[slot] = (this.allGen[slot] as number) + 1;
    this.all.kill();
    if (rec.bits & INTERNAL) this.internalSpans--;
    this.unmakeRoot(rec);
    // its children lose their parent and become (orphan) roots
    for (const child of trace.children(rec.spanId)) if (child !== rec) this.makeRoot(child);
    if (trace.size === 0) this.traces.delete(trace.traceId);
  }
}
