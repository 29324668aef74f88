import type { StoredSpan, TraceTreeNode } from '@eng/protocol';
import type { SpanStore, TraceRec } from './span-store.ts';
import { nsToMs } from './trace-query.ts';

// spec: engine-protocol §4.3 — one trace (`engine::traces::spans`, `::tree`) and traces grouped by
// an attribute (`engine::traces::group_by`).

/** The trace's spans by start time. */
export function traceSpans(store: SpanStore, traceId: string): StoredSpan[] {
  const trace = store.trace(traceId.toLowerCase());
  if (!trace) return [];
  return [...trace.spans].sort((a, b) => a.start - b.start).map((r) => r.toSpan());
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

/** Attributes that name a function: grouped by one of them, a group counts only its own failures. */
const FUNCTION_ATTRIBUTES = new Set(['function_id', 'eng.function.id', 'iii.function.id', 'faas.name']);

/**
 * §4.3 `engine::traces::group_by`: traces grouped by the value of one attribute found on any of
 * their spans (the console groups by `eng.session.id`, `function_id`, …); most recent first.
 */
export function groupTraces(
  store: SpanStore,
  input: { attribute: string; since_ms?: number; limit?: number; include_internal?: boolean; label_attribute?: string },
  /** When given, only these trace ids are grouped. */
  only?: ReadonlySet<string>,
): { groups: TraceGroup[] } {
  // grouped by function, a group's errors are its own failed spans (those carrying the value): a
  // function that never failed shows 0 even when other spans of its traces did. Grouped by anything
  // else (a session, a message, a tenant), the value names whole traces, and every failed span of
  // them counts
  const ownSpans = FUNCTION_ATTRIBUTES.has(input.attribute);
  const groups = new Map<string, { label?: string; traces: Set<TraceRec>; errors: number }>();
  const from = input.since_ms !== undefined ? input.since_ms * 1e6 : undefined;
  store.all.visit(
    (rec) => {
      if (!input.include_internal && rec.internal) return undefined;
      if (only && !only.has(rec.trace.traceId)) return undefined;
      let value: string | undefined;
      let label: string | undefined;
      const attrs = rec.attrs;
      for (let i = 0; i < attrs.length; i += 2) {
        const k = attrs[i] as string;
        if (k === input.attribute) value = attrs[i + 1] as string;
        if (input.label_attribute && k === input.label_attribute) label = attrs[i + 1] as string;
      }
      if (value === undefined) return undefined;
      let group = groups.get(value);
      if (!group) {
        group = { traces: new Set(), errors: 0 };
        groups.set(value, group);
      }
      group.traces.add(rec.trace);
      if (rec.status === 'error') group.errors++;
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
      spanCount += trace.size;
      for (const member of trace.spans) {
        if (!ownSpans && member.status === 'error' && (input.include_internal || !member.internal)) errors++;
        const start = member.start;
        first = Math.min(first, start);
        last = Math.max(last, member.end || start);
      }
    }
    result.push({
      value,
      label: group.label ?? value,
      trace_ids: [...group.traces].map((t) => t.traceId),
      span_count: spanCount,
      first_seen_ms: Math.floor(first / 1e6),
      last_seen_ms: Math.floor(last / 1e6),
      duration_ms: nsToMs(last - first),
      error_count: ownSpans ? group.errors : errors,
    });
  }
  result.sort((a, b) => b.last_seen_ms - a.last_seen_ms);
  return { groups: result.slice(0, input.limit ?? 100) };
}
