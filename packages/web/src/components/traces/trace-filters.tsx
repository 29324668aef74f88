import { ArrowDownWideNarrow, ArrowUpNarrowWide, Plus, SlidersHorizontal, TriangleAlert, X } from 'lucide-react';
import { useState } from 'react';
import { CountBadge } from '../ui/badge.tsx';
import { Button } from '../ui/button.tsx';
import { cn } from '../ui/cn.ts';
import { Select, TextInput } from '../ui/inputs.tsx';
import { Tabs } from '../ui/tabs.tsx';
import { DebouncedInput, DebouncedSearch } from './debounced-input.tsx';
import {
  durationBounds,
  filtersOf,
  GROUP_ATTRIBUTES,
  GROUPS,
  type GroupBy,
  hasFilters,
  RANGES,
  type RangePreset,
  type SortBy,
  type StatusFilter,
  type TracesSearch,
} from './trace-search.ts';
import type { TracesNav } from './use-traces-nav.ts';

/** Seed table 2.6 filters plus sort, group and free text; every value lives in the URL. */

const STATUS_TABS: Array<{ value: StatusFilter | 'all'; label: string }> = [
  { value: 'all', label: 'All' },
  { value: 'ok', label: 'OK' },
  { value: 'error', label: 'Error' },
  { value: 'pending', label: 'Pending' },
  { value: 'unset', label: 'Unset' },
];

const RANGE_LABELS: Record<RangePreset, string> = {
  '15m': 'Last 15 minutes',
  '1h': 'Last hour',
  '6h': 'Last 6 hours',
  '24h': 'Last 24 hours',
  '7d': 'Last 7 days',
  custom: 'Custom range…',
};

const SORT_LABELS: Record<SortBy, string> = {
  start_time: 'Start time',
  duration: 'Duration',
  service_name: 'Service',
  name: 'Root span',
};

/** Attribute keys the engine and OTel HTTP/messaging conventions write (suggestion chips). */
const ATTRIBUTE_SUGGESTIONS = [
  'function_id',
  'eng.session.id',
  'eng.worker.name',
  'http.request.method',
  'http.response.status_code',
  'http.route',
  'url.path',
  'messaging.destination.name',
  'code.file.path',
];

