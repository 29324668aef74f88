import { EngError, ErrorCode, type StoredSpan, type TraceListSpan, type TracesListInput, type TraceTreeNode } from '@eng/protocol';
import type { SpanRec, SpanStore, TraceRec } from './span-store.ts';

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

// Lower-cased names repeat (service names, function ids): cache them rather than allocate per query.
const lowered = new Map<string, string>();
function lc(text: string): string {
  let value = lowered.get(text);
  if (value === undefined) {
    if (lowered.size > 20_000) lowered.clear();
    value = text.toLowerCase();
    lowered.set(text, value);
  }
  return value;
}

export function durationMs(span: StoredSpan, nowMs: number): number {
  if (span.pending || !span.end_time_unix_nano) return Math.max(0, nowMs - span.start_time_unix_nano / 1e6);
  return (span.end_time_unix_nano - span.start_time_unix_nano) / 1e6;
}

function hasAllPairs(span: StoredSpan, pairs: Pairs): boolean {
  for (const [key, value] of pairs) {
    let found = false;
    for (const [k, v] of span.attributes) {
      if (k === key && v === value) {
        found = true;
        break;
      }
    }
    if (!found) return false;
  }
  return true;
}
function hasAnyPair(span: StoredSpan, pairs: Pairs): boolean {
  for (const [key, value] of pairs) for (const [k, v] of span.attributes) if (k === key && v === value) return true;
  return false;
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
}

function statusMatches(span: StoredSpan, trace: TraceRec | null, status: StatusFilter): boolean {
  // trace-level (root listing): an error anywhere marks the trace as Error (seed §2.6 Status column)
  const traceErrors = trace ? trace.errorCount : span.status === 'error' ? 1 : 0;
  switch (status) {
    case 'error':
      return span.status === 'error' || traceErrors > 0;
    case 'ok':
      // OTel leaves successful spans `unset`: every finished span without an error is OK
      return !span.pending && span.status !== 'error' && traceErrors === 0;
    case 'unset':
      return span.status === 'unset';
    case 'pending':
      return span.pending === true;
  }
}

/**
 * Root listing: status and duration are the root's; service, name and each attribute pair match
 * any span of the trace, so a trace is found by any service or function taking part in it.
 */
function rootMatches(rec: SpanRec, c: Criteria): boolean {
  const span = rec.span;
  if (!c.includeInternal && rec.internal) return false;
  if (c.status && !statusMatches(span, rec.trace, c.status)) return false;
  if (c.minMs !== undefined || c.maxMs !== undefined) {
    const d = durationMs(span, c.now);
    if (c.minMs !== undefined && d < c.minMs) return false;
    if (c.maxMs !== undefined && d > c.maxMs) return false;
  }
  if (c.service === undefined && c.name === undefined && c.attributes.length === 0 && c.exclude.length === 0) return true;
  let serviceOk = c.service === undefined;
  let nameOk = c.name === undefined;
  // each pair may sit on a different span of the trace (the root's tenant, a child's function_id)
  let missing = c.attributes.length;
  const found = missing > 0 ? new Array<boolean>(missing).fill(false) : undefined;
  for (const member of rec.trace.spans.values()) {
    const s = member.span;
    if (c.exclude.length > 0 && hasAnyPair(s, c.exclude)) return false;
    if (!serviceOk && lc(s.service_name).includes(c.service as string)) serviceOk = true;
    if (!nameOk && lc(s.name).includes(c.name as string)) nameOk = true;
    if (found && missing > 0) {
      for (let i = 0; i < c.attributes.length; i++) {
        if (!found[i] && hasAllPairs(s, [c.attributes[i] as [string, string]])) {
          found[i] = true;
          missing--;
        }
      }
    }
    if (serviceOk && nameOk && missing === 0 && c.exclude.length === 0) return true;
  }
  return serviceOk && nameOk && missing === 0;
}

/** `search_all_spans`: every criterion applies to the span itself. */
function spanMatches(rec: SpanRec, c: Criteria): boolean {
  const span = rec.span;
  if (!c.includeInternal && rec.internal) return false;
  if (c.status && !statusMatches(span, null, c.status)) return false;
  if (c.minMs !== undefined || c.maxMs !== undefined) {
    const d = durationMs(span, c.now);
    if (c.minMs !== undefined && d < c.minMs) return false;
    if (c.maxMs !== undefined && d > c.maxMs) return false;
  }
  if (c.service !== undefined && !lc(span.service_name).includes(c.service)) return false;
  if (c.name !== undefined && !lc(span.name).includes(c.name)) return false;
  if (c.attributes.length > 0 && !hasAllPairs(span, c.attributes)) return false;
  if (c.exclude.length > 0 && hasAnyPair(span, c.exclude)) return false;
  return true;
}

const TAG_KEYS = new Set(['eng.session.id', 'iii.session.id']);
/** §4.3 `trace_tags`: session ids and `*.tag.*` attributes found on any span of the trace. */
function traceTags(trace: TraceRec): Record<string, string> | undefined {
  let tags: Record<string, string> | undefined;
  for (const member of trace.spans.values()) {
    for (const [k, v] of member.span.attributes) {
      if (TAG_KEYS.has(k) || k.startsWith('eng.tag.') || k.startsWith('iii.tag.')) {
        tags ??= {};
        tags[k] ??= v;
      }
    }
  }
  return tags;
}

