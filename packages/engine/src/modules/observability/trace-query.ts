import { EngError, ErrorCode, type StoredSpan, type TraceListSpan, type TracesListInput } from '@eng/protocol';
import { MAX_INDEXED_VALUE, type SpanRec, type SpanStore, type TraceLookup, type TraceRec } from './span-store.ts';

// spec: engine-protocol §4.3 (`engine::traces::*`), seed §2.6 (trace filters, AND-combined).

export type StatusFilter = 'ok' | 'error' | 'unset' | 'pending';
type Pairs = Array<[string, string]>;

/** The seed's OK / Error / Pending and §4.3's ok / error / unset, any case. */
export function parseStatusFilter(value: string | undefined): StatusFilter | undefined {
  if (value === undefined || value === '') return undefined;
  const lower = value.trim().toLowerCase();
  if (lower === 'ok' || lower === 'error' || lower === 'unset' || lower === 'pending') return lower;
  if (lower === 'in_progress' || lower === 'running') return 'pending';
  throw new EngError(ErrorCode.DeserializationError, `status: expected one of ok, error, unset, pending (got "${value}")`);
}

export function toPairs(value: TracesListInput['attributes']): Pairs {
  if (!value) return [];
  const entries = Array.isArray(value) ? value : Object.entries(value);
  return entries.map(([k, v]) => [k, String(v)]);
}

/**
 * Nanosecond epochs held as doubles are exact only to 256 ns, so durations are rounded to the
 * microsecond: a 100 ms span reads 100, not 100.000256, and inclusive bounds hold.
 */
export function nsToMs(ns: number): number {
  return Math.round(ns / 1e3) / 1e3;
}

export function durationMs(span: StoredSpan, nowMs: number): number {
  return durationOf(span.start_time_unix_nano, span.end_time_unix_nano, span.pending === true, nowMs);
}

function durationOf(start: number, end: number, pending: boolean, nowMs: number): number {
  if (pending || !end) return Math.max(0, nsToMs(nowMs * 1e6 - start));
  return nsToMs(end - start);
}

function recDurationMs(rec: SpanRec, nowMs: number): number {
  return durationOf(rec.start, rec.end, rec.pending, nowMs);
}

const indexable = ([, value]: [string, string]) => value.length <= MAX_INDEXED_VALUE;

const EMPTY: TraceLookup = new Set<TraceRec>();

/** Traces in any of the sets: checked one by one, listed together (deduplicated). */
class UnionLookup implements TraceLookup {
  constructor(private readonly sets: TraceLookup[]) {}
  get size(): number {
    let n = 0;
    for (const set of this.sets) n += set.size;
    return n;
  }
  has(trace: TraceRec): boolean {
    for (const set of this.sets) if (set.has(trace)) return true;
    return false;
  }
  keys(): IterableIterator<TraceRec> {
    const out = new Set<TraceRec>();
    for (const set of this.sets) for (const trace of set.keys()) out.add(trace);
    return out.values();
  }
}

function union(sets: TraceLookup[]): TraceLookup {
  if (sets.length === 0) return EMPTY;
  if (sets.length === 1) return sets[0] as TraceLookup;
  return new UnionLookup(sets);
}
function intersect(sets: TraceLookup[]): TraceLookup {
  const sorted = [...sets].sort((a, b) => a.size - b.size);
  const [smallest, ...rest] = sorted as [TraceLookup, ...TraceLookup[]];
  if (rest.length === 0 || smallest.size === 0) return smallest;
  const out = new Set<TraceRec>();
  for (const trace of smallest.keys()) if (rest.every((set) => set.has(trace))) out.add(trace);
  return out;
}

interface Plan {
  /** Traces every span or root must belong to; null = no such filter. */
  traces: TraceLookup | null;
  excluded: TraceLookup | null;
  /** Attribute pairs too long to be indexed, checked by scanning the trace. */
  scanPairs: Pairs;
  scanExclude: Pairs;
}

