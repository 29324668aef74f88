import { Link } from '@tanstack/react-router';
import { Clock, Zap } from 'lucide-react';
import { useEffect, useState } from 'react';
import { useCronNextRuns, useCronTriggerNow } from '../../api/cron.ts';
import { describeCron } from '../../lib/cron-describe.ts';
import { formatDateTime, formatTime } from '../../lib/format.ts';
import { cronExpression } from '../../lib/trigger-config.ts';
import { Button } from '../ui/button.tsx';
import { ErrorNote } from '../ui/empty-state.tsx';
import { JsonView } from '../ui/json-view.tsx';

function until(ms: number, now: number): string {
  const s = Math.round((ms - now) / 1000);
  if (s <= 0) return 'now';
  if (s < 60) return `in ${s}s`;
  if (s < 3600) return `in ${Math.floor(s / 60)}m ${s % 60}s`;
  if (s < 86_400) return `in ${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  return `in ${Math.floor(s / 86_400)}d`;
}

/** Cron (seed 4.1 op 3): the schedule, the engine's next run times, and Trigger Now. */
export function CronPanel({ triggerId, config, functionId }: { triggerId: string; config: unknown; functionId: string }) {
  const expression = cronExpression(config);
  const readable = describeCron(expression);
  const next = useCronNextRuns(triggerId, 5);
  const fire = useCronTriggerNow();
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = window.setInterval(() => setNow(Date.now()), 1000);
    return () => window.clearInterval(timer);
  }, []);
  return (
    <div className="space-y-4" data-testid="cron-panel">
      <div className="rounded-lg border border-line bg-surface-2 p-3">
        <div className="flex items-center gap-2 text-[13px] font-medium text-fg">
          <Clock size={14} className="text-warn" /> {readable ?? 'Custom schedule'}
        </div>
        <code className="mt-1 block font-mono text-[13px] text-muted" data-testid="cron-expression">
          {expression}
        </code>
        <p className="mt-1 text-[11.5px] text-faint">Fields: second minute hour day-of-month month day-of-week [year], evaluated in UTC.</p>
      </div>
      <div>
        <h4 className="mb-1.5 text-[12px] font-medium text-muted">
          Next runs <span className="font-normal text-faint">(your local time)</span>
        </h4>
        {next.isError ? (
          <ErrorNote title="The engine could not compute the next runs" error={next.error} />
        ) : (
          <ol className="space-y-1 text-[12.5px]" data-testid="cron-next-runs">
            {(next.data?.next_runs ?? []).map((iso) => {
              const at = Date.parse(iso);
              return (
                <li key={iso} className="flex items-center gap-3 tabular-nums">
                  <span className="w-40 font-mono text-fg">{formatDateTime(at)}</span>
                  <span className="text-muted">{until(at, now)}</span>
                </li>
              );
            })}
            {next.isPending ? <li className="text-muted">Asking the engine…</li> : null}
          </ol>
        )}
      </div>
      <div className="flex flex-wrap items-center gap-2">
        <Button variant="primary" icon={Zap} loading={fire.isPending} onClick={() => fire.mutate(triggerId)}>
          Trigger now
        </Button>
        <span className="text-[12px] text-muted">
          Runs <span className="font-mono">{functionId}</span> once, right away, with <code className="font-mono">manual: true</code>.
        </span>
      </div>
      {fire.isError ? <ErrorNote title="Trigger Now failed" error={fire.error} /> : null}
      {fire.data ? (
        <div className="space-y-2" data-testid="cron-fired">
          <p className="text-[13px] text-ok">
            Fired at {formatTime(Date.now(), true)}. The function runs asynchronously:{' '}
            <Link to="/traces" className="underline">
              see its trace
            </Link>{' '}
            or{' '}
            <Link to="/logs" className="underline">
              logs
            </Link>
            .
          </p>
          <JsonView value={fire.data} label="payload" maxHeight={200} />
        </div>
      ) : null}
    </div>
  );
}
