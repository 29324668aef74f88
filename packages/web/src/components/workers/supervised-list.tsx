import { ExternalLink, TriangleAlert } from 'lucide-react';
import { useEffect, useRef, useState } from 'react';
import { describeExit, type SupervisedStatus, type SupervisedWorker, statusOf } from '../../api/supervisor.ts';
import { timeAgo } from '../../lib/format.ts';
import { Badge, StatusDot, type Tone } from '../ui/badge.tsx';
import { cn } from '../ui/cn.ts';
import { CopyButton } from '../ui/copy-button.tsx';

const GRID = 'grid grid-cols-[minmax(0,1.3fr)_150px_70px_70px_minmax(0,0.9fr)_minmax(0,1.6fr)] items-center gap-3';

const STATUS: Record<SupervisedStatus, { label: string; tone: Tone }> = {
  running: { label: 'running', tone: 'ok' },
  restarting: { label: 'restarting', tone: 'warn' },
  crash_loop: { label: 'crash loop', tone: 'bad' },
  failed_to_launch: { label: 'failed to launch', tone: 'bad' },
  stopped: { label: 'stopped', tone: 'neutral' },
};

/** Seconds until a scheduled restart, in words. */
function restartIn(at: number | null | undefined, now: number): string | undefined {
  if (!at) return undefined;
  const s = Math.max(0, Math.ceil((at - now) / 1000));
  return s <= 0 ? 'restarting now' : `next try in ${s} s`;
}

/**
 * What a worker that is not running last wrote to stderr, under its row: the reason, without
 * opening the log file. The newest line is at the bottom and in view.
 */
function StderrTail({ name, lines }: { name: string; lines: string[] }) {
  const ref = useRef<HTMLPreElement>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: scrolled again when new lines arrive
  useEffect(() => {
    if (ref.current) ref.current.scrollTop = ref.current.scrollHeight;
  }, [lines]);
  return (
    <section aria-label={`Last stderr lines of ${name}`} className="col-span-full min-w-0">
      <div className="mb-1 text-[11px] text-faint">last lines on stderr</div>
      <pre
        ref={ref}
        // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling box must be reachable by keyboard
        tabIndex={0}
        data-testid="supervised-stderr"
        className="max-h-40 overflow-auto rounded border border-line bg-surface-2 px-3 py-2 font-mono text-[11.5px] leading-snug whitespace-pre-wrap break-words text-fg"
      >
        {lines.join('\n')}
      </pre>
    </section>
  );
}

/**
 * "Launched by the engine" on the Workers page (issue 19 §8): every worker of the engine's
 * config.yaml, from `engine::supervisor::list` — the ones running, and the ones a user would
 * otherwise never see: failed to launch (with why), crash loops, restart counts, last exit, log file.
 */
export function SupervisedList({
  workers,
  connectedIds,
  onOpenConnected,
}: {
  workers: SupervisedWorker[];
  /** Connected worker id by supervised name, when that worker is on the bus. */
  connectedIds: Map<string, string>;
  onOpenConnected: (workerId: string) => void;
}) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = window.setInterval(() => setNow(Date.now()), 1000);
    return () => window.clearInterval(timer);
  }, []);
  const troubled = workers.filter((w) => statusOf(w) !== 'running' && statusOf(w) !== 'stopped').length;
  return (
    <section aria-labelledby="supervised-title" className="min-w-[50rem] border-b border-line" data-testid="supervised-workers">
      <div className="flex items-center gap-2 bg-surface px-4 pt-3 pb-2">
        <h2 id="supervised-title" className="text-[13px] font-semibold text-fg">
          Launched by the engine
        </h2>
        <Badge>{workers.length}</Badge>
        {troubled ? (
          <Badge tone="bad">
            <TriangleAlert size={11} aria-hidden="true" /> {troubled} not running
          </Badge>
        ) : null}
        <span className="ml-auto truncate text-[12px] text-faint">from the workers: list of the engine’s config.yaml</span>
      </div>
      <div
        aria-hidden="true"
        className={cn(GRID, 'h-8 border-y border-line bg-surface-2 px-4 text-[11px] font-semibold tracking-wider text-faint uppercase')}
      >
        <span>Name</span>
        <span>State</span>
        <span>PID</span>
        <span>Restarts</span>
        <span>Last exit</span>
        <span>Log file</span>
      </div>
      <ul aria-label="Workers launched by the engine">
        {workers.map((w) => {
          const status = statusOf(w);
          const { label, tone } = STATUS[status];
          const connected = connectedIds.get(w.name);
          const next = status === 'running' || status === 'stopped' ? undefined : restartIn(w.nextRestartAtMs, now);
          return (
            <li
              key={w.name}
              data-testid="supervised-row"
              data-name={w.name}
              data-status={status}
              className={cn(GRID, 'min-h-12 border-b border-line px-4 py-2 text-[12.5px]', tone === 'bad' && 'bg-bad-soft/40')}
            >
              <div className="min-w-0">
                <div className="flex min-w-0 items-center gap-2">
                  <StatusDot tone={tone} pulse={status === 'restarting'} />
                  <span className="truncate font-medium text-fg">{w.name}</span>
                  {connected ? (
                    <button
                      type="button"
                      onClick={() => onOpenConnected(connected)}
                      className="cursor-pointer text-[11.5px] text-accent hover:underline"
                    >
                      connected
                    </button>
                  ) : null}
                  {w.url ? (
                    <a href={w.url} target="_blank" rel="noreferrer" className="text-faint hover:text-accent" title={w.url}>
                      <ExternalLink size={12} aria-label={`Open ${w.url}`} />
                    </a>
                  ) : null}
                </div>
                {w.error ? (
                  <div className="mt-0.5 line-clamp-2 text-[11.5px] break-words text-bad" title={w.error} data-testid="supervised-error">
                    {w.error}
                  </div>
                ) : w.command ? (
                  <div className="mt-0.5 truncate font-mono text-[11px] text-faint" title={w.command}>
                    {w.command}
                  </div>
                ) : null}
              </div>
              <div className="min-w-0">
                <Badge tone={tone}>{label}</Badge>
                {next ? <div className="mt-0.5 text-[11px] text-faint tabular-nums">{next}</div> : null}
                {status === 'crash_loop' && w.quickExits ? (
                  <div className="mt-0.5 text-[11px] text-faint">{w.quickExits} quick exits in a row</div>
                ) : null}
              </div>
              <span className="font-mono tabular-nums text-muted">{w.pid ?? '—'}</span>
              <span className={cn('tabular-nums', w.restarts ? 'text-warn' : 'text-muted')} data-testid="supervised-restarts">
                {w.restarts}
              </span>
              <span className="min-w-0 truncate text-muted" data-testid="supervised-exit">
                {w.lastExit ? `${describeExit(w.lastExit)} · ${timeAgo(w.lastExit.atMs, now)}` : '—'}
              </span>
              <span className="flex min-w-0 items-center gap-1">
                {w.logFile ? (
                  <>
                    <code className="min-w-0 truncate font-mono text-[11.5px] text-muted" title={w.logFile} data-testid="supervised-log">
                      {w.logFile}
                    </code>
                    <CopyButton text={w.logFile} label={`Copy the log path of ${w.name}`} />
                  </>
                ) : (
                  <span className="text-faint">none (never started)</span>
                )}
              </span>
              {status !== 'running' && status !== 'stopped' && w.stderrTail?.length ? (
                <StderrTail name={w.name} lines={w.stderrTail} />
              ) : null}
            </li>
          );
        })}
      </ul>
    </section>
  );
}
