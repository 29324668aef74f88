import { Activity, TriangleAlert } from 'lucide-react';
import { useMemo } from 'react';
import { useEngineMetrics } from '../../api/metrics.ts';
import { countOf, formatCount, formatDuration, pluralize } from '../../lib/format.ts';
import { Card, CardHeader } from '../ui/card.tsx';
import { EmptyState } from '../ui/empty-state.tsx';
import { MiniChart } from './mini-chart.tsx';

const INTERVAL_S = 10;

/** Invocation rate and errors over the engine's 15-minute series (engine::metrics::list `series`). */
export function ActivityCharts() {
  const metrics = useEngineMetrics(INTERVAL_S);
  const { times, invocations, errors } = useMemo(() => {
    const series = metrics.data?.series ?? [];
    return {
      times: series.map((p) => p.t),
      // per-second rate so the axis reads the same whatever the bucket size
      invocations: series.map((p) => Math.round((p.invocations / INTERVAL_S) * 100) / 100),
      errors: series.map((p) => p.errors),
    };
  }, [metrics.data]);
  const m = metrics.data?.engine_metrics;
  const inv = useMemo(() => [{ label: 'invocations/s', values: invocations, colorVar: '--c-accent' }], [invocations]);
  const err = useMemo(() => [{ label: 'errors', values: errors, colorVar: '--c-bad' }], [errors]);

  // only an engine that answers "no such function" lacks the module; an outage keeps the last series
  if ((metrics.error as { code?: string } | null)?.code === 'function_not_found' && !metrics.data) {
    return (
      <Card className="lg:col-span-2">
        <EmptyState icon={Activity} title="No invocation metrics" compact>
          The engine did not answer <code className="font-mono">engine::metrics::list</code>. Add the{' '}
          <code className="font-mono">eng-observability</code> module to the engine's config.yaml to see invocation rate and errors here.
        </EmptyState>
      </Card>
    );
  }
  const recentErrors = errors.reduce((a, b) => a + b, 0);
  const recentInvocations = (metrics.data?.series ?? []).reduce((a, p) => a + p.invocations, 0);
  return (
    <>
      <Card>
        <CardHeader
          title={
            <span className="inline-flex items-center gap-1.5">
              <Activity size={14} className="text-accent" /> Invocation rate
            </span>
          }
          description={`per second, last 15 minutes${metrics.data ? ` · ${countOf(recentInvocations, 'call')}` : ''}`}
          actions={
            m ? <span className="text-[12px] text-muted tabular-nums">p95 {formatDuration(m.performance.p95_duration_ms)}</span> : null
          }
        />
        <div className="px-3 pt-2 pb-3" data-testid="chart-invocations" data-total={recentInvocations}>
          <MiniChart
            times={times}
            series={inv}
            label={`Invocations per second over the last 15 minutes: ${pluralize(recentInvocations, 'call')}, latest ${invocations.at(-1) ?? 0}/s`}
          />
        </div>
      </Card>
      <Card>
        <CardHeader
          title={
            <span className="inline-flex items-center gap-1.5">
              <TriangleAlert size={14} className="text-bad" /> Errors
            </span>
          }
          description={`per ${INTERVAL_S} s, last 15 minutes${metrics.data ? ` · ${formatCount(recentErrors)} failed` : ''}`}
          actions={
            m ? (
              <span className="text-[12px] text-muted tabular-nums">
                {m.invocations.total ? ((m.invocations.error / m.invocations.total) * 100).toFixed(1) : '0.0'}% all-time
              </span>
            ) : null
          }
        />
        <div className="px-3 pt-2 pb-3" data-testid="chart-errors" data-total={recentErrors}>
          <MiniChart
            times={times}
            series={err}
            label={`Failed invocations over the last 15 minutes: ${recentErrors} failed, ${errors.at(-1) ?? 0} in the latest ${INTERVAL_S} s`}
          />
        </div>
      </Card>
    </>
  );
}
