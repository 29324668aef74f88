import '@xyflow/react/dist/style.css';
import {
  applyNodeChanges,
  Background,
  BackgroundVariant,
  Controls,
  type Edge,
  MarkerType,
  MiniMap,
  type Node,
  type NodeChange,
  Panel,
  Position,
  ReactFlow,
  ReactFlowProvider,
  useReactFlow,
  useStoreApi,
  type Viewport,
} from '@xyflow/react';
import { LayoutGrid, Maximize, Package } from 'lucide-react';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { useTheme } from '../../lib/theme.ts';
import { Button } from '../ui/button.tsx';
import { layoutGraph } from './dagre-layout.ts';
import { fastLayout } from './fast-layout.ts';
import type { FlowGraph, FlowNodeData } from './flow-graph.ts';
import { FlowNode, KIND_VISUAL, NODE_SIZE } from './flow-node.tsx';

/**
 * The Flow canvas (seed 2.8): React Flow, laid out by dagre, scroll to zoom, drag the background
 * to pan, drag a node to move it (the page saves the layout), click a node for details. Its own
 * lazy chunk (React Flow + dagre stay out of the initial bundle).
 */
type Positions = Map<string, { x: number; y: number }>;

const nodeTypes = { flow: FlowNode };

/** Where FlowNode's two 6 px handles sit (left and right middle), so nodes need no measuring pass. */
const NODE_HANDLES = [
  { type: 'target' as const, position: Position.Left, x: -3, y: NODE_SIZE.height / 2 - 3, width: 6, height: 6 },
  { type: 'source' as const, position: Position.Right, x: NODE_SIZE.width - 3, y: NODE_SIZE.height / 2 - 3, width: 6, height: 6 },
];

/** dagre's layout is worth its cost up to this size; past it the linear layered layout is used (issue 19 §9). */
export const DAGRE_MAX_NODES = 150;
export const DAGRE_MAX_EDGES = 300;
/** A first view fits the graph when that keeps labels readable, else shows its top-left corner at this zoom (frameView). */
export const MIN_FIT_ZOOM = 0.55;
export const CORNER_ZOOM = 0.8;
/** Past this many nodes the minimap (one element per node) costs more than it helps. */
export const MINIMAP_MAX_NODES = 400;
/** Past this many nodes a graph is big: only the nodes on screen and the edges with an end near it are drawn. */
export const EDGE_CULL_OVER_NODES = 150;

/** Nodes that have at least one edge. */
function linkedIds(graph: FlowGraph): Set<string> {
  const linked = new Set<string>();
  for (const e of graph.edges) {
    linked.add(e.source);
    linked.add(e.target);
  }
  return linked;
}

/** A left-to-right layered layout of nodes with edges: dagre, or the linear layout for big graphs. */
function layoutConnected(nodes: FlowGraph['nodes'], edges: FlowGraph['edges']): Positions {
  if (nodes.length === 0) return new Map();
  return nodes.length > DAGRE_MAX_NODES || edges.length > DAGRE_MAX_EDGES
    ? fastLayout(nodes, edges, NODE_SIZE, { nodesep: 22, ranksep: 64 })
    : layoutGraph(
        nodes.map((n) => ({ id: n.id, ...NODE_SIZE })),
        edges,
        { direction: 'LR', nodesep: 22, ranksep: 64 },
      );
}

/** The grid of nodes without edges: gaps between cells, and the space between the graph and it. */
export const GRID = { gapX: 24, gapY: 22, below: 72 };

/**
 * How many columns the grid of `count` unconnected nodes gets: at least as wide as the graph above
 * it, and wide rather than tall (about 16:10), never a column (issue 25 item 8: sixty functions in
 * one column made fit-view shrink everything to specks).
 */
export function gridColumns(count: number, graphWidth: number): number {
  const cellW = NODE_SIZE.width + GRID.gapX;
  const cellH = NODE_SIZE.height + GRID.gapY;
  const byAspect = Math.ceil(Math.sqrt((1.6 * count * cellH) / cellW));
  const byWidth = Math.floor((graphWidth + GRID.gapX) / cellW);
  return Math.max(1, Math.min(count, Math.max(4, byAspect, byWidth)));
}

