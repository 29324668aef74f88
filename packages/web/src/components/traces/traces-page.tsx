import { useQueryClient } from '@tanstack/react-query';
import { Activity, Pause, Play, RefreshCw, SearchX, Trash2 } from 'lucide-react';
import { useMemo, useRef, useState } from 'react';
import { traceKeys, useClearTraces, useTraceFeed, useTraceGroups, useTraceList } from '../../api/traces.ts';
import { formatDuration, pluralize } from '../../lib/format.ts';
import { tracesRoute } from '../../routes/traces.tsx';
import { LoadingNote } from '../shell/loading-note.tsx';
import { Button } from '../ui/button.tsx';
import { cn } from '../ui/cn.ts';
import { Dialog } from '../ui/dialog.tsx';
import { EmptyState, ErrorNote } from '../ui/empty-state.tsx';
import { Toggle } from '../ui/inputs.tsx';
import { PageHeader } from '../ui/page-header.tsx';
import { ResizeHandle, useStoredSize } from './resizable.tsx';
import { TraceDetail } from './trace-detail.tsx';
import { TraceFilterBar } from './trace-filters.tsx';
import { TraceGroups } from './trace-groups.tsx';
import { DEFAULT_PAGE_SIZE, filtersOf, hasFilters } from './trace-search.ts';
import { Pagination, TraceTable } from './trace-table.tsx';
import { useElementWidth } from './use-element-width.ts';
import { useHeldData, useNewIds } from './use-held-data.ts';
import { useTracesNav } from './use-traces-nav.ts';

/**
 * The trace explorer: seed 2.6 (Traces page of eng-console) and seed 2.9 "Trace explorer" of the
 * console worker are one page. List (or groups) on the left, the open trace on the right.
 */
