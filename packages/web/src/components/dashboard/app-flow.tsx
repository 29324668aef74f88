import '@xyflow/react/dist/style.css';
import dagre from '@dagrejs/dagre';
import { Link, useNavigate } from '@tanstack/react-router';
import { Background, Controls, Handle, type Node, type NodeProps, Position, ReactFlow, useReactFlow } from '@xyflow/react';
import { ArrowRight, Clock, Code2, Database, Globe, List, type LucideIcon, Network, Radio, Rows3, Zap } from 'lucide-react';
import { useEffect, useMemo, useRef, useState } from 'react';
import type { FunctionRecord } from '../../api/functions.ts';
import type { TriggerRecord } from '../../api/triggers.ts';
import { pluralize } from '../../lib/format.ts';
import { useTheme } from '../../lib/theme.ts';
import { KIND_LABEL } from '../../lib/trigger-kind.ts';
import { useWidthRef } from '../traces/use-element-width.ts';
import { cn } from '../ui/cn.ts';
import { SearchInput } from '../ui/inputs.tsx';
import {
  buildLanes,
  chooseView,
  type FlowView,
  GRAPH_MAX_NODES,
  graphZoom,
  type LaneKind,
  type LaneNode,
  type Lanes,
  laneGroups,
  MIN_READABLE_ZOOM,
  NODE_H,
  NODE_W,
} from './app-flow-model.ts';

/**
 * The application flow of the Dashboard (seed 2.1): where work comes from (HTTP routes,
 * schedules, event topics, queues, state scopes, streams) and which function it reaches. Issue 19
 * §9: the graph is drawn at a readable zoom (labels ≥ 11 px) and as tall as it is, the wheel
 * scrolls the page unless the graph has focus (click it, or Tab to it), and a graph that would not
 * fit readably (many triggers, a narrow window) is shown as a grouped list instead. Loaded lazily:
 * React Flow and dagre stay out of the initial bundle.
 */
type FlowNode = Node<LaneNode, 'lane'>;

