import { useVirtualizer } from '@tanstack/react-virtual';
import { KeyRound } from 'lucide-react';
import { useEffect, useMemo, useRef } from 'react';
import { fetchStatePage, type StateItem, stateKeys } from '../../api/state.ts';
import { usePagedVirtualRows } from '../../lib/paged-window.ts';
import { Badge } from '../ui/badge.tsx';
import { cn } from '../ui/cn.ts';
import { EmptyState, ErrorNote } from '../ui/empty-state.tsx';
import { Spinner } from '../ui/spinner.tsx';
import { KIND_TONE, valueKind, valuePreview } from './value-format.ts';

const ROW = 34;
const PAGE = 200;

interface TableProps {
  selectedKey: string | undefined;
  onSelect: (key: string) => void;
  onCount: (shown: number | undefined) => void;
}

/**
 * A scope's items, read a page at a time from the keyed listing (`prefix` filters on the
 * server, so a 100k-key scope still opens instantly) and virtualised: only visible rows exist.
 */
export function PagedStateItems({ scope, prefix, selectedKey, onSelect, onCount }: TableProps & { scope: string; prefix: string }) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const fetchPage = useMemo(() => fetchStatePage(scope, prefix), [scope, prefix]);
  const { virtualizer, rows, count } = usePagedVirtualRows<StateItem>({
    scrollRef,
    key: stateKeys.items(scope, prefix),
    pageSize: PAGE,
    fetchPage,
    rowHeight: ROW,
    staleTime: 10_000,
  });
  useReportCount(onCount, rows.total);
  if (rows.error) return <ErrorNote title={`Could not list the items of ${scope}`} error={rows.error} className="m-4" />;
  if (rows.isLoading) return <Loading />;
  if (count === 0) {
    return prefix ? (
      <EmptyState icon={KeyRound} title={`No key of “${scope}” starts with “${prefix}”`} compact>
        The search matches the start of keys on the server. Turn on <b>Contains</b> to match anywhere in the key.
      </EmptyState>
    ) : (
      <EmptyState icon={KeyRound} title={`“${scope}” is empty`} compact>
        Its last key was deleted. Add an item to bring it back.
      </EmptyState>
    );
  }
  return (
    <Table scrollRef={scrollRef} totalSize={virtualizer.getTotalSize()}>
      {virtualizer.getVirtualItems().map((v) => (
        <Row
          key={v.key}
          index={v.index}
          start={v.start}
          item={rows.rowAt(v.index)}
          selected={rows.rowAt(v.index)?.key === selectedKey}
          onSelect={onSelect}
        />
      ))}
    </Table>
  );
}

/** Client-side "contains" search over every key of the scope (loaded once, capped in api/state.ts). */
export function FilteredStateItems({ items, selectedKey, onSelect, onCount, query }: TableProps & { items: StateItem[]; query: string }) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const shown = useMemo(() => {
    const q = query.toLowerCase();
    return q ? items.filter((i) => i.key.toLowerCase().includes(q)) : items;
  }, [items, query]);
  useReportCount(onCount, shown.length);
  const virtualizer = useVirtualizer({
    count: shown.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW,
    overscan: 12,
  });
  if (shown.length === 0) {
    return (
      <EmptyState icon={KeyRound} title={`No key contains “${query}”`} compact>
        Check the spelling, or pick another group.
      </EmptyState>
    );
  }
  return (
    <Table scrollRef={scrollRef} totalSize={virtualizer.getTotalSize()}>
      {virtualizer.getVirtualItems().map((v) => (
        <Row
          key={v.key}
          index={v.index}
          start={v.start}
          item={shown[v.index]}
          selected={shown[v.index]?.key === selectedKey}
          onSelect={onSelect}
        />
      ))}
    </Table>
  );
}

/** The toolbar shows how many keys match; tell it when that changes. */
function useReportCount(onCount: (n: number | undefined) => void, n: number | undefined): void {
  const latest = useRef(onCount);
  latest.current = onCount;
  useEffect(() => latest.current(n), [n]);
}

function Loading() {
  return (
    <div className="flex items-center gap-2 px-4 py-6 text-[13px] text-muted">
      <Spinner /> Loading items…
    </div>
  );
}

function Table({
  scrollRef,
  totalSize,
  children,
}: {
  scrollRef: React.RefObject<HTMLDivElement | null>;
  totalSize: number;
  children: React.ReactNode;
}) {
  return (
    <div className="flex min-h-0 flex-1 flex-col">
      <div className="grid grid-cols-[minmax(0,1fr)_80px] sm:grid-cols-[minmax(160px,2fr)_90px_minmax(0,3fr)] border-b border-line bg-surface-2/60 px-4 py-1.5 text-[11px] font-semibold tracking-wider text-faint uppercase">
        <span>Key</span>
        <span>Type</span>
        <span className="max-sm:hidden">Value</span>
      </div>
      <div ref={scrollRef} className="min-h-0 flex-1 overflow-y-auto" data-testid="state-items-scroll">
        <div data-testid="state-items" className="relative w-full" style={{ height: totalSize }}>
          {children}
        </div>
      </div>
    </div>
  );
}

function Row({
  index,
  start,
  item,
  selected,
  onSelect,
}: {
  index: number;
  start: number;
  item: StateItem | undefined;
  selected: boolean;
  onSelect: (key: string) => void;
}) {
  const style = { transform: `translateY(${start}px)`, height: ROW };
  if (!item) {
    return (
      <div className="absolute top-0 left-0 flex w-full items-center px-4" style={style} data-index={index}>
        <span className="h-3 w-40 animate-pulse rounded bg-surface-3" />
      </div>
    );
  }
  const kind = valueKind(item.value);
  return (
    <button
      type="button"
      data-index={index}
      data-testid="state-item"
      data-key={item.key}
      aria-current={selected ? 'true' : undefined}
      onClick={() => onSelect(item.key)}
      className={cn(
        'absolute top-0 left-0 grid w-full cursor-pointer grid-cols-[minmax(0,1fr)_80px] sm:grid-cols-[minmax(160px,2fr)_90px_minmax(0,3fr)] items-center border-b border-line/60 px-4 text-left text-[13px] transition-colors outline-none focus-visible:bg-surface-2',
        selected ? 'bg-accent-soft' : 'hover:bg-surface-2',
      )}
      style={style}
    >
      <span className={cn('truncate pr-3 font-mono text-[12.5px]', selected ? 'text-accent' : 'text-fg')} title={item.key}>
        {item.key}
      </span>
      <span>
        <Badge tone={KIND_TONE[kind]}>{kind}</Badge>
      </span>
      <span className="truncate font-mono text-[12px] text-muted max-sm:hidden">{valuePreview(item.value)}</span>
    </button>
  );
}
