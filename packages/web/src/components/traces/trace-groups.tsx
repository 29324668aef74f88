import { ChevronRight, Layers } from 'lucide-react';
import { useMemo, useState } from 'react';
import { type TraceGroup, useGroupRows, useTraceSpans } from '../../api/traces.ts';
import { formatDuration, pluralize, timeAgo } from '../../lib/format.ts';
import { cn } from '../ui/cn.ts';
import { EmptyState, ErrorNote } from '../ui/empty-state.tsx';
import { Spinner } from '../ui/spinner.tsx';
import { displayName, statusOf } from './span-facts.ts';
import { StatusIcon } from './status-badge.tsx';
import { buildTraceModel, type SpanNode } from './trace-model.ts';
import { GROUP_ATTRIBUTES, type GroupBy, type TraceFilters } from './trace-search.ts';
import { ServiceDot } from './trace-table.tsx';

/**
 * Group by message / session / function (console-worker §3.2): the engine aggregates
 * (`engine::traces::group_by`); a group's traces load when it opens, and a trace's span tree
 * when that trace opens.
 */
export function TraceGroups({
  group,
  groups,
  filters,
  selected,
  onOpen,
}: {
  group: Exclude<GroupBy, 'none'>;
  groups: TraceGroup[];
  filters: TraceFilters;
  selected?: string;
  onOpen: (traceId: string, spanId?: string) => void;
}) {
  const [open, setOpen] = useState<Set<string>>(() => new Set());
  if (groups.length === 0) {
    return (
      <EmptyState icon={Layers} title={`No traces carry a ${GROUP_ATTRIBUTES[group].label.toLowerCase()} attribute`} compact>
        Grouping reads <code className="font-mono">{GROUP_ATTRIBUTES[group].attributes[0]}</code> on any span of a trace. Workers set it as
        a span attribute (the chat stack tags every turn with its session).
      </EmptyState>
    );
  }
  return (
    <ul className="divide-y divide-line" data-testid="trace-groups">
      {groups.map((g) => {
        const isOpen = open.has(g.value);
        return (
          <li key={g.value} data-testid="trace-group" data-group={g.value}>
            <button
              type="button"
              aria-expanded={isOpen}
              onClick={() =>
                setOpen((prev) => {
                  const next = new Set(prev);
                  if (next.has(g.value)) next.delete(g.value);
                  else next.add(g.value);
                  return next;
                })
              }
              className="flex w-full cursor-pointer items-center gap-2 px-3 py-2.5 text-left hover:bg-surface-2"
            >
              <ChevronRight size={14} className={cn('shrink-0 text-faint transition-transform', isOpen && 'rotate-90')} />
              <div className="min-w-0 flex-1">
                <div className="truncate font-mono text-[12.5px] font-medium text-fg" title={g.value}>
                  {g.value === '*' ? 'all sessions (wildcard)' : g.label || g.value}
                </div>
                <div className="mt-0.5 flex flex-wrap gap-x-3 text-[11.5px] text-muted">
                  <span>{pluralize(g.trace_ids.length, 'trace')}</span>
                  <span>{pluralize(g.span_count, 'span')}</span>
                  {g.error_count > 0 ? <span className="text-bad">{pluralize(g.error_count, 'error')}</span> : null}
                  <span>over {formatDuration(g.duration_ms)}</span>
                  <span className="text-faint">last {timeAgo(g.last_seen_ms)}</span>
                </div>
              </div>
            </button>
            {isOpen ? <GroupTraces traceIds={g.trace_ids} filters={filters} selected={selected} onOpen={onOpen} /> : null}
          </li>
        );
      })}
    </ul>
  );
}