export function toLocalInput(ms: number | undefined): string {
  if (ms === undefined) return '';
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

function fromLocalInput(text: string): number | undefined {
  if (!text) return undefined;
  const ms = new Date(text).getTime();
  return Number.isFinite(ms) ? ms : undefined;
}

function numberOrUndefined(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

export function TraceFilterBar({ search, nav }: { search: TracesSearch; nav: TracesNav }) {
  const advancedCount = [search.tid, search.service, search.op, search.min, search.max, ...(search.attr ?? [])].filter(
    (v) => v !== undefined,
  ).length;
  const [open, setOpen] = useState(advancedCount > 0);
  // bumped by Clear all: the text inputs start again from the (cleared) URL, and what was typed
  // into them but not yet committed is dropped rather than committed after the clear
  const [generation, setGeneration] = useState(0);
  const order = search.order ?? 'desc';
  return (
    <div className="w-full space-y-2" data-testid="trace-filters">
      <div className="flex flex-wrap items-center gap-2">
        <DebouncedSearch
          key={generation}
          value={search.q}
          onCommit={(q) => nav({ q }, { replace: true })}
          placeholder="Search spans, services, ids…"
          className="w-full sm:w-64"
        />
        <Tabs
          label="Status"
          items={STATUS_TABS}
          value={search.status ?? 'all'}
          onChange={(v) => nav({ status: v === 'all' ? undefined : v })}
        />
        <Select
          aria-label="Time range"
          className="w-auto"
          value={search.range ?? 'all'}
          onChange={(e) => {
            const range = e.target.value === 'all' ? undefined : (e.target.value as RangePreset);
            if (range === 'custom') nav({ range, from: search.from ?? Date.now() - 3_600_000, to: search.to });
            else nav({ range, from: undefined, to: undefined });
          }}
        >
          <option value="all">All time</option>
          {RANGES.map((r) => (
            <option key={r} value={r}>
              {RANGE_LABELS[r]}
            </option>
          ))}
        </Select>
        <Select
          aria-label="Group by"
          className="w-auto"
          value={search.group ?? 'none'}
          onChange={(e) => nav({ group: e.target.value === 'none' ? undefined : (e.target.value as GroupBy) })}
        >
          {GROUPS.map((g) => (
            <option key={g} value={g}>
              {g === 'none' ? 'Group: none' : `Group: ${GROUP_ATTRIBUTES[g].label.toLowerCase()}`}
            </option>
          ))}
        </Select>
        <div className="flex items-center">
          <Select
            aria-label="Sort by"
            className="w-auto rounded-r-none"
            value={search.sort ?? 'start_time'}
            onChange={(e) => nav({ sort: e.target.value === 'start_time' ? undefined : (e.target.value as SortBy) })}
          >
            {Object.entries(SORT_LABELS).map(([value, label]) => (
              <option key={value} value={value}>
                Sort: {label}
              </option>
            ))}
          </Select>
          <button
            type="button"
            aria-label={order === 'desc' ? 'Sort descending (click for ascending)' : 'Sort ascending (click for descending)'}
            title={order === 'desc' ? 'Descending' : 'Ascending'}
            onClick={() => nav({ order: order === 'desc' ? 'asc' : undefined })}
            className="-ml-px flex h-8 w-8 cursor-pointer items-center justify-center rounded-r-lg border border-line-strong bg-surface text-muted hover:bg-surface-2 hover:text-fg"
          >
            {order === 'desc' ? <ArrowDownWideNarrow size={14} /> : <ArrowUpNarrowWide size={14} />}
          </button>
        </div>
        <Button
          size="sm"
          variant={open ? 'subtle' : 'secondary'}
          icon={SlidersHorizontal}
          onClick={() => setOpen((v) => !v)}
          aria-expanded={open}
        >
          Filters
          {advancedCount > 0 ? <CountBadge value={advancedCount} active /> : null}
        </Button>
      </div>
      {open ? <AdvancedFilters key={generation} search={search} nav={nav} /> : null}
      {search.range === 'custom' ? <CustomRange search={search} nav={nav} /> : null}
      <ActivePills search={search} nav={nav} onClearAll={() => setGeneration((g) => g + 1)} />
    </div>
  );
}

function Field({ label, children, className }: { label: string; children: React.ReactNode; className?: string }) {
  return (
    // biome-ignore lint/a11y/noLabelWithoutControl: the control comes in as children
    <label className={cn('flex min-w-0 flex-col gap-1', className)}>
      <span className="text-[11px] font-medium tracking-wide text-faint uppercase">{label}</span>
      {children}
    </label>
  );
}

function AdvancedFilters({ search, nav }: { search: TracesSearch; nav: TracesNav }) {
  const [key, setKey] = useState('');
  const [value, setValue] = useState('');
  const { swapped } = durationBounds(filtersOf(search));
  const addPair = () => {
    if (!key.trim()) return;
    const next = [...(search.attr ?? []).filter(([k, v]) => !(k === key.trim() && v === value)), [key.trim(), value] as [string, string]];
    nav({ attr: next });
    setKey('');
    setValue('');
  };
  return (
    <div
      className="grid gap-3 rounded-xl border border-line bg-surface-2/60 p-3 sm:grid-cols-2 lg:grid-cols-6"
      data-testid="advanced-filters"
    >
      <Field label="Trace ID (exact)" className="lg:col-span-2">
        <DebouncedInput
          value={search.tid}
          onCommit={(tid) => nav({ tid: tid?.toLowerCase() }, { replace: true })}
          placeholder="32 hex characters"
          aria-label="Trace ID"
          className="font-mono"
        />
      </Field>
      <Field label="Service" className="lg:col-span-2">
        <DebouncedInput
          value={search.service}
          onCommit={(service) => nav({ service }, { replace: true })}
          placeholder="contains…"
          aria-label="Service"
        />
      </Field>
      <Field label="Span name (operation)" className="lg:col-span-2">
        <DebouncedInput
          value={search.op}
          onCommit={(op) => nav({ op }, { replace: true })}
          placeholder="contains…"
          aria-label="Span name"
        />
      </Field>
      <Field label="Min duration (ms)">
        <DebouncedInput
          value={search.min?.toString()}
          onCommit={(v) => nav({ min: numberOrUndefined(v) }, { replace: true })}
          inputMode="decimal"
          placeholder="0"
          aria-label="Min duration (ms)"
        />
      </Field>
      <Field label="Max duration (ms)">
        <DebouncedInput
          value={search.max?.toString()}
          onCommit={(v) => nav({ max: numberOrUndefined(v) }, { replace: true })}
          inputMode="decimal"
          placeholder="∞"
          aria-label="Max duration (ms)"
        />
      </Field>
      <div className="flex flex-col gap-1 sm:col-span-2 lg:col-span-4">
        <span className="text-[11px] font-medium tracking-wide text-faint uppercase">Attributes (all must match)</span>
        <form
          className="flex gap-2"
          onSubmit={(e) => {
            e.preventDefault();
            addPair();
          }}
        >
          <TextInput
            value={key}
            onChange={(e) => setKey(e.target.value)}
            placeholder="key"
            aria-label="Attribute key"
            list="trace-attr-keys"
            className="font-mono"
          />
          <TextInput
            value={value}
            onChange={(e) => setValue(e.target.value)}
            placeholder="value"
            aria-label="Attribute value"
            className="font-mono"
          />
          <Button type="submit" size="md" icon={Plus} disabled={!key.trim()}>
            Add
          </Button>
          <datalist id="trace-attr-keys">
            {ATTRIBUTE_SUGGESTIONS.map((k) => (
              <option key={k} value={k} />
            ))}
          </datalist>
        </form>
        <div className="flex flex-wrap gap-1">
          {ATTRIBUTE_SUGGESTIONS.slice(0, 6).map((k) => (
            <button
              key={k}
              type="button"
              onClick={() => setKey(k)}
              className="cursor-pointer rounded-md border border-line bg-surface px-1.5 py-0.5 font-mono text-[11px] text-muted hover:border-line-strong hover:text-fg"
            >
              {k}
            </button>
          ))}
        </div>
      </div>
      {swapped ? (
        <p className="flex items-center gap-1.5 text-xs text-warn sm:col-span-2 lg:col-span-6" role="status">
          <TriangleAlert size={13} /> Min is above max: the bounds are used the other way round.
        </p>
      ) : null}
    </div>
  );
}

function CustomRange({ search, nav }: { search: TracesSearch; nav: TracesNav }) {
  const reversed = search.from !== undefined && search.to !== undefined && search.from > search.to;
  return (
    <div className="flex flex-wrap items-end gap-2" data-testid="custom-range">
      <Field label="From">
        <TextInput
          type="datetime-local"
          aria-label="From"
          value={toLocalInput(search.from)}
          onChange={(e) => nav({ from: fromLocalInput(e.target.value) }, { replace: true })}
        />
      </Field>
      <Field label="To">
        <TextInput
          type="datetime-local"
          aria-label="To"
          value={toLocalInput(search.to)}
          onChange={(e) => nav({ to: fromLocalInput(e.target.value) }, { replace: true })}
        />
      </Field>
      {reversed ? (
        <p className="flex h-8 items-center gap-1.5 text-xs text-warn">
          <TriangleAlert size={13} /> From is after To: the range is used the other way round.
        </p>
      ) : null}
    </div>
  );
}

function Pill({ label, onRemove }: { label: string; onRemove: () => void }) {
  return (
    <span className="inline-flex h-6 max-w-full items-center gap-1 rounded-full border border-accent/30 bg-accent-soft pr-1 pl-2.5 text-xs text-accent">
      <span className="truncate">{label}</span>
      <button
        type="button"
        aria-label={`Remove filter ${label}`}
        onClick={onRemove}
        className="flex size-4.5 cursor-pointer items-center justify-center rounded-full hover:bg-accent/15"
      >
        <X size={11} />
      </button>
    </span>
  );
}

function ActivePills({ search, nav, onClearAll }: { search: TracesSearch; nav: TracesNav; onClearAll: () => void }) {
  const f = filtersOf(search);
  if (!hasFilters(f)) return null;
  const pills: Array<{ label: string; remove: () => void }> = [];
  if (f.q) pills.push({ label: `search: ${f.q}`, remove: () => nav({ q: undefined }) });
  if (f.tid) pills.push({ label: `trace id: ${f.tid.slice(0, 12)}…`, remove: () => nav({ tid: undefined }) });
  if (f.service) pills.push({ label: `service ∋ ${f.service}`, remove: () => nav({ service: undefined }) });
  if (f.op) pills.push({ label: `span ∋ ${f.op}`, remove: () => nav({ op: undefined }) });
  if (f.status) pills.push({ label: `status: ${f.status}`, remove: () => nav({ status: undefined }) });
  if (f.min !== undefined) pills.push({ label: `≥ ${f.min} ms`, remove: () => nav({ min: undefined }) });
  if (f.max !== undefined) pills.push({ label: `≤ ${f.max} ms`, remove: () => nav({ max: undefined }) });
  if (f.range)
    pills.push({
      label: `time: ${RANGE_LABELS[f.range].replace('…', '')}`,
      remove: () => nav({ range: undefined, from: undefined, to: undefined }),
    });
  for (const [k, v] of f.attr ?? []) {
    pills.push({ label: `${k} = ${v}`, remove: () => nav({ attr: (f.attr ?? []).filter(([a, b]) => !(a === k && b === v)) }) });
  }
  return (
    <div className="flex flex-wrap items-center gap-1.5" data-testid="active-filters">
      {pills.map((p) => (
        <Pill key={p.label} label={p.label} onRemove={p.remove} />
      ))}
      <button
        type="button"
        onClick={() => {
          onClearAll();
          nav({
            q: undefined,
            tid: undefined,
            service: undefined,
            op: undefined,
            status: undefined,
            min: undefined,
            max: undefined,
            range: undefined,
            from: undefined,
            to: undefined,
            attr: undefined,
          });
        }}
        className="cursor-pointer px-1 text-xs font-medium text-muted hover:text-fg"
      >
        Clear all
      </button>
    </div>
  );
}
