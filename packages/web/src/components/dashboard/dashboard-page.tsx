import { Link } from '@tanstack/react-router';
import { CloudOff, Cpu, type LucideIcon, Radio, SquareFunction, Workflow, Zap } from 'lucide-react';
import { lazy, type ReactNode, Suspense, useEffect, useMemo, useRef, useState } from 'react';
import { isSystemFunction } from '../../api/functions.ts';
import { useEngineHealth } from '../../api/health.ts';
import { useEngineMetrics } from '../../api/metrics.ts';
import { useEngineDown } from '../../api/outage.ts';
import { useLastUpdate } from '../../api/query-client.ts';
import { isSystemTrigger } from '../../api/triggers.ts';
import { formatCount, formatTime, pluralize } from '../../lib/format.ts';
import { LoadingNote } from '../shell/loading-note.tsx';
import { Card, CardHeader } from '../ui/card.tsx';
import { cn } from '../ui/cn.ts';
import { EmptyState } from '../ui/empty-state.tsx';
import { PageHeader } from '../ui/page-header.tsx';
import { Spinner } from '../ui/spinner.tsx';
import { ActivityCharts } from './activity-charts.tsx';
import { countsOf, useDashboardSnapshot } from './dashboard-snapshot.ts';

const AppFlow = lazy(() => import('./app-flow.tsx'));

/** Dashboard (seed 2.1): live counters linking to their pages, activity charts, application flow. */
export function DashboardPage() {
  // one read for every card and the flow: they always describe the same moment (dashboard-snapshot.ts)
  const snapshot = useDashboardSnapshot();
  const lastUpdate = useLastUpdate();
  // a query paused by an outage is "pending" with nothing to show: no spinner that never ends
  const down = useEngineDown();
  const data = snapshot.data;
  const counts = useMemo(() => (data ? countsOf(data) : undefined), [data]);
  const userFunctions = useMemo(() => (data?.functions ?? []).filter((f) => !isSystemFunction(f)), [data]);
  const userFunctionIds = useMemo(() => new Set(userFunctions.map((f) => f.function_id)), [userFunctions]);
  const userTriggers = useMemo(() => (data?.triggers ?? []).filter((t) => !isSystemTrigger(t)), [data]);
  const loading = snapshot.isPending && !down;
  // the last read failed while the engine still answers: the cards keep the previous set and say so
  const stale = !!data && (down || snapshot.isError);

  return (
    <div className="pb-8">
      <PageHeader
        title="Dashboard"
        description="What runs on the engine right now. Counters update live as workers connect and leave."
        actions={
          <span className="text-[12px] text-muted tabular-nums" data-testid="dashboard-updated">
            {lastUpdate ? `Last update ${formatTime(lastUpdate)}` : 'Waiting for data…'}
          </span>
        }
      />
      <div className="space-y-4 p-4 md:p-6">
        <div
          className="grid grid-cols-2 gap-3 xl:grid-cols-4"
          data-testid="dashboard-counters"
          data-snapshot-at={data?.at ?? ''}
          data-stale={stale ? 'true' : 'false'}
        >
          <Counter
            testId="functions"
            label="Functions"
            icon={SquareFunction}
            to="/functions"
            value={counts?.functions}
            sub={counts ? pluralize(counts.systemFunctions, 'system function') : undefined}
            loading={loading}
          />
          <Counter
            testId="triggers"
            label="Triggers"
            icon={Zap}
            to="/triggers"
            value={counts?.triggers}
            sub={counts ? <TriggerKinds kinds={counts.triggerKinds} /> : undefined}
            loading={loading}
          />
          <Counter
            testId="workers"
            label="Workers"
            icon={Cpu}
            to="/workers"
            value={counts?.workers}
            sub={counts ? pluralize(counts.engineModules, 'engine module') : undefined}
            loading={loading}
          />
          <Counter
            testId="streams"
            label="Streams"
            icon={Radio}
            to="/streams"
            value={counts?.streams ?? undefined}
            sub={counts ? (counts.streams === null ? 'streams module not loaded' : pluralize(counts.streamGroups, 'group')) : undefined}
            loading={loading}
          />
        </div>
        {stale && !down ? (
          <p className="flex items-center gap-1.5 text-[12px] text-warn" role="status" data-testid="dashboard-stale">
            <CloudOff size={13} aria-hidden="true" />
            Counts as of {formatTime(data.at)}: the last read failed, retrying.
          </p>
        ) : null}
        <div className="grid grid-cols-1 gap-4 lg:grid-cols-2">
          <ActivityCharts />
        </div>
        <Card>
          <CardHeader
            title={
              <span className="inline-flex items-center gap-1.5">
                <Workflow size={14} className="text-accent" /> Application flow
              </span>
            }
            description="Where work comes from and which function it reaches. Click a node to open it."
          />
          {data ? (
            userFunctions.length === 0 ? (
              <EmptyState icon={Workflow} title="Nothing to draw yet" compact>
                Register functions and triggers from a worker (the orders demo starts with <code className="font-mono">npm start</code>) and
                the flow appears here.
              </EmptyState>
            ) : (
              <Suspense fallback={<FlowLoading />}>
                <AppFlow functions={userFunctions} triggers={userTriggers} />
              </Suspense>
            )
          ) : (
            <FlowLoading />
          )}
        </Card>
        <div className="grid grid-cols-1 gap-4 lg:grid-cols-2">
          <TopFunctions userFunctions={userFunctionIds} />
          <EngineSummary />
        </div>
      </div>
    </div>
  );
}

