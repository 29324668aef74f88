import { getRouteApi } from '@tanstack/react-router';
import { ArrowUp, Download, Pause, Play, ScrollText, SearchX, Trash2 } from 'lucide-react';
import { useEffect, useRef, useState } from 'react';
import { connectionState } from '../../api/client.ts';
import { useEngineHealth } from '../../api/health.ts';
import { exportLogs, type LogFilters, useClearLogs, useLogSources, useLogsHead, useSeverityCounts } from '../../api/logs.ts';
import { formatCount } from '../../lib/format.ts';
import { Badge, StatusDot } from '../ui/badge.tsx';
import { Button } from '../ui/button.tsx';
import { ConfirmDialog } from '../ui/confirm-dialog.tsx';
import { EmptyState } from '../ui/empty-state.tsx';
import { PageHeader } from '../ui/page-header.tsx';
import { LogFiltersBar } from './log-filters.tsx';
import { LogList, type LogListState } from './log-list.tsx';
import { LogSources, LogSourcesStrip } from './log-sources.tsx';

const route = getRouteApi('/logs');
const TAIL_MS = 1500;

/** The snapshot the page read last, kept across visits for outages. */
let lastSnapshot: { filters: string; asOf: number } | undefined;

/** Logs (seed 2.7): newest first, filters in the URL, live tail with pause, source breakdown, a Clear that clears. */
export function LogsPage() {
  const filters = route.useSearch();
  const navigate = route.useNavigate();
  const scrollRef = useRef<HTMLDivElement>(null);
  const [live, setLive] = useState(true);
  // a page opened again while the engine is down shows the snapshot it read last (issue 19 §5)
  const [asOf, setAsOf] = useState(() =>
    connectionState().status !== 'open' && lastSnapshot?.filters === JSON.stringify(filters) ? lastSnapshot.asOf : Date.now(),
  );
  const [list, setList] = useState<LogListState>({ total: undefined, atTop: true, newest: undefined });
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(new Set());
  const [confirmClear, setConfirmClear] = useState(false);
  const [exporting, setExporting] = useState(false);

  // new filters read a new snapshot
  const filtersKey = JSON.stringify(filters);
  const [snapshotFor, setSnapshotFor] = useState(filtersKey);
  if (snapshotFor !== filtersKey) {
    setSnapshotFor(filtersKey);
    setAsOf(Date.now());
  }

  // only a snapshot that was read: a live-tail move just before an outage starts one that never
  // loads, and a visit during the outage would then show nothing
  useEffect(() => {
    if (list.loadedAsOf !== undefined) lastSnapshot = { filters: filtersKey, asOf: list.loadedAsOf };
  }, [filtersKey, list.loadedAsOf]);

  const head = useLogsHead(filters, live ? TAIL_MS : false);
  const health = useEngineHealth(30_000);
  const sources = useLogSources(filters, asOf);
  const counts = useSeverityCounts(filters, asOf);
  const clear = useClearLogs();

  const headNewest = head.data?.newest ?? 0;
  const hasNewer =
    head.data !== undefined && list.total !== undefined && (headNewest > (list.newest ?? 0) || head.data.total !== list.total);
  // live tail: follow new lines while the user reads the top; further down, offer a jump instead
  useEffect(() => {
    if (live && hasNewer && list.atTop) setAsOf(Date.now());
  }, [live, hasNewer, list.atTop]);

  const setFilters = (patch: Partial<LogFilters>) => void navigate({ search: (prev) => ({ ...prev, ...patch }), replace: true });
  const anyFilter = !!(filters.severity?.length || filters.range || filters.q || filters.trace_id || filters.service);
  const logsComponent = health.data?.components?.logs;
  const logsOff = logsComponent?.status === 'disabled' || (health.error as { code?: string } | null)?.code === 'function_not_found';

  const jumpToTop = () => {
    scrollRef.current?.scrollTo({ top: 0 });
    setAsOf(Date.now());
  };

  const download = async () => {
    setExporting(true);
    try {
      const logs = await exportLogs(filters);
      const blob = new Blob([JSON.stringify(logs, null, 2)], { type: 'application/json' });
      const a = document.createElement('a');
      a.href = URL.createObjectURL(blob);
      a.download = `eng-logs-${new Date().toISOString().slice(0, 19).replace(/:/g, '-')}.json`;
      a.click();
      setTimeout(() => URL.revokeObjectURL(a.href), 5000);
    } finally {
      setExporting(false);
    }
  };

  const empty = logsOff ? (
    <EmptyState icon={ScrollText} title="Logs are off on this engine">
      No logs — logs need the observability module (<code className="text-fg">eng-observability</code>) with{' '}
      <code className="text-fg">logs_enabled: true</code> and a <code className="text-fg">memory</code> logs exporter.
    </EmptyState>
  ) : anyFilter ? (
    <EmptyState
      icon={SearchX}
      title="No log line matches these filters"
      action={
        <Button
          size="sm"
          onClick={() =>
            setFilters({
              severity: undefined,
              range: undefined,
              from: undefined,
              to: undefined,
              q: undefined,
              trace_id: undefined,
              service: undefined,
            })
          }
        >
          Clear filters
        </Button>
      }
    >
      Widen the time range, pick more severities or shorten the search.
    </EmptyState>
  ) : (
    <EmptyState icon={ScrollText} title="No logs yet">
      Lines appear here when workers log through OpenTelemetry, call <code className="text-fg">engine::log::info</code> (or warn, error,
      debug, trace), or post OTLP to <code className="text-fg">/v1/logs</code>.
    </EmptyState>
  );

  return (
    <div className="flex h-full min-h-0 flex-col">
      <PageHeader
        title="Logs"
        description="Log records from every worker and the engine, newest first."
        badge={
          list.total !== undefined ? (
            <span data-testid="logs-total" data-total={list.total}>
              <Badge title="lines matching the filters">
                {formatCount(list.total)} {list.total === 1 ? 'line' : 'lines'}
              </Badge>
            </span>
          ) : undefined
        }
        actions={
          <>
            <Button
              size="sm"
              variant={live ? 'subtle' : 'secondary'}
              icon={live ? Pause : Play}
              onClick={() => {
                if (!live) setAsOf(Date.now());
                setLive(!live);
              }}
              data-testid="logs-live"
              aria-pressed={live}
            >
              {live ? (
                <span className="inline-flex items-center gap-1.5">
                  <StatusDot tone="ok" pulse /> Live
                </span>
              ) : (
                'Paused'
              )}
            </Button>
            <Button size="sm" icon={Download} loading={exporting} onClick={() => void download()} disabled={!list.total}>
              Export
            </Button>
            <Button
              size="sm"
              variant="ghost"
              icon={Trash2}
              className="text-bad hover:text-bad"
              onClick={() => {
                clear.reset();
                setConfirmClear(true);
              }}
              data-testid="logs-clear"
            >
              Clear
            </Button>
          </>
        }
      >
        <LogFiltersBar filters={filters} counts={counts} onChange={setFilters} />
      </PageHeader>
      <LogSourcesStrip
        sources={sources.data?.sources}
        sampled={sources.data?.sampled ?? 0}
        active={filters.service}
        onPick={(service) => setFilters({ service })}
      />
      <div className="relative flex min-h-0 flex-1">
        {hasNewer && (!live || !list.atTop) ? (
          <button
            type="button"
            onClick={jumpToTop}
            className="absolute top-10 left-1/2 z-10 inline-flex -translate-x-1/2 cursor-pointer items-center gap-1.5 rounded-full bg-accent px-3 py-1 text-[12px] font-medium text-accent-fg shadow-pop"
          >
            <ArrowUp size={13} /> Newer lines
          </button>
        ) : null}
        <LogList
          filters={filters}
          asOf={asOf}
          expanded={expanded}
          onToggle={(id) =>
            setExpanded((prev) => {
              const next = new Set(prev);
              if (!next.delete(id)) next.add(id);
              return next;
            })
          }
          onState={setList}
          onFilterTrace={(trace_id) => setFilters({ trace_id })}
          scrollRef={scrollRef}
          empty={empty}
        />
        <LogSources
          sources={sources.data?.sources}
          sampled={sources.data?.sampled ?? 0}
          total={sources.data?.total ?? 0}
          active={filters.service}
          onPick={(service) => setFilters({ service })}
        />
      </div>
      <ConfirmDialog
        open={confirmClear}
        title="Clear every log line?"
        confirmLabel="Clear logs"
        busy={clear.isPending}
        error={clear.error}
        onClose={() => setConfirmClear(false)}
        onConfirm={() =>
          clear.mutate(undefined, {
            onSuccess: () => {
              setConfirmClear(false);
              setExpanded(new Set());
              setAsOf(Date.now());
            },
          })
        }
      >
        <p>
          This deletes every stored log record on the engine with <code>engine::logs::clear</code>, not just the ones on screen, for
          everyone who reads this engine's logs. It cannot be undone.
        </p>
      </ConfirmDialog>
    </div>
  );
}
