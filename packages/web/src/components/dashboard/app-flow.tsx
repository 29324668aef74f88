import '@xyflow/react/dist/style.css';
import dagre from '@dagrejs/dagre';
import { useNavigate } from '@tanstack/react-router';
import { Background, Controls, Handle, type Node, type NodeProps, Position, ReactFlow } from '@xyflow/react';
import { Clock, Code2, Database, Globe, List, type LucideIcon, Radio, Zap } from 'lucide-react';
import { useMemo } from 'react';
import type { FunctionRecord } from '../../api/functions.ts';
import type { TriggerRecord } from '../../api/triggers.ts';
import { useTheme } from '../../lib/theme.ts';
import { summarise } from '../../lib/trigger-config.ts';
import { kindOf, type TriggerKind } from '../../lib/trigger-kind.ts';

/**
 * The application flow of the Dashboard (seed 2.1): where work comes from (HTTP routes,
 * schedules, event topics, queues, state scopes, streams) and which function it reaches, laid out
 * left to right with dagre. Loaded lazily: React Flow stays out of the initial bundle.
 */
type FlowNode = Node<{ label: string; sub?: string; kind: TriggerKind | 'function'; target: { fn?: string; trigger?: string } }, 'lane'>;

const ICON: Record<TriggerKind | 'function', LucideIcon> = {
  http: Globe,
  cron: Clock,
  event: Zap,
  queue: List,
  state: Database,
  stream: Radio,
  log: List,
  engine: Zap,
  other: Zap,
  function: Code2,
};
const COLOR: Record<TriggerKind | 'function', string> = {
  http: 'var(--c-info)',
  cron: 'var(--c-warn)',
  event: 'var(--c-violet)',
  queue: 'var(--c-accent)',
  state: 'var(--c-ok)',
  stream: 'var(--c-ok)',
  log: 'var(--c-faint)',
  engine: 'var(--c-faint)',
  other: 'var(--c-faint)',
  function: 'var(--c-fg)',
};

const W = 210;
const H = 46;
const MAX_FUNCTIONS = 60;

function LaneNode({ data }: NodeProps<FlowNode>) {
  const Icon = ICON[data.kind];
  return (
    <div
      className="flex h-[46px] w-[210px] cursor-pointer items-center gap-2 rounded-lg border border-line-strong bg-surface px-2.5 shadow-card transition-colors hover:border-accent"
      style={{ borderLeft: `3px solid ${COLOR[data.kind]}` }}
    >
      <Handle type="target" position={Position.Left} className="size-1.5! border-0! bg-line-strong!" />
      <Icon size={14} style={{ color: COLOR[data.kind] }} className="shrink-0" />
      <div className="min-w-0 leading-tight">
        <div className={`truncate text-[12px] font-medium text-fg ${data.kind === 'function' || data.kind === 'http' ? 'font-mono' : ''}`}>
          {data.label}
        </div>
        {data.sub ? <div className="truncate text-[10.5px] text-faint">{data.sub}</div> : null}
      </div>
      <Handle type="source" position={Position.Right} className="size-1.5! border-0! bg-line-strong!" />
    </div>
  );
}

const nodeTypes = { lane: LaneNode };

export function buildFlow(functions: FunctionRecord[], triggers: TriggerRecord[]) {
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: 'LR', nodesep: 14, ranksep: 90, marginx: 10, marginy: 10 });
  g.setDefaultEdgeLabel(() => ({}));
  const nodes = new Map<string, FlowNode>();
  const edges: Array<{ id: string; source: string; target: string }> = [];
  const wanted = new Set(functions.slice(0, MAX_FUNCTIONS).map((f) => f.function_id));
  for (const t of triggers) {
    if (!wanted.has(t.function_id)) continue;
    const kind = kindOf(t.trigger_type);
    const label = summarise(t.trigger_type, t.config, t.config_summary);
    const sourceId = `src:${kind}:${label}`;
    if (!nodes.has(sourceId)) {
      nodes.set(sourceId, {
        id: sourceId,
        type: 'lane',
        position: { x: 0, y: 0 },
        data: { label, sub: t.trigger_type, kind, target: { trigger: t.id } },
      });
    }
    edges.push({ id: `${sourceId}->${t.function_id}:${t.id}`, source: sourceId, target: `fn:${t.function_id}` });
  }
  for (const fn of functions.slice(0, MAX_FUNCTIONS)) {
    nodes.set(`fn:${fn.function_id}`, {
      id: `fn:${fn.function_id}`,
      type: 'lane',
      position: { x: 0, y: 0 },
      data: { label: fn.function_id, sub: fn.worker_name, kind: 'function', target: { fn: fn.function_id } },
    });
  }
  for (const id of nodes.keys()) g.setNode(id, { width: W, height: H });
  for (const e of edges) g.setEdge(e.source, e.target);
  dagre.layout(g);
  for (const node of nodes.values()) {
    const p = g.node(node.id);
    node.position = { x: (p?.x ?? 0) - W / 2, y: (p?.y ?? 0) - H / 2 };
  }
  const graph = g.graph();
  return {
    nodes: [...nodes.values()],
    edges,
    height: Math.max(160, (graph.height ?? 200) + 20),
    truncated: functions.length > MAX_FUNCTIONS,
  };
}

export default function AppFlow({ functions, triggers }: { functions: FunctionRecord[]; triggers: TriggerRecord[] }) {
  const theme = useTheme();
  const navigate = useNavigate();
  const flow = useMemo(() => buildFlow(functions, triggers), [functions, triggers]);
  const edges = useMemo(
    () => flow.edges.map((e) => ({ ...e, animated: false, style: { stroke: 'var(--c-line-strong)', strokeWidth: 1.5 } })),
    [flow.edges],
  );
  return (
    <div className="h-full min-h-[260px] w-full" style={{ height: Math.min(520, flow.height) }} data-testid="app-flow">
      <ReactFlow
        nodes={flow.nodes}
        edges={edges}
        nodeTypes={nodeTypes}
        colorMode={theme}
        fitView
        fitViewOptions={{ padding: 0.08, maxZoom: 1 }}
        minZoom={0.2}
        nodesDraggable={false}
        nodesConnectable={false}
        proOptions={{ hideAttribution: true }}
        onNodeClick={(_e, node) => {
          const target = (node as FlowNode).data.target;
          if (target.fn) void navigate({ to: '/functions', search: { fn: target.fn } });
          else if (target.trigger) void navigate({ to: '/triggers', search: { id: target.trigger } });
        }}
        style={{ background: 'transparent' }}
      >
        <Background gap={18} size={1} color="var(--c-line)" />
        <Controls showInteractive={false} position="bottom-right" />
      </ReactFlow>
      {flow.truncated ? <p className="px-3 pb-2 text-[11.5px] text-faint">Showing the first {MAX_FUNCTIONS} functions.</p> : null}
    </div>
  );
}