/** The Triggers card's breakdown by kind: each "3 HTTP" whole, wrapping to a second line rather than cut. */
function TriggerKinds({ kinds }: { kinds: Array<[string, number]> }) {
  if (kinds.length === 0) return <>none bound yet</>;
  return (
    <span className="flex flex-wrap gap-x-2.5 gap-y-0.5" data-testid="trigger-kinds">
      {kinds.map(([kind, n]) => (
        <span key={kind} className="whitespace-nowrap" data-testid="trigger-kind">
          <span className="font-medium text-fg tabular-nums">{n}</span> {kind}
        </span>
      ))}
    </span>
  );
}

/** The engine answered that no module serves the function (not an outage, not a failure of the call). */
function isMissingModule(error: unknown): boolean {
  return (error as { code?: string } | null)?.code === 'function_not_found';
}

function FlowLoading() {
  // no spinner that turns forever while the engine is out of reach
  if (useEngineDown()) return <LoadingNote what="the application flow" className="h-[260px]" />;
  return (
    <div className="flex h-[260px] items-center justify-center gap-2 text-[13px] text-muted">
      <Spinner /> Drawing the flow…
    </div>
  );
}

/** Briefly highlights a value when it changes (a live counter should look live). */
function useFlash(value: unknown): boolean {
  const [flash, setFlash] = useState(false);
  const first = useRef(true);
  useEffect(() => {
    if (value === undefined) return;
    if (first.current) {
      first.current = false;
      return;
    }
    setFlash(true);
    const t = window.setTimeout(() => setFlash(false), 1200);
    return () => window.clearTimeout(t);
  }, [value]);
  return flash;
}

function Counter({
  label,
  icon: Icon,
  to,
  value,
  sub,
  testId,
  loading,
}: {
  label: string;
  icon: LucideIcon;
  to: '/functions' | '/triggers' | '/workers' | '/streams';
  value: number | undefined;
  sub?: ReactNode;
  testId: string;
  loading?: boolean;
}) {
  const flash = useFlash(value);
  return (
    <Link
      to={to}
      data-testid={`counter-${testId}`}
      className={cn(
        'group rounded-xl border border-line bg-surface p-4 shadow-card transition-colors hover:border-accent/50',
        flash && 'animate-flash',
      )}
    >
      <div className="flex items-center justify-between text-[13px] text-muted">
        <span className="inline-flex items-center gap-2 font-medium">
          <span className="flex size-7 items-center justify-center rounded-lg bg-accent-soft text-accent">
            <Icon size={15} />
          </span>
          {label}
        </span>
        <span className="text-[11.5px] text-faint opacity-0 transition-opacity group-hover:opacity-100">Open →</span>
      </div>
      <div className="mt-3 text-[32px] leading-none font-semibold tracking-tight text-fg tabular-nums" data-value={value ?? ''}>
        {value ?? (loading ? <Spinner size={18} className="text-faint" /> : '—')}
      </div>
      <div className={cn('mt-2 text-[12px] text-muted', typeof sub === 'string' && 'truncate')} data-testid="counter-sub">
        {sub ?? '\u00a0'}
      </div>
    </Link>
  );
}