export function TracesPage() {
  const search = tracesRoute.useSearch();
  const nav = useTracesNav();
  const queryClient = useQueryClient();
  const filtersKey = JSON.stringify(filtersOf(search));
  // biome-ignore lint/correctness/useExhaustiveDependencies: the filters change when their serialised form does
  const filters = useMemo(() => filtersOf(search), [filtersKey]);
  const group = search.group ?? 'none';
  const size = search.size ?? DEFAULT_PAGE_SIZE;
  const page = search.page ?? 0;
  const [live, setLive] = useState(true);
  const [hovering, setHovering] = useState(false);
  const [confirmClear, setConfirmClear] = useState(false);
  const listPane = useStoredSize('list-pane', 340, 260, 900);
  const refreshTimer = useRef<number | undefined>(undefined);

  const list = useTraceList(filters, page, size, { live: live && group === 'none', enabled: group === 'none' });
  const groups = useTraceGroups(group, filters, { live });
  const clear = useClearTraces();

  // spec: console-worker §3.2 live updates, pushed by the engine's `trace` trigger
  useTraceFeed((ids) => {
    if (search.trace_id && ids.includes(search.trace_id))
      void queryClient.invalidateQueries({ queryKey: traceKeys.spans(search.trace_id) });
    // coalesce bursts into one refetch; paused still fetches: the display holds still and says
    // new data waits (useHeldData)
    if (refreshTimer.current !== undefined) return;
    refreshTimer.current = window.setTimeout(() => {
      refreshTimer.current = undefined;
      void queryClient.invalidateQueries({ queryKey: traceKeys.lists() });
      void queryClient.invalidateQueries({ queryKey: [...traceKeys.all, 'groups'] });
    }, 250);
  });

  const hold = hovering || !live;
  const listKey = `${filtersKey}|${page}|${size}`;
  const held = useHeldData(list.data, listKey, hold, list.isPlaceholderData);
  const rows = held.shown?.spans;
  // traces the held list does not show yet ("paused — 3 new")
  const waiting = useMemo(() => {
    if (!held.held || !list.data || !rows) return 0;
    const shownIds = new Set(rows.map((r) => r.trace_id));
    return list.data.spans.filter((r) => !shownIds.has(r.trace_id)).length;
  }, [held.held, list.data, rows]);
  const fresh = useNewIds(
    useMemo(() => rows?.map((r) => r.trace_id), [rows]),
    filtersKey,
  );
  const shownGroups = useHeldData(groups.data, `${group}|${filtersKey}`, hold, groups.isPlaceholderData);

  const open = search.trace_id;
  // below ~900 px (a phone, a narrow window) an open trace takes the whole width; closing it shows the list again
  const bodyRef = useRef<HTMLDivElement>(null);
  const bodyWidth = useElementWidth(bodyRef);
  const listHidden = !!open && bodyWidth > 0 && bodyWidth < LIST_BESIDE_MIN_WIDTH;
  const openTrace = (traceId: string, spanId?: string) => nav({ trace_id: traceId, span: spanId });
  const stats = useMemo(() => {
    if (!rows || rows.length === 0) return null;
    const errors = rows.filter((r) => r.error_count > 0 || r.status === 'error').length;
    const avg = rows.reduce((sum, r) => sum + r.duration_ms, 0) / rows.length;
    return { errors, avg };
  }, [rows]);
  const notEnabled = (list.error as { code?: string } | null)?.code === 'memory_exporter_not_enabled';

  return (
    <div className="flex h-full min-h-0 flex-col" data-testid="traces-page">
      <PageHeader
        title="Traces"
        description="Distributed traces of every invocation, live from the engine's trace store."
        actions={
          <>
            <Toggle
              checked={!!search.system}
              onChange={(v) => nav({ system: v || undefined })}
              label="System spans"
              title="Include engine-internal spans"
            />
            <Button
              size="sm"
              variant={live ? 'secondary' : 'primary'}
              icon={live ? Pause : Play}
              onClick={() => setLive((v) => !v)}
              aria-pressed={!live}
              data-testid="live-toggle"
            >
              {live ? 'Pause' : 'Resume'}
            </Button>
            <Button
              size="sm"
              icon={RefreshCw}
              onClick={() => void queryClient.invalidateQueries({ queryKey: traceKeys.all })}
              loading={list.isFetching && !list.isPending}
            >
              Refresh
            </Button>
            <Button size="sm" variant="ghost" icon={Trash2} onClick={() => setConfirmClear(true)}>
              Clear
            </Button>
          </>
        }
      >
        <TraceFilterBar search={search} nav={nav} />
      </PageHeader>
      <div className="flex min-h-0 flex-1" ref={bodyRef}>
        <section
          aria-label="Trace list"
          className={cn('flex min-h-0 flex-col bg-surface', open ? 'shrink-0' : 'min-w-0 flex-1', listHidden && 'hidden')}
          style={open ? { width: Math.min(listPane.size, Math.max(260, bodyWidth - DETAIL_MIN_WIDTH)) } : undefined}
          // the list holds still under the pointer: rows never move while someone is about to click one
          onPointerEnter={() => setHovering(true)}
          onPointerMove={() => {
            // a list drawn under a pointer that did not move in (layout change, reload) holds from its first movement
            if (!hovering) setHovering(true);
          }}
          onPointerLeave={() => setHovering(false)}
          data-hovering={hovering ? 'true' : undefined}
        >
          <div className="flex h-9 shrink-0 items-center gap-3 border-b border-line px-3 text-xs text-muted" data-testid="trace-summary">
            <span className={cn('inline-flex items-center gap-1.5', live ? 'text-ok' : 'text-warn')}>
              <span className={cn('size-1.5 rounded-full', live ? 'animate-pulse-dot bg-ok' : 'bg-warn')} />
              {live ? 'Live' : 'Paused'}
            </span>
            {group === 'none' && held.shown ? (
              <>
                <span className="whitespace-nowrap" data-testid="trace-total">
                  {pluralize(held.shown.total, 'trace')}
                </span>
                {stats && !open ? (
                  <>
                    <span className={cn('min-w-0 truncate', stats.errors > 0 && 'text-bad')}>
                      {pluralize(stats.errors, 'error')} on this page
                    </span>
                    <span className="shrink-0 whitespace-nowrap max-sm:hidden">avg {formatDuration(stats.avg)}</span>
                  </>
                ) : null}
              </>
            ) : null}
            {group !== 'none' && shownGroups.shown ? <span>{pluralize(shownGroups.shown.length, 'group')}</span> : null}
            {held.held || shownGroups.held ? (
              <span
                className="ml-auto shrink-0 whitespace-nowrap text-accent"
                data-testid="held-updates"
                data-new={waiting}
                title={
                  live
                    ? 'The list holds still while the pointer is over it; what arrived meanwhile shows when it leaves'
                    : 'Live updates are paused; Resume shows what arrived meanwhile'
                }
              >
                Paused — {waiting > 0 ? `${waiting} new` : 'updates waiting'}
              </span>
            ) : null}
          </div>
          <div className="min-h-0 flex-1 overflow-auto">
            {group === 'none' ? (
              notEnabled ? (
                <NotEnabled />
              ) : list.isError && !held.shown ? (
                <ErrorNote className="m-3" title="Could not list traces" error={list.error} />
              ) : !held.shown ? (
                <Loading />
              ) : held.shown.spans.length === 0 ? (
                hasFilters(filters) ? (
                  <EmptyState icon={SearchX} title="No traces match these filters" compact>
                    Loosen a filter, or clear them all to see every trace.
                  </EmptyState>
                ) : (
                  <NoTraces />
                )
              ) : (
                <TraceTable rows={held.shown.spans} selected={open} onOpen={(id) => openTrace(id)} compact={!!open} fresh={fresh} />
              )
            ) : groups.isError && !shownGroups.shown ? (
              <ErrorNote className="m-3" title="Could not group traces" error={groups.error} />
            ) : !shownGroups.shown ? (
              <Loading />
            ) : (
              <TraceGroups group={group} groups={shownGroups.shown} filters={filters} selected={open} onOpen={openTrace} />
            )}
          </div>
          {group === 'none' && held.shown && held.shown.total > 0 ? (
            <Pagination
              page={page}
              size={size}
              total={held.shown.total}
              onPage={(p) => nav({ page: p || undefined })}
              onSize={(s) => nav({ size: s === DEFAULT_PAGE_SIZE ? undefined : s })}
            />
          ) : null}
        </section>
        {open ? (
          <>
            {listHidden ? null : (
              <ResizeHandle
                label="Trace list panel"
                size={listPane.size}
                min={listPane.min}
                max={listPane.max}
                direction={1}
                onResize={listPane.setSize}
                onReset={listPane.reset}
              />
            )}
            <TraceDetail
              key={open}
              traceId={open}
              view={search.view ?? 'waterfall'}
              spanId={search.span}
              tab={search.tab ?? 'info'}
              onView={(view) => nav({ view: view === 'waterfall' ? undefined : view }, { replace: true })}
              onSelectSpan={(span) => nav({ span }, { replace: true })}
              onTab={(tab) => nav({ tab: tab === 'info' ? undefined : tab }, { replace: true })}
              onOpenTrace={openTrace}
              onClose={() => nav({ trace_id: undefined, span: undefined })}
            />
          </>
        ) : null}
      </div>
      <Dialog
        open={confirmClear}
        onClose={() => setConfirmClear(false)}
        title="Clear every stored trace?"
        labelledBy="clear-traces-title"
        footer={
          <>
            <Button onClick={() => setConfirmClear(false)}>Cancel</Button>
            <Button
              variant="danger"
              loading={clear.isPending}
              onClick={() =>
                clear.mutate(undefined, {
                  onSuccess: () => {
                    setConfirmClear(false);
                    nav({ trace_id: undefined, span: undefined });
                  },
                })
              }
            >
              Clear traces
            </Button>
          </>
        }
      >
        <p className="px-4 py-3 text-[13px] text-muted">
          This calls <code className="font-mono">engine::traces::clear</code>: every span in the engine's store is deleted, for every
          console looking at this engine.
        </p>
        {clear.isError ? <ErrorNote className="mx-4 mb-3" error={clear.error} /> : null}
      </Dialog>
    </div>
  );
}

/** Narrower than this, the list and an open trace do not fit side by side. */
const LIST_BESIDE_MIN_WIDTH = 900;
/** Width the open trace keeps beside the list (the list shrinks first). */
const DETAIL_MIN_WIDTH = 560;

function Loading() {
  return <LoadingNote what="traces" className="py-16 text-sm" />;
}

function NoTraces() {
  return (
    <EmptyState icon={Activity} title="No traces yet">
      <p>
        No traces — enable the observability exporter <code className="font-mono">memory</code> (the default of{' '}
        <code className="font-mono">eng-observability</code>), then call a function: traces appear here live.
      </p>
    </EmptyState>
  );
}

function NotEnabled() {
  return (
    <EmptyState icon={Activity} title="The engine keeps no traces">
      <p>
        No traces — enable the observability exporter <code className="font-mono">memory</code>: set{' '}
        <code className="font-mono">exporter: memory</code> (or <code className="font-mono">both</code>) under{' '}
        <code className="font-mono">eng-observability</code> in config.yaml.
      </p>
    </EmptyState>
  );
}
