import { Link } from '@tanstack/react-router';
import { Clock, Zap } from 'lucide-react';
import { useEffect, useState } from 'react';
import { useCronNextRuns, useCronTriggerNow } from '../../api/cron.ts';
import { describeCron, timeUntil, upcomingRuns } from '../../lib/cron-describe.ts';
import { formatDateTime, formatTime } from '../../lib/format.ts';
import { cronExpression } from '../../lib/trigger-config.ts';
import { Button } from '../ui/button.tsx';
import { ErrorNote } from '../ui/empty-state.tsx';
import { JsonView } from '../ui/json-view.tsx';

const SHOWN_RUNS = 5;
/** Asked of the engine: more than shown, so runs that pass while the page is open are replaced without a wait. */
const ASKED_RUNS = 10;

/** Cron (seed 4.1 op 3): the schedule, the engine's next run times, and Trigger Now. */
export function CronPanel({ triggerId, config, functionId }: { triggerId: string; config: unknown; functionId: string }) {
  const expression = cronExpression(config);
  const readable = describeCron(expression);
  const next = useCronNextRuns(triggerId, ASKED_RUNS);
  const fire = useCronTriggerNow();
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = window.setInterval(() => setNow(Date.now()), 1000);
    return () => window.clearInterval(timer);
  }, []);
  // runs that passed drop off; once fewer than SHOWN_RUNS are ahead the engine is asked again
  // (unless it answered fewer than asked: the schedule has no more)
  const upcoming = upcomingRuns(next.data?.next_runs, now, SHOWN_RUNS);
  // the first run leaves the list the moment it is due, not up to a second later
  const first = upcoming.times[0];
  useEffect(() => {
    if (first === undefined) return;
    const timer = window.setTimeout(() => setNow(Date.now()), Math.max(0, first - Date.now() + 5));
    return () => window.clearTimeout(timer);
  }, [first]);
  const engineHasMore = (next.data?.next_runs.length ?? 0) >= ASKED_RUNS;
  const { refetch, isFetching, dataUpdatedAt } = next;
  useEffect(() => {
    if (upcoming.short && engineHasMore && !isFetching && now - dataUpdatedAt > 1000) void refetch();
  }, [upcoming.short, engineHasMore, isFetching, now, dataUpdatedAt, refetch]);
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
            {upcoming.times.map((at) => (
              <li key={at} className="flex items-center gap-3 tabular-nums" data-testid="cron-next-run" data-at={at}>
                <span className="w-40 font-mono text-fg">{formatDateTime(at)}</span>
                <span className="text-muted">{timeUntil(at, now)}</span>
              </li>
            ))}
            {next.isPending || (upcoming.times.length === 0 && engineHasMore) ? <li className="text-muted">Asking the engine…</li> : null}
            {next.data && upcoming.times.length === 0 && !engineHasMore ? (
              <li className="text-muted">No further runs: the schedule has ended.</li>
            ) : null}
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
