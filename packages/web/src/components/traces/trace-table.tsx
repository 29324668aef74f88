import { Link } from '@tanstack/react-router';
import { ChevronLeft, ChevronRight } from 'lucide-react';
import type { TraceListSpan } from '../../api/traces.ts';
import { formatDateTime, formatDuration, formatTime, timeAgo } from '../../lib/format.ts';
import { IconButton } from '../ui/button.tsx';
import { cn } from '../ui/cn.ts';
import { Select } from '../ui/inputs.tsx';
import { displayName, functionIdOf, serviceColor, shortId, statusOf } from './span-facts.ts';
import { StatusBadge, StatusIcon } from './status-badge.tsx';
import { PAGE_SIZES, type PageSize } from './trace-search.ts';

/**
 * Seed 2.6 columns: Trace ID, Service, Root Span, Duration, Status, Spans, Timestamp. With a trace
 * open beside it the table narrows to status, root span (service below) and duration.
 */
export function TraceTable({
  rows,
  selected,
  onOpen,
  compact,
  fresh,
}: {
  rows: TraceListSpan[];
  selected?: string;
  onOpen: (traceId: string) => void;
  compact: boolean;
  fresh: Set<string>;
}) {
  const longest = Math.max(1, ...rows.map((r) => r.duration_ms));
  return (
    <table
      className={cn('w-full table-fixed border-separate border-spacing-0 text-[13px]', !compact && 'min-w-[48rem]')}
      data-testid="trace-table"
    >
      <thead className="sticky top-0 z-[1] bg-surface">
        <tr className="text-left text-[11px] font-semibold tracking-wide text-faint uppercase">
          {compact ? (
            <>
              <Th className="w-8" />
              <Th>Root span</Th>
              <Th className="w-24 text-right">Duration</Th>
            </>
          ) : (
            <>
              <Th className="w-28">Status</Th>
              <Th className="w-32">Trace ID</Th>
              <Th className="w-[18%]">Service</Th>
              <Th>Root span</Th>
              <Th className="w-40">Duration</Th>
              <Th className="w-20 text-right">Spans</Th>
              <Th className="w-36">Timestamp</Th>
            </>
          )}
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => {
          const status = statusOf(row, row.error_count);
          const startMs = row.start_time_unix_nano / 1e6;
          const fn = functionIdOf(row);
          const name = displayName(row);
          const isSelected = row.trace_id === selected;
          return (
            <tr
              key={row.trace_id}
              data-testid="trace-row"
              data-trace-id={row.trace_id}
              aria-selected={isSelected}
              tabIndex={0}
              onClick={() => onOpen(row.trace_id)}
              onKeyDown={(e) => {
                if (e.key === 'Enter' || e.key === ' ') {
                  e.preventDefault();
                  onOpen(row.trace_id);
                }
              }}
              className={cn(
                'group cursor-pointer transition-colors outline-none hover:bg-surface-2 focus-visible:bg-surface-2 focus-visible:shadow-[inset_2px_0_0_var(--c-accent)]',
                isSelected && 'bg-accent-soft hover:bg-accent-soft',
                fresh.has(row.trace_id) && 'animate-flash',
              )}
            >
              {compact ? (
                <>
                  <Td className="pr-0">
                    <StatusIcon status={status} />
                  </Td>
                  <Td>
                    <div className="truncate font-medium text-fg" title={name}>
                      {name}
                    </div>
                    <div className="flex items-center gap-1.5 truncate text-[11.5px] text-muted">
                      <ServiceDot service={row.service_name} />
                      <span className="truncate">{row.service_name}</span>
                      <span className="text-faint">· {timeAgo(startMs)}</span>
                    </div>
                  </Td>
                  <Td className="text-right font-mono text-[12px] tabular-nums">{formatDuration(row.duration_ms)}</Td>
                </>
              ) : (
                <>
                  <Td>
                    <StatusBadge status={status} />
                  </Td>
                  <Td>
                    <Link
                      to="/traces"
                      search={(prev) => ({ ...prev, trace_id: row.trace_id, span: undefined })}
                      onClick={(e) => e.stopPropagation()}
                      className="font-mono text-[12px] text-accent hover:underline"
                      title={row.trace_id}
                    >
                      {shortId(row.trace_id, 12)}
                    </Link>
                  </Td>
                  <Td>
                    <span className="flex items-center gap-1.5 truncate" title={row.service_name}>
                      <ServiceDot service={row.service_name} />
                      <span className="truncate">{row.service_name}</span>
                    </span>
                  </Td>
                  <Td>
                    <div className="truncate font-medium text-fg" title={name}>
                      {name}
                    </div>
                    {fn && fn !== name && !name.includes(fn) ? <div className="truncate font-mono text-[11px] text-faint">{fn}</div> : null}
                  </Td>
                  <Td>
                    <div className="flex items-center gap-2">
                      <span className="w-16 shrink-0 text-right font-mono text-[12px] tabular-nums">{formatDuration(row.duration_ms)}</span>
                      <span className="h-1.5 flex-1 overflow-hidden rounded-full bg-surface-3">
                        <span
                          className={cn(
                            'block h-full rounded-full',
                            status === 'Error' ? 'bg-bad' : status === 'Pending' ? 'bg-warn' : 'bg-accent',
                          )}
                          style={{ width: `${Math.max(2, (row.duration_ms / longest) * 100)}%` }}
                        />
                      </span>
                    </div>
                  </Td>
                  <Td className="text-right tabular-nums">
                    {row.span_count}
                    {row.error_count > 0 ? <span className="ml-1 text-[11px] text-bad">({row.error_count} err)</span> : null}
                  </Td>
                  <Td>
                    <span className="font-mono text-[12px] tabular-nums" title={new Date(startMs).toISOString()}>
                      {formatTime(startMs, true)}
                    </span>
                    <div className="text-[11px] text-faint">{formatDateTime(startMs).split(' ').slice(0, 2).join(' ')}</div>
                  </Td>
                </>
              )}
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

function Th({ children, className }: { children?: React.ReactNode; className?: string }) {
  return <th className={cn('border-b border-line px-3 py-2 font-semibold', className)}>{children}</th>;
}

function Td({ children, className }: { children?: React.ReactNode; className?: string }) {
  return <td className={cn('border-b border-line px-3 py-2 align-middle', className)}>{children}</td>;
}

export function ServiceDot({ service }: { service: string }) {
  return <span className="inline-block size-2 shrink-0 rounded-full" style={{ background: serviceColor(service) }} />;
}

export function Pagination({
  page,
  size,
  total,
  onPage,
  onSize,
}: {
  page: number;
  size: PageSize;
  total: number;
  onPage: (page: number) => void;
  onSize: (size: PageSize) => void;
}) {
  const pages = Math.max(1, Math.ceil(total / size));
  const from = total === 0 ? 0 : page * size + 1;
  const to = Math.min(total, (page + 1) * size);
  return (
    <div
      className="flex items-center justify-between gap-2 border-t border-line bg-surface px-3 py-1.5 text-xs text-muted"
      data-testid="trace-pagination"
    >
      <span className="tabular-nums">
        {from}–{to} of {total}
      </span>
      <div className="flex items-center gap-1">
        <Select
          aria-label="Page size"
          className="h-7 w-auto text-xs"
          value={size}
          onChange={(e) => onSize(Number(e.target.value) as PageSize)}
        >
          {PAGE_SIZES.map((s) => (
            <option key={s} value={s}>
              {s} / page
            </option>
          ))}
        </Select>
        <IconButton icon={ChevronLeft} label="Previous page" disabled={page === 0} onClick={() => onPage(page - 1)} />
        <span className="min-w-12 text-center tabular-nums">
          {page + 1} / {pages}
        </span>
        <IconButton icon={ChevronRight} label="Next page" disabled={page + 1 >= pages} onClick={() => onPage(page + 1)} />
      </div>
    </div>
  );
}
