import type { StoredSpan } from '@eng/protocol';

/**
 * One trace as the explorer's views need it: a span tree with absolute times in ms, self time,
 * depth, and the critical path (console-worker §3.2 "Critical path breadcrumb"). Pure functions,
 * shared by the waterfall, flame graph, service breakdown, trace map and flow views.
 */

export interface SpanNode {
  span: StoredSpan;
  id: string;
  parent: SpanNode | null;
  children: SpanNode[];
  depth: number;
  startMs: number;
  endMs: number;
  durationMs: number;
  /** Duration minus the time covered by children (overlaps counted once). */
  selfMs: number;
  error: boolean;
  pending: boolean;
  service: string;
  /** `parent_span_id` names a span this trace does not hold (a remote or evicted parent). */
  remoteParent: boolean;
}

export interface TraceModel {
  traceId: string;
  /** Every span, by start time. */
  nodes: SpanNode[];
  byId: Map<string, SpanNode>;
  roots: SpanNode[];
  startMs: number;
  endMs: number;
  durationMs: number;
  services: string[];
  errorCount: number;
  pending: boolean;
  criticalPath: SpanNode[];
}

export function spanStartMs(span: StoredSpan): number {
  return span.start_time_unix_nano / 1e6;
}

/** A pending span (end 0) lasts until `now`. */
export function spanEndMs(span: StoredSpan, now: number): number {
  if (span.pending || !span.end_time_unix_nano) return Math.max(spanStartMs(span), now);
  return span.end_time_unix_nano / 1e6;
}

/**
 * Nanosecond epochs held as doubles are exact only to 256 ns, and dividing each end by 1e6 adds
 * more noise: a finished span's duration is its nanosecond difference rounded to the microsecond,
 * as the engine's `duration_ms` is (a 10 ms span reads "10 ms", never "10.0 ms" from 9.99999).
 */
function spanDurationMs(span: StoredSpan, startMs: number, endMs: number): number {
  if (span.pending || !span.end_time_unix_nano) return Math.max(0, endMs - startMs);
  return Math.max(0, Math.round((span.end_time_unix_nano - span.start_time_unix_nano) / 1e3) / 1e3);
}

export function buildTraceModel(spans: StoredSpan[], now: number = Date.now()): TraceModel {
  const sorted = [...spans].sort((a, b) => a.start_time_unix_nano - b.start_time_unix_nano);
  const byId = new Map<string, SpanNode>();
  const nodes: SpanNode[] = [];
  for (const span of sorted) {
    const startMs = spanStartMs(span);
    const endMs = spanEndMs(span, now);
    const node: SpanNode = {
      span,
      id: span.span_id,
      parent: null,
      children: [],
      depth: 0,
      startMs,
      endMs,
      durationMs: spanDurationMs(span, startMs, endMs),
      selfMs: 0,
      error: span.status === 'error',
      pending: span.pending === true || !span.end_time_unix_nano,
      service: span.service_name || 'unknown',
      remoteParent: false,
    };
    // a duplicate id (the same span sent twice) keeps the last copy
    if (byId.has(node.id)) nodes.splice(nodes.indexOf(byId.get(node.id) as SpanNode), 1);
    byId.set(node.id, node);
    nodes.push(node);
  }
  const roots: SpanNode[] = [];
  for (const node of nodes) {
    const parentId = node.span.parent_span_id;
    const parent = parentId ? byId.get(parentId) : undefined;
    if (parent && parent !== node && !isAncestor(node, parent)) {
      node.parent = parent;
      parent.children.push(node);
    } else {
      node.remoteParent = !!parentId;
      roots.push(node);
    }
  }
  const stack = roots.map((r) => ({ node: r, depth: 0 }));
  while (stack.length > 0) {
    const { node, depth } = stack.pop() as { node: SpanNode; depth: number };
    node.depth = depth;
    node.selfMs = selfTime(node);
    for (const child of node.children) stack.push({ node: child, depth: depth + 1 });
  }
  let startMs = Number.POSITIVE_INFINITY;
  let endMs = 0;
  const services = new Set<string>();
  let errorCount = 0;
  let pending = false;
  for (const node of nodes) {
    startMs = Math.min(startMs, node.startMs);
    endMs = Math.max(endMs, node.endMs);
    services.add(node.service);
    if (node.error) errorCount++;
    if (node.pending) pending = true;
  }
  if (nodes.length === 0) {
    startMs = 0;
    endMs = 0;
  }
  return {
    traceId: sorted[0]?.trace_id ?? '',
    nodes,
    byId,
    roots,
    startMs,
    endMs,
    durationMs: Math.max(0, Math.round((endMs - startMs) * 1e3) / 1e3),
    services: [...services].sort(),
    errorCount,
    pending,
    criticalPath: criticalPath(roots),
  };
}

