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
import {
  autoLayout,
  cornerOf,
  FRAME_MARGIN,
  frameView,
  GRID,
  gridColumns,
  MIN_FIT_ZOOM,
  placeNodes,
} from '../src/components/flow/flow-canvas.tsx';
import {
  buildFlowGraph,
  COLLAPSE_OVER_NODES,
  collapseFlowGraph,
  filterFlowGraph,
  flowView,
  namespaceOf,
  packNodeId,
  packUnconnected,
} from '../src/components/flow/flow-graph.ts';
import { NODE_SIZE } from '../src/components/flow/flow-node.tsx';

// issue 19 §9: the Dashboard's application flow and the Flow page with large applications

const fn = (id: string, metadata?: Record<string, unknown>, worker = 'w'): FunctionRecord =>
  ({ function_id: id, worker_name: worker, kind: 'user', metadata }) as unknown as FunctionRecord;
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

// issue 25 item 8: the orders demo and the chat stack on one engine, ~60 functions nothing triggers
describe('the default Flow view packs the functions without triggers', () => {
  /** A small demo (routes, a schedule, a queue, stores) plus a chat-like stack of functions with no trigger. */
  function demoPlusChat() {
    const functions = [
      fn('orders::create', { uses: { state: ['orders'], queues: ['fulfilment'] } }, 'orders'),
      fn('orders::get', { uses: { state: ['orders'] } }, 'orders'),
      fn('orders::receipt', { uses: { state: ['orders'] } }, 'orders'),
      fn('fulfilment::ship', undefined, 'orders'),
      fn('reports::hourly', undefined, 'orders'),
      fn('provider::openai::on-router-ready', undefined, 'provider-openai'),
      fn('provider::openai::refresh_models', undefined, 'provider-openai'),
      fn('context::compact', undefined, 'context'),
    ];
    for (let i = 0; i < 20; i++) functions.push(fn(`session::op_${String(i).padStart(2, '0')}`, undefined, 'session'));
    for (let i = 0; i < 9; i++) functions.push(fn(`approval::op_${i}`, undefined, 'approval'));
    for (let i = 0; i < 8; i++) functions.push(fn(`harness::op_${i}`, undefined, 'harness'));
    const triggers = [
      trigger('http', 'orders::create', { api_path: 'orders', http_method: 'POST' }),
      trigger('http', 'orders::get', { api_path: 'orders/:id', http_method: 'GET' }),
      trigger('cron', 'reports::hourly', { expression: '0 * * * * *' }),
      trigger('durable:subscriber', 'fulfilment::ship', { topic: 'fulfilment' }),
      trigger('router::ready', 'provider::openai::on-router-ready', {}),
    ];
    return buildFlowGraph({
      functions,
      triggers,
      observed: [],
      isSystemFunction: () => false,
      isSystemTrigger: () => false,
      showSystem: false,
    });
  }

  it('keeps the connected graph and one pack per worker with how many it holds', () => {
    const graph = demoPlusChat();
    const view = packUnconnected(graph);
    const ids = view.nodes.map((n) => n.id);
    // every function with a trigger or a declared store is there, none of the 38 without
    for (const id of ['fn:orders::create', 'fn:orders::get', 'fn:orders::receipt', 'fn:fulfilment::ship', 'fn:reports::hourly']) {
      expect(ids).toContain(id);
    }
    expect(ids).toContain('fn:provider::openai::on-router-ready');
    expect(ids.some((id) => id.startsWith('fn:session::') || id.startsWith('fn:approval::') || id.startsWith('fn:harness::'))).toBe(false);
    const packs = view.nodes.filter((n) => n.data.pack).map((n) => [n.id, n.data.pack?.count, n.data.pack?.expanded, n.data.sub]);
    expect(packs).toEqual([
      [packNodeId('approval'), 9, false, '9 functions · no trigger'],
      [packNodeId('harness'), 8, false, '8 functions · no trigger'],
      [packNodeId('session'), 20, false, '20 functions · no trigger'],
    ]);
    // a worker with one such function shows the function itself (a pack of one hides nothing)
    expect(ids).toContain('fn:context::compact');
    expect(ids).toContain('fn:provider::openai::refresh_models');
    expect(view.nodes.find((n) => n.id === 'fn:context::compact')?.data.packKey).toBe('context');
    expect(view.unconnected).toEqual({ functions: 39, packs: 3, packed: 37, hidden: 37, connectedFunctions: 6 });
    // the edges are the graph's: nothing points at a pack
    expect(view.edges).toEqual(graph.edges);
    expect(view.nodes.length).toBe(graph.nodes.length - 37 + 3);
  });

  it('shows every function when asked, a pack when opened, and the pack of a node asked for', () => {
    const graph = demoPlusChat();
    const all = packUnconnected(graph, { all: true });
    expect(all.nodes.filter((n) => n.data.kind === 'function' && n.data.functionId)).toHaveLength(
      graph.nodes.filter((n) => n.data.functionId && n.data.kind === 'function').length,
    );
    expect(all.unconnected.hidden).toBe(0);
    expect(all.nodes.filter((n) => n.data.pack).every((n) => n.data.pack?.expanded)).toBe(true);
    // each pack is followed by its functions
    const at = all.nodes.findIndex((n) => n.id === packNodeId('harness'));
    expect(all.nodes.slice(at + 1, at + 9).map((n) => n.data.packKey)).toEqual(Array(8).fill('harness'));

    const one = packUnconnected(graph, { open: ['harness'] });
    expect(one.nodes.filter((n) => n.data.packKey === 'harness')).toHaveLength(8);
    expect(one.nodes.some((n) => n.id.startsWith('fn:session::'))).toBe(false);
    expect(one.unconnected.hidden).toBe(29);

    const linked = packUnconnected(graph, { nodes: ['fn:session::op_07', undefined] });
    expect(linked.nodes.find((n) => n.id === packNodeId('session'))?.data.pack?.expanded).toBe(true);
    expect(linked.nodes.some((n) => n.id === 'fn:session::op_07')).toBe(true);
  });

  it('a search or a kind chip finds packed functions; without them the view is packed', () => {
    const graph = demoPlusChat();
    const packed = flowView(graph, {});
    expect(packed.mode).toBe('packed');
    expect(packed.nodes.some((n) => n.id === 'fn:session::op_07')).toBe(false);
    const found = flowView(graph, { query: 'session::op_07' });
    expect(found).toMatchObject({ mode: 'filtered', matches: 1 });
    expect(found.nodes.map((n) => n.id)).toEqual(['fn:session::op_07']);
    expect(flowView(graph, { query: 'harness' }).nodes).toHaveLength(8);
    // the Function chip: every function, packed or not
    expect(flowView(graph, { kinds: ['function'] }).matches).toBe(graph.nodes.filter((n) => n.data.kind === 'function').length);
    // the counts of the packs stay those of the whole graph while filtering
    expect(found.unconnected.packed).toBe(37);
    // a node asked for opens its pack
    expect(flowView(graph, { node: 'fn:harness::op_3' }).nodes.some((n) => n.id === 'fn:harness::op_3')).toBe(true);
    expect(flowView(graph, { showUnconnected: true }).nodes.some((n) => n.id === 'fn:session::op_07')).toBe(true);
  });

  it('a large graph: the overview summarises the connected part, the packs stay', () => {
    const big = bigApp(2000);
    const loose = Array.from({ length: 30 }, (_, i) => fn(`chat::op_${i}`, undefined, 'chat'));
    const graph = buildFlowGraph({
      functions: [...big.nodes.flatMap((n) => (n.data.fn ? [n.data.fn] : [])), ...loose],
      triggers: big.nodes.flatMap((n) => (n.data.trigger ? [n.data.trigger] : [])),
      observed: [],
      isSystemFunction: () => false,
      isSystemTrigger: () => false,
      showSystem: false,
    });
    const view = flowView(graph, {});
    expect(view.mode).toBe('overview');
    expect(view.nodes.find((n) => n.id === packNodeId('chat'))?.data.pack?.count).toBe(30);
    expect(view.nodes.some((n) => n.id === 'ns:chat')).toBe(false);
  });

  it('an engine whose functions have no trigger is all packs', () => {
    const functions = [
      ...Array.from({ length: 12 }, (_, i) => fn(`inventory::t${i}`, undefined, 'inventory')),
      fn('mail::send', undefined, 'mail'),
    ];
    const graph = buildFlowGraph({
      functions,
      triggers: [],
      observed: [],
      isSystemFunction: () => false,
      isSystemTrigger: () => false,
      showSystem: false,
    });
    const view = packUnconnected(graph);
    expect(view.nodes.map((n) => n.id)).toEqual([packNodeId('inventory'), 'fn:mail::send']);
    expect(view.unconnected).toMatchObject({ functions: 13, packed: 12, connectedFunctions: 0 });
  });

  it('lays the packs out in rows below the connected graph, never in one column', () => {
    const graph = demoPlusChat();
    for (const view of [packUnconnected(graph), packUnconnected(graph, { all: true })]) {
      const placed = autoLayout(view);
      expect(placed.size).toBe(view.nodes.length);
      const linked = new Set(view.edges.flatMap((e) => [e.source, e.target]));
      const connectedBottom = Math.max(
        ...view.nodes.filter((n) => linked.has(n.id)).map((n) => (placed.get(n.id)?.y ?? 0) + NODE_SIZE.height),
      );
      const loose = view.nodes.filter((n) => !linked.has(n.id));
      for (const n of loose) expect(placed.get(n.id)?.y).toBeGreaterThanOrEqual(connectedBottom + GRID.below);
      // several columns, and no two nodes on one spot
      expect(new Set(loose.map((n) => placed.get(n.id)?.x)).size).toBeGreaterThanOrEqual(4);
      expect(new Set([...placed.values()].map((p) => `${p.x},${p.y}`)).size).toBe(placed.size);
    }
    // sixty loose functions: wider than tall
    expect(gridColumns(60, 0)).toBeGreaterThanOrEqual(6);
    expect(gridColumns(3, 0)).toBe(3);
    expect(gridColumns(10, 2000)).toBe(Math.min(10, Math.floor((2000 + GRID.gapX) / (NODE_SIZE.width + GRID.gapX))));
  });

  it('keeps where the connected nodes were, and places unpinned loose nodes afresh next to their pack', () => {
    const graph = demoPlusChat();
    const first = placeNodes(packUnconnected(graph), new Map());
    // packs are not pinned (a later opening lays them out again); connected nodes are
    expect(first.pinned.has(packNodeId('session'))).toBe(false);
    expect(first.pinned.has('fn:orders::create')).toBe(true);
    const opened = placeNodes(packUnconnected(graph, { open: ['session'] }), first.pinned);
    expect(opened.placed.get('fn:orders::create')).toEqual(first.placed.get('fn:orders::create'));
    const pack = opened.placed.get(packNodeId('session'));
    const member = opened.placed.get('fn:session::op_00');
    expect(member && pack && member.y >= pack.y && member.y <= pack.y + 2 * (NODE_SIZE.height + GRID.gapY)).toBe(true);
    // a dragged loose node keeps its place
    const dragged = new Map(first.pinned).set(packNodeId('session'), { x: -500, y: -500 });
    expect(placeNodes(packUnconnected(graph), dragged).placed.get(packNodeId('session'))).toEqual({ x: -500, y: -500 });
  });

  it('frames the whole graph when it reads at MIN_FIT_ZOOM, else the focus, else a corner at a readable zoom', () => {
    const size = { width: 1200, height: 700 };
    const small = { x: 0, y: 0, w: 1000, h: 400 };
    expect(frameView(small, size).zoom).toBeGreaterThanOrEqual(MIN_FIT_ZOOM);
    const tall = { x: 0, y: 0, w: 1800, h: 3000 };
    const focus = { x: 0, y: 0, w: 1800, h: 600 };
    const focused = frameView(tall, size, focus);
    expect(focused.zoom).toBeCloseTo((size.width - FRAME_MARGIN.left - FRAME_MARGIN.right) / 1800, 5);
    // the focus sits at the top (what follows it shows below)
    expect(focused.y).toBe(FRAME_MARGIN.top);
    const corner = frameView(tall, { width: 390, height: 500 }, focus, { x: 100, y: 200 });
    expect(corner.zoom).toBeGreaterThanOrEqual(MIN_FIT_ZOOM);
    expect(corner).toMatchObject({ x: FRAME_MARGIN.left - 100 * corner.zoom, y: FRAME_MARGIN.top - 200 * corner.zoom });
    // reading starts at the top node of the leftmost column
    expect(
      cornerOf(
        new Map([
          ['a', { x: 0, y: 300 }],
          ['b', { x: 0, y: 120 }],
          ['c', { x: 300, y: 0 }],
        ]),
      ),
    ).toEqual({ x: 0, y: 120 });
  });
});