/** Trace-level filters (ids, service, name, attributes, exclusions) resolved through the indexes. */
function plan(store: SpanStore, input: TracesListInput, attributes: Pairs, exclude: Pairs): Plan {
  const sets: TraceLookup[] = [];
  const ids = [...(input.trace_id ? [input.trace_id] : []), ...(input.trace_ids ?? [])];
  if (ids.length > 0) {
    const traces = new Set<TraceRec>();
    for (const id of ids) {
      const trace = store.trace(id.toLowerCase());
      if (trace) traces.add(trace);
    }
    sets.push(traces);
  }
  if (input.service_name) sets.push(store.tracesWithService(input.service_name.toLowerCase()));
  if (input.name) sets.push(store.tracesWithName(input.name.toLowerCase()));
  for (const [key, value] of attributes.filter(indexable)) sets.push(store.tracesWithAttribute(key, value));
  const excludeSets = exclude.filter(indexable).map(([key, value]) => store.tracesWithAttribute(key, value));
  return {
    traces: sets.length > 0 ? intersect(sets) : null,
    excluded: excludeSets.length > 0 ? union(excludeSets) : null,
    scanPairs: attributes.filter((p) => !indexable(p)),
    scanExclude: exclude.filter((p) => !indexable(p)),
  };
}

interface Criteria {
  status?: StatusFilter;
  service?: string;
  name?: string;
  minMs?: number;
  maxMs?: number;
  attributes: Pairs;
  exclude: Pairs;
  includeInternal: boolean;
  now: number;
  plan: Plan;
}

function statusMatches(rec: SpanRec, trace: TraceRec | null, status: StatusFilter): boolean {
  const spanStatus = rec.status;
  // trace-level (root listing): an error anywhere marks the trace as Error (seed §2.6 Status column)
  const traceErrors = trace ? trace.errorCount : spanStatus === 'error' ? 1 : 0;
  switch (status) {
    case 'error':
      return spanStatus === 'error' || traceErrors > 0;
    case 'ok':
      // OTel leaves successful spans `unset`: every finished span without an error is OK
      return !rec.pending && spanStatus !== 'error' && traceErrors === 0;
    case 'unset':
      // ended without a status; a span still running is Pending, not Unset
      return spanStatus === 'unset' && !rec.pending;
    case 'pending':
      return rec.pending;
  }
}

function commonMatches(rec: SpanRec, c: Criteria, trace: TraceRec | null): boolean {
  if (!c.includeInternal && rec.internal) return false;
  if (c.status && !statusMatches(rec, trace, c.status)) return false;
  if (c.minMs !== undefined || c.maxMs !== undefined) {
    const d = recDurationMs(rec, c.now);
    if (c.minMs !== undefined && d < c.minMs) return false;
    if (c.maxMs !== undefined && d > c.maxMs) return false;
  }
  return true;
}

/**
 * Root listing: status and duration are the root's; service, name and each attribute pair match
 * any span of the trace (resolved by the plan), so a trace is found by any service or function
 * taking part in it.
 */
function rootMatches(rec: SpanRec, c: Criteria): boolean {
  if (!commonMatches(rec, c, rec.trace)) return false;
  const { plan: p } = c;
  if (p.excluded?.has(rec.trace)) return false;
  if (p.scanPairs.length > 0 || p.scanExclude.length > 0) {
    const members = rec.trace.spans;
    if (members.some((s) => p.scanExclude.some(([k, v]) => s.hasPair(k, v)))) return false;
    if (!p.scanPairs.every(([k, v]) => members.some((s) => s.hasPair(k, v)))) return false;
  }
  return true;
}

/** `search_all_spans`: every criterion applies to the span itself. */
function spanMatches(rec: SpanRec, c: Criteria): boolean {
  if (!commonMatches(rec, c, null)) return false;
  if (c.service !== undefined && !rec.serviceLc.includes(c.service)) return false;
  if (c.name !== undefined && !rec.nameLc.includes(c.name)) return false;
  for (const [k, v] of c.attributes) if (!rec.hasPair(k, v)) return false;
  for (const [k, v] of c.exclude) if (rec.hasPair(k, v)) return false;
  return true;
}

const TAG_KEYS = new Set(['eng.session.id', 'iii.session.id']);
/** §4.3 `trace_tags`: session ids and `*.tag.*` attributes found on any span of the trace. */
function traceTags(trace: TraceRec): Record<string, string> | undefined {
  let tags: Record<string, string> | undefined;
  for (const member of trace.spans) {
    const attrs = member.attrs;
    for (let i = 0; i < attrs.length; i += 2) {
      const k = attrs[i] as string;
      if (TAG_KEYS.has(k) || k.startsWith('eng.tag.') || k.startsWith('iii.tag.')) {
        tags ??= {};
        tags[k] ??= attrs[i + 1] as string;
      }
    }
  }
  return tags;
}

export function listRow(rec: SpanRec, now: number): TraceListSpan {
  const row: TraceListSpan = {
    ...rec.toSpan(),
    span_count: rec.trace.size,
    error_count: rec.trace.errorCount,
    duration_ms: recDurationMs(rec, now),
  };
  const tags = traceTags(rec.trace);
  if (tags) row.trace_tags = tags;
  return row;
}

