import { ArrowUpLeft, X } from 'lucide-react';
import { useSpanLogs } from '../../api/traces.ts';
import { formatDuration } from '../../lib/format.ts';
import { CountBadge } from '../ui/badge.tsx';
import { IconButton } from '../ui/button.tsx';
import { cn } from '../ui/cn.ts';
import { CopyButton } from '../ui/copy-button.tsx';
import { RerunButton, rerunTargetOf } from './rerun-span.tsx';
import { baggageOf, errorsOf, statusOf } from './span-facts.ts';
import { AttributesTab, BaggageTab, ErrorsTab, EventsTab, InfoTab, LinksTab, LogsTab } from './span-tabs.tsx';
import { StatusBadge } from './status-badge.tsx';
import type { SpanNode, TraceModel } from './trace-model.ts';
import type { SpanTab } from './trace-search.ts';

/**
 * Span detail (seed 2.6 tabs Info, Tags, Logs, Errors, Baggage; console-worker §3.2 adds events,
 * OTel logs, context and links): one panel with the union of both lists.
 */
export function SpanPanel({
  model,
  node,
  tab,
  onTab,
  onSelect,
  onOpenTrace,
  onClose,
}: {
  model: TraceModel;
  node: SpanNode;
  tab: SpanTab;
  onTab: (tab: SpanTab) => void;
  onSelect: (spanId: string) => void;
  onOpenTrace: (traceId: string, spanId?: string) => void;
  onClose: () => void;
}) {
  const span = node.span;
  const logs = useSpanLogs(span.trace_id, span.span_id);
  const errors = errorsOf(span);
  const baggage = baggageOf(span);
  const rerun = rerunTargetOf(node);
  const items: Array<{ value: SpanTab; label: string; count?: number }> = [
    { value: 'info', label: 'Info' },
    { value: 'attributes', label: 'Attributes', count: span.attributes.length },
    { value: 'events', label: 'Events', count: span.events.length },
    { value: 'logs', label: 'Logs', count: logs.data?.length },
    { value: 'errors', label: 'Errors', count: errors.length },
    { value: 'baggage', label: 'Baggage', count: baggage.length },
    { value: 'links', label: 'Links', count: span.links.length },
  ];
  return (
    <aside
      className="flex h-full min-h-0 flex-col bg-surface"
      aria-label="Span detail"
      data-testid="span-panel"
      data-span-id={span.span_id}
    >
      <header className="border-b border-line px-4 pt-3 pb-2.5">
        <div className="flex items-start gap-2">
          <div className="min-w-0 flex-1">
            <h3 className="truncate text-[14px] font-semibold text-fg" title={span.name}>
              {span.name}
            </h3>
            <div className="mt-1 flex flex-wrap items-center gap-x-2 gap-y-1 text-xs text-muted">
              <StatusBadge status={statusOf(span)} />
              <span>{node.service}</span>
              <span className="font-mono tabular-nums">{formatDuration(node.durationMs)}</span>
              <span className="text-faint">self {formatDuration(node.selfMs)}</span>
            </div>
          </div>
          <IconButton icon={X} label="Close span detail" onClick={onClose} />
        </div>
        <div className="mt-2 flex flex-wrap items-center gap-1 text-[11.5px] text-muted">
          <span className="font-mono">{span.span_id}</span>
          <CopyButton text={span.span_id} label="Copy span id" />
          {node.parent ? (
            <button
              type="button"
              onClick={() => onSelect(node.parent?.id as string)}
              className="ml-1 inline-flex cursor-pointer items-center gap-1 rounded-md border border-line px-1.5 py-0.5 hover:border-line-strong hover:text-fg"
              title={`Parent: ${node.parent.span.name}`}
            >
              <ArrowUpLeft size={12} /> Parent
            </button>
          ) : null}
          {rerun ? (
            <span className="ml-1">
              <RerunButton target={rerun} />
            </span>
          ) : null}
          <span className="ml-auto text-faint">
            depth {node.depth} · {node.children.length} {node.children.length === 1 ? 'child' : 'children'}
          </span>
        </div>
      </header>
      <SpanTabStrip items={items} value={tab} onChange={onTab} />
      <div className="min-h-0 flex-1 overflow-auto p-4" role="tabpanel" data-testid={`span-tab-${tab}`}>
        {tab === 'info' ? <InfoTab model={model} node={node} onSelect={onSelect} /> : null}
        {tab === 'attributes' ? <AttributesTab span={span} /> : null}
        {tab === 'events' ? <EventsTab node={node} /> : null}
        {tab === 'logs' ? <LogsTab query={logs} node={node} /> : null}
        {tab === 'errors' ? <ErrorsTab errors={errors} /> : null}
        {tab === 'baggage' ? <BaggageTab span={span} baggage={baggage} /> : null}
        {tab === 'links' ? <LinksTab model={model} span={span} onSelect={onSelect} onOpenTrace={onOpenTrace} /> : null}
      </div>
    </aside>
  );
}

/** Underlined tabs that wrap in a narrow panel instead of hiding the last ones. */
function SpanTabStrip({
  items,
  value,
  onChange,
}: {
  items: Array<{ value: SpanTab; label: string; count?: number }>;
  value: SpanTab;
  onChange: (tab: SpanTab) => void;
}) {
  return (
    <div role="tablist" aria-label="Span detail tabs" className="flex flex-wrap gap-x-3.5 border-b border-line px-4">
      {items.map((item) => {
        const active = item.value === value;
        return (
          <button
            key={item.value}
            type="button"
            role="tab"
            aria-selected={active}
            onClick={() => onChange(item.value)}
            className={cn(
              '-mb-px inline-flex h-8.5 cursor-pointer items-center gap-1.5 border-b-2 text-[12.5px] font-medium transition-colors',
              active ? 'border-accent text-fg' : 'border-transparent text-muted hover:text-fg',
            )}
          >
            {item.label}
            {item.count ? <CountBadge value={item.count} active={active} /> : null}
          </button>
        );
      })}
    </div>
  );
}
