import { Graph, layout } from '@dagrejs/dagre';

/**
 * Automatic layout of a directed graph with dagre (deps.md: 36 KB, instead of elkjs's 1.6 MB).
 * Returns the top-left corner of each node, the coordinate React Flow positions nodes by.
 * Imported only from lazily loaded views, so dagre stays out of the initial bundle.
 */
export interface LayoutNode {
  id: string;
  width: number;
  height: number;
}

export function layoutGraph(
  nodes: LayoutNode[],
  edges: Array<{ source: string; target: string }>,
  options: { direction?: 'LR' | 'TB'; nodesep?: number; ranksep?: number } = {},
): Map<string, { x: number; y: number }> {
  const g = new Graph({ multigraph: false });
  g.setGraph({
    rankdir: options.direction ?? 'LR',
    nodesep: options.nodesep ?? 28,
    ranksep: options.ranksep ?? 80,
    marginx: 16,
    marginy: 16,
  });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of nodes) g.setNode(n.id, { width: n.width, height: n.height });
  for (const e of edges) if (g.hasNode(e.source) && g.hasNode(e.target) && e.source !== e.target) g.setEdge(e.source, e.target);
  layout(g);
  const out = new Map<string, { x: number; y: number }>();
  for (const n of nodes) {
    const placed = g.node(n.id) as { x: number; y: number } | undefined;
    if (placed) out.set(n.id, { x: placed.x - n.width / 2, y: placed.y - n.height / 2 });
  }
  return out;
}
