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
  /** A pack of functions without triggers (packUnconnected): clicking it opens or closes it. */
  pack?: FlowPack;
  /** The pack an unconnected function belongs to, when it is shown. */
  packKey?: string;
}

/** Functions with no trigger and no known relation, packed by worker (issue 25 item 8). */
export interface FlowPack {
  /** The worker that registered them (their namespace when the record names no worker). */
  key: string;
  count: number;
  /** Its functions are shown after it. */
  expanded: boolean;
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
      const summary = summarise(t.trigger_type, t.config, t.config_summary);
      // a trigger with nothing to configure (router::ready) is named by its type, not "—"
      const bare = !summary || summary === '—';
      nodes.set(id, {
        kind: 'trigger',
        label: bare ? t.trigger_type : summary,
        sub: bare ? 'trigger' : `${t.trigger_type} trigger`,
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

/** Node id of the pack of the functions without triggers of one worker. */
export const packNodeId = (key: string) => `unconnected:${key}`;

/** The pack a function without edges goes to: its worker, else its namespace. */
export function packKeyOf(d: FlowNodeData): string {
  return d.fn?.worker_name || (d.functionId ? namespaceOf(d.functionId) : d.label);
}

export interface UnconnectedSummary {
  /** Functions with no edge at all: no trigger, nothing declared in metadata.uses, nothing seen in traces. */
  functions: number;
  /** Packs drawn (workers with more than one such function). */
  packs: number;
  /** Functions in packs, open or not: what "Show unconnected" reveals. */
  packed: number;
  /** Functions currently hidden inside closed packs. */
  hidden: number;
  /** Functions that have an edge (the connected graph's functions). */
  connectedFunctions: number;
}

/**
 * The Flow page's default view (issue 25 item 8): the connected graph as it is, and the functions
 * nothing triggers and nothing relates (a chat stack registers dozens) packed by worker: one node
 * "session · 20 functions without triggers" instead of twenty in a column that fit-view shrinks
 * to specks. A worker with a single such function shows the function itself (a pack of one hides
 * nothing). A pack is open, its functions following it, when `reveal.all` is set, when its key is
 * in `reveal.open`, or when one of its functions is in `reveal.nodes` (a selected node, a link).
 * Packs come after the connected nodes, sorted by key, each followed by its functions when open.
 */
export function packUnconnected(
  graph: FlowGraph,
  reveal: { all?: boolean; open?: readonly string[]; nodes?: readonly (string | undefined)[] } = {},
): FlowGraph & { unconnected: UnconnectedSummary } {
  const linked = new Set<string>();
  for (const e of graph.edges) {
    linked.add(e.source);
    linked.add(e.target);
  }
  const connected: FlowGraph['nodes'] = [];
  const byKey = new Map<string, FlowGraph['nodes']>();
  let connectedFunctions = 0;
  for (const n of graph.nodes) {
    if (n.data.kind === 'function' && n.data.functionId && !linked.has(n.id)) {
      const key = packKeyOf(n.data);
      const members = byKey.get(key) ?? [];
      members.push(n);
      byKey.set(key, members);
      continue;
    }
    if (n.data.kind === 'function' && n.data.functionId) connectedFunctions++;
    connected.push(n);
  }
  const open = new Set(reveal.open ?? []);
  const wanted = new Set(reveal.nodes?.filter((id): id is string => !!id) ?? []);
  const nodes = [...connected];
  let functions = 0;
  let packs = 0;
  let packed = 0;
  let hidden = 0;
  for (const key of [...byKey.keys()].sort((a, b) => a.localeCompare(b))) {
    const members = (byKey.get(key) as FlowGraph['nodes']).sort((a, b) => a.id.localeCompare(b.id));
    functions += members.length;
    const member = (n: FlowGraph['nodes'][number]) => ({ id: n.id, data: { ...n.data, packKey: key } });
    if (members.length === 1) {
      nodes.push(member(members[0] as FlowGraph['nodes'][number]));
      continue;
    }
    packs++;
    packed += members.length;
    const expanded = !!reveal.all || open.has(key) || members.some((n) => wanted.has(n.id));
    const count = members.length;
    nodes.push({
      id: packNodeId(key),
      data: {
        kind: 'function',
        label: key,
        sub: `${count} functions · no trigger`,
        pack: { key, count, expanded },
      },
    });
    if (expanded) nodes.push(...members.map(member));
    else hidden += count;
  }
  return { nodes, edges: graph.edges, unconnected: { functions, packs, packed, hidden, connectedFunctions } };
}

/** What the Flow page draws for a graph and the view's settings (URL and preference). */
export interface FlowViewOptions {
  /** Search text (`?q=`). */
  query?: string;
  /** Kind chips (`?kinds=`). */
  kinds?: readonly FlowKind[];
  /** "Show unconnected": every pack open. */
  showUnconnected?: boolean;
  /** Packs opened one by one (`?open=`). */
  open?: readonly string[];
  /** The selected node (`?node=`): its pack opens. */
  node?: string;
}

export interface FlowView extends FlowGraph {
  mode: 'filtered' | 'overview' | 'packed';
  /** Nodes that match the search or kinds (filtered), else the number of nodes shown. */
  matches: number;
  /** The functions without triggers of the whole graph (the counts do not depend on the filter). */
  unconnected: UnconnectedSummary;
}

/**
 * The Flow page's view (issue 25 item 8): a search or kind filter narrows the whole graph, packed
 * functions included (a search for a packed function shows it); otherwise the connected graph
 * with the functions without triggers packed by worker, and past COLLAPSE_OVER_NODES the
 * namespace overview of that.
 */
export function flowView(graph: FlowGraph, options: FlowViewOptions): FlowView {
  const packed = packUnconnected(graph, { all: options.showUnconnected, open: options.open, nodes: [options.node] });
  const filtered = !!options.query?.trim() || (options.kinds?.length ?? 0) > 0;
  if (filtered) {
    return { ...filterFlowGraph(graph, { query: options.query, kinds: options.kinds }), mode: 'filtered', unconnected: packed.unconnected };
  }
  if (packed.nodes.length > COLLAPSE_OVER_NODES) {
    return { ...collapseFlowGraph(packed), mode: 'overview', matches: 0, unconnected: packed.unconnected };
  }
  return { ...packed, mode: 'packed', matches: packed.nodes.length };
}