export function listRow(rec: SpanRec, now: number): TraceListSpan {
  const row: TraceListSpan = {
    ...rec.span,
    span_count: rec.trace.spans.size,
    error_count: rec.trace.errorCount,
    duration_ms: durationMs(rec.span, now),
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
  const criteria: Criteria = {
    status: parseStatusFilter(input.status),
    service: input.service_name ? input.service_name.toLowerCase() : undefined,
    name: input.name ? input.name.toLowerCase() : undefined,
    minMs: input.min_duration_ms,
    maxMs: input.max_duration_ms,
    attributes: toPairs(input.attributes),
    exclude: toPairs(input.exclude_attributes),
    includeInternal: input.include_internal === true,
    now,
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

  const traceIds = [...(input.trace_id ? [input.trace_id] : []), ...(input.trace_ids ?? [])];
  if (traceIds.length > 0) {
    // by trace id: the trace index, never a scan
    const candidates: SpanRec[] = [];
    for (const id of new Set(traceIds.map((t) => t.toLowerCase()))) {
      const trace = store.trace(id);
      if (!trace) continue;
      for (const rec of trace.spans.values()) {
        if (!allSpans && !rec.rootEntry) continue;
        const t = rec.span.start_time_unix_nano;
        if ((from === undefined || t >= from) && (to === undefined || t <= to)) candidates.push(rec);
      }
    }
    candidates.sort((a, b) => a.span.start_time_unix_nano - b.span.start_time_unix_nano);
    if (descending) candidates.reverse();
    for (const rec of candidates) accept(rec);
  } else {
    (allSpans ? store.all : store.roots).visit(
      (rec) => {
        accept(rec);
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
      const order = ka < kb ? -1 : ka > kb ? 1 : a.span.start_time_unix_nano - b.span.start_time_unix_nano;
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
      return (rec) => durationMs(rec.span, now);
    case 'service_name':
      return (rec) => lc(rec.span.service_name);
    default:
      return (rec) => lc(rec.span.name);
  }
}

/** The trace's spans by start time. */
export function traceSpans(store: SpanStore, traceId: string): StoredSpan[] {
  const trace = store.trace(traceId.toLowerCase());
  if (!trace) return [];
  return [...trace.spans.values()].map((r) => r.span).sort((a, b) => a.start_time_unix_nano - b.start_time_unix_nano);
}

/** §4.3 `engine::traces::tree`: roots are spans whose parent is not stored; children by start time. */
export function traceTree(store: SpanStore, traceId: string): { roots: TraceTreeNode[] } {
  const spans = traceSpans(store, traceId);
  const nodes = new Map<string, TraceTreeNode>();
  for (const span of spans) nodes.set(span.span_id, { ...span, children: [] });
  const roots: TraceTreeNode[] = [];
  for (const node of nodes.values()) {
    const parent = node.parent_span_id ? nodes.get(node.parent_span_id) : undefined;
    if (parent && parent !== node) parent.children.push(node);
    else roots.push(node);
  }
  return { roots };
}

export interface TraceGroup {
  value: string;
  label: string;
  trace_ids: string[];
  span_count: number;
  first_seen_ms: number;
  last_seen_ms: number;
  duration_ms: number;
  error_count: number;
}

/**
 * §4.3 `engine::traces::group_by`: traces grouped by the value of one attribute found on any of
 * their spans (the console groups by `eng.session.id`, `function_id`, …); most recent first.
 */
export function groupTraces(
  store: SpanStore,
  input: { attribute: string; since_ms?: number; limit?: number; include_internal?: boolean; label_attribute?: string },
): { groups: TraceGroup[] } {
  const groups = new Map<string, { label?: string; traces: Set<TraceRec> }>();
  const from = input.since_ms !== undefined ? input.since_ms * 1e6 : undefined;
  store.all.visit(
    (rec) => {
      if (!input.include_internal && rec.internal) return undefined;
      let value: string | undefined;
      let label: string | undefined;
      for (const [k, v] of rec.span.attributes) {
        if (k === input.attribute) value = v;
        if (input.label_attribute && k === input.label_attribute) label = v;
      }
      if (value === undefined) return undefined;
      let group = groups.get(value);
      if (!group) {
        group = { traces: new Set() };
        groups.set(value, group);
      }
      group.traces.add(rec.trace);
      if (label !== undefined && group.label === undefined) group.label = label;
      return undefined;
    },
    { from },
  );
  const result: TraceGroup[] = [];
  for (const [value, group] of groups) {
    let first = Number.POSITIVE_INFINITY;
    let last = 0;
    let spanCount = 0;
    let errors = 0;
    for (const trace of group.traces) {
      spanCount += trace.spans.size;
      errors += trace.errorCount;
      for (const member of trace.spans.values()) {
        const s = member.span;
        first = Math.min(first, s.start_time_unix_nano);
        last = Math.max(last, s.end_time_unix_nano || s.start_time_unix_nano);
      }
    }
    result.push({
      value,
      label: group.label ?? value,
      trace_ids: [...group.traces].map((t) => t.traceId),
      span_count: spanCount,
      first_seen_ms: Math.floor(first / 1e6),
      last_seen_ms: Math.floor(last / 1e6),
      duration_ms: (last - first) / 1e6,
      error_count: errors,
    });
  }
  result.sort((a, b) => b.last_seen_ms - a.last_seen_ms);
  return { groups: result.slice(0, input.limit ?? 100) };
}
