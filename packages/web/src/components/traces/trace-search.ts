import { bool, num, str } from '../../lib/search.ts';

/**
 * The Traces page state that lives in the URL (console spec §7 item 5: the reference kept none of
 * it, so a filtered view could not be shared). Every filter of seed table 2.6, the open trace,
 * the selected span, the view and the grouping: `#/traces?trace_id=…` opens a trace.
 * Light on purpose: routes/traces.tsx imports it into the initial bundle.
 */

export const STATUSES = ['ok', 'error', 'pending', 'unset'] as const;
export type StatusFilter = (typeof STATUSES)[number];

export const RANGES = ['15m', '1h', '6h', '24h', '7d', 'custom'] as const;
export type RangePreset = (typeof RANGES)[number];
export const RANGE_MS: Record<Exclude<RangePreset, 'custom'>, number> = {
  '15m': 15 * 60_000,
  '1h': 3_600_000,
  '6h': 6 * 3_600_000,
  '24h': 24 * 3_600_000,
  '7d': 7 * 24 * 3_600_000,
};

export const SORTS = ['start_time', 'duration', 'service_name', 'name'] as const;
export type SortBy = (typeof SORTS)[number];

export const GROUPS = ['none', 'message', 'session', 'function'] as const;
export type GroupBy = (typeof GROUPS)[number];

export const VIEWS = ['waterfall', 'flame', 'services', 'map', 'flow'] as const;
export type TraceView = (typeof VIEWS)[number];

export const SPAN_TABS = ['info', 'attributes', 'events', 'logs', 'errors', 'baggage', 'links'] as const;
export type SpanTab = (typeof SPAN_TABS)[number];

export const PAGE_SIZES = [25, 50, 100] as const;
export type PageSize = (typeof PAGE_SIZES)[number];

export interface TracesSearch {
  /** The open trace. */
  trace_id?: string;
  /** The selected span of the open trace. */
  span?: string;
  view?: TraceView;
  tab?: SpanTab;
  /** Debounced free text: span names, services, trace ids. */
  q?: string;
  /** Trace ID filter, exact. */
  tid?: string;
  service?: string;
  /** Span name (operation), substring. */
  op?: string;
  status?: StatusFilter;
  min?: number;
  max?: number;
  range?: RangePreset;
  /** Custom range, ms since the epoch. */
  from?: number;
  to?: number;
  /** Attribute pairs, AND-combined. */
  attr?: Array<[string, string]>;
  sort?: SortBy;
  order?: 'asc' | 'desc';
  group?: GroupBy;
  size?: PageSize;
  page?: number;
  /** include_internal */
  system?: boolean;
}

function oneOf<T extends string>(values: readonly T[], value: unknown): T | undefined {
  return typeof value === 'string' && (values as readonly string[]).includes(value) ? (value as T) : undefined;
}

function pairs(value: unknown): Array<[string, string]> | undefined {
  if (!Array.isArray(value)) return undefined;
  const out: Array<[string, string]> = [];
  for (const item of value) {
    if (Array.isArray(item) && typeof item[0] === 'string' && item[0] !== '') out.push([item[0], String(item[1] ?? '')]);
    else if (typeof item === 'string' && item.includes('=')) {
      const i = item.indexOf('=');
      out.push([item.slice(0, i), item.slice(i + 1)]);
    }
  }
  return out.length > 0 ? out : undefined;
}

const nonNegative = (v: unknown) => {
  const n = num(v);
  return n !== undefined && n >= 0 ? n : undefined;
};

