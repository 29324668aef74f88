import { ArrowUpLeft, ChevronRight, Route } from 'lucide-react';
import { useMemo, useState } from 'react';
import { useTraceSpans } from '../../api/traces.ts';
import { formatDuration } from '../../lib/format.ts';
import { cn } from '../ui/cn.ts';
import { serviceColor, shortId } from './span-facts.ts';
import type { SpanNode, TraceModel } from './trace-model.ts';

/** The first link of a root span that points into another trace: where this trace came from. */
export function originLink(model: TraceModel): { traceId: string; spanId: string } | undefined {
  const roots = [model.criticalPath[0], ...model.roots].filter(Boolean) as SpanNode[];
  for (const root of roots) {
    const link = root.span.links.find((l) => l.trace_id && l.trace_id !== model.traceId);
    if (link) return { traceId: link.trace_id, spanId: link.span_id };
  }
  return undefined;
}

/**
 * console-worker §3.2 critical-path breadcrumb: longest root, then the longest child at every
 * level; each crumb selects its span. A leading crumb jumps to the parent in another trace (the
 * root's span link, e.g. the producer of a queued message).
 */
export function CriticalPath({
  model,
  selectedId,
  onSelect,
  onOpenTrace,
}: {
  model: TraceModel;
  selectedId?: string;
  onSelect: (spanId: string) => void;
  onOpenTrace: (traceId: string, spanId?: string) => void;
}) {
  const [expanded, setExpanded] = useState(false);
  const origin = useMemo(() => originLink(model), [model]);
  const path = model.criticalPath;
  const root = path[0];
  if (!root || (path.length < 2 && !origin && !root.remoteParent)) return null;
  const long = path.length > 6 && !expanded;
  const shown: Array<SpanNode | 'more'> = long ? [...path.slice(0, 2), 'more', ...path.slice(-3)] : path;
  return (
    <nav
      aria-label="Critical path"
      className="flex min-w-0 items-center gap-1 overflow-x-auto px-4 py-2 text-[12px]"
      data-testid="critical-path"
    >
      <Route size={13} className="mr-1 shrink-0 text-faint" aria-hidden="true" />
      {origin ? <OriginCrumb origin={origin} onOpenTrace={onOpenTrace} /> : null}
      {!origin && root.remoteParent ? (
        <span
          className="inline-flex shrink-0 items-center gap-1 rounded-md border border-dashed border-line-strong px-1.5 py-0.5 text-faint"
          title="The root's parent span is not stored: it ran in a process that exports elsewhere, or was evicted"
        >
          <ArrowUpLeft size={12} /> parent {shortId(root.span.parent_span_id ?? '')} (not stored)
        </span>
      ) : null}
      {(origin || root.remoteParent) && <ChevronRight size={12} className="shrink-0 text-faint" />}
      {shown.map((item, i) => {
        const sep = i < shown.length - 1 ? <ChevronRight size={12} className="shrink-0 text-faint" /> : null;
        if (item === 'more') {
          return (
            <span key="more" className="contents">
              <button
                type="button"
                onClick={() => setExpanded(true)}
                className="shrink-0 cursor-pointer rounded px-1 text-muted hover:bg-surface-2 hover:text-fg"
              >
                … {path.length - 5} more
              </button>
              {sep}
            </span>
          );
        }
        const selected = item.id === selectedId;
        return (
          <span key={item.id} className="contents">
            <button
              type="button"
              data-testid="crumb"
              data-span-id={item.id}
              aria-current={selected ? 'true' : undefined}
              onClick={() => onSelect(item.id)}
              title={`${item.span.name} — ${item.service}, ${formatDuration(item.durationMs)}`}
              className={cn(
                'inline-flex max-w-56 shrink-0 cursor-pointer items-center gap-1.5 rounded-md px-1.5 py-0.5 transition-colors',
                selected ? 'bg-accent-soft text-accent' : 'text-muted hover:bg-surface-2 hover:text-fg',
              )}
            >
              <span className="size-1.5 shrink-0 rounded-full" style={{ background: serviceColor(item.service) }} />
              <span className={cn('truncate', item.error && 'text-bad')}>{item.span.name}</span>
              <span className="shrink-0 font-mono text-[10.5px] text-faint">{formatDuration(item.durationMs)}</span>
            </button>
            {sep}
          </span>
        );
      })}
    </nav>
  );
}

function OriginCrumb({
  origin,
  onOpenTrace,
}: {
  origin: { traceId: string; spanId: string };
  onOpenTrace: (t: string, s?: string) => void;
}) {
  // the name of the linked span, when that trace is still stored
  const spans = useTraceSpans(origin.traceId);
  const name = spans.data?.find((s) => s.span_id === origin.spanId)?.name;
  return (
    <button
      type="button"
      data-testid="crumb-origin"
      onClick={() => onOpenTrace(origin.traceId, origin.spanId)}
      title={`Open the parent in trace ${origin.traceId}`}
      className="inline-flex max-w-64 shrink-0 cursor-pointer items-center gap-1 rounded-md border border-accent/30 bg-accent-soft px-1.5 py-0.5 text-accent hover:border-accent"
    >
      <ArrowUpLeft size={12} className="shrink-0" />
      <span className="truncate">
        {name ? `${name} ·` : 'from'} trace {shortId(origin.traceId)}
      </span>
    </button>
  );
}
