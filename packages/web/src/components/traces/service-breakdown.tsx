import { useMemo } from 'react';
import { formatDuration } from '../../lib/format.ts';
import { cn } from '../ui/cn.ts';
import { serviceColor } from './span-facts.ts';
import { serviceBreakdown, type TraceModel } from './trace-model.ts';

/** Seed 2.6 Service Breakdown: per service, total spans, average duration and error rate (plus share of self time). */
export function ServiceBreakdown({ model, onService }: { model: TraceModel; onService: (service: string) => void }) {
  const stats = useMemo(() => serviceBreakdown(model), [model]);
  return (
    <div className="h-full overflow-auto p-4" data-testid="service-breakdown">
      <div role="img" className="mb-4 flex h-3 overflow-hidden rounded-full bg-surface-3" aria-label="Share of self time per service">
        {stats.map((s) => (
          <span
            key={s.service}
            title={`${s.service}: ${(s.share * 100).toFixed(1)}% of self time`}
            style={{ width: `${s.share * 100}%`, background: serviceColor(s.service) }}
          />
        ))}
      </div>
      <table className="w-full border-separate border-spacing-0 text-[13px]">
        <thead>
          <tr className="text-left text-[11px] font-semibold tracking-wide text-faint uppercase">
            {['Service', 'Spans', 'Avg duration', 'p50', 'p95', 'Self time', 'Errors', 'Error rate'].map((h, i) => (
              <th key={h} className={cn('border-b border-line px-3 py-2', i > 0 && 'text-right')}>
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {stats.map((s) => (
            <tr
              key={s.service}
              data-testid="service-row"
              className="cursor-pointer hover:bg-surface-2"
              onClick={() => onService(s.service)}
            >
              <td className="border-b border-line px-3 py-2">
                <span className="flex items-center gap-2 font-medium">
                  <span className="size-2.5 shrink-0 rounded-sm" style={{ background: serviceColor(s.service) }} />
                  {s.service}
                </span>
              </td>
              <Num>{s.spans}</Num>
              <Num>{formatDuration(s.avgMs)}</Num>
              <Num>{formatDuration(s.p50)}</Num>
              <Num>{formatDuration(s.p95)}</Num>
              <td className="border-b border-line px-3 py-2 text-right">
                <div className="flex items-center justify-end gap-2">
                  <span className="font-mono text-[12px] tabular-nums">{formatDuration(s.selfMs)}</span>
                  <span className="h-1.5 w-16 overflow-hidden rounded-full bg-surface-3">
                    <span
                      className="block h-full rounded-full"
                      style={{ width: `${s.share * 100}%`, background: serviceColor(s.service) }}
                    />
                  </span>
                  <span className="w-10 text-right text-[11px] text-muted tabular-nums">{(s.share * 100).toFixed(0)}%</span>
                </div>
              </td>
              <Num className={s.errors > 0 ? 'text-bad' : undefined}>{s.errors}</Num>
              <Num className={s.errors > 0 ? 'font-semibold text-bad' : 'text-muted'}>
                {(s.errorRate * 100).toFixed(s.errorRate > 0 && s.errorRate < 0.1 ? 1 : 0)}%
              </Num>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Num({ children, className }: { children: React.ReactNode; className?: string }) {
  return <td className={cn('border-b border-line px-3 py-2 text-right font-mono text-[12px] tabular-nums', className)}>{children}</td>;
}
