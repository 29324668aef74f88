import { Handle, type NodeProps, Position } from '@xyflow/react';
import { cn } from '../ui/cn.ts';
import type { FlowNodeData } from './flow-graph.ts';
import { KIND_VISUAL, methodColor } from './flow-node-visual.ts';

export { KIND_VISUAL, methodColor };

export const NODE_SIZE = { width: 230, height: 54 };

export function FlowNode({ id, data, selected }: NodeProps) {
  const d = data as FlowNodeData;
  const visual = KIND_VISUAL[d.kind];
  const Icon = visual.icon;
  const color = d.kind === 'http' ? methodColor(d.method) : visual.color;
  return (
    <div
      data-testid="flow-node"
      data-node-id={id}
      data-kind={d.kind}
      className={cn(
        'flex h-full w-full items-center gap-2.5 rounded-xl border bg-surface px-2.5 shadow-card transition-colors',
        selected ? 'border-accent ring-2 ring-accent/40' : 'border-line-strong hover:border-accent/60',
        d.unnamed && 'border-dashed',
        // a group of the overview: a stack of cards
        d.group &&
          'shadow-[3px_3px_0_-1px_var(--c-surface),3px_3px_0_0_var(--c-line-strong),6px_6px_0_-1px_var(--c-surface),6px_6px_0_0_var(--c-line-strong)]',
      )}
      data-group={d.group ? d.group.count : undefined}
      style={{ borderLeft: `3px solid ${color}` }}
    >
      <Handle type="target" position={Position.Left} className="!size-1.5 !border-0 !bg-line-strong" />
      <span
        className="flex size-8 shrink-0 items-center justify-center rounded-lg"
        style={{ color, background: `color-mix(in srgb, ${color} 14%, transparent)` }}
        aria-hidden="true"
      >
        <Icon size={15} />
      </span>
      <div className="min-w-0 flex-1 leading-tight">
        <div className="flex items-center gap-1.5">
          {d.kind === 'http' && d.method ? (
            <span className="shrink-0 rounded px-1 font-mono text-[10px] font-bold text-white" style={{ background: color }}>
              {d.method}
            </span>
          ) : null}
          <span
            className={cn(
              'truncate text-[12.5px] font-semibold text-fg',
              d.kind !== 'event' && d.kind !== 'trigger' && 'font-mono text-[12px]',
            )}
            title={d.label}
          >
            {d.label}
          </span>
        </div>
        <div className="mt-0.5 truncate text-[11px] text-muted">
          {d.kind === 'function' && !d.group ? `${visual.caption} · ${d.sub ?? ''}` : (d.sub ?? visual.caption)}
        </div>
      </div>
      <Handle type="source" position={Position.Right} className="!size-1.5 !border-0 !bg-line-strong" />
    </div>
  );
}
