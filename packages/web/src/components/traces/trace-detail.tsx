import { AlignLeft, Flame, GitFork, Network, SearchX, Table2, X } from 'lucide-react';
import { lazy, type ReactNode, Suspense, useMemo } from 'react';
import { useTraceSpans } from '../../api/traces.ts';
import { formatDateTime, formatDuration, pluralize } from '../../lib/format.ts';
import { Button, IconButton } from '../ui/button.tsx';
import { cn } from '../ui/cn.ts';
import { CopyButton } from '../ui/copy-button.tsx';
import { EmptyState, ErrorNote } from '../ui/empty-state.tsx';
import { Spinner } from '../ui/spinner.tsx';
import { Tabs } from '../ui/tabs.tsx';
import { CriticalPath } from './critical-path.tsx';
import { RerunButton, traceEntryOf } from './rerun-span.tsx';
import { ResizeHandle, useStoredSize } from './resizable.tsx';
import { ServiceBreakdown } from './service-breakdown.tsx';
import { displayName, statusOf } from './span-facts.ts';
import { SpanPanel } from './span-panel.tsx';
import { STACK_VIEW_MIN_HEIGHT, spanPanelLayout } from './span-panel-layout.ts';
import { StatusBadge } from './status-badge.tsx';
import { buildTraceModel, type TraceModel } from './trace-model.ts';
import type { SpanTab, TraceView } from './trace-search.ts';
import { useSizeRef } from './use-element-width.ts';
import { Waterfall } from './waterfall.tsx';

// heavy views are their own chunks (initial JS budget, issue 6)
const FlameGraph = lazy(() => import('./flame-graph.tsx'));
const ServiceMap = lazy(() => import('./service-map.tsx'));
const TraceFlow = lazy(() => import('./trace-flow.tsx'));

const VIEWS: Array<{ value: TraceView; label: ReactNode }> = [
  { value: 'waterfall', label: <ViewLabel icon={AlignLeft} text="Waterfall" /> },
  { value: 'flame', label: <ViewLabel icon={Flame} text="Flame graph" /> },
  { value: 'services', label: <ViewLabel icon={Table2} text="Service breakdown" /> },
  { value: 'map', label: <ViewLabel icon={Network} text="Trace map" /> },
  { value: 'flow', label: <ViewLabel icon={GitFork} text="Flow" /> },
];

function ViewLabel({ icon: Icon, text }: { icon: typeof Flame; text: string }) {
  return (
    <span className="inline-flex items-center gap-1.5">
      <Icon size={13} /> {text}
    </span>
  );
}

