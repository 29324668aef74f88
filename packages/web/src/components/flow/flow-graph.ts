import type { FunctionRecord, StoredSpan, TriggerRecord } from '@eng/protocol';
import type { FlowKind } from '../../lib/flow-kinds.ts';
import { cronExpression, httpConfig, summarise, topicOf } from '../../lib/trigger-config.ts';
import { kindOf } from '../../lib/trigger-kind.ts';
import { attr, firstAttr, functionIdOf } from '../traces/span-facts.ts';

/**
 * The Flow page's graph (seed 2.8): triggers → functions → state stores / queues / event topics.
 * Edges come from three places:
 *  1. trigger bindings (`engine::registered-triggers::list`): trigger → function; a `state`
 *     trigger is an edge from its scope's state node, a queue subscriber from its queue node, an
 *     event subscriber from its topic node;
 *  2. function metadata, the convention documented in ./README.md:
 *     `metadata.uses = { state?: string[], queues?: string[], events?: string[] }`;
 *  3. observed traces: spans of `state::*`, enqueue and publish calls whose parent span belongs to
 *     a function (engine-protocol §2.6 call spans), named by `eng.state.scope` /
 *     `messaging.destination.name` when the span carries them.
 */

export type { FlowKind };

export interface FlowNodeData extends Record<string, unknown> {
  kind: FlowKind;
  label: string;
  sub?: string;
  /** HTTP method, for the method colour (seed 2.8 "colored by method"). */
  method?: string;
  functionId?: string;
  trigger?: TriggerRecord;
  fn?: FunctionRecord;
  /** A state/queue node whose name the spans did not record. */
  unnamed?: boolean;
  /** A group standing for many nodes in the overview of a large graph (collapseFlowGraph): clicking it focuses on them. */
  group?: { query: string; kind?: FlowKind; count: number };
}

export type FlowEdgeKind = 'trigger' | 'uses' | 'observed';

export interface FlowEdge {
  id: string;
  source: string;
  target: string;
  kind: FlowEdgeKind;
  label?: string;
}

export interface FlowGraph {
  nodes: Array<{ id: string; data: FlowNodeData }>;
  edges: FlowEdge[];
}

export interface Uses {
  state: string[];
  queues: string[];
  events: string[];
}

function list(value: unknown): string[] {
  if (typeof value === 'string' && value !== '') return [value];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string' && v !== '');
  return [];
}

/** `metadata.uses` of a function (README.md): arrays or single strings, a few spellings accepted. */
export function usesOf(metadata: Record<string, unknown> | null | undefined): Uses {
  const uses = metadata?.uses;
  if (!uses || typeof uses !== 'object' || Array.isArray(uses)) return { state: [], queues: [], events: [] };
  const u = uses as Record<string, unknown>;
  return {
    state: [...new Set([...list(u.state), ...list(u.states), ...list(u.scopes)])],
    queues: [...new Set([...list(u.queues), ...list(u.queue)])],
    events: [...new Set([...list(u.events), ...list(u.topics)])],
  };
}

export interface ObservedUse {
  functionId: string;
  kind: 'state' | 'queue' | 'event';
  /** Scope, queue or topic, when the span recorded it. */
  name?: string;
}

const ENQUEUE = new Set(['engine::queue::enqueue', 'enqueue', 'eng::durable::publish', 'iii::durable::publish']);
const PUBLISH = new Set(['publish', 'engine::publish']);

/** Function → store relations seen in spans: a state/enqueue/publish call whose parent ran a function. */
export function observedUses(spans: StoredSpan[]): ObservedUse[] {
  const byId = new Map(spans.map((s) => [s.span_id, s]));
  const seen = new Map<string, ObservedUse>();
  for (const span of spans) {
    const target = functionIdOf(span);
    let kind: ObservedUse['kind'] | undefined;
    let name: string | undefined;
    if (target?.startsWith('state::') && target !== 'state::list_groups') {
      kind = 'state';
      name = firstAttr(span.attributes, ['eng.state.scope', 'state.scope', 'db.namespace']);
    } else if ((target && ENQUEUE.has(target)) || (span.kind === 'producer' && attr(span.attributes, 'messaging.destination.name'))) {
      kind = 'queue';
      name = firstAttr(span.attributes, ['messaging.destination.name', 'eng.queue.name']);
    } else if (target && PUBLISH.has(target)) {
      kind = 'event';
      name = firstAttr(span.attributes, ['messaging.destination.name', 'eng.topic']);
    }
    if (!kind || !span.parent_span_id) continue;
    const parent = byId.get(span.parent_span_id);
    const fn = parent ? functionIdOf(parent) : undefined;
    if (!fn || fn.startsWith('state::') || fn.startsWith('engine::') || ENQUEUE.has(fn) || PUBLISH.has(fn)) continue;
    const key = `${fn}\u0000${kind}\u0000${name ?? ''}`;
    if (!seen.has(key)) seen.set(key, { functionId: fn, kind, name });
  }
  return [...seen.values()];
}

