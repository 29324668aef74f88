import '@xyflow/react/dist/style.css';
import {
  Background,
  BackgroundVariant,
  Controls,
  type Edge,
  MarkerType,
  type Node,
  Panel,
  ReactFlow,
  ReactFlowProvider,
  useReactFlow,
} from '@xyflow/react';
import { Maximize } from 'lucide-react';
import { useEffect, useMemo, useRef } from 'react';
import { useTheme } from '../../lib/theme.ts';
import { layoutGraph } from '../flow/dagre-layout.ts';
import { Button } from '../ui/button.tsx';
import type { WorktreeGraph } from './worktree-graph.ts';
import { WorktreeNode, WT_NODE_SIZE } from './worktree-node.tsx';

/**
 * The worktree graph on React Flow, laid out left to right by dagre (repository → worktree →
 * session). Loaded lazily: React Flow and dagre stay out of the initial bundle.
 */
const nodeTypes = { worktree: WorktreeNode };

export default function WorktreeCanvas(props: { graph: WorktreeGraph; selected?: string; onSelect: (nodeId: string | undefined) => void }) {
  return (
    <ReactFlowProvider>
      <Canvas {...props} />
    </ReactFlowProvider>
  );
}

function Canvas({
  graph,
  selected,
  onSelect,
}: {
  graph: WorktreeGraph;
  selected?: string;
  onSelect: (nodeId: string | undefined) => void;
}) {
  const theme = useTheme();
  const flow = useReactFlow();
  const positions = useMemo(
    () =>
      layoutGraph(
        graph.nodes.map((n) => ({ id: n.id, ...WT_NODE_SIZE })),
        graph.edges,
        { direction: 'LR', nodesep: 18, ranksep: 70 },
      ),
    [graph],
  );
  const nodes = useMemo<Node[]>(
    () =>
      graph.nodes.map((n) => ({
        id: n.id,
        type: 'worktree',
        data: n.data,
        position: positions.get(n.id) ?? { x: 0, y: 0 },
        selected: n.id === selected,
        draggable: false,
        style: { width: WT_NODE_SIZE.width, height: WT_NODE_SIZE.height },
      })),
    [graph, positions, selected],
  );
  const edges = useMemo<Edge[]>(
    () =>
      graph.edges.map((e) => {
        const owns = e.kind === 'owns';
        const stroke = owns ? 'var(--c-info)' : 'var(--c-line-strong)';
        return {
          id: e.id,
          source: e.source,
          target: e.target,
          style: { stroke, strokeWidth: 1.6, strokeDasharray: owns ? '5 4' : undefined },
          markerEnd: { type: MarkerType.ArrowClosed, color: stroke, width: 14, height: 14 },
        };
      }),
    [graph.edges],
  );

  // refit when the set of nodes changes (a worktree created or removed), not on every status refresh
  const shape = graph.nodes.map((n) => n.id).join('|');
  const lastShape = useRef('');
  useEffect(() => {
    if (lastShape.current === shape) return;
    lastShape.current = shape;
    const timer = window.setTimeout(() => void flow.fitView({ padding: 0.15, maxZoom: 1.1, duration: 200 }), 60);
    return () => window.clearTimeout(timer);
  }, [shape, flow]);

  // and when the canvas itself changes size (the detail panel opens or closes beside it)
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el || typeof ResizeObserver === 'undefined') return;
    let timer: number | undefined;
    let last = el.clientWidth;
    const observer = new ResizeObserver(() => {
      if (Math.abs(el.clientWidth - last) < 8) return;
      last = el.clientWidth;
      window.clearTimeout(timer);
      timer = window.setTimeout(() => void flow.fitView({ padding: 0.15, maxZoom: 1.1, duration: 200 }), 80);
    });
    observer.observe(el);
    return () => {
      observer.disconnect();
      window.clearTimeout(timer);
    };
  }, [flow]);

  return (
    <div ref={box} className="h-full w-full">
      <ReactFlow
        nodes={nodes}
        edges={edges}
        nodeTypes={nodeTypes}
        colorMode={theme}
        onNodeClick={(_, node) => onSelect(node.id)}
        onPaneClick={() => onSelect(undefined)}
        nodesConnectable={false}
        nodesDraggable={false}
        fitView
        fitViewOptions={{ padding: 0.15, maxZoom: 1.1 }}
        minZoom={0.1}
        maxZoom={2.5}
        proOptions={{ hideAttribution: true }}
        style={{ background: 'var(--c-bg)' }}
      >
        <Background variant={BackgroundVariant.Dots} gap={18} size={1} color="var(--c-line-strong)" />
        <Controls showInteractive={false} />
        <Panel position="top-right">
          <Button size="sm" icon={Maximize} onClick={() => void flow.fitView({ padding: 0.15, maxZoom: 1.1, duration: 300 })}>
            Fit view
          </Button>
        </Panel>
      </ReactFlow>
    </div>
  );
}