/** `validateSearch` of the route: unknown or malformed values are dropped, never thrown. */
export function parseTracesSearch(raw: Record<string, unknown>): TracesSearch {
  const size = num(raw.size);
  const out: TracesSearch = {
    trace_id: str(raw.trace_id)?.toLowerCase(),
    span: str(raw.span)?.toLowerCase(),
    view: oneOf(VIEWS, raw.view),
    tab: oneOf(SPAN_TABS, raw.tab),
    q: str(raw.q),
    tid: str(raw.tid)?.toLowerCase(),
    service: str(raw.service),
    op: str(raw.op),
    status: oneOf(STATUSES, typeof raw.status === 'string' ? raw.status.toLowerCase() : raw.status),
    min: nonNegative(raw.min),
    max: nonNegative(raw.max),
    range: oneOf(RANGES, raw.range),
    from: nonNegative(raw.from),
    to: nonNegative(raw.to),
    attr: pairs(raw.attr),
    sort: oneOf(SORTS, raw.sort),
    order: oneOf(['asc', 'desc'] as const, raw.order),
    group: oneOf(GROUPS, raw.group),
    size: PAGE_SIZES.find((s) => s === size),
    page: num(raw.page) !== undefined && (num(raw.page) as number) > 0 ? Math.floor(num(raw.page) as number) : undefined,
    system: bool(raw.system),
  };
  for (const key of Object.keys(out) as Array<keyof TracesSearch>) if (out[key] === undefined) delete out[key];
  return out;
}

export const DEFAULT_PAGE_SIZE: PageSize = 50;

/** The filters proper (what narrows the list), without selection, view and paging. */
export type TraceFilters = Pick<
  TracesSearch,
  'q' | 'tid' | 'service' | 'op' | 'status' | 'min' | 'max' | 'range' | 'from' | 'to' | 'attr' | 'sort' | 'order' | 'system'
>;

export function filtersOf(s: TracesSearch): TraceFilters {
  const { q, tid, service, op, status, min, max, range, from, to, attr, sort, order, system } = s;
  return { q, tid, service, op, status, min, max, range, from, to, attr, sort, order, system };
}

/** The time window of a filter set, evaluated now (a preset rolls with time). */
export function timeWindow(f: TraceFilters, now: number): { start?: number; end?: number } {
  if (!f.range) return {};
  if (f.range === 'custom') {
    const start = f.from;
    const end = f.to;
    // reversed bounds are swapped, as the reference console did (with a warning in the bar)
    if (start !== undefined && end !== undefined && start > end) return { start: end, end: start };
    return { start, end };
  }
  return { start: now - RANGE_MS[f.range] };
}

/** Duration bounds, swapped when reversed. */
export function durationBounds(f: TraceFilters): { min?: number; max?: number; swapped: boolean } {
  if (f.min !== undefined && f.max !== undefined && f.min > f.max) return { min: f.max, max: f.min, swapped: true };
  return { min: f.min, max: f.max, swapped: false };
}

/** The `engine::traces::list` input of a filter set (engine-protocol §4.3), without paging. */
export function listInputOf(f: TraceFilters, now: number): Record<string, unknown> {
  const input: Record<string, unknown> = {
    sort_by: f.sort ?? 'start_time',
    sort_order: f.order ?? 'desc',
  };
  if (f.tid) input.trace_id = f.tid;
  if (f.service) input.service_name = f.service;
  if (f.op) input.name = f.op;
  if (f.status) input.status = f.status;
  const { min, max } = durationBounds(f);
  if (min !== undefined) input.min_duration_ms = min;
  if (max !== undefined) input.max_duration_ms = max;
  const { start, end } = timeWindow(f, now);
  if (start !== undefined) input.start_time = Math.floor(start);
  if (end !== undefined) input.end_time = Math.ceil(end);
  if (f.attr && f.attr.length > 0) input.attributes = f.attr;
  if (f.system) input.include_internal = true;
  return input;
}

export function hasFilters(f: TraceFilters): boolean {
  return !!(f.q || f.tid || f.service || f.op || f.status || f.min !== undefined || f.max !== undefined || f.range || f.attr?.length);
}

/** The attribute each "group by" choice groups on; `iii.*` spellings are merged in for iii workers. */
export const GROUP_ATTRIBUTES: Record<Exclude<GroupBy, 'none'>, { label: string; attributes: string[] }> = {
  message: { label: 'Message', attributes: ['eng.message.id', 'iii.message.id'] },
  session: { label: 'Session', attributes: ['eng.session.id', 'iii.session.id'] },
  function: { label: 'Function', attributes: ['function_id', 'iii.function.id'] },
};