function GroupTraces({
  traceIds,
  filters,
  selected,
  onOpen,
}: {
  traceIds: string[];
  filters: TraceFilters;
  selected?: string;
  onOpen: (traceId: string, spanId?: string) => void;
}) {
  const rows = useGroupRows(traceIds, filters, true);
  const [trees, setTrees] = useState<Set<string>>(() => new Set());
  if (rows.isPending) {
    return (
      <div className="flex items-center gap-2 px-9 pb-3 text-xs text-muted">
        <Spinner size={12} /> Loading traces…
      </div>
    );
  }
  if (rows.isError) return <ErrorNote className="mx-3 mb-3" title="Could not load this group" error={rows.error} />;
  if (rows.data.spans.length === 0) return <p className="px-9 pb-3 text-xs text-muted">No trace of this group matches the filters.</p>;
  return (
    <ul className="pb-2" data-testid="group-traces">
      {rows.data.spans.map((row) => {
        const showTree = trees.has(row.trace_id);
        return (
          <li key={row.trace_id}>
            <div
              className={cn(
                'flex items-center gap-2 py-1.5 pr-3 pl-6 text-[13px] hover:bg-surface-2',
                row.trace_id === selected && 'bg-accent-soft hover:bg-accent-soft',
              )}
            >
              <button
                type="button"
                aria-label={showTree ? 'Hide span tree' : 'Show span tree'}
                aria-expanded={showTree}
                onClick={() =>
                  setTrees((prev) => {
                    const next = new Set(prev);
                    if (next.has(row.trace_id)) next.delete(row.trace_id);
                    else next.add(row.trace_id);
                    return next;
                  })
                }
                className="flex size-5 cursor-pointer items-center justify-center rounded text-faint hover:bg-surface-3 hover:text-fg"
              >
                <ChevronRight size={13} className={cn('transition-transform', showTree && 'rotate-90')} />
              </button>
              <button
                type="button"
                data-testid="group-trace-row"
                data-trace-id={row.trace_id}
                onClick={() => onOpen(row.trace_id)}
                className="flex min-w-0 flex-1 cursor-pointer items-center gap-2 text-left"
              >
                <StatusIcon status={statusOf(row, row.error_count)} />
                <span className="truncate font-medium">{displayName(row)}</span>
                <span className="flex shrink-0 items-center gap-1 text-[11.5px] text-muted">
                  <ServiceDot service={row.service_name} />
                  {row.service_name}
                </span>
                <span className="ml-auto shrink-0 font-mono text-[12px] tabular-nums text-muted">{formatDuration(row.duration_ms)}</span>
              </button>
            </div>
            {showTree ? <SpanTree traceId={row.trace_id} onOpen={onOpen} /> : null}
          </li>
        );
      })}
    </ul>
  );
}

/** The span tree of one trace inside a group, fetched on demand. */
function SpanTree({ traceId, onOpen }: { traceId: string; onOpen: (traceId: string, spanId?: string) => void }) {
  const spans = useTraceSpans(traceId);
  const model = useMemo(() => (spans.data ? buildTraceModel(spans.data) : undefined), [spans.data]);
  if (spans.isPending) {
    return (
      <div className="flex items-center gap-2 py-1 pl-14 text-xs text-muted">
        <Spinner size={12} /> Loading spans…
      </div>
    );
  }
  if (!model) return null;
  const rows: SpanNode[] = [];
  const walk = (n: SpanNode) => {
    rows.push(n);
    for (const c of n.children) walk(c);
  };
  for (const r of model.roots) walk(r);
  return (
    <ul className="mb-1 ml-12 border-l border-line" data-testid="group-span-tree">
      {rows.slice(0, 200).map((n) => (
        <li key={n.id}>
          <button
            type="button"
            onClick={() => onOpen(traceId, n.id)}
            className="flex w-full cursor-pointer items-center gap-2 py-0.5 pr-3 text-left text-[12px] hover:bg-surface-2"
            style={{ paddingLeft: 10 + n.depth * 14 }}
          >
            <ServiceDot service={n.service} />
            <span className={cn('truncate', n.error && 'text-bad')}>{n.span.name}</span>
            <span className="ml-auto shrink-0 font-mono text-[11px] text-faint tabular-nums">{formatDuration(n.durationMs)}</span>
          </button>
        </li>
      ))}
      {rows.length > 200 ? (
        <li className="py-1 pl-3 text-[11px] text-faint">… {pluralize(rows.length - 200, 'more span')}: open the trace</li>
      ) : null}
    </ul>
  );
}
