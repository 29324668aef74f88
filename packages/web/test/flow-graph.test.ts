import type { FunctionRecord, TriggerRecord } from '@eng/protocol';
import { describe, expect, it } from 'vitest';
import {
  buildLanes,
  chooseView,
  GRAPH_MAX_NODES,
  graphZoom,
  laneGroups,
  MIN_READABLE_ZOOM,
} from '../src/components/dashboard/app-flow-model.ts';
import { fastLayout } from '../src/components/flow/fast-layout.ts';
import { buildFlowGraph, COLLAPSE_OVER_NODES, collapseFlowGraph, filterFlowGraph, namespaceOf } from '../src/components/flow/flow-graph.ts';

// issue 19 §9: the Dashboard's application flow and the Flow page with large applications

const fn = (id: string, metadata?: Record<string, unknown>): FunctionRecord =>
  ({ function_id: id, worker_name: 'w', kind: 'user', metadata }) as unknown as FunctionRecord;
let nextTrigger = 0;
const trigger = (type: string, functionId: string, config: Record<string, unknown>): TriggerRecord =>
  ({ id: `t${nextTrigger++}`, trigger_type: type, function_id: functionId, config, config_summary: '', status: 'active' }) as TriggerRecord;

/** n functions in namespaces of 50, each with one HTTP route, every third using a state scope. */
function bigApp(n: number) {
  const functions: FunctionRecord[] = [];
  const triggers: TriggerRecord[] = [];
  for (let i = 0; i < n; i++) {
    const id = `ns${Math.floor(i / 50)}::f${i}`;
    functions.push(fn(id, i % 3 === 0 ? { uses: { state: [`scope-${i % 7}`] } } : undefined));
    triggers.push(trigger('http', id, { api_path: `r/${i}`, http_method: 'GET' }));
    if (i % 10 === 0) triggers.push(trigger('subscribe', id, { topic: `topic-${i % 5}` }));
  }
  return buildFlowGraph({
    functions,
    triggers,
    observed: [],
    isSystemFunction: () => false,
    isSystemTrigger: () => false,
    showSystem: false,
  });
}

describe('fastLayout', () => {
  it('places every node once, left to right along the edges, without overlaps', () => {
    const graph = bigApp(300);
    const size = { width: 230, height: 54 };
    const placed = fastLayout(graph.nodes, graph.edges, size);
    expect(placed.size).toBe(graph.nodes.length);
    for (const e of graph.edges) {
      expect((placed.get(e.source)?.x ?? 0) < (placed.get(e.target)?.x ?? 0)).toBe(true);
    }
    const cells = new Set([...placed.values()].map((p) => `${p.x},${p.y}`));
    expect(cells.size).toBe(placed.size);
  });

  it('survives a cycle and is fast on 2,000 functions', () => {
    const cyclic = fastLayout(
      [{ id: 'a' }, { id: 'b' }, { id: 'c' }],
      [
        { source: 'a', target: 'b' },
        { source: 'b', target: 'c' },
        { source: 'c', target: 'a' },
      ],
      { width: 10, height: 10 },
    );
    expect(cyclic.size).toBe(3);
    const graph = bigApp(2000);
    const t0 = performance.now();
    const placed = fastLayout(graph.nodes, graph.edges, { width: 230, height: 54 });
    const ms = performance.now() - t0;
    expect(placed.size).toBe(graph.nodes.length);
    expect(ms).toBeLessThan(500);
  });
});

describe('filterFlowGraph', () => {
  const graph = bigApp(120);

  it('keeps what matches the search with its direct neighbours', () => {
    const shown = filterFlowGraph(graph, { query: 'NS1::F60' });
    const ids = shown.nodes.map((n) => n.id).sort();
    // the function and its HTTP route (a trigger node carries the function id) match; its topic
    // (i % 10 === 0) and its state scope (i % 3 === 0) come along as neighbours
    expect(shown.matches).toBe(2);
    expect(ids).toContain('fn:ns1::f60');
    expect(ids.some((id) => id.startsWith('http:'))).toBe(true);
    expect(ids).toContain('event:topic-0');
    expect(ids).toContain('state:scope-4');
    expect(shown.edges.every((e) => ids.includes(e.source) && ids.includes(e.target))).toBe(true);
  });

  it('narrows by kind, combines kind and text, and leaves the graph whole without either', () => {
    const states = filterFlowGraph(graph, { kinds: ['state'] });
    expect(states.matches).toBe(7);
    expect(states.nodes.filter((n) => n.data.kind === 'state')).toHaveLength(7);
    expect(states.nodes.some((n) => n.data.kind === 'function')).toBe(true);
    expect(filterFlowGraph(graph, { kinds: ['state'], query: 'scope-3' }).matches).toBe(1);
    expect(filterFlowGraph(graph, { query: 'nothing-like-this' }).nodes).toHaveLength(0);
    expect(filterFlowGraph(graph, {}).nodes).toHaveLength(graph.nodes.length);
  });
});