function TopFunctions({ userFunctions }: { userFunctions: Set<string> }) {
  const metrics = useEngineMetrics(10);
  const top = useMemo(
    () =>
      Object.entries(metrics.data?.engine_metrics.invocations.by_function ?? {})
        // the engine's own functions (state::set, …) would crowd out the application's
        .filter(([id]) => userFunctions.has(id))
        .sort((a, b) => b[1] - a[1])
        .slice(0, 6),
    [metrics.data, userFunctions],
  );
  const max = top[0]?.[1] ?? 1;
  return (
    <Card>
      <CardHeader title="Busiest functions" description="Invocations since the engine started" />
      {!metrics.data && !metrics.isError ? (
        <LoadingNote what="invocation counts" />
      ) : top.length === 0 ? (
        <EmptyState title="No invocations yet" compact>
          Invoke a function from the Functions page, or call one of its HTTP routes, and it shows up here.
        </EmptyState>
      ) : (
        <ul className="space-y-2 px-4 py-3">
          {top.map(([id, n]) => (
            <li key={id}>
              <Link to="/functions" search={{ fn: id }} className="group block">
                <div className="flex items-center justify-between text-[12.5px]">
                  <span className="truncate font-mono text-fg group-hover:text-accent">{id}</span>
                  <span className="text-muted tabular-nums">{formatCount(n)}</span>
                </div>
                <div className="mt-1 h-1.5 overflow-hidden rounded-full bg-surface-3">
                  <div className="h-full rounded-full bg-accent/70" style={{ width: `${Math.max(2, (n / max) * 100)}%` }} />
                </div>
              </Link>
            </li>
          ))}
        </ul>
      )}
    </Card>
  );
}

function EngineSummary() {
  const health = useEngineHealth(30_000);
  const metrics = useEngineMetrics(10);
  const m = metrics.data?.engine_metrics;
  const rows: Array<[string, string]> = [
    ['Engine version', health.data?.version ?? '—'],
    ['Invocations', m ? `${formatCount(m.invocations.total)} (${formatCount(m.invocations.error)} failed)` : '—'],
    [
      'Latency p50 / p95 / p99',
      m ? `${m.performance.p50_duration_ms} / ${m.performance.p95_duration_ms} / ${m.performance.p99_duration_ms} ms` : '—',
    ],
    ['Workers connected / lost', m ? `${m.workers.spawns} / ${m.workers.deaths}` : '—'],
    [
      'Telemetry',
      health.data
        ? Object.entries(health.data.components)
            .map(([k, c]) => `${k} ${c.status}`)
            .join(' · ')
        : isMissingModule(health.error)
          ? 'observability module not loaded'
          : '—',
    ],
  ];
  return (
    <Card>
      <CardHeader
        title="Engine"
        description="Health and performance"
        actions={
          <Link to="/config" className="text-[12px] font-medium text-accent hover:underline">
            Config →
          </Link>
        }
      />
      <dl className="divide-y divide-line px-4 text-[12.5px]">
        {rows.map(([k, v]) => (
          <div key={k} className="flex items-center justify-between gap-4 py-2">
            <dt className="text-muted">{k}</dt>
            <dd className="truncate text-right text-fg tabular-nums">{v}</dd>
          </div>
        ))}
      </dl>
    </Card>
  );
}
