import { useQueries } from '@tanstack/react-query';
import { useVirtualizer, type Virtualizer } from '@tanstack/react-virtual';
import { type RefObject, useEffect, useState } from 'react';

/**
 * Server-paged rows for a virtualised list: only the pages under the viewport are fetched
 * (plus page 0, which carries the total), each one cached under `[...key, 'page', n]`. Used by
 * lists that can hold 100,000 rows (logs, large state groups), where loading everything at once
 * would ship tens of megabytes over the bus.
 */
export interface Page<T> {
  rows: T[];
  total: number;
}

export interface PagedWindowOptions<T> {
  key: readonly unknown[];
  pageSize: number;
  fetchPage: (offset: number, limit: number) => Promise<Page<T>>;
  /** Row indexes on screen (inclusive), e.g. from the virtualizer. */
  start: number;
  end: number;
  enabled?: boolean;
  staleTime?: number;
  /** How long pages nobody shows stay cached (snapshotted lists make many short-lived keys). */
  gcTime?: number;
}

export interface PagedWindow<T> {
  /** Rows matching the query on the server; undefined until the first page answers. */
  total: number | undefined;
  /** The first page of this very key answered (not a previous key's page shown meanwhile). */
  loaded: boolean;
  rowAt(index: number): T | undefined;
  isLoading: boolean;
  isFetching: boolean;
  error: unknown;
  refetch(): void;
}

export function usePagedWindow<T>(options: PagedWindowOptions<T>): PagedWindow<T> {
  const { key, pageSize, fetchPage, start, end, enabled = true, staleTime = 30_000, gcTime = 5 * 60_000 } = options;
  const first = Math.max(0, Math.floor(start / pageSize));
  const last = Math.max(first, Math.floor(Math.max(end, start) / pageSize));
  const pages = [0];
  for (let p = Math.max(1, first); p <= last && pages.length < 12; p++) pages.push(p);

  const results = useQueries({
    queries: pages.map((page) => ({
      queryKey: [...key, 'page', page],
      queryFn: () => fetchPage(page * pageSize, pageSize),
      enabled,
      staleTime,
      gcTime,
      // keep showing the same page of the previous query (new filters, newer snapshot) until the
      // new answer lands, but never another page's rows (observers are matched by position)
      placeholderData: (previous: Page<T> | undefined, previousQuery: { queryKey: readonly unknown[] } | undefined) =>
        previousQuery?.queryKey.at(-1) === page ? previous : undefined,
    })),
  });

  const byPage = new Map<number, T[]>();
  let total: number | undefined;
  let totalAt = -1;
  results.forEach((r, i) => {
    const page = pages[i] as number;
    if (!r.data) return;
    byPage.set(page, r.data.rows);
    // the freshest real answer says how many rows there are
    const at = r.isPlaceholderData ? 0 : r.dataUpdatedAt;
    if (at > totalAt) {
      totalAt = at;
      total = r.data.total;
    }
  });
  return {
    total,
    loaded: results[0]?.data !== undefined && !results[0].isPlaceholderData,
    rowAt: (index: number) => byPage.get(Math.floor(index / pageSize))?.[index % pageSize],
    isLoading: results[0]?.isPending === true && enabled,
    isFetching: results.some((r) => r.isFetching),
    error: results.find((r) => r.error)?.error ?? null,
    refetch: () => {
      for (const r of results) void r.refetch();
    },
  };
}

export interface PagedVirtualRowsOptions<T> extends Omit<PagedWindowOptions<T>, 'start' | 'end'> {
  scrollRef: RefObject<HTMLElement | null>;
  /** Estimated row height in px (rows may be measured when they expand). */
  rowHeight: number;
  overscan?: number;
}

/** A virtualizer over `usePagedWindow`: the pages under the rendered rows are the ones fetched. */
export function usePagedVirtualRows<T>(options: PagedVirtualRowsOptions<T>): {
  virtualizer: Virtualizer<HTMLElement, Element>;
  rows: PagedWindow<T>;
  count: number;
} {
  const { scrollRef, rowHeight, overscan = 12, ...paging } = options;
  const [range, setRange] = useState({ start: 0, end: Math.max(0, paging.pageSize - 1) });
  const rows = usePagedWindow({ ...paging, start: range.start, end: range.end });
  const count = rows.total ?? 0;
  const virtualizer = useVirtualizer<HTMLElement, Element>({
    count,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => rowHeight,
    overscan,
  });
  const items = virtualizer.getVirtualItems();
  const start = items[0]?.index ?? 0;
  const end = items[items.length - 1]?.index ?? 0;
  useEffect(() => {
    setRange((prev) => (prev.start === start && prev.end === end ? prev : { start, end }));
  }, [start, end]);
  return { virtualizer, rows, count };
}
