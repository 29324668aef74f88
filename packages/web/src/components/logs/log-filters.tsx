import { Clock, Fingerprint, Server, X } from 'lucide-react';
import { useEffect, useRef, useState } from 'react';
import { type LogFilters, RANGE_PRESETS, type RangePreset, SEVERITIES, type Severity } from '../../api/logs.ts';
import { formatCount } from '../../lib/format.ts';
import { Button } from '../ui/button.tsx';
import { cn } from '../ui/cn.ts';
import { SearchInput, Select, TextInput } from '../ui/inputs.tsx';
import { severityTone } from './severity.ts';

const RANGE_LABELS: Record<RangePreset, string> = {
  '5m': 'Last 5 minutes',
  '15m': 'Last 15 minutes',
  '1h': 'Last hour',
  '6h': 'Last 6 hours',
  '24h': 'Last 24 hours',
  '7d': 'Last 7 days',
};

const chipTone: Record<string, string> = {
  bad: 'border-bad/40 bg-bad-soft text-bad',
  warn: 'border-warn/40 bg-warn-soft text-warn',
  info: 'border-info/40 bg-info-soft text-info',
  violet: 'border-violet/40 bg-violet-soft text-violet',
  neutral: 'border-line-strong bg-surface-3 text-fg',
};

/** The filters of seed 2.7 (severity multi-select, time range, full text, trace id) plus service; all in the URL. */
export function LogFiltersBar({
  filters,
  counts,
  onChange,
}: {
  filters: LogFilters;
  counts: Partial<Record<Severity, number>>;
  onChange: (patch: Partial<LogFilters>) => void;
}) {
  const active = filters.severity ?? [];
  const toggle = (level: Severity) => {
    const next = active.includes(level) ? active.filter((l) => l !== level) : [...active, level];
    onChange({ severity: next.length ? SEVERITIES.filter((l) => next.includes(l)) : undefined });
  };
  const anyFilter = !!(filters.severity?.length || filters.range || filters.q || filters.trace_id || filters.service);

  return (
    <div className="flex flex-wrap items-center gap-2">
      <DebouncedSearch value={filters.q ?? ''} onCommit={(q) => onChange({ q: q || undefined })} />
      <fieldset className="flex flex-wrap items-center gap-1" aria-label="Severity">
        {SEVERITIES.map((level) => {
          const on = active.includes(level);
          return (
            <button
              key={level}
              type="button"
              aria-pressed={on}
              onClick={() => toggle(level)}
              data-testid={`severity-${level}`}
              className={cn(
                'inline-flex h-8 cursor-pointer items-center gap-1.5 rounded-lg border px-2 text-[11.5px] font-semibold transition-colors',
                on ? chipTone[severityTone(level)] : 'border-line bg-surface text-muted hover:border-line-strong hover:text-fg',
              )}
            >
              {level}
              <span className={cn('font-normal tabular-nums', on ? 'opacity-80' : 'text-faint')}>
                {counts[level] === undefined ? '' : formatCount(counts[level] as number)}
              </span>
            </button>
          );
        })}
      </fieldset>
      <div className="flex items-center gap-1.5">
        <Clock size={14} className="text-faint" />
        <Select
          aria-label="Time range"
          className="w-40"
          value={filters.range ?? 'all'}
          onChange={(e) => {
            const v = e.target.value;
            if (v === 'all') onChange({ range: undefined, from: undefined, to: undefined });
            else if (v === 'custom') onChange({ range: 'custom', from: filters.from ?? Date.now() - 3_600_000, to: filters.to });
            else onChange({ range: v as RangePreset, from: undefined, to: undefined });
          }}
        >
          <option value="all">All time</option>
          {(Object.keys(RANGE_PRESETS) as RangePreset[]).map((r) => (
            <option key={r} value={r}>
              {RANGE_LABELS[r]}
            </option>
          ))}
          <option value="custom">Custom…</option>
        </Select>
        {filters.range === 'custom' ? (
          <>
            <DateTimeInput label="From" value={filters.from} onChange={(from) => onChange({ from })} />
            <span className="text-faint">–</span>
            <DateTimeInput label="To" value={filters.to} onChange={(to) => onChange({ to })} />
          </>
        ) : null}
      </div>
      <DebouncedTrace value={filters.trace_id ?? ''} onCommit={(t) => onChange({ trace_id: t || undefined })} />
      {filters.service ? (
        <span className="inline-flex h-8 items-center gap-1.5 rounded-lg border border-accent/40 bg-accent-soft px-2 text-[12px] text-accent">
          <Server size={12} /> {filters.service}
          <button
            type="button"
            aria-label="Show every service"
            onClick={() => onChange({ service: undefined })}
            className="cursor-pointer rounded hover:bg-accent/15"
          >
            <X size={12} />
          </button>
        </span>
      ) : null}
      {anyFilter ? (
        <Button
          size="xs"
          variant="ghost"
          onClick={() =>
            onChange({
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
      ) : null}
    </div>
  );
}

/** Local text that follows the URL and writes back to it 250 ms after the last keystroke. */
function useDebounced(value: string, onCommit: (v: string) => void, ms = 250): [string, (v: string) => void] {
  const [text, setText] = useState(value);
  const commit = useRef(onCommit);
  commit.current = onCommit;
  const last = useRef(value);
  useEffect(() => {
    if (value !== last.current) {
      last.current = value;
      setText(value);
    }
  }, [value]);
  useEffect(() => {
    if (text === last.current) return;
    const timer = setTimeout(() => {
      last.current = text;
      commit.current(text);
    }, ms);
    return () => clearTimeout(timer);
  }, [text, ms]);
  return [text, setText];
}

function DebouncedSearch({ value, onCommit }: { value: string; onCommit: (v: string) => void }) {
  const [text, setText] = useDebounced(value, onCommit);
  return <SearchInput className="w-full sm:w-64" value={text} onChange={setText} placeholder="Search messages…" />;
}

function DebouncedTrace({ value, onCommit }: { value: string; onCommit: (v: string) => void }) {
  const [text, setText] = useDebounced(value, (v) => onCommit(v.trim()));
  return (
    <div className="relative">
      <Fingerprint size={14} className="pointer-events-none absolute top-1/2 left-2.5 -translate-y-1/2 text-faint" />
      <TextInput
        aria-label="Trace id"
        placeholder="Trace id"
        value={text}
        onChange={(e) => setText(e.target.value)}
        className="w-52 pl-8 font-mono text-[12px]"
        spellCheck={false}
      />
    </div>
  );
}

function DateTimeInput({
  label,
  value,
  onChange,
}: {
  label: string;
  value: number | undefined;
  onChange: (ms: number | undefined) => void;
}) {
  const local = value === undefined ? '' : toLocalInput(value);
  return (
    <TextInput
      type="datetime-local"
      step={1}
      aria-label={label}
      value={local}
      onChange={(e) => onChange(e.target.value ? new Date(e.target.value).getTime() : undefined)}
      className="w-48 text-[12px]"
    />
  );
}

function toLocalInput(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}
