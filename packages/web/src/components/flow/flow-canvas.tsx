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
import { LayoutGrid, Maximize } from 'lucide-react';
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
/** A big graph's first view fits it when that keeps labels readable, else shows its top-left corner at this zoom (a small one always fits). */
export const MIN_FIT_ZOOM = 0.55;
export const CORNER_ZOOM = 0.8;
/** Past this many nodes the minimap (one element per node) costs more than it helps. */
export const MINIMAP_MAX_NODES = 400;
/** Past this many nodes a graph is big: only the nodes on screen and the edges with an end near it are drawn. */
export const EDGE_CULL_OVER_NODES = 150;

/** A fresh left-to-right layout of the whole graph. */
export function autoLayout(graph: FlowGraph): Positions {
  return graph.nodes.length > DAGRE_MAX_NODES || graph.edges.length > DAGRE_MAX_EDGES
    ? fastLayout(graph.nodes, graph.edges, NODE_SIZE, { nodesep: 22, ranksep: 64 })
    : layoutGraph(
        graph.nodes.map((n) => ({ id: n.id, ...NODE_SIZE })),
        graph.edges,
        { direction: 'LR', nodesep: 22, ranksep: 64 },
      );
}

/** Positions for every node: known ones stay, new ones are laid out below the pinned ones. */
export function placeNodes(graph: FlowGraph, known: Positions): Positions {
  const present = graph.nodes.filter((n) => known.has(n.id));
  const missing = graph.nodes.filter((n) => !known.has(n.id));
  const out: Positions = new Map(present.map((n) => [n.id, known.get(n.id) as { x: number; y: number }]));
  if (missing.length === 0) return out;
  const laid = autoLayout(graph);
  let offsetY = 0;
  if (present.length > 0) {
    const bottom = Math.max(...present.map((n) => (out.get(n.id)?.y ?? 0) + NODE_SIZE.height));
    const top = Math.min(...missing.map((n) => laid.get(n.id)?.y ?? 0));
    offsetY = bottom + 60 - top;
  }
  for (const n of missing) {
    const p = laid.get(n.id) ?? { x: 0, y: 0 };
    out.set(n.id, { x: p.x, y: p.y + offsetY });
  }
  return out;
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

function cssVar(name: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || '#888';
}

export default function FlowCanvas(props: {
  graph: FlowGraph;
  /** A search or kind filter is on: the subset is laid out afresh and cannot be dragged (the saved layout is the whole graph's). */
  filtered: boolean;
  /** Changes when the filter does: the view is framed again (live updates of the same view keep it). */
  viewKey: string;
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
  saved,
  layoutEpoch,
  onLayoutChange,
  onSelect,
  onAutoOrganize,
}: {
  graph: FlowGraph;
  filtered: boolean;
  viewKey: string;
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

  // the first view, and a new one after Auto-organize or a change of filter: all of it when it is
  // small enough to read, else its top-left corner at a readable zoom (the minimap shows the rest)
  const framed = useRef<string | undefined>(undefined);
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
      positions.current = placeNodes(graph, positions.current);
      placed = positions.current;
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
    if (relayout || framed.current !== viewKey) {
      framed.current = viewKey;
      const { width, height } = store.getState();
      const box = boundsOf(placed);
      const fitZoom = width > 0 && box ? Math.min(width / (box.w * 1.3), height / (box.h * 1.3)) : 0;
      if (graph.nodes.length <= EDGE_CULL_OVER_NODES || fitZoom >= MIN_FIT_ZOOM || !box)
        void flow.fitView({ padding: 0.15, maxZoom: 1.1, duration: relayout ? 300 : 0 });
      else void flow.setViewport({ x: 24 - box.x * CORNER_ZOOM, y: 24 - box.y * CORNER_ZOOM, zoom: CORNER_ZOOM });
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
      {graph.nodes.length > MINIMAP_MAX_NODES ? null : (
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
      <Panel position="top-left" className="max-sm:hidden">
        <Legend />
      </Panel>
    </ReactFlow>
  );
}

function Legend() {
  const kinds = ['http', 'cron', 'event', 'function', 'state', 'queue'] as const;
  return (
    <div className="rounded-lg border border-line bg-surface/95 px-2.5 py-2 text-[11px] text-muted shadow-card" data-testid="flow-legend">
      <div className="grid grid-cols-2 gap-x-3 gap-y-1">
        {kinds.map((k) => {
          const v = KIND_VISUAL[k];
          const Icon = v.icon;
          return (
            <span key={k} className="inline-flex items-center gap-1.5">
              <Icon size={12} style={{ color: v.color }} /> {v.caption}
            </span>
          );
        })}
      </div>
      <div className="mt-1.5 flex flex-col gap-0.5 border-t border-line pt-1.5">
        <span className="inline-flex items-center gap-1.5">
          <svg width="22" height="6" aria-hidden="true">
            <line x1="0" y1="3" x2="22" y2="3" stroke="var(--c-accent)" strokeWidth="1.6" />
          </svg>
          declared in <code className="font-mono">metadata.uses</code>
        </span>
        <span className="inline-flex items-center gap-1.5">
          <svg width="22" height="6" aria-hidden="true">
            <line x1="0" y1="3" x2="22" y2="3" stroke="var(--c-muted)" strokeWidth="1.6" strokeDasharray="5 4" />
          </svg>
          seen in traces
        </span>
      </div>
    </div>
  );
}
