import { Server } from 'lucide-react';
import { formatCount } from '../../lib/format.ts';
import { cn } from '../ui/cn.ts';

export interface SourceCount {
  service: string;
  count: number;
  errors: number;
}

/** Source breakdown (seed 2.7): which services write the most lines; a click filters by one. */
export function LogSources({
  sources,
  sampled,
  total,
  active,
  onPick,
}: {
  sources: SourceCount[] | undefined;
  sampled: number;
  total: number;
  active: string | undefined;
  onPick: (service: string | undefined) => void;
}) {
  const max = sources?.[0]?.count ?? 0;
  return (
    <aside
      aria-label="Log sources"
      className="hidden w-64 shrink-0 flex-col border-l border-line bg-surface lg:flex"
      data-testid="log-sources"
    >
      <div className="border-b border-line px-4 py-3">
        <h2 className="text-[11px] font-semibold tracking-wider text-faint uppercase">Sources</h2>
        <p className="mt-0.5 text-[12px] text-muted">
          {total === 0
            ? 'No lines to count.'
            : sampled < total
              ? `Newest ${formatCount(sampled)} of ${formatCount(total)} lines`
              : total === 1
                ? 'The only line'
                : `All ${formatCount(total)} lines`}
        </p>
      </div>
      <ul className="min-h-0 flex-1 space-y-0.5 overflow-y-auto p-2">
        {(sources ?? []).map((s) => {
          const on = active === s.service;
          const share = sampled ? Math.round((s.count / sampled) * 100) : 0;
          return (
            <li key={s.service}>
              <button
                type="button"
                onClick={() => onPick(on ? undefined : s.service)}
                aria-pressed={on}
                title={on ? 'Show every service' : `Only ${s.service}`}
                data-testid="log-source"
                className={cn(
                  'w-full cursor-pointer rounded-md px-2 py-1.5 text-left transition-colors',
                  on ? 'bg-accent-soft' : 'hover:bg-surface-2',
                )}
              >
                <div className="flex items-center gap-2 text-[12.5px]">
                  <Server size={12} className={on ? 'text-accent' : 'text-faint'} />
                  <span className={cn('min-w-0 flex-1 truncate', on ? 'font-medium text-fg' : 'text-muted')}>{s.service}</span>
                  <span className="text-[11.5px] text-faint tabular-nums">{share}%</span>
                </div>
                <div className="mt-1 flex h-1.5 overflow-hidden rounded-full bg-surface-3">
                  <div
                    className="h-full bg-accent"
                    style={{ width: `${max ? ((s.count - s.errors) / max) * 100 : 0}%` }}
                    aria-hidden="true"
                  />
                  <div className="h-full bg-bad" style={{ width: `${max ? (s.errors / max) * 100 : 0}%` }} aria-hidden="true" />
                </div>
                <div className="mt-0.5 flex justify-between text-[11px] text-faint tabular-nums">
                  <span>
                    {formatCount(s.count)} {s.count === 1 ? 'line' : 'lines'}
                  </span>
                  {s.errors ? (
                    <span className="text-bad">
                      {formatCount(s.errors)} {s.errors === 1 ? 'error' : 'errors'}
                    </span>
                  ) : null}
                </div>
              </button>
            </li>
          );
        })}
      </ul>
    </aside>
  );
}

/** The same breakdown as a strip of chips, for screens too narrow for the side panel. */
export function LogSourcesStrip({
  sources,
  sampled,
  active,
  onPick,
}: {
  sources: SourceCount[] | undefined;
  sampled: number;
  active: string | undefined;
  onPick: (service: string | undefined) => void;
}) {
  if (!sources?.length) return null;
  return (
    <div className="flex items-center gap-1.5 overflow-x-auto border-b border-line px-4 py-1.5 xl:hidden" data-testid="log-sources-strip">
      <span className="shrink-0 text-[11px] font-semibold tracking-wider text-faint uppercase">Sources</span>
      {sources.slice(0, 6).map((s) => {
        const on = active === s.service;
        return (
          <button
            key={s.service}
            type="button"
            aria-pressed={on}
            onClick={() => onPick(on ? undefined : s.service)}
            className={cn(
              'inline-flex h-6 shrink-0 cursor-pointer items-center gap-1.5 rounded-md border px-2 text-[12px]',
              on ? 'border-accent/40 bg-accent-soft text-accent' : 'border-line text-muted hover:text-fg',
            )}
          >
            {s.service}
            <span className="text-faint tabular-nums">{sampled ? Math.round((s.count / sampled) * 100) : 0}%</span>
          </button>
        );
      })}
    </div>
  );
}
