import { Handle, type NodeProps, Position } from '@xyflow/react';
import { Server } from 'lucide-react';
import { useMemo } from 'react';
import { formatDuration, pluralize } from '../../lib/format.ts';
import { cn } from '../ui/cn.ts';
import { GraphCanvas } from './graph-canvas.tsx';
import { serviceColor } from './span-facts.ts';
import { serviceBreakdown, serviceEdges, type TraceModel } from './trace-model.ts';

/**
 * Seed 2.6 Trace Map / console-worker "service map": services as nodes, cross-service parent →
 * child span relations as edges with call counts. Lazily loaded (React Flow + dagre).
 */
type ServiceData = { service: string; spans: number; avgMs: number; errors: number; roots: boolean };

function ServiceNode({ data, selected }: NodeProps) {
  const d = data as ServiceData;
  return (
    <div
      data-testid="service-node"
      data-service={d.service}
      className={cn(
        'flex h-full w-full items-center gap-2.5 rounded-xl border bg-surface px-3 shadow-card',
        d.errors > 0 ? 'border-bad/60' : 'border-line-strong',
        selected && 'ring-2 ring-accent',
      )}
    >
      <Handle type="target" position={Position.Left} className="!border-0 !bg-transparent" />
      <span
        className="flex size-8 shrink-0 items-center justify-center rounded-lg text-white"
        style={{ background: serviceColor(d.service) }}
      >
        <Server size={15} />
      </span>
      <div className="min-w-0">
        <div className="truncate text-[13px] font-semibold text-fg">{d.service}</div>
        <div className="truncate text-[11px] text-muted">
          {pluralize(d.spans, 'span')} · avg {formatDuration(d.avgMs)}
          {d.errors > 0 ? <span className="text-bad"> · {pluralize(d.errors, 'error')}</span> : null}
        </div>
      </div>
      <Handle type="source" position={Position.Right} className="!border-0 !bg-transparent" />
    </div>
  );
}

const nodeTypes = { service: ServiceNode };
const SIZE = { width: 230, height: 60 };

export default function ServiceMap({ model, onService }: { model: TraceModel; onService: (service: string) => void }) {
  const graph = useMemo(() => {
    const stats = serviceBreakdown(model);
    const rootServices = new Set(model.roots.map((r) => r.service));
    const nodes = stats.map((s) => ({
      id: s.service,
      type: 'service',
      data: { service: s.service, spans: s.spans, avgMs: s.avgMs, errors: s.errors, roots: rootServices.has(s.service) } as ServiceData,
    }));
    const edges = serviceEdges(model).map((e) => ({
      id: `${e.from}->${e.to}`,
      source: e.from,
      target: e.to,
      label: `${pluralize(e.calls, 'call')} · ${formatDuration(e.totalMs / e.calls)}${e.errors ? ` · ${e.errors} err` : ''}`,
      tone: e.errors > 0 ? ('bad' as const) : ('normal' as const),
    }));
    return { nodes, edges };
  }, [model]);
  return (
    <div className="flex h-full min-h-0 flex-col">
      {graph.edges.length === 0 ? (
        <p className="border-b border-line px-4 py-2 text-xs text-muted">
          {graph.nodes.length === 1
            ? 'Every span of this trace ran in one service: no cross-service calls.'
            : 'No span of this trace calls into another service.'}
        </p>
      ) : null}
      <div className="min-h-0 flex-1">
        <GraphCanvas
          testId="service-map"
          nodes={graph.nodes}
          edges={graph.edges}
          nodeTypes={nodeTypes}
          size={SIZE}
          onNodeClick={onService}
        />
      </div>
    </div>
  );
}
