/**
 * A layered left-to-right layout in linear time, for graphs too big for dagre (issue 19 §9: the
 * Flow page with 2,000 functions spent seconds in dagre). Ranks by longest path from the sources
 * (edges that close a cycle are ignored for ranking), orders each rank by the mean position of its
 * neighbours in the previous rank (one sweep down, one up), then places nodes on a grid. Returns the
 * top-left corner of each node, like `layoutGraph`.
 */
export function fastLayout(
  nodes: Array<{ id: string }>,
  edges: Array<{ source: string; target: string }>,
  size: { width: number; height: number },
  options: { nodesep?: number; ranksep?: number } = {},
): Map<string, { x: number; y: number }> {
  const nodesep = options.nodesep ?? 22;
  const ranksep = options.ranksep ?? 64;
  const index = new Map(nodes.map((n, i) => [n.id, i]));
  const out: number[][] = nodes.map(() => []);
  const inc: number[][] = nodes.map(() => []);
  for (const e of edges) {
    const s = index.get(e.source);
    const t = index.get(e.target);
    if (s === undefined || t === undefined || s === t) continue;
    out[s]?.push(t);
    inc[t]?.push(s);
  }

  // longest-path ranks over a DAG (Kahn); a node left over sits in a cycle: release the one with
  // the fewest unranked predecessors and carry on
  const rank = new Int32Array(nodes.length);
  const pending = Int32Array.from(inc, (preds) => preds.length);
  const done = new Uint8Array(nodes.length);
  let queue: number[] = [];
  for (let i = 0; i < nodes.length; i++) if (pending[i] === 0) queue.push(i);
  let placed = 0;
  while (placed < nodes.length) {
    if (queue.length === 0) {
      let pick = -1;
      for (let i = 0; i < nodes.length; i++) {
        if (!done[i] && (pick < 0 || (pending[i] as number) < (pending[pick] as number))) pick = i;
      }
      queue = [pick];
    }
    const next: number[] = [];
    for (const i of queue) {
      if (done[i]) continue;
      done[i] = 1;
      placed++;
      for (const t of out[i] ?? []) {
        if (done[t]) continue;
        rank[t] = Math.max(rank[t] as number, (rank[i] as number) + 1);
        pending[t] = (pending[t] as number) - 1;
        if (pending[t] === 0) next.push(t);
      }
    }
    queue = next;
  }

  const ranks: number[][] = [];
  for (let i = 0; i < nodes.length; i++) {
    const r = rank[i] as number;
    const list = ranks[r] ?? [];
    list.push(i);
    ranks[r] = list;
  }
  const position = new Float64Array(nodes.length);
  const setPositions = (list: number[]) => {
    list.forEach((n, p) => {
      position[n] = p;
    });
  };
  for (const list of ranks) if (list) setPositions(list);
  // barycentre sweeps: down (by predecessors), then up (by successors); ties keep their order
  const sweep = (list: number[], neighbours: number[][], other: (r: number) => boolean) => {
    const key = new Float64Array(nodes.length);
    for (const n of list) {
      const ns = (neighbours[n] ?? []).filter((m) => other(rank[m] as number));
      key[n] = ns.length ? ns.reduce((a, m) => a + (position[m] as number), 0) / ns.length : (position[n] as number);
    }
    list.sort((a, b) => (key[a] as number) - (key[b] as number) || (position[a] as number) - (position[b] as number));
    setPositions(list);
  };
  for (let r = 1; r < ranks.length; r++) {
    const list = ranks[r];
    if (list) sweep(list, inc, (m) => m < r);
  }
  for (let r = ranks.length - 2; r >= 0; r--) {
    const list = ranks[r];
    if (list) sweep(list, out, (m) => m > r);
  }

  const result = new Map<string, { x: number; y: number }>();
  ranks.forEach((list, r) => {
    list?.forEach((n, p) => {
      result.set((nodes[n] as { id: string }).id, { x: 16 + r * (size.width + ranksep), y: 16 + p * (size.height + nodesep) });
    });
  });
  return result;
}