const ICON: Record<LaneKind, LucideIcon> = {
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
const COLOR: Record<LaneKind, string> = {
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

function LaneNodeView({ data }: NodeProps<FlowNode>) {
  const Icon = ICON[data.kind];
  return (
    <div
      className="flex h-[50px] w-[220px] cursor-pointer items-center gap-2 rounded-lg border border-line-strong bg-surface px-2.5 shadow-card transition-colors hover:border-accent"
      style={{ borderLeft: `3px solid ${COLOR[data.kind]}` }}
      data-testid="app-flow-node"
    >
      <Handle type="target" position={Position.Left} className="size-1.5! border-0! bg-line-strong!" />
      <Icon size={15} style={{ color: COLOR[data.kind] }} className="shrink-0" aria-hidden="true" />
      <div className="min-w-0 leading-tight">
        <div
          className={cn('truncate text-[13px] font-medium text-fg', (data.kind === 'function' || data.kind === 'http') && 'font-mono')}
          title={data.label}
        >
          {data.label}
        </div>
        {data.sub ? <div className="truncate text-[11.5px] text-muted">{data.sub}</div> : null}
      </div>
      <Handle type="source" position={Position.Right} className="size-1.5! border-0! bg-line-strong!" />
    </div>
  );
}

const nodeTypes = { lane: LaneNodeView };

/** dagre, left to right; undefined past GRAPH_MAX_NODES (the list is shown, no layout is paid for). */
function layoutLanes(lanes: Lanes) {
  if (lanes.nodes.length > GRAPH_MAX_NODES) return undefined;
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: 'LR', nodesep: 14, ranksep: 90, marginx: 8, marginy: 8 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of lanes.nodes) g.setNode(n.id, { width: NODE_W, height: NODE_H });
  for (const e of lanes.edges) g.setEdge(e.source, e.target);
  dagre.layout(g);
  const nodes: FlowNode[] = lanes.nodes.map((n) => {
    const p = g.node(n.id);
    return { id: n.id, type: 'lane', data: n, position: { x: (p?.x ?? 0) - NODE_W / 2, y: (p?.y ?? 0) - NODE_H / 2 } };
  });
  const graph = g.graph();
  return { nodes, size: { width: graph.width ?? NODE_W, height: graph.height ?? NODE_H } };
}

export default function AppFlow({ functions, triggers }: { functions: FunctionRecord[]; triggers: TriggerRecord[] }) {
  const lanes = useMemo(() => buildLanes(functions, triggers), [functions, triggers]);
  const layout = useMemo(() => layoutLanes(lanes), [lanes]);
  const [ref, width] = useWidthRef<HTMLDivElement>();
  const auto = chooseView(lanes.nodes.length, layout?.size, width - 24);
  const [chosen, setChosen] = useState<FlowView | undefined>(undefined);
  const view: FlowView = layout ? (chosen ?? auto) : 'list';
  const sources = lanes.nodes.length - functions.length;
  return (
    <div ref={ref} className="w-full" data-testid="app-flow" data-view={view}>
      <div className="flex flex-wrap items-center gap-2 px-3 pt-2.5 text-[12px] text-muted">
        <span>
          {pluralize(sources, 'source')} → {pluralize(functions.length, 'function')}
        </span>
        {view === 'list' && auto === 'list' && !chosen ? (
          <span data-testid="app-flow-list-reason">
            · {layout ? 'shown as a list: the graph would not be readable at this width or height' : 'too many to draw as a graph'}
          </span>
        ) : null}
        <fieldset className="ml-auto inline-flex rounded-md border border-line bg-surface-2 p-0.5">
          <legend className="sr-only">Flow view</legend>
          <ViewButton icon={Network} label="Graph" active={view === 'graph'} disabled={!layout} onClick={() => setChosen('graph')} />
          <ViewButton icon={Rows3} label="List" active={view === 'list'} onClick={() => setChosen('list')} />
        </fieldset>
      </div>
      {view === 'graph' && layout ? <LaneGraph nodes={layout.nodes} edges={lanes.edges} size={layout.size} width={width} /> : null}
      {view === 'list' ? <LaneList lanes={lanes} /> : null}
    </div>
  );
}

function ViewButton({
  icon: Icon,
  label,
  active,
  disabled,
  onClick,
}: {
  icon: LucideIcon;
  label: string;
  active: boolean;
  disabled?: boolean;
  onClick: () => void;
}) {
  return (
    <button
      type="button"
      aria-pressed={active}
      disabled={disabled}
      onClick={onClick}
      title={disabled ? `Too many nodes to draw (more than ${GRAPH_MAX_NODES})` : undefined}
      className={cn(
        'inline-flex h-6 cursor-pointer items-center gap-1 rounded px-2 text-[12px] font-medium disabled:cursor-not-allowed disabled:opacity-50',
        active ? 'bg-surface text-fg shadow-card' : 'text-muted hover:text-fg',
      )}
    >
      <Icon size={13} aria-hidden="true" /> {label}
    </button>
  );
}

/** Fits the graph again when the card's width changes (zoom kept between MIN_READABLE_ZOOM and 1). */
function FitOnResize({ width }: { width: number }) {
  const flow = useReactFlow();
  useEffect(() => {
    if (width > 0) void flow.fitView({ padding: 0.03, minZoom: MIN_READABLE_ZOOM, maxZoom: 1 });
  }, [width, flow]);
  return null;
}

function LaneGraph({
  nodes,
  edges,
  size,
  width,
}: {
  nodes: FlowNode[];
  edges: Lanes['edges'];
  size: { width: number; height: number };
  width: number;
}) {
  const theme = useTheme();
  const navigate = useNavigate();
  const frame = useRef<HTMLDivElement>(null);
  // the wheel scrolls the page; only a focused graph zooms and pans (click it or Tab to it, Esc leaves)
  const [active, setActive] = useState(false);
  const zoom = graphZoom(size, width - 24);
  const height = Math.ceil(size.height * zoom + 36);
  const styledEdges = useMemo(
    () => edges.map((e) => ({ ...e, animated: false, style: { stroke: 'var(--c-line-strong)', strokeWidth: 1.5 } })),
    [edges],
  );
  return (
    <div
      ref={frame}
      // biome-ignore lint/a11y/noNoninteractiveTabindex: the graph takes focus so that the wheel zooms it instead of scrolling the page
      tabIndex={0}
      role="application"
      aria-roledescription="graph"
      aria-label="Application flow graph: focus it to zoom with the wheel and drag to pan"
      data-testid="app-flow-graph"
      data-active={active}
      className={cn(
        'relative m-2 rounded-lg outline-none',
        active ? 'ring-2 ring-accent/60' : 'focus-visible:ring-2 focus-visible:ring-accent/60',
      )}
      style={{ height }}
      onFocus={() => setActive(true)}
      onBlur={(e) => {
        if (!e.currentTarget.contains(e.relatedTarget as globalThis.Node | null)) setActive(false);
      }}
      onPointerDown={() => {
        if (!active) frame.current?.focus({ preventScroll: true });
      }}
      onKeyDown={(e) => {
        if (e.key === 'Escape' && active) {
          e.stopPropagation();
          frame.current?.blur();
        }
      }}
    >
      <ReactFlow
        nodes={nodes}
        edges={styledEdges}
        nodeTypes={nodeTypes}
        colorMode={theme}
        fitView
        fitViewOptions={{ padding: 0.03, minZoom: MIN_READABLE_ZOOM, maxZoom: 1 }}
        minZoom={0.3}
        maxZoom={2}
        zoomOnScroll={active}
        zoomOnPinch={active}
        panOnDrag={active}
        preventScrolling={active}
        zoomOnDoubleClick={false}
        nodesDraggable={false}
        nodesConnectable={false}
        nodesFocusable={false}
        edgesFocusable={false}
        proOptions={{ hideAttribution: true }}
        onNodeClick={(_e, node) => {
          const target = (node as FlowNode).data.target;
          if (target.fn) void navigate({ to: '/functions', search: { fn: target.fn } });
          else if (target.trigger) void navigate({ to: '/triggers', search: { id: target.trigger } });
        }}
        style={{ background: 'transparent' }}
      >
        <FitOnResize width={width} />
        <Background gap={18} size={1} color="var(--c-line)" />
        <Controls showInteractive={false} position="bottom-right" />
      </ReactFlow>
      <p className="pointer-events-none absolute bottom-2 left-2 rounded bg-surface/90 px-1.5 py-0.5 text-[11.5px] text-muted">
        {active ? 'Wheel zooms · drag pans · Esc releases the page' : 'Click the graph to zoom and pan'}
      </p>
    </div>
  );
}

/** Rows shown per group before "Show all". */
const GROUP_PREVIEW = 25;

function LaneList({ lanes }: { lanes: Lanes }) {
  const [filter, setFilter] = useState('');
  const [expanded, setExpanded] = useState<Set<LaneKind>>(() => new Set());
  const groups = useMemo(() => laneGroups(lanes, filter), [lanes, filter]);
  const rows = groups.reduce((n, g) => n + g.rows.length, 0);
  return (
    <div className="space-y-3 p-3" data-testid="app-flow-list">
      {lanes.edges.length + lanes.nodes.length > 16 ? (
        <SearchInput value={filter} onChange={setFilter} placeholder="Filter sources and functions…" className="max-w-sm" />
      ) : null}
      {rows === 0 ? <p className="text-[13px] text-muted">Nothing matches “{filter}”.</p> : null}
      <div className="grid gap-3 lg:grid-cols-2">
        {groups.map((group) => {
          const Icon = ICON[group.kind];
          const open = expanded.has(group.kind) || filter.trim() !== '';
          const shown = open ? group.rows : group.rows.slice(0, GROUP_PREVIEW);
          return (
            <section key={group.kind} className="min-w-0 rounded-lg border border-line" data-testid={`app-flow-group-${group.kind}`}>
              <h3 className="flex items-center gap-2 border-b border-line bg-surface-2/60 px-3 py-1.5 text-[12px] font-semibold text-fg">
                <Icon size={14} style={{ color: COLOR[group.kind] }} aria-hidden="true" />
                {group.kind === 'function' ? 'Called directly (no trigger)' : KIND_LABEL[group.kind]}
                <span className="font-normal text-muted tabular-nums">{group.rows.length}</span>
              </h3>
              <ul className="divide-y divide-line/70">
                {shown.map(({ source, fn }) => (
                  <li
                    key={`${source?.id ?? ''}>${fn.id}`}
                    className="flex min-w-0 items-center gap-2 px-3 py-1.5 text-[13px]"
                    data-testid="app-flow-row"
                  >
                    {source ? (
                      <>
                        <Link
                          to="/triggers"
                          search={{ id: source.target.trigger }}
                          className="min-w-0 flex-1 truncate font-mono text-[12.5px] text-fg hover:text-accent hover:underline"
                          title={`${source.label} (${source.sub})`}
                        >
                          {source.label}
                        </Link>
                        <ArrowRight size={13} className="shrink-0 text-muted" aria-label="calls" />
                      </>
                    ) : null}
                    <Link
                      to="/functions"
                      search={{ fn: fn.target.fn }}
                      className="min-w-0 flex-1 truncate font-mono text-[12.5px] text-accent hover:underline"
                      title={fn.label}
                    >
                      {fn.label}
                    </Link>
                  </li>
                ))}
              </ul>
              {shown.length < group.rows.length ? (
                <button
                  type="button"
                  onClick={() => setExpanded((prev) => new Set(prev).add(group.kind))}
                  className="w-full cursor-pointer border-t border-line px-3 py-1.5 text-left text-[12.5px] font-medium text-accent hover:bg-surface-2"
                >
                  Show all {group.rows.length}
                </button>
              ) : null}
            </section>
          );
        })}
      </div>
    </div>
  );
}
