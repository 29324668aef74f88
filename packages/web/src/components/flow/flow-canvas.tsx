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
  ReactFlow,
  ReactFlowProvider,
  useReactFlow,
} from '@xyflow/react';
import { LayoutGrid, Maximize } from 'lucide-react';
import { useEffect, useMemo, useRef, useState } from 'react';
import { useTheme } from '../../lib/theme.ts';
import { Button } from '../ui/button.tsx';
import { layoutGraph } from './dagre-layout.ts';
import type { FlowGraph, FlowNodeData } from './flow-graph.ts';
import { FlowNode, KIND_VISUAL, NODE_SIZE } from './flow-node.tsx';

/**
 * The Flow canvas (seed 2.8): React Flow, laid out by dagre, scroll to zoom, drag the background
 * to pan, drag a node to move it (the page saves the layout), click a node for details. Its own
 * lazy chunk (React Flow + dagre stay out of the initial bundle).
 */
type Positions = Map<string, { x: number; y: number }>;

const nodeTypes = { flow: FlowNode };

/** Positions for every node: known ones stay, new ones are laid out by dagre below the pinned ones. */
export function placeNodes(graph: FlowGraph, known: Positions): Positions {
  const present = graph.nodes.filter((n) => known.has(n.id));
  const missing = graph.nodes.filter((n) => !known.has(n.id));
  const out: Positions = new Map(present.map((n) => [n.id, known.get(n.id) as { x: number; y: number }]));
  if (missing.length === 0) return out;
  const laid = layoutGraph(
    graph.nodes.map((n) => ({ id: n.id, ...NODE_SIZE })),
    graph.edges,
    { direction: 'LR', nodesep: 22, ranksep: 64 },
  );
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

function cssVar(name: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || '#888';
}

export default function FlowCanvas(props: {
  graph: FlowGraph;
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
  saved,
  layoutEpoch,
  onLayoutChange,
  onSelect,
  onAutoOrganize,
}: {
  graph: FlowGraph;
  saved: Record<string, { x: number; y: number }> | null;
  layoutEpoch: number;
  onLayoutChange: (positions: Record<string, { x: number; y: number }>) => void;
  onSelect: (id: string | undefined) => void;
  onAutoOrganize: () => void;
}) {
  const theme = useTheme();
  const flow = useReactFlow();
  const positions = useRef<Positions>(new Map(Object.entries(saved ?? {})));
  const epoch = useRef(layoutEpoch);
  const [nodes, setNodes] = useState<Node[]>([]);

  useEffect(() => {
    if (epoch.current !== layoutEpoch) {
      epoch.current = layoutEpoch;
      positions.current = new Map();
      window.setTimeout(() => void flow.fitView({ padding: 0.15, duration: 300 }), 50);
    }
    positions.current = placeNodes(graph, positions.current);
    setNodes((prev) => {
      const selected = new Set(prev.filter((n) => n.selected).map((n) => n.id));
      return graph.nodes.map((n) => ({
        id: n.id,
        type: 'flow',
        data: n.data,
        position: positions.current.get(n.id) ?? { x: 0, y: 0 },
        selected: selected.has(n.id),
        style: { width: NODE_SIZE.width, height: NODE_SIZE.height },
      }));
    });
  }, [graph, layoutEpoch, flow]);

  const edges = useMemo<Edge[]>(() => {
    const faint = 'var(--c-faint)';
    return graph.edges.map((e) => {
      const observed = e.kind === 'observed';
      const uses = e.kind === 'uses';
      const stroke = uses ? 'var(--c-accent)' : observed ? 'var(--c-muted)' : 'var(--c-faint)';
      return {
        id: e.id,
        source: e.source,
        target: e.target,
        label: observed ? undefined : e.label,
        data: { kind: e.kind },
        style: { stroke, strokeWidth: 1.6, strokeDasharray: observed ? '5 4' : undefined },
        markerEnd: { type: MarkerType.ArrowClosed, color: uses ? 'var(--c-accent)' : faint, width: 15, height: 15 },
        labelStyle: { fill: 'var(--c-muted)', fontSize: 11 },
        labelBgStyle: { fill: 'var(--c-surface)' },
      };
    });
  }, [graph.edges]);

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
      edges={edges}
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
      fitView
      fitViewOptions={{ padding: 0.15, maxZoom: 1.1 }}
      minZoom={0.1}
      maxZoom={2.5}
      proOptions={{ hideAttribution: true }}
      style={{ background: 'var(--c-bg)' }}
    >
      <Background variant={BackgroundVariant.Dots} gap={18} size={1} color="var(--c-line-strong)" />
      <Controls showInteractive={false} />
      <MiniMap
        pannable
        zoomable
        nodeColor={nodeColor}
        nodeStrokeColor={mini.stroke}
        maskColor={`color-mix(in srgb, ${mini.mask} 75%, transparent)`}
        bgColor={mini.bg}
      />
      <Panel position="top-right" className="flex gap-1.5">
        <Button size="sm" icon={Maximize} onClick={() => void flow.fitView({ padding: 0.15, duration: 300 })}>
          Fit view
        </Button>
        <Button size="sm" icon={LayoutGrid} onClick={onAutoOrganize} title="Forget the saved positions and lay the graph out again">
          Auto-organize
        </Button>
      </Panel>
      <Panel position="top-left">
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