const storeId = (kind: 'state' | 'queue' | 'event', name: string | undefined) => `${kind}:${name ?? '*'}`;

export function buildFlowGraph(input: {
  functions: FunctionRecord[];
  triggers: TriggerRecord[];
  observed: ObservedUse[];
  isSystemFunction: (fn: FunctionRecord) => boolean;
  isSystemTrigger: (t: TriggerRecord) => boolean;
  showSystem: boolean;
}): FlowGraph {
  const nodes = new Map<string, FlowNodeData>();
  const edges = new Map<string, FlowEdge>();
  const functions = input.functions.filter((f) => input.showSystem || !input.isSystemFunction(f));
  const known = new Set(functions.map((f) => f.function_id));
  const fnNode = (id: string) => `fn:${id}`;
  for (const fn of functions) {
    nodes.set(fnNode(fn.function_id), { kind: 'function', label: fn.function_id, sub: fn.worker_name, functionId: fn.function_id, fn });
  }
  const store = (kind: 'state' | 'queue' | 'event', name: string | undefined) => {
    const id = storeId(kind, name);
    if (!nodes.has(id)) {
      const fallback = kind === 'state' ? 'State store' : kind === 'queue' ? 'Queue' : 'Event';
      nodes.set(id, { kind, label: name ?? fallback, sub: name ? undefined : 'name not recorded in spans', unnamed: !name });
    }
    return id;
  };
  const edge = (source: string, target: string, kind: FlowEdgeKind, label?: string) => {
    const id = `${source}->${target}`;
    const existing = edges.get(id);
    // a declared relation also seen in traces stays declared
    if (existing && existing.kind !== 'observed') return;
    edges.set(id, { id, source, target, kind, label: label ?? existing?.label });
  };

  for (const t of input.triggers) {
    if (!known.has(t.function_id)) continue;
    if (!input.showSystem && input.isSystemTrigger(t)) continue;
    const kind = kindOf(t.trigger_type);
    const target = fnNode(t.function_id);
    if (kind === 'http') {
      const h = httpConfig(t.config);
      const id = `http:${t.id}`;
      nodes.set(id, { kind: 'http', label: h.path, method: h.method, sub: 'HTTP trigger', trigger: t, functionId: t.function_id });
      edge(id, target, 'trigger');
    } else if (kind === 'cron') {
      const id = `cron:${t.id}`;
      nodes.set(id, {
        kind: 'cron',
        label: cronExpression(t.config) || t.config_summary,
        sub: 'cron trigger',
        trigger: t,
        functionId: t.function_id,
      });
      edge(id, target, 'trigger');
    } else if (kind === 'event') {
      edge(store('event', topicOf(t.config) || undefined), target, 'trigger');
    } else if (kind === 'queue') {
      edge(store('queue', topicOf(t.config) || undefined), target, 'trigger');
    } else if (kind === 'state') {
      const scope = (t.config as { scope?: unknown } | null)?.scope;
      edge(store('state', typeof scope === 'string' ? scope : undefined), target, 'trigger', 'on change');
    } else {
      const id = `trigger:${t.id}`;
      nodes.set(id, {
        kind: 'trigger',
        label: summarise(t.trigger_type, t.config, t.config_summary),
        sub: `${t.trigger_type} trigger`,
        trigger: t,
        functionId: t.function_id,
      });
      edge(id, target, 'trigger');
    }
  }

  const declared = new Map<string, Uses>();
  for (const fn of functions) {
    const uses = usesOf(fn.metadata);
    declared.set(fn.function_id, uses);
    for (const scope of uses.state) edge(fnNode(fn.function_id), store('state', scope), 'uses');
    for (const queue of uses.queues) edge(fnNode(fn.function_id), store('queue', queue), 'uses');
    for (const topic of uses.events) edge(fnNode(fn.function_id), store('event', topic), 'uses');
  }
  for (const use of input.observed) {
    if (!known.has(use.functionId)) continue;
    const uses = declared.get(use.functionId);
    const declaredOfKind = use.kind === 'state' ? uses?.state : use.kind === 'queue' ? uses?.queues : uses?.events;
    // an unnamed observation adds nothing when the metadata already names the stores of that kind
    if (!use.name && declaredOfKind && declaredOfKind.length > 0) continue;
    edge(fnNode(use.functionId), store(use.kind, use.name), 'observed', 'seen in traces');
  }
  return { nodes: [...nodes].map(([id, data]) => ({ id, data })), edges: [...edges.values()] };
}

/**
 * The Flow page's search and kind filter (issue 19 §9): the nodes whose label, sub-label or
 * function id contains `query` (case-insensitive) and whose kind is among `kinds` (all kinds when
 * empty) are the matches; they are shown with their direct neighbours (what triggers them, what
 * they call or touch), so a match keeps its context. Without query or kinds the graph is returned
 * as is.
 */