/**
 * Nodes without edges (packs of functions without triggers, and their functions when open) in
 * rows from `origin`, in the order given. A pack and the functions that follow it start a new row
 * unless they fit in what is left of the current one.
 */
export function gridLayout(nodes: FlowGraph['nodes'], origin: { x: number; y: number }, columns: number): Positions {
  const blocks: Array<FlowGraph['nodes']> = [];
  for (const n of nodes) {
    const last = blocks[blocks.length - 1];
    const key = n.data.pack?.key ?? n.data.packKey;
    const lastKey = last?.[0]?.data.pack?.key ?? last?.[0]?.data.packKey;
    if (last && key !== undefined && key === lastKey && !n.data.pack) last.push(n);
    else blocks.push([n]);
  }
  const out: Positions = new Map();
  let row = 0;
  let col = 0;
  for (const block of blocks) {
    if (col > 0 && block.length > columns - col) {
      row++;
      col = 0;
    }
    for (const n of block) {
      out.set(n.id, {
        x: origin.x + col * (NODE_SIZE.width + GRID.gapX),
        y: origin.y + row * (NODE_SIZE.height + GRID.gapY),
      });
      col++;
      if (col === columns) {
        row++;
        col = 0;
      }
    }
  }
  return out;
}

/** The grid of `isolated` below the box of the connected graph (or at the origin when there is none). */
function gridBelow(isolated: FlowGraph['nodes'], box: { x: number; y: number; w: number; h: number } | undefined): Positions {
  const origin = box ? { x: box.x, y: box.y + box.h + GRID.below } : { x: 16, y: 16 };
  return gridLayout(isolated, origin, gridColumns(isolated.length, box?.w ?? 0));
}

/** A fresh layout of the whole graph: the connected part left to right, the nodes without edges in a grid below it. */
export function autoLayout(graph: FlowGraph): Positions {
  const linked = linkedIds(graph);
  const out = layoutConnected(
    graph.nodes.filter((n) => linked.has(n.id)),
    graph.edges,
  );
  const isolated = graph.nodes.filter((n) => !linked.has(n.id));
  if (isolated.length > 0) for (const [id, p] of gridBelow(isolated, boundsOf(out))) out.set(id, p);
  return out;
}

/**
 * Positions for every node. `pinned` are the ones to keep (and save): the connected nodes (known
 * ones stay, new ones are laid out below them) and nodes without edges that were dragged. The
 * other nodes without edges are placed in the grid below the connected graph each time, so opening
 * a pack or showing every unconnected function lays them out next to their pack, not under a
 * stale position.
 */
export function placeNodes(graph: FlowGraph, known: Positions): { placed: Positions; pinned: Positions } {
  const linked = linkedIds(graph);
  const connected = graph.nodes.filter((n) => linked.has(n.id));
  const present = connected.filter((n) => known.has(n.id));
  const missing = connected.filter((n) => !known.has(n.id));
  const pinned: Positions = new Map(present.map((n) => [n.id, known.get(n.id) as { x: number; y: number }]));
  if (missing.length > 0) {
    const laid = layoutConnected(connected, graph.edges);
    let offsetY = 0;
    if (present.length > 0) {
      const bottom = Math.max(...present.map((n) => (pinned.get(n.id)?.y ?? 0) + NODE_SIZE.height));
      const top = Math.min(...missing.map((n) => laid.get(n.id)?.y ?? 0));
      offsetY = bottom + 60 - top;
    }
    for (const n of missing) {
      const p = laid.get(n.id) ?? { x: 0, y: 0 };
      pinned.set(n.id, { x: p.x, y: p.y + offsetY });
    }
  }
  const free: FlowGraph['nodes'] = [];
  for (const n of graph.nodes) {
    if (linked.has(n.id)) continue;
    const p = known.get(n.id);
    if (p) pinned.set(n.id, p);
    else free.push(n);
  }
  const placed: Positions = new Map(pinned);
  if (free.length > 0) {
    const box = boundsOf(new Map(connected.map((n) => [n.id, pinned.get(n.id) as { x: number; y: number }])));
    for (const [id, p] of gridBelow(free, box)) placed.set(id, p);
  }
  return { placed, pinned };
}