/** Guards against parent cycles in malformed data (a → b → a). */
function isAncestor(candidate: SpanNode, of: SpanNode): boolean {
  for (let p: SpanNode | null = of; p; p = p.parent) if (p === candidate) return true;
  return false;
}

function selfTime(node: SpanNode): number {
  if (node.children.length === 0) return node.durationMs;
  const intervals = node.children
    .map((c) => [Math.max(c.startMs, node.startMs), Math.min(c.endMs, node.endMs)] as const)
    .filter(([a, b]) => b > a)
    .sort((x, y) => x[0] - y[0]);
  let covered = 0;
  let curStart = Number.NEGATIVE_INFINITY;
  let curEnd = Number.NEGATIVE_INFINITY;
  for (const [a, b] of intervals) {
    if (a > curEnd) {
      if (curEnd > curStart) covered += curEnd - curStart;
      curStart = a;
      curEnd = b;
    } else curEnd = Math.max(curEnd, b);
  }
  if (curEnd > curStart) covered += curEnd - curStart;
  return Math.max(0, node.durationMs - covered);
}

/** console-worker §3.2: start at the longest root, then follow the longest child at each level. */
export function criticalPath(roots: SpanNode[]): SpanNode[] {
  const path: SpanNode[] = [];
  let level = roots;
  while (level.length > 0) {
    const longest = level.reduce((a, b) => (b.durationMs > a.durationMs ? b : a));
    path.push(longest);
    level = longest.children;
  }
  return path;
}

/** Depth-first rows for the waterfall; children of collapsed spans are skipped. */
export function visibleRows(model: TraceModel, collapsed: ReadonlySet<string>): SpanNode[] {
  const rows: SpanNode[] = [];
  const walk = (node: SpanNode) => {
    rows.push(node);
    if (collapsed.has(node.id)) return;
    for (const child of node.children) walk(child);
  };
  for (const root of model.roots) walk(root);
  return rows;
}

export function ancestorsOf(node: SpanNode): SpanNode[] {
  const out: SpanNode[] = [];
  for (let p = node.parent; p; p = p.parent) out.unshift(p);
  return out;
}

export function countDescendants(node: SpanNode): number {
  let n = 0;
  for (const child of node.children) n += 1 + countDescendants(child);
  return n;
}

// ── per-service figures (seed 2.6 Service Breakdown; trace map) ─────────────

export interface ServiceStats {
  service: string;
  spans: number;
  errors: number;
  errorRate: number;
  totalMs: number;
  avgMs: number;
  selfMs: number;
  /** Share of the trace's summed self time. */
  share: number;
  p50: number;
  p95: number;
}

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return 0;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i] as number;
}

export function serviceBreakdown(model: TraceModel): ServiceStats[] {
  const groups = new Map<string, SpanNode[]>();
  for (const node of model.nodes) {
    const list = groups.get(node.service) ?? [];
    list.push(node);
    groups.set(node.service, list);
  }
  const totalSelf = model.nodes.reduce((sum, n) => sum + n.selfMs, 0) || 1;
  const out: ServiceStats[] = [];
  for (const [service, list] of groups) {
    const durations = list.map((n) => n.durationMs).sort((a, b) => a - b);
    const totalMs = durations.reduce((a, b) => a + b, 0);
    const errors = list.filter((n) => n.error).length;
    const selfMs = list.reduce((sum, n) => sum + n.selfMs, 0);
    out.push({
      service,
      spans: list.length,
      errors,
      errorRate: errors / list.length,
      totalMs,
      avgMs: totalMs / list.length,
      selfMs,
      share: selfMs / totalSelf,
      p50: quantile(durations, 0.5),
      p95: quantile(durations, 0.95),
    });
  }
  return out.sort((a, b) => b.selfMs - a.selfMs || a.service.localeCompare(b.service));
}

export interface ServiceEdge {
  from: string;
  to: string;
  calls: number;
  errors: number;
  totalMs: number;
}

/** Seed 2.6 Trace Map: services as nodes, cross-service parent → child relations as edges. */
export function serviceEdges(model: TraceModel): ServiceEdge[] {
  const edges = new Map<string, ServiceEdge>();
  for (const node of model.nodes) {
    const parent = node.parent;
    if (!parent || parent.service === node.service) continue;
    const key = `${parent.service}\u0000${node.service}`;
    const edge = edges.get(key) ?? { from: parent.service, to: node.service, calls: 0, errors: 0, totalMs: 0 };
    edge.calls++;
    if (node.error) edge.errors++;
    edge.totalMs += node.durationMs;
    edges.set(key, edge);
  }
  return [...edges.values()];
}