export function TraceDetail({
  traceId,
  view,
  spanId,
  tab,
  onView,
  onSelectSpan,
  onTab,
  onOpenTrace,
  onClose,
}: {
  traceId: string;
  view: TraceView;
  spanId?: string;
  tab: SpanTab;
  onView: (view: TraceView) => void;
  onSelectSpan: (spanId: string | undefined) => void;
  onTab: (tab: SpanTab) => void;
  onOpenTrace: (traceId: string, spanId?: string) => void;
  onClose: () => void;
}) {
  const spans = useTraceSpans(traceId);
  const model = useMemo(() => (spans.data && spans.data.length > 0 ? buildTraceModel(spans.data) : undefined), [spans.data]);
  const panel = useStoredSize('span-panel', 400, 300, 900);
  const stackedPanel = useStoredSize('span-panel-height', 320, 180, 900);
  const [bodyRef, body] = useSizeRef<HTMLDivElement>();
  const layout = spanPanelLayout(body.width, body.height, panel.size);
  const bodyWidth = body.width;

  if (spans.isPending) {
    return (
      <div className="flex flex-1 items-center justify-center gap-2 text-sm text-muted">
        <Spinner /> Loading trace {traceId.slice(0, 12)}…
      </div>
    );
  }
  if (spans.isError) {
    return (
      <div className="flex-1 p-4">
        <ErrorNote title={`Could not load trace ${traceId}`} error={spans.error} />
      </div>
    );
  }
  if (!model) {
    return (
      <div className="flex-1" data-testid="trace-detail" data-trace-id={traceId}>
        <EmptyState icon={SearchX} title="This trace is not in the store" action={<Button onClick={onClose}>Close</Button>}>
          No span of trace <code className="font-mono">{traceId}</code> is stored: it was cleared, evicted by newer spans, or its spans went
          to another exporter.
        </EmptyState>
      </div>
    );
  }
  const selected = spanId ? model.byId.get(spanId) : undefined;
  const selectService = (service: string) => {
    const first = model.nodes.find((n) => n.service === service);
    if (first) onSelectSpan(first.id);
  };
  // one panel, placed beside, below or over the view by the layout
  const spanPanel = selected ? (
    <SpanPanel
      model={model}
      node={selected}
      tab={tab}
      onTab={onTab}
      onSelect={onSelectSpan}
      onOpenTrace={onOpenTrace}
      onClose={() => onSelectSpan(undefined)}
    />
  ) : null;
  return (
    <section className="flex min-w-0 flex-1 flex-col" aria-label="Trace detail" data-testid="trace-detail" data-trace-id={traceId}>
      <TraceHeader model={model} onClose={onClose} />
      <CriticalPath model={model} selectedId={spanId} onSelect={onSelectSpan} onOpenTrace={onOpenTrace} />
      <div className="border-y border-line px-4 py-2">
        <Tabs label="Trace views" items={VIEWS} value={view} onChange={onView} />
      </div>
      <div
        className={cn('relative flex min-h-0 flex-1', selected && layout === 'stack' && 'flex-col')}
        ref={bodyRef}
        data-testid="trace-body"
        data-span-layout={selected ? layout : undefined}
      >
        <div className="min-h-0 min-w-0 flex-1">
          <Suspense
            fallback={
              <div className="flex h-full items-center justify-center gap-2 text-sm text-muted">
                <Spinner /> Loading view…
              </div>
            }
          >
            {view === 'waterfall' ? <Waterfall model={model} selectedId={spanId} onSelect={onSelectSpan} /> : null}
            {view === 'flame' ? <FlameGraph model={model} selectedId={spanId} onSelect={onSelectSpan} /> : null}
            {view === 'services' ? <ServiceBreakdown model={model} onService={selectService} /> : null}
            {view === 'map' ? <ServiceMap model={model} onService={selectService} /> : null}
            {view === 'flow' ? <TraceFlow model={model} selectedId={spanId} onSelect={onSelectSpan} /> : null}
          </Suspense>
        </div>
        {selected && layout === 'stack' ? (
          <>
            <ResizeHandle
              label="Span detail panel"
              orientation="horizontal"
              size={Math.min(stackedPanel.size, body.height - STACK_VIEW_MIN_HEIGHT)}
              min={stackedPanel.min}
              max={stackedPanel.max}
              direction={-1}
              onResize={stackedPanel.setSize}
              onReset={stackedPanel.reset}
            />
            <div
              className="shrink-0 border-t border-line"
              style={{ height: Math.min(stackedPanel.size, body.height - STACK_VIEW_MIN_HEIGHT) }}
              data-testid="span-panel-stacked"
            >
              {spanPanel}
            </div>
          </>
        ) : selected && layout === 'overlay' ? (
          <div
            className="absolute inset-y-0 right-0 z-10 border-l border-line shadow-pop"
            style={{ width: bodyWidth < 560 ? '100%' : Math.min(panel.size, bodyWidth - 48) }}
            data-testid="span-panel-overlay"
          >
            {spanPanel}
          </div>
        ) : selected ? (
          <>
            <ResizeHandle
              label="Span detail panel"
              size={panel.size}
              min={panel.min}
              max={panel.max}
              direction={-1}
              onResize={panel.setSize}
              onReset={panel.reset}
            />
            <div className="shrink-0 border-l border-line" style={{ width: panel.size }}>
              {spanPanel}
            </div>
          </>
        ) : null}
      </div>
    </section>
  );
}

function TraceHeader({ model, onClose }: { model: TraceModel; onClose: () => void }) {
  const root = model.criticalPath[0];
  const status = root ? statusOf(root.span, model.errorCount) : 'OK';
  const entry = useMemo(() => traceEntryOf(model), [model]);
  return (
    <header className="flex items-start gap-3 px-4 pt-3">
      <div className="min-w-0 flex-1">
        <div className="flex items-center gap-2">
          <StatusBadge status={model.pending && status === 'OK' ? 'Pending' : status} />
          <h2 className="truncate text-[15px] font-semibold text-fg" title={root?.span.name}>
            {root ? displayName(root.span) : model.traceId}
          </h2>
        </div>
        <div className="mt-1.5 flex flex-wrap items-center gap-x-4 gap-y-1 text-xs text-muted">
          <span className="inline-flex items-center gap-1">
            <span className="font-mono text-[11.5px]" data-testid="trace-id">
              {model.traceId}
            </span>
            <CopyButton text={model.traceId} label="Copy trace id" />
          </span>
          <Fact label="duration" value={formatDuration(model.durationMs)} />
          <Fact label="spans" value={String(model.nodes.length)} />
          <Fact label={model.services.length === 1 ? 'service' : 'services'} value={String(model.services.length)} />
          <Fact label={model.errorCount === 1 ? 'error' : 'errors'} value={String(model.errorCount)} bad={model.errorCount > 0} />
          <span title={new Date(model.startMs).toISOString()}>{formatDateTime(model.startMs)}</span>
          {model.pending ? (
            <span className="text-warn">{pluralize(model.nodes.filter((n) => n.pending).length, 'span')} in progress</span>
          ) : null}
        </div>
      </div>
      {entry ? (
        <RerunButton
          target={entry}
          label={
            <>
              Rerun <span className="max-w-[14rem] truncate font-mono text-[12px] max-md:hidden">{entry.functionId}</span>
            </>
          }
        />
      ) : null}
      <IconButton icon={X} label="Close trace" onClick={onClose} />
    </header>
  );
}

function Fact({ label, value, bad }: { label: string; value: string; bad?: boolean }) {
  return (
    <span>
      <span className={bad ? 'font-semibold text-bad' : 'font-semibold text-fg'}>{value}</span> {label}
    </span>
  );
}