/** The box around every node (top-left corners plus the node size). */
function boundsOf(positions: Positions): { x: number; y: number; w: number; h: number } | undefined {
  let x0 = Number.POSITIVE_INFINITY;
  let y0 = Number.POSITIVE_INFINITY;
  let x1 = Number.NEGATIVE_INFINITY;
  let y1 = Number.NEGATIVE_INFINITY;
  for (const p of positions.values()) {
    x0 = Math.min(x0, p.x);
    y0 = Math.min(y0, p.y);
    x1 = Math.max(x1, p.x + NODE_SIZE.width);
    y1 = Math.max(y1, p.y + NODE_SIZE.height);
  }
  return Number.isFinite(x0) ? { x: x0, y: y0, w: x1 - x0, h: y1 - y0 } : undefined;
}

/** Room kept free around a framed graph: the legend and the buttons sit in a strip along the top, the zoom controls bottom left. */
export const FRAME_MARGIN = { top: 56, right: 24, bottom: 24, left: 56 };

/**
 * The first view of a graph (issue 25 item 8): all of it when that keeps it readable (zoom ≥
 * MIN_FIT_ZOOM), else the `focus` nodes (the connected graph on arrival, the packs a person opened)
 * framed the same way, else the top-left corner of the focus (or of the graph) at CORNER_ZOOM; the
 * minimap and the wheel reach the rest.
 */
export function frameView(
  box: { x: number; y: number; w: number; h: number },
  size: { width: number; height: number },
  focus?: { x: number; y: number; w: number; h: number },
  corner?: { x: number; y: number },
): Viewport {
  const w = size.width - FRAME_MARGIN.left - FRAME_MARGIN.right;
  const h = size.height - FRAME_MARGIN.top - FRAME_MARGIN.bottom;
  const fitOf = (b: { w: number; h: number }) => Math.min(1.1, w / b.w, h / b.h);
  // the whole graph is centred; a part of it sits at the top, what follows it showing below
  const place = (b: { x: number; y: number; w: number; h: number }, zoom: number, top: boolean): Viewport => ({
    x: FRAME_MARGIN.left + (w - b.w * zoom) / 2 - b.x * zoom,
    y: FRAME_MARGIN.top + (top ? 0 : (h - b.h * zoom) / 2) - b.y * zoom,
    zoom,
  });
  if (fitOf(box) >= MIN_FIT_ZOOM) return place(box, fitOf(box), false);
  const target = focus ?? box;
  const zoom = fitOf(target);
  if (zoom >= MIN_FIT_ZOOM) return place(target, zoom, true);
  const at = corner ?? target;
  return { x: FRAME_MARGIN.left - at.x * CORNER_ZOOM, y: FRAME_MARGIN.top - at.y * CORNER_ZOOM, zoom: CORNER_ZOOM };
}

/**
 * Where reading starts: the top node of the leftmost column (a left-to-right graph's sources),
 * not the corner of the bounding box, which is often empty.
 */
export function cornerOf(positions: Positions): { x: number; y: number } | undefined {
  let x0 = Number.POSITIVE_INFINITY;
  for (const p of positions.values()) x0 = Math.min(x0, p.x);
  let y0 = Number.POSITIVE_INFINITY;
  for (const p of positions.values()) if (p.x < x0 + NODE_SIZE.width / 2) y0 = Math.min(y0, p.y);
  return Number.isFinite(y0) ? { x: x0, y: y0 } : undefined;
}

function cssVar(name: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || '#888';
}

