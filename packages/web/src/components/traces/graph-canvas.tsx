import '@xyflow/react/dist/style.css';
import { Background, BackgroundVariant, Controls, type Edge, MarkerType, type Node, type NodeTypes, ReactFlow } from '@xyflow/react';
import { useMemo } from 'react';
import { useTheme } from '../../lib/theme.ts';
import { layoutGraph } from '../flow/dagre-layout.ts';

/**
 * A read-only React Flow canvas laid out by dagre, shared by the trace map and the trace flow view
 * (both lazy chunks). Zoom with the wheel, pan by dragging, click a node to select it.
 */
export function GraphCanvas<N extends Record<string, unknown>>({
  nodes,
  edges,
  nodeTypes,
  size,
  onNodeClick,
  testId,
  selectedId,
  ranksep = 70,
}: {
  nodes: Array<{ id: string; type: string; data: N }>;
  edges: Array<Pick<Edge, 'id' | 'source' | 'target' | 'label' | 'animated'> & { tone?: 'bad' | 'normal' }>;
  nodeTypes: NodeTypes;
  size: { width: number; height: number };
  onNodeClick?: (id: string) => void;
  testId: string;
  selectedId?: string;
  ranksep?: number;
}) {
  const theme = useTheme();
  const laid = useMemo(() => {
    const positions = layoutGraph(
      nodes.map((n) => ({ id: n.id, ...size })),
      edges,
      { direction: 'LR', nodesep: 24, ranksep },
    );
    const placed: Node[] = nodes.map((n) => ({
      id: n.id,
      type: n.type,
      data: n.data,
      position: positions.get(n.id) ?? { x: 0, y: 0 },
      draggable: false,
      connectable: false,
      style: { width: size.width, height: size.height },
    }));
    const flowEdges: Edge[] = edges.map((e) => {
      const stroke = e.tone === 'bad' ? 'var(--c-bad)' : 'var(--c-line-strong)';
      return {
        id: e.id,
        source: e.source,
        target: e.target,
        label: e.label,
        animated: e.animated,
        style: { stroke, strokeWidth: 1.5 },
        markerEnd: { type: MarkerType.ArrowClosed, color: e.tone === 'bad' ? 'var(--c-bad)' : 'var(--c-faint)', width: 16, height: 16 },
        labelStyle: { fill: 'var(--c-muted)', fontSize: 11 },
        labelBgStyle: { fill: 'var(--c-surface)' },
      };
    });
    return { placed, flowEdges };
  }, [nodes, edges, size, ranksep]);
  // selection restyles nodes without a new layout
  const flowNodes = useMemo(() => laid.placed.map((n) => (n.id === selectedId ? { ...n, selected: true } : n)), [laid.placed, selectedId]);
  return (
    <div className="h-full min-h-[320px] w-full" data-testid={testId}>
      <ReactFlow
        nodes={flowNodes}
        edges={laid.flowEdges}
        nodeTypes={nodeTypes}
        colorMode={theme}
        fitView
        fitViewOptions={{ padding: 0.15, maxZoom: 1.2 }}
        minZoom={0.1}
        maxZoom={2.5}
        nodesConnectable={false}
        nodesDraggable={false}
        elementsSelectable
        onNodeClick={(_, node) => onNodeClick?.(node.id)}
        proOptions={{ hideAttribution: true }}
        style={{ background: 'var(--c-bg)' }}
      >
        <Background variant={BackgroundVariant.Dots} gap={18} size={1} color="var(--c-line-strong)" />
        <Controls showInteractive={false} />
      </ReactFlow>
    </div>
  );
}
