import type { FunctionRecord } from '../../api/functions.ts';
import type { TriggerRecord } from '../../api/triggers.ts';
import { summarise } from '../../lib/trigger-config.ts';
import { KIND_ORDER, kindOf, type TriggerKind } from '../../lib/trigger-kind.ts';

/**
 * What the Dashboard's application flow shows (issue 19 §9): sources of work (HTTP routes,
 * schedules, topics, queues, state scopes, streams) and the functions they reach. Pure data, so
 * the choice between the graph and the list is unit-tested; dagre runs in app-flow.tsx.
 */
export type LaneKind = TriggerKind | 'function';

export interface LaneNode extends Record<string, unknown> {
  id: string;
  label: string;
  sub?: string;
  kind: LaneKind;
  target: { fn?: string; trigger?: string };
}

export interface LaneEdge {
  id: string;
  source: string;
  target: string;
}

export interface Lanes {
  nodes: LaneNode[];
  edges: LaneEdge[];
}

/** One source of work per distinct (kind, summary); one node per function, triggered or not. */
export function buildLanes(functions: FunctionRecord[], triggers: TriggerRecord[]): Lanes {
  const nodes = new Map<string, LaneNode>();
  const edges: LaneEdge[] = [];
  const known = new Set(functions.map((f) => f.function_id));
  for (const t of triggers) {
    if (!known.has(t.function_id)) continue;
    const kind = kindOf(t.trigger_type);
    const label = summarise(t.trigger_type, t.config, t.config_summary);
    const sourceId = `src:${kind}:${label}`;
    if (!nodes.has(sourceId)) nodes.set(sourceId, { id: sourceId, label, sub: t.trigger_type, kind, target: { trigger: t.id } });
    edges.push({ id: `${sourceId}->${t.function_id}:${t.id}`, source: sourceId, target: `fn:${t.function_id}` });
  }
  for (const fn of functions) {
    const id = `fn:${fn.function_id}`;
    nodes.set(id, { id, label: fn.function_id, sub: fn.worker_name, kind: 'function', target: { fn: fn.function_id } });
  }
  return { nodes: [...nodes.values()], edges };
}

/** Node box and spacing of the graph (px at zoom 1). */
export const NODE_W = 220;
export const NODE_H = 50;
/** Labels are 13 px at zoom 1: below this zoom they fall under ~11 px, so the graph is not shrunk further. */
export const MIN_READABLE_ZOOM = 0.85;
/** Past these the graph would be a tall column to scroll past on the Dashboard: the list reads better. */
export const GRAPH_MAX_NODES = 80;
export const GRAPH_MAX_HEIGHT = 1100;

export type FlowView = 'graph' | 'list';

/**
 * The graph when it fits the card at a readable zoom (its full height shown, no inner scrolling),
 * else the list. `graphSize` is dagre's laid-out size, absent when the graph was too big to lay out.
 */
export function chooseView(nodeCount: number, graphSize: { width: number; height: number } | undefined, cardWidth: number): FlowView {
  if (nodeCount > GRAPH_MAX_NODES || !graphSize) return 'list';
  if (cardWidth > 0 && cardWidth / graphSize.width < MIN_READABLE_ZOOM) return 'list';
  return graphZoom(graphSize, cardWidth) * graphSize.height > GRAPH_MAX_HEIGHT ? 'list' : 'graph';
}

/** Zoom of the graph in a card `cardWidth` wide: 1 when it fits, never below MIN_READABLE_ZOOM. */
export function graphZoom(graphSize: { width: number }, cardWidth: number): number {
  if (cardWidth <= 0) return 1;
  return Math.max(MIN_READABLE_ZOOM, Math.min(1, cardWidth / graphSize.width));
}

export interface LaneGroup {
  kind: LaneKind;
  rows: Array<{ source: LaneNode | undefined; fn: LaneNode }>;
}

/**
 * The list view: one row per trigger → function (a function without triggers once, under
 * "Called directly"), grouped by the kind of source in the Triggers page's order, filtered by a
 * case-insensitive substring of either side.
 */
export function laneGroups(lanes: Lanes, filter = ''): LaneGroup[] {
  const byId = new Map(lanes.nodes.map((n) => [n.id, n]));
  const needle = filter.trim().toLowerCase();
  const matches = (...nodes: Array<LaneNode | undefined>) => !needle || nodes.some((n) => n?.label.toLowerCase().includes(needle));
  const groups = new Map<LaneKind, LaneGroup>();
  const add = (kind: LaneKind, source: LaneNode | undefined, fn: LaneNode) => {
    let group = groups.get(kind);
    if (!group) {
      group = { kind, rows: [] };
      groups.set(kind, group);
    }
    group.rows.push({ source, fn });
  };
  const triggered = new Set<string>();
  for (const e of lanes.edges) {
    const source = byId.get(e.source);
    const fn = byId.get(e.target);
    if (!source || !fn) continue;
    triggered.add(fn.id);
    if (matches(source, fn)) add(source.kind, source, fn);
  }
  for (const n of lanes.nodes) {
    if (n.kind === 'function' && !triggered.has(n.id) && matches(n)) add('function', undefined, n);
  }
  const order: LaneKind[] = [...KIND_ORDER, 'function'];
  return [...groups.values()].sort((a, b) => order.indexOf(a.kind) - order.indexOf(b.kind));
}