export default function FlowCanvas(props: {
  graph: FlowGraph;
  /** A search or kind filter is on: the subset is laid out afresh and cannot be dragged (the saved layout is the whole graph's). */
  filtered: boolean;
  /** Changes when the filter does: the view is framed again (live updates of the same view keep it). */
  viewKey: string;
  /** Nodes to frame when the whole graph is too big to read at once (the packs just opened). */
  focus?: readonly string[];
  saved: Record<string, { x: number; y: number }> | null;
  /** Bumped by "Auto-organize": forget every position and lay out afresh. */
  layoutEpoch: number;
  onLayoutChange: (positions: Record<string, { x: number; y: number }>) => void;
  onSelect: (id: string | undefined) => void;
  onAutoOrganize: () => void;
}) {
  return (
    <ReactFlowProvider>
      <Canvas {...props} />
    </ReactFlowProvider>
  );
}

function Canvas({
  graph,
  filtered,
  viewKey,
  focus,
  saved,
  layoutEpoch,
  onLayoutChange,
  onSelect,
  onAutoOrganize,
}: {
  graph: FlowGraph;
  filtered: boolean;
  viewKey: string;
  focus?: readonly string[];
  saved: Record<string, { x: number; y: number }> | null;
  layoutEpoch: number;
  onLayoutChange: (positions: Record<string, { x: number; y: number }>) => void;
  onSelect: (id: string | undefined) => void;
  onAutoOrganize: () => void;
}) {
  const theme = useTheme();
  const flow = useReactFlow();
  const store = useStoreApi();
  const positions = useRef<Positions>(new Map(Object.entries(saved ?? {})));
  const epoch = useRef(layoutEpoch);
  const [nodes, setNodes] = useState<Node[]>([]);
  /** The viewport as of the last frame (big graphs cull their edges against it). */
  const [view, setView] = useState<Viewport | undefined>(undefined);

  // the first view, and a new one after Auto-organize, a change of filter or a pack opened: all of
  // it when it is small enough to read, else what was opened, else its top-left corner at a
  // readable zoom (frameView; the minimap shows the rest)
  const framed = useRef<string | undefined>(undefined);
  // until the person moves the view or a node, the view follows the graph as it arrives (workers
  // still registering when the page opened): a live update that changes the graph's extent frames
  // it again. Once they touched it, live updates leave their view alone.
  const touched = useRef(false);
  const framedBox = useRef('');
  // biome-ignore lint/correctness/useExhaustiveDependencies: the focus is read when the view key changes
  useEffect(() => {
    let relayout = false;
    if (epoch.current !== layoutEpoch) {
      epoch.current = layoutEpoch;
      positions.current = new Map();
      relayout = true;
    }
    let placed: Positions;
    if (filtered) placed = autoLayout(graph);
    else {
      const next = placeNodes(graph, positions.current);
      positions.current = next.pinned;
      placed = next.placed;
    }
    setNodes((prev) => {
      const selected = new Set(prev.filter((n) => n.selected).map((n) => n.id));
      return graph.nodes.map((n) => ({
        id: n.id,
        type: 'flow',
        data: n.data,
        position: placed.get(n.id) ?? { x: 0, y: 0 },
        selected: selected.has(n.id),
        style: { width: NODE_SIZE.width, height: NODE_SIZE.height },
        // known size and handles: React Flow draws only what is on screen (onlyRenderVisibleElements)
        // instead of mounting all 2,000 nodes once to measure them
        width: NODE_SIZE.width,
        height: NODE_SIZE.height,
        handles: NODE_HANDLES,
      }));
    });
    const box = boundsOf(placed);
    const boxKey = box ? `${box.x},${box.y},${box.w},${box.h}` : '';
    if (relayout || framed.current !== viewKey || (!touched.current && boxKey !== framedBox.current)) {
      if (relayout || framed.current !== viewKey) touched.current = false;
      framed.current = viewKey;
      framedBox.current = boxKey;
      const { width, height } = store.getState();
      const focused = focus?.length
        ? new Map(focus.flatMap((id) => (placed.has(id) ? [[id, placed.get(id) as { x: number; y: number }]] : [])))
        : undefined;
      const focusBox = focused ? boundsOf(focused) : undefined;
      if (box && width > 0 && height > 0)
        void flow.setViewport(frameView(box, { width, height }, focusBox, cornerOf(focusBox ? (focused as Positions) : placed)), {
          duration: relayout ? 300 : 0,
        });
      else void flow.fitView({ padding: 0.15, maxZoom: 1.1 });
      requestAnimationFrame(() => setView(flow.getViewport()));
    }
  }, [graph, filtered, viewKey, layoutEpoch, flow, store]);

  const edges = useMemo<Edge[]>(() => {
    const faint = 'var(--c-faint)';
    // edge labels are measured one by one (getBBox): a big graph goes without them
    const big = graph.nodes.length > EDGE_CULL_OVER_NODES;
    return graph.edges.map((e) => {
      const observed = e.kind === 'observed';
      const uses = e.kind === 'uses';
      const stroke = uses ? 'var(--c-accent)' : observed ? 'var(--c-muted)' : 'var(--c-faint)';
      return {
        id: e.id,
        source: e.source,
        target: e.target,
        label: observed || big ? undefined : e.label,
        data: { kind: e.kind },
        style: { stroke, strokeWidth: 1.6, strokeDasharray: observed ? '5 4' : undefined },
        markerEnd: { type: MarkerType.ArrowClosed, color: uses ? 'var(--c-accent)' : faint, width: 15, height: 15 },
        labelStyle: { fill: 'var(--c-muted)', fontSize: 11 },
        labelBgStyle: { fill: 'var(--c-surface)' },
      };
    });
  }, [graph]);

  // a big graph draws only the edges with an end on screen (plus a margin): React Flow would draw
  // every long edge that crosses the view, hundreds of them in a 2,000-function graph
  const moveFrame = useRef(0);
  const onMove = useCallback((_: unknown, vp: Viewport) => {
    cancelAnimationFrame(moveFrame.current);
    moveFrame.current = requestAnimationFrame(() => setView(vp));
  }, []);
  const shownEdges = useMemo(() => {
    if (nodes.length <= EDGE_CULL_OVER_NODES) return edges;
    if (!view) return [];
    const { width, height } = store.getState();
    const margin = 200;
    const x0 = -view.x / view.zoom - margin;
    const y0 = -view.y / view.zoom - margin;
    const x1 = x0 + width / view.zoom + 2 * margin;
    const y1 = y0 + height / view.zoom + 2 * margin;
    const onScreen = new Set<string>();
    for (const n of nodes) {
      const p = n.position;
      if (p.x + NODE_SIZE.width >= x0 && p.x <= x1 && p.y + NODE_SIZE.height >= y0 && p.y <= y1) onScreen.add(n.id);
    }
    return edges.filter((e) => onScreen.has(e.source) || onScreen.has(e.target));
  }, [edges, nodes, view, store]);

  // the minimap helps only when part of the graph is off screen
  const offscreen = useMemo(() => {
    if (!view) return false;
    const { width, height } = store.getState();
    const box = boundsOf(new Map(nodes.map((n) => [n.id, n.position])));
    if (!box) return false;
    const x = box.x * view.zoom + view.x;
    const y = box.y * view.zoom + view.y;
    return x < 0 || y < 0 || x + box.w * view.zoom > width || y + box.h * view.zoom > height;
  }, [nodes, view, store]);

  // theme-dependent colours for the minimap, which paints with SVG attributes (no CSS variables)
  // biome-ignore lint/correctness/useExhaustiveDependencies: recomputed when the theme flips
  const mini = useMemo(() => ({ mask: cssVar('--c-surface-3'), bg: cssVar('--c-surface'), stroke: cssVar('--c-line-strong') }), [theme]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: recomputed when the theme flips
  const nodeColor = useMemo(() => {
    const colors = Object.fromEntries(Object.entries(KIND_VISUAL).map(([k, v]) => [k, cssVar(v.color.slice(4, -1))]));
    return (node: Node) => colors[(node.data as FlowNodeData).kind] ?? '#888';
  }, [theme]);

  return (
    <ReactFlow
      nodes={nodes}
      edges={shownEdges}
      onMove={onMove}
      // a move with an event is the person's (wheel, drag, the zoom buttons); ours come without one
      onMoveStart={(event) => {
        if (event) touched.current = true;
      }}
      onNodeDragStart={() => {
        touched.current = true;
      }}
      nodeTypes={nodeTypes}
      colorMode={theme}
      onNodesChange={(changes: NodeChange[]) => {
        for (const c of changes) if (c.type === 'position' && c.position) positions.current.set(c.id, c.position);
        setNodes((prev) => applyNodeChanges(changes, prev));
      }}
      onNodeDragStop={() => onLayoutChange(Object.fromEntries(positions.current))}
      onNodeClick={(_, node) => onSelect(node.id)}
      onPaneClick={() => onSelect(undefined)}
      nodesConnectable={false}
      nodesDraggable={!filtered}
      onlyRenderVisibleElements={nodes.length > EDGE_CULL_OVER_NODES}
      minZoom={0.1}
      maxZoom={2.5}
      proOptions={{ hideAttribution: true }}
      style={{ background: 'var(--c-bg)' }}
    >
      <Background variant={BackgroundVariant.Dots} gap={18} size={1} color="var(--c-line-strong)" />
      <Controls showInteractive={false} />
      {graph.nodes.length > MINIMAP_MAX_NODES || !offscreen ? null : (
        <MiniMap
          className="max-sm:hidden"
          pannable
          zoomable
          nodeColor={nodeColor}
          nodeStrokeColor={mini.stroke}
          maskColor={`color-mix(in srgb, ${mini.mask} 75%, transparent)`}
          bgColor={mini.bg}
        />
      )}
      <Panel position="top-right" className="flex gap-1.5">
        <Button size="sm" icon={Maximize} onClick={() => void flow.fitView({ padding: 0.15, duration: 300 })}>
          Fit view
        </Button>
        <Button size="sm" icon={LayoutGrid} onClick={onAutoOrganize} title="Forget the saved positions and lay the graph out again">
          Auto-organize
        </Button>
      </Panel>
      <Panel position="top-left" className="max-w-[calc(100%-290px)] max-md:hidden">
        <Legend />
      </Panel>
    </ReactFlow>
  );
}

function Legend() {
  const kinds = ['http', 'cron', 'event', 'function', 'state', 'queue'] as const;
  return (
    <div
      className="flex min-w-0 flex-wrap items-center gap-x-3 gap-y-1 rounded-lg border border-line bg-surface/95 px-2.5 py-1.5 text-[11px] text-muted shadow-card"
      data-testid="flow-legend"
    >
      {kinds.map((k) => {
        const v = KIND_VISUAL[k];
        const Icon = v.icon;
        return (
          <span key={k} className="inline-flex items-center gap-1.5 whitespace-nowrap">
            <Icon size={12} style={{ color: v.color }} /> {v.caption.replace(/ trigger$/, '')}
          </span>
        );
      })}
      <span className="inline-flex items-center gap-1.5 whitespace-nowrap">
        <Package size={12} className="text-muted" /> no trigger
      </span>
      <span className="h-3 w-px bg-line" aria-hidden="true" />
      <span className="inline-flex items-center gap-1.5 whitespace-nowrap">
        <svg width="22" height="6" aria-hidden="true">
          <line x1="0" y1="3" x2="22" y2="3" stroke="var(--c-accent)" strokeWidth="1.6" />
        </svg>
        declared in <code className="font-mono">metadata.uses</code>
      </span>
      <span className="inline-flex items-center gap-1.5 whitespace-nowrap">
        <svg width="22" height="6" aria-hidden="true">
          <line x1="0" y1="3" x2="22" y2="3" stroke="var(--c-muted)" strokeWidth="1.6" strokeDasharray="5 4" />
        </svg>
        seen in traces
      </span>
    </div>
  );
}