export interface TraceListResult {
  spans: TraceListSpan[];
  total: number;
  offset: number;
  limit: number;
}

export function listTraces(store: SpanStore, input: TracesListInput): TraceListResult {
  const now = Date.now();
  const offset = input.offset ?? 0;
  const limit = input.limit ?? 100;
  const attributes = toPairs(input.attributes);
  const exclude = toPairs(input.exclude_attributes);
  const criteria: Criteria = {
    status: parseStatusFilter(input.status),
    service: input.service_name ? input.service_name.toLowerCase() : undefined,
    name: input.name ? input.name.toLowerCase() : undefined,
    minMs: input.min_duration_ms,
    maxMs: input.max_duration_ms,
    attributes,
    exclude,
    includeInternal: input.include_internal === true,
    now,
    plan: plan(store, input, attributes, exclude),
  };
  if (criteria.minMs !== undefined && criteria.maxMs !== undefined && criteria.minMs > criteria.maxMs) {
    throw new EngError(ErrorCode.DeserializationError, 'min_duration_ms: must not exceed max_duration_ms');
  }
  const allSpans = input.search_all_spans === true;
  const matches = allSpans ? spanMatches : rootMatches;
  const from = input.start_time !== undefined ? input.start_time * 1e6 : undefined;
  const to = input.end_time !== undefined ? input.end_time * 1e6 : undefined;
  const descending = input.sort_order === 'desc';
  const sortBy = input.sort_by ?? 'start_time';

  const page: SpanRec[] = [];
  let total = 0;
  const collected: SpanRec[] = [];
  const byTime = sortBy === 'start_time';
  const accept = (rec: SpanRec) => {
    if (!matches(rec, criteria)) return;
    if (byTime) {
      if (total >= offset && page.length < limit) page.push(rec);
      total++;
    } else {
      collected.push(rec);
    }
  };

  const index = allSpans ? store.all : store.roots;
  const traces = criteria.plan.traces;
  const p = criteria.plan;
  const unfiltered =
    byTime &&
    !criteria.status &&
    criteria.minMs === undefined &&
    criteria.maxMs === undefined &&
    from === undefined &&
    to === undefined &&
    !traces &&
    !p.excluded &&
    p.scanPairs.length === 0 &&
    p.scanExclude.length === 0;
  if (unfiltered) {
    // the console's default view: count from the store's tallies, walk only to the end of the page
    total = index.size - (criteria.includeInternal ? 0 : allSpans ? store.internalSpans : store.internalRoots);
    let skipped = 0;
    index.visit(
      (rec) => {
        if (!criteria.includeInternal && rec.internal) return undefined;
        if (skipped < offset) skipped++;
        else page.push(rec);
        return page.length < limit ? undefined : false;
      },
      { descending },
    );
  } else if (traces && traces.size * 8 < index.size) {
    // few matching traces: start from them instead of walking the whole time index
    const candidates: SpanRec[] = [];
    for (const trace of traces.keys()) {
      for (const rec of trace.spans) {
        if (!allSpans && !rec.isRoot) continue;
        const t = rec.start;
        if ((from === undefined || t >= from) && (to === undefined || t <= to)) candidates.push(rec);
      }
    }
    candidates.sort((a, b) => a.start - b.start);
    if (descending) candidates.reverse();
    for (const rec of candidates) accept(rec);
  } else {
    index.visit(
      (rec) => {
        if (traces === null || traces.has(rec.trace)) accept(rec);
        return undefined;
      },
      { from, to, descending },
    );
  }

  if (!byTime) {
    const key = sortKey(sortBy, now);
    const sign = descending ? -1 : 1;
    collected.sort((a, b) => {
      const ka = key(a);
      const kb = key(b);
      const order = ka < kb ? -1 : ka > kb ? 1 : a.start - b.start;
      return sign * order;
    });
    total = collected.length;
    page.push(...collected.slice(offset, offset + limit));
  }
  return { spans: page.map((rec) => listRow(rec, now)), total, offset, limit };
}

function sortKey(sortBy: string, now: number): (rec: SpanRec) => number | string {
  switch (sortBy) {
    case 'duration':
    case 'duration_ms':
      return (rec) => recDurationMs(rec, now);
    case 'service_name':
      return (rec) => rec.serviceLc;
    default:
      return (rec) => rec.nameLc;
  }
}
