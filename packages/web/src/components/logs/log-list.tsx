import { useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { ExternalLink, Filter } from 'lucide-react';
import { memo, type ReactNode, type RefObject, useCallback, useEffect, useMemo, useRef } from 'react';
import { fetchLogsPage, type LogFilters, logKeys, type StoredLog } from '../../api/logs.ts';
import { usePagedVirtualRows } from '../../lib/paged-window.ts';
import { LoadingNote } from '../shell/loading-note.tsx';
import type { Tone } from '../ui/badge.tsx';
import { Button } from '../ui/button.tsx';
import { cn } from '../ui/cn.ts';
import { CopyButton } from '../ui/copy-button.tsx';
import { ErrorNote } from '../ui/empty-state.tsx';
import { JsonView } from '../ui/json-view.tsx';
import { formatLogTime, logIdentity, severityTone } from './severity.ts';

const ROW = 30;
const PAGE = 200;
// the Badge colours, as plain classes (a row is cheaper without the component)
const SEVERITY_CLASS: Record<Tone, string> = {
  neutral: 'bg-surface-2 text-muted',
  accent: 'bg-accent-soft text-accent',
  ok: 'bg-ok-soft text-ok',
  warn: 'bg-warn-soft text-warn',
  bad: 'bg-bad-soft text-bad',
  info: 'bg-info-soft text-info',
  violet: 'bg-violet-soft text-violet',
};
// on phones: chevron, time, severity and message; service and trace from md up
const COLUMNS =
  'grid-cols-[12px_84px_52px_minmax(0,1fr)] md:grid-cols-[20px_150px_64px_minmax(90px,150px)_minmax(0,1fr)_92px] max-md:gap-2';

export interface LogListState {
  total: number | undefined;
  atTop: boolean;
  /** Timestamp of the newest line of the snapshot (live tail compares it with the engine's newest). */
  newest: number | undefined;
  /** The snapshot whose lines were read (a newer one still loading is not it): what an outage shows. */
  loadedAsOf?: number;
}

/**
 * The log lines, newest first: a virtual list over server pages of 200 (lib/paged-window.ts),
 * read as of the snapshot `asOf` so offsets do not shift while the user scrolls. Rows expand in
 * place to the record's full JSON (measured, so expanded rows take their real height).
 */
export function LogList({
  filters,
  asOf,
  expanded,
  onToggle,
  onState,
  onFilterTrace,
  scrollRef,
  empty,
}: {
  filters: LogFilters;
  asOf: number;
  expanded: ReadonlySet<string>;
  onToggle: (id: string) => void;
  onState: (state: LogListState) => void;
  onFilterTrace: (traceId: string) => void;
  scrollRef: RefObject<HTMLDivElement | null>;
  empty: ReactNode;
}) {
  const fetchPage = useMemo(() => fetchLogsPage(filters, asOf), [filters, asOf]);
  const { virtualizer, rows, count } = usePagedVirtualRows<StoredLog>({
    scrollRef,
    key: logKeys.window(filters, asOf),
    pageSize: PAGE,
    fetchPage,
    rowHeight: ROW,
    overscan: 20,
    // a snapshot never changes; Clear invalidates, and live tail moves to a new snapshot. The
    // snapshot read last stays cached however long the page is away (an outage shows it, issue 19
    // §5: a timed expiry lost it when the engine stayed down longer than that); the older ones are
    // dropped below as soon as a newer one has loaded
    staleTime: Number.POSITIVE_INFINITY,
    gcTime: Number.POSITIVE_INFINITY,
  });
  const queryClient = useQueryClient();
  const now = useMemo(() => new Date(asOf), [asOf]);
  // stable callbacks, so rows that stay on screen while scrolling do not render again (LogRow is memo)
  const latest = useRef({ onToggle, onFilterTrace });
  latest.current = { onToggle, onFilterTrace };
  const toggle = useCallback(
    (id: string, index: number, open: boolean) => {
      if (open) virtualizer.resizeItem(index, ROW);
      latest.current.onToggle(id);
    },
    [virtualizer],
  );
  const filterTrace = useCallback((traceId: string) => latest.current.onFilterTrace(traceId), []);
  // sizes are cached by row index: a new snapshot shifts rows, so start from the estimate again
  // biome-ignore lint/correctness/useExhaustiveDependencies: asOf is the trigger, not a value used
  useEffect(() => virtualizer.measure(), [asOf, virtualizer]);

  const report = useRef(onState);
  report.current = onState;
  const total = rows.total;
  const newest = rows.rowAt(0)?.timestamp_unix_nano;
  const loadedAsOf = rows.loaded ? asOf : undefined;
  // keep one read snapshot: every window key but the one just loaded goes
  useEffect(() => {
    if (loadedAsOf === undefined) return;
    const current = logKeys.window(filters, loadedAsOf);
    queryClient.removeQueries({
      queryKey: [...logKeys.all, 'window'],
      predicate: (query) =>
        query.getObserversCount() === 0 && JSON.stringify(query.queryKey.slice(0, current.length)) !== JSON.stringify(current),
    });
  }, [queryClient, filters, loadedAsOf]);
  useEffect(() => {
    const el = scrollRef.current;
    let atTop = (el?.scrollTop ?? 0) < ROW;
    report.current({ total, atTop, newest, loadedAsOf });
    const onScroll = () => {
      const now = (el?.scrollTop ?? 0) < ROW;
      if (now === atTop) return;
      atTop = now;
      report.current({ total, atTop, newest, loadedAsOf });
    };
    el?.addEventListener('scroll', onScroll, { passive: true });
    return () => el?.removeEventListener('scroll', onScroll);
  }, [total, newest, loadedAsOf, scrollRef]);

  return (
    <div className="flex min-h-0 min-w-0 flex-1 flex-col">
      <div
        className={cn(
          'grid items-center gap-3 border-b border-line bg-surface-2/60 px-4 py-1.5 text-[11px] font-semibold tracking-wider text-faint uppercase',
          COLUMNS,
        )}
      >
        <span />
        <span>Timestamp</span>
        <span>Severity</span>
        <span className="max-md:hidden">Service</span>
        <span>Message</span>
        <span className="text-right max-md:hidden">Trace</span>
      </div>
      <div ref={scrollRef} className="relative min-h-0 flex-1 overflow-y-auto" data-testid="logs-scroll">
        {rows.error ? <ErrorNote title="Could not read the logs" error={rows.error} className="m-4" /> : null}
        {rows.isLoading ? <LoadingNote what="logs" className="justify-start" /> : null}
        {!rows.isLoading && !rows.error && count === 0 ? empty : null}
        <div className="relative w-full" style={{ height: virtualizer.getTotalSize() }} data-testid="logs-list" data-total={total ?? ''}>
          {virtualizer.getVirtualItems().map((v) => {
            const log = rows.rowAt(v.index);
            const id = log ? logIdentity(log) : '';
            const open = id !== '' && expanded.has(id);
            return (
              <div
                key={v.key}
                data-index={v.index}
                // only expanded rows are measured: measuring every row of a 100k list makes the
                // virtualizer recompute its offsets on each new row, which stalls scrolling
                ref={open ? virtualizer.measureElement : undefined}
                className="absolute top-0 left-0 w-full"
                style={{ transform: `translateY(${v.start}px)`, height: open ? undefined : ROW }}
              >
                {log ? (
                  <LogRow log={log} now={now} open={open} index={v.index} onToggle={toggle} onFilterTrace={filterTrace} />
                ) : (
                  <div className="flex items-center gap-3 border-b border-line/50 px-4" style={{ height: ROW }}>
                    <span className="h-2.5 w-28 animate-pulse rounded bg-surface-3" />
                    <span className="h-2.5 w-64 animate-pulse rounded bg-surface-3" />
                  </div>
                )}
              </div>
            );
          })}
        </div>
      </div>
    </div>
  );
}

const LogRow = memo(function LogRow({
  log,
  now,
  open,
  index,
  onToggle,
  onFilterTrace,
}: {
  log: StoredLog;
  now: Date;
  open: boolean;
  index: number;
  onToggle: (id: string, index: number, open: boolean) => void;
  onFilterTrace: (traceId: string) => void;
}) {
  const { date, time } = formatLogTime(log.timestamp_unix_nano, now);
  const firstLine = log.body.split('\n', 1)[0] ?? '';
  return (
    <div className={cn('border-b border-line/50', open && 'bg-surface-2/70')} data-testid="log-row" data-severity={log.severity_text}>
      <button
        type="button"
        aria-expanded={open}
        onClick={() => onToggle(logIdentity(log), index, open)}
        className={cn(
          'grid w-full cursor-pointer items-center gap-3 px-4 text-left text-[12.5px] transition-colors hover:bg-surface-2',
          COLUMNS,
        )}
        style={{ height: ROW }}
      >
        {/* a text chevron, not an SVG icon: rows are created by the thousand while scrolling */}
        <span aria-hidden="true" className={cn('inline-block w-3 text-center text-[13px] leading-none text-faint', open && 'rotate-90')}>
          ›
        </span>
        <span className="truncate font-mono text-[11.5px] text-muted tabular-nums">
          {date ? <span className="text-faint max-md:hidden">{date} </span> : null}
          {time}
        </span>
        <span>
          <span
            className={cn(
              'inline-flex h-5 w-12 items-center justify-center rounded-md text-[11px] font-medium',
              SEVERITY_CLASS[severityTone(log.severity_text)],
            )}
          >
            {log.severity_text || '—'}
          </span>
        </span>
        <span className="truncate text-muted max-md:hidden" title={log.service_name}>
          {log.service_name}
        </span>
        <span className="truncate font-mono text-[12px] text-fg" data-testid="log-message" title={log.body}>
          {firstLine}
        </span>
        <span className="truncate text-right font-mono text-[11px] max-md:hidden">
          {log.trace_id ? (
            <Link
              to="/traces"
              search={{ trace_id: log.trace_id }}
              onClick={(e) => e.stopPropagation()}
              className="text-accent hover:underline"
              title={`Open trace ${log.trace_id}`}
              data-testid="log-trace-link"
            >
              {log.trace_id.slice(0, 8)}…
            </Link>
          ) : (
            <span className="text-faint">—</span>
          )}
        </span>
      </button>
      {open ? (
        <div className="space-y-2 px-4 pt-1 pb-3 pl-11" data-testid="log-detail">
          {log.body.includes('\n') || log.body.length > 120 ? (
            <pre className="max-h-60 overflow-auto rounded-lg border border-line bg-surface px-3 py-2 font-mono text-[12px] whitespace-pre-wrap text-fg">
              {log.body}
            </pre>
          ) : null}
          {log.trace_id ? (
            <div className="flex flex-wrap items-center gap-2 text-[12px] text-muted">
              <span>Trace</span>
              <code className="font-mono text-fg">{log.trace_id}</code>
              <CopyButton text={log.trace_id} label="Copy trace id" />
              {log.span_id ? (
                <>
                  <span className="ml-2">Span</span>
                  <code className="font-mono text-fg">{log.span_id}</code>
                </>
              ) : null}
              <Link
                to="/traces"
                search={{ trace_id: log.trace_id }}
                className="ml-2 inline-flex items-center gap-1 font-medium text-accent hover:underline"
              >
                <ExternalLink size={12} /> Open trace
              </Link>
              <Button size="xs" variant="ghost" icon={Filter} onClick={() => onFilterTrace(log.trace_id as string)}>
                Only this trace
              </Button>
            </div>
          ) : null}
          <JsonView value={log} label="log record" maxHeight={360} />
        </div>
      ) : null}
    </div>
  );
});