export function filterFlowGraph(
  graph: FlowGraph,
  filter: { query?: string; kinds?: readonly FlowKind[] },
): FlowGraph & { matches: number } {
  const needle = filter.query?.trim().toLowerCase() ?? '';
  const kinds = filter.kinds && filter.kinds.length > 0 ? new Set(filter.kinds) : undefined;
  if (!needle && !kinds) return { ...graph, matches: graph.nodes.length };
  const hit = new Set<string>();
  for (const n of graph.nodes) {
    if (kinds && !kinds.has(n.data.kind)) continue;
    if (
      needle &&
      !n.data.label.toLowerCase().includes(needle) &&
      !(n.data.sub ?? '').toLowerCase().includes(needle) &&
      !(n.data.functionId ?? '').toLowerCase().includes(needle) &&
      !(n.data.method ?? '').toLowerCase().includes(needle)
    )
      continue;
    hit.add(n.id);
  }
  const keep = new Set(hit);
  for (const e of graph.edges) {
    if (hit.has(e.source)) keep.add(e.target);
    if (hit.has(e.target)) keep.add(e.source);
  }
  return {
    nodes: graph.nodes.filter((n) => keep.has(n.id)),
    edges: graph.edges.filter((e) => keep.has(e.source) && keep.has(e.target)),
    matches: hit.size,
  };
}

/** Past this many nodes the unfiltered Flow page shows the namespace overview (collapseFlowGraph). */
export const COLLAPSE_OVER_NODES = 400;

/** `orders::create` → `orders`; an id without `::` is its own namespace. */
export function namespaceOf(functionId: string): string {
  const at = functionId.lastIndexOf('::');
  return at > 0 ? functionId.slice(0, at) : functionId;
}

const GROUP_CAPTION: Partial<Record<FlowKind, [string, string]>> = {
  http: ['HTTP route', 'HTTP routes'],
  cron: ['schedule', 'schedules'],
  trigger: ['trigger', 'triggers'],
};

/**
 * The overview of a large graph (issue 19 §9): functions collapse into one node per namespace
 * (`bulk03::*`, "50 functions") and their HTTP routes, schedules and other per-trigger nodes into
 * one node per kind and namespace ("25 HTTP routes"); state stores, queues and topics stay, with
 * edges merged. Clicking a group focuses the page on it (its `group.query`).
 */
export function collapseFlowGraph(graph: FlowGraph): FlowGraph {
  const owner = new Map<string, string>();
  const nodes = new Map<string, FlowNodeData>();
  const members = new Map<string, number>();
  const fnNs = new Map<string, string>();
  for (const n of graph.nodes) {
    if (n.data.kind === 'function' && n.data.functionId) fnNs.set(n.id, namespaceOf(n.data.functionId));
  }
  // a trigger node belongs to the namespace of the function it calls
  const targetOf = new Map<string, string>();
  for (const e of graph.edges) if (fnNs.has(e.target) && !targetOf.has(e.source)) targetOf.set(e.source, e.target);
  for (const n of graph.nodes) {
    const d = n.data;
    let id = n.id;
    if (d.kind === 'function' && fnNs.has(n.id)) {
      const ns = fnNs.get(n.id) as string;
      id = `ns:${ns}`;
      if (!nodes.has(id)) nodes.set(id, { kind: 'function', label: `${ns}::*`, group: { query: `${ns}::`, count: 0 } });
    } else if (GROUP_CAPTION[d.kind] && targetOf.has(n.id)) {
      const ns = fnNs.get(targetOf.get(n.id) as string) as string;
      id = `grp:${d.kind}:${ns}`;
      if (!nodes.has(id))
        nodes.set(id, { kind: d.kind, label: '', sub: `to ${ns}::*`, group: { query: `${ns}::`, kind: d.kind, count: 0 } });
    } else nodes.set(id, d);
    members.set(id, (members.get(id) ?? 0) + 1);
    owner.set(n.id, id);
  }
  // captions once the groups are counted
  for (const [id, d] of nodes) {
    if (!d.group) continue;
    const count = members.get(id) ?? 0;
    d.group.count = count;
    if (d.kind === 'function') d.sub = `${count} ${count === 1 ? 'function' : 'functions'}`;
    else {
      const [one, many] = GROUP_CAPTION[d.kind] as [string, string];
      d.label = `${count} ${count === 1 ? one : many}`;
    }
  }
  const edges = new Map<string, FlowEdge>();
  for (const e of graph.edges) {
    const source = owner.get(e.source);
    const target = owner.get(e.target);
    if (!source || !target || source === target) continue;
    const id = `${source}->${target}`;
    const existing = edges.get(id);
    if (!existing || (existing.kind === 'observed' && e.kind !== 'observed')) {
      edges.set(id, { id, source, target, kind: e.kind, label: existing || e.kind === 'observed' ? undefined : e.label });
    }
  }
  return { nodes: [...nodes].map(([id, data]) => ({ id, data })), edges: [...edges.values()] };
}