describe('collapseFlowGraph', () => {
  it('turns a large graph into namespaces and groups of routes that open what they stand for', () => {
    const graph = bigApp(2000);
    expect(graph.nodes.length).toBeGreaterThan(COLLAPSE_OVER_NODES);
    const overview = collapseFlowGraph(graph);
    const ns = overview.nodes.find((n) => n.id === 'ns:ns3');
    expect(ns?.data).toMatchObject({ kind: 'function', label: 'ns3::*', sub: '50 functions', group: { query: 'ns3::', count: 50 } });
    const routes = overview.nodes.find((n) => n.id === 'grp:http:ns3');
    expect(routes?.data).toMatchObject({ kind: 'http', label: '50 HTTP routes', group: { query: 'ns3::', kind: 'http', count: 50 } });
    // stores stay themselves; edges are merged and point at the groups
    expect(overview.nodes.some((n) => n.id === 'state:scope-2')).toBe(true);
    expect(overview.edges.some((e) => e.source === 'grp:http:ns3' && e.target === 'ns:ns3')).toBe(true);
    expect(overview.edges.some((e) => e.source === 'ns:ns3' && e.target.startsWith('state:'))).toBe(true);
    expect(new Set(overview.edges.map((e) => e.id)).size).toBe(overview.edges.length);
    expect(overview.nodes.length).toBeLessThan(200);
    // the group's query shows exactly its functions
    expect(filterFlowGraph(graph, { query: 'ns3::', kinds: ['function'] }).matches).toBe(50);
  });

  it('names namespaces by the last ::', () => {
    expect(namespaceOf('orders::create')).toBe('orders');
    expect(namespaceOf('a::b::c')).toBe('a::b');
    expect(namespaceOf('plain')).toBe('plain');
  });
});

describe('Dashboard application flow', () => {
  const functions = [fn('orders::create'), fn('orders::get'), fn('fulfilment::reserve_stock')];
  const triggers = [
    trigger('http', 'orders::create', { api_path: 'orders', http_method: 'POST' }),
    trigger('http', 'orders::get', { api_path: 'orders/:id', http_method: 'GET' }),
    trigger('cron', 'orders::get', { expression: '* * * * *' }),
  ];

  it('draws a graph that fits at a readable zoom, else lists it', () => {
    expect(chooseView(10, { width: 530, height: 400 }, 1100)).toBe('graph');
    // narrower than 0.85 × the graph: the labels would shrink below ~11 px
    expect(chooseView(10, { width: 530, height: 400 }, 400)).toBe('list');
    // 200 triggers: a column far taller than the card
    expect(chooseView(60, { width: 530, height: 60 * 64 }, 1100)).toBe('list');
    expect(chooseView(GRAPH_MAX_NODES + 1, undefined, 1100)).toBe('list');
    expect(graphZoom({ width: 530 }, 2000)).toBe(1);
    expect(graphZoom({ width: 530 }, 300)).toBe(MIN_READABLE_ZOOM);
  });

  it('lists trigger → function by kind, functions without triggers last, filtered on either side', () => {
    const lanes = buildLanes(functions, triggers);
    const groups = laneGroups(lanes);
    expect(groups.map((g) => g.kind)).toEqual(['http', 'cron', 'function']);
    expect(groups[0]?.rows.map((r) => `${r.source?.label} → ${r.fn.label}`)).toEqual([
      'POST /orders → orders::create',
      'GET /orders/:id → orders::get',
    ]);
    expect(groups[2]?.rows.map((r) => r.fn.label)).toEqual(['fulfilment::reserve_stock']);
    const filtered = laneGroups(lanes, 'RESERVE');
    expect(filtered).toHaveLength(1);
    expect(laneGroups(lanes, '/orders/:id').flatMap((g) => g.rows.map((r) => r.fn.label))).toEqual(['orders::get']);
  });
});
