import { Handle, type NodeProps, Position } from '@xyflow/react';
import { ChevronDown, ChevronRight, Package, PackageOpen } from 'lucide-react';
import { cn } from '../ui/cn.ts';
import type { FlowNodeData } from './flow-graph.ts';
import { KIND_VISUAL, methodColor } from './flow-node-visual.ts';

export { KIND_VISUAL, methodColor };

export const NODE_SIZE = { width: 230, height: 54 };

/** A stack of cards behind a node that stands for many (an overview group, a closed pack). */
const STACKED =
  'shadow-[3px_3px_0_-1px_var(--c-surface),3px_3px_0_0_var(--c-line-strong),6px_6px_0_-1px_var(--c-surface),6px_6px_0_0_var(--c-line-strong)]';

export function FlowNode({ id, data, selected }: NodeProps) {
  const d = data as FlowNodeData;
  if (d.pack) return <PackNode id={id} data={d} />;
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
        (d.unnamed || d.packKey) && 'border-dashed',
        // a group of the overview: a stack of cards
        d.group && STACKED,
      )}
      data-group={d.group ? d.group.count : undefined}
      data-unconnected={d.packKey ? d.packKey : undefined}
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
          {d.kind === 'function' && !d.group ? `${d.packKey ? 'No trigger' : visual.caption} · ${d.sub ?? ''}` : (d.sub ?? visual.caption)}
        </div>
      </div>
      <Handle type="source" position={Position.Right} className="!size-1.5 !border-0 !bg-line-strong" />
    </div>
  );
}

/**
 * A pack of functions without triggers (issue 25 item 8): the worker's name and how many it
 * holds; a click opens it (its functions follow it in the grid) or packs them again.
 */
function PackNode({ id, data }: { id: string; data: FlowNodeData }) {
  const pack = data.pack as NonNullable<FlowNodeData['pack']>;
  const Icon = pack.expanded ? PackageOpen : Package;
  const Chevron = pack.expanded ? ChevronDown : ChevronRight;
  return (
    <div
      data-testid="flow-node"
      data-node-id={id}
      data-kind="function"
      data-pack={pack.key}
      data-count={pack.count}
      data-expanded={pack.expanded}
      title={pack.expanded ? 'Click to pack these functions again' : 'Click to show these functions'}
      className={cn(
        'flex h-full w-full cursor-pointer items-center gap-2.5 rounded-xl border border-dashed border-line-strong px-2.5 transition-colors hover:border-accent/60',
        pack.expanded ? 'bg-surface-2' : cn('bg-surface', STACKED),
      )}
    >
      <Handle type="target" position={Position.Left} className="!invisible" />
      <span className="flex size-8 shrink-0 items-center justify-center rounded-lg bg-surface-3 text-muted" aria-hidden="true">
        <Icon size={15} />
      </span>
      <div className="min-w-0 flex-1 leading-tight">
        <div className="truncate font-mono text-[12px] font-semibold text-fg" title={pack.key}>
          {pack.key}
        </div>
        <div className="mt-0.5 truncate text-[11px] text-muted">{pack.count} functions · no trigger</div>
      </div>
      <Chevron size={15} className="shrink-0 text-faint" aria-hidden="true" />
      <Handle type="source" position={Position.Right} className="!invisible" />
    </div>
  );
}
