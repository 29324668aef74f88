import { Handle, type NodeProps, Position } from '@xyflow/react';
import { FolderGit2, GitBranch, GitMerge, type LucideIcon, UserRound } from 'lucide-react';
import { cn } from '../ui/cn.ts';
import { LIFECYCLE_VISUAL, type WorktreeNodeData, type WorktreeNodeKind } from './worktree-graph.ts';

export const WT_NODE_SIZE = { width: 250, height: 56 };

const KIND: Record<WorktreeNodeKind, { icon: LucideIcon; color: string }> = {
  repo: { icon: FolderGit2, color: 'var(--c-violet)' },
  worktree: { icon: GitBranch, color: 'var(--c-accent)' },
  session: { icon: UserRound, color: 'var(--c-info)' },
};

/** One node of the worktree graph: a repository, a worktree (lifecycle dot, dirty/ahead markers) or a session. */
export function WorktreeNode({ id, data, selected }: NodeProps) {
  const d = data as WorktreeNodeData;
  const visual = KIND[d.kind];
  const Icon = visual.icon;
  const lifecycle = d.lifecycle ? LIFECYCLE_VISUAL[d.lifecycle] : undefined;
  const color = lifecycle?.color ?? visual.color;
  return (
    <div
      data-testid="worktree-node"
      data-node-id={id}
      data-kind={d.kind}
      data-lifecycle={d.lifecycle}
      data-integrated={d.integrated ? 'true' : undefined}
      className={cn(
        'flex h-full w-full cursor-pointer items-center gap-2.5 rounded-xl border bg-surface px-2.5 shadow-card transition-colors',
        selected ? 'border-accent ring-2 ring-accent/40' : 'border-line-strong hover:border-accent/60',
        d.lifecycle === 'orphaned' && 'border-dashed',
      )}
      style={{ borderLeft: `3px solid ${color}` }}
    >
      {d.kind !== 'repo' ? <Handle type="target" position={Position.Left} className="!size-1.5 !border-0 !bg-line-strong" /> : null}
      <span
        className="flex size-8 shrink-0 items-center justify-center rounded-lg"
        style={{ color: visual.color, background: `color-mix(in srgb, ${visual.color} 14%, transparent)` }}
        aria-hidden="true"
      >
        <Icon size={15} />
      </span>
      <div className="min-w-0 flex-1 leading-tight">
        <div className="flex items-center gap-1.5">
          <span
            className={cn('truncate text-[12.5px] font-semibold text-fg', d.kind !== 'repo' && 'font-mono text-[12px]')}
            title={d.label}
          >
            {d.label}
          </span>
          {d.dirty ? (
            <span className="font-mono text-[12px] font-bold text-warn" title="uncommitted changes">
              *
            </span>
          ) : null}
          {d.kind === 'repo' && d.count ? <span className="rounded bg-surface-2 px-1 text-[10px] text-muted">{d.count}</span> : null}
          {d.integrated ? <GitMerge size={12} className="shrink-0 text-ok" aria-label="merged upstream" /> : null}
        </div>
        <div className="mt-0.5 flex items-center gap-1 truncate text-[10.5px] text-faint">
          {lifecycle ? <span className="inline-block size-1.5 shrink-0 rounded-full" style={{ background: lifecycle.color }} /> : null}
          <span className="truncate" title={d.sub}>
            {lifecycle ? `${lifecycle.label} · ${d.sub}` : d.sub}
          </span>
        </div>
      </div>
      {d.kind !== 'session' ? <Handle type="source" position={Position.Right} className="!size-1.5 !border-0 !bg-line-strong" /> : null}
    </div>
  );
}
