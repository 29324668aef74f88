import { Handle, type NodeProps, Position } from '@xyflow/react';
import { Circle, Code, Database, type LucideIcon, SendHorizontal, Zap } from 'lucide-react';
import { useMemo } from 'react';
import { formatDuration } from '../../lib/format.ts';
import { cn } from '../ui/cn.ts';
import { GraphCanvas } from './graph-canvas.tsx';
import { functionIdOf, roleOf, type SpanRole, serviceColor } from './span-facts.ts';
import type { TraceModel } from './trace-model.ts';

/**
 * The trace as a flow (console spec §4 Traces "Flow"; console-worker "flow view"): one card per
 * span, typed trigger / enqueue / function / state, parent → child edges, laid out by dagre.
 * Lazily loaded. Very large traces show their first MAX_NODES spans.
 */
const MAX_NODES = 400;

const ROLE: Record<SpanRole, { icon: LucideIcon; label: string; tone: string }> = {
  trigger: { icon: Zap, label: 'trigger', tone: 'bg-warn-soft text-warn' },
  enqueue: { icon: SendHorizontal, label: 'enqueue', tone: 'bg-violet-soft text-violet' },
  function: { icon: Code, label: 'function', tone: 'bg-accent-soft text-accent' },
  state: { icon: Database, label: 'state', tone: 'bg-info-soft text-info' },
  span: { icon: Circle, label: 'span', tone: 'bg-surface-3 text-muted' },
};

type SpanData = { name: string; service: string; role: SpanRole; durationMs: number; error: boolean; pending: boolean; fn?: string };

function SpanCard({ data, selected }: NodeProps) {
  const d = data as SpanData;
  const role = ROLE[d.role];
  const Icon = role.icon;
  return (
    <div
      data-testid="flow-span-node"
      className={cn(
        'flex h-full w-full items-center gap-2 rounded-lg border bg-surface px-2.5 shadow-card',
        d.error ? 'border-bad/70' : 'border-line-strong',
        selected && 'ring-2 ring-accent',
      )}
      style={{ borderLeft: `3px solid ${serviceColor(d.service)}` }}
    >
      <Handle type="target" position={Position.Left} className="!border-0 !bg-transparent" />
      <span className={cn('flex size-7 shrink-0 items-center justify-center rounded-md', role.tone)} title={role.label}>
        <Icon size={14} />
      </span>
      <div className="min-w-0 flex-1">
        <div className={cn('truncate text-[12.5px] font-semibold', d.error ? 'text-bad' : 'text-fg')} title={d.name}>
          {d.name}
        </div>
        <div className="flex items-center gap-1.5 truncate text-[11px] text-muted">
          <span className="truncate">{d.service}</span>
          <span className="ml-auto shrink-0 font-mono tabular-nums">
            {formatDuration(d.durationMs)}
            {d.pending ? '…' : ''}
          </span>
        </div>
      </div>
      <Handle type="source" position={Position.Right} className="!border-0 !bg-transparent" />
    </div>
  );
}

const nodeTypes = { span: SpanCard };
const SIZE = { width: 240, height: 56 };

export default function TraceFlow({
  model,
  selectedId,
  onSelect,
}: {
  model: TraceModel;
  selectedId?: string;
  onSelect: (spanId: string) => void;
}) {
  const graph = useMemo(() => {
    const shown = model.nodes.slice(0, MAX_NODES);
    const ids = new Set(shown.map((n) => n.id));
    const nodes = shown.map((n) => ({
      id: n.id,
      type: 'span',
      data: {
        name: n.span.name,
        service: n.service,
        role: roleOf(n.span),
        durationMs: n.durationMs,
        error: n.error,
        pending: n.pending,
        fn: functionIdOf(n.span),
      } as SpanData,
    }));
    const edges = shown
      .filter((n) => n.parent && ids.has(n.parent.id))
      .map((n) => ({
        id: `${n.parent?.id}->${n.id}`,
        source: n.parent?.id as string,
        target: n.id,
        animated: n.pending,
        tone: n.error ? ('bad' as const) : ('normal' as const),
      }));
    return { nodes, edges, cut: model.nodes.length - shown.length };
  }, [model]);
  return (
    <div className="flex h-full min-h-0 flex-col">
      {graph.cut > 0 ? (
        <p className="border-b border-line px-4 py-2 text-xs text-warn">
          Showing the first {MAX_NODES} spans; {graph.cut} more in the waterfall.
        </p>
      ) : null}
      <div className="min-h-0 flex-1">
        <GraphCanvas
          testId="trace-flow"
          nodes={graph.nodes}
          edges={graph.edges}
          nodeTypes={nodeTypes}
          size={SIZE}
          onNodeClick={onSelect}
          selectedId={selectedId}
        />
      </div>
    </div>
  );
}
