import { getRouteApi, Link, useNavigate } from '@tanstack/react-router';
import { Cpu, RefreshCw } from 'lucide-react';
import { useEffect, useMemo, useState } from 'react';
import { useSupervisedWorkers } from '../../api/supervisor.ts';
import { isProcessWorker, useWorkers, type WorkerRecord } from '../../api/workers.ts';
import { formatBytes, formatDuration, timeAgo } from '../../lib/format.ts';
import { useKeydown } from '../../lib/keyboard.ts';
import { LoadingNote } from '../shell/loading-note.tsx';
import { Badge, StatusDot } from '../ui/badge.tsx';
import { Button } from '../ui/button.tsx';
import { DefinitionList } from '../ui/card.tsx';
import { cn } from '../ui/cn.ts';
import { CopyButton } from '../ui/copy-button.tsx';
import { DetailPanel, PanelSection } from '../ui/detail-panel.tsx';
import { EmptyState, ErrorNote } from '../ui/empty-state.tsx';
import { SearchInput, Toggle } from '../ui/inputs.tsx';
import { PageHeader } from '../ui/page-header.tsx';
import { SupervisedList } from './supervised-list.tsx';

const route = getRouteApi('/workers');
const GRID = 'grid grid-cols-[minmax(0,1.6fr)_110px_minmax(0,1fr)_80px_90px_110px] items-center gap-3';

function statusTone(w: WorkerRecord) {
  return w.status === 'busy' ? 'warn' : w.status === 'disconnected' ? 'bad' : 'ok';
}

/** Workers: the processes connected to the engine (and, on request, its built-in modules). */
export function WorkersPage() {
  const search = route.useSearch();
  const navigate = useNavigate({ from: '/workers' });
  const workers = useWorkers();
  const supervised = useSupervisedWorkers();
  const setSearch = (patch: Partial<typeof search>) => void navigate({ search: (prev) => ({ ...prev, ...patch }), replace: true });
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = window.setInterval(() => setNow(Date.now()), 5000);
    return () => window.clearInterval(t);
  }, []);
  useKeydown((e) => {
    if (e.key === 'Escape' && search.worker && !e.defaultPrevented) setSearch({ worker: undefined });
  });
  const q = (search.q ?? '').toLowerCase();
  const showModules = search.internal ?? false;
  const list = useMemo(
    () =>
      (workers.data ?? [])
        .filter((w) => showModules || isProcessWorker(w))
        .filter((w) => !q || `${w.name} ${w.id} ${w.runtime ?? ''} ${w.ip_address ?? ''}`.toLowerCase().includes(q))
        .sort((a, b) => Number(isProcessWorker(b)) - Number(isProcessWorker(a)) || a.name.localeCompare(b.name)),
    [workers.data, showModules, q],
  );
  const selected = workers.data?.find((w) => w.id === search.worker);
  const processes = (workers.data ?? []).filter(isProcessWorker).length;
  const connectedIds = useMemo(
    () => new Map((workers.data ?? []).filter(isProcessWorker).map((w) => [w.name, w.id] as const)),
    [workers.data],
  );
  const launched = supervised.data ?? [];

  return (
    <div className="flex h-full flex-col">
      <PageHeader
        title="Workers"
        badge={workers.data ? <Badge>{processes}</Badge> : null}
        description="Worker processes connected to the engine, and the ones the engine launches. Functions disappear when their worker disconnects."
        actions={
          <Button size="sm" icon={RefreshCw} loading={workers.isFetching} onClick={() => void workers.refetch()}>
            Refresh
          </Button>
        }
      >
        <SearchInput
          value={search.q ?? ''}
          onChange={(v) => setSearch({ q: v || undefined })}
          placeholder="Search by name, id, runtime or IP"
          className="w-full max-w-xs"
        />
        <Toggle checked={showModules} onChange={(v) => setSearch({ internal: v || undefined })} label="Engine modules" />
      </PageHeader>
      <div className="flex min-h-0 flex-1">
        <div className="flex min-w-0 flex-1 flex-col overflow-auto">
          {launched.length ? (
            <SupervisedList workers={launched} connectedIds={connectedIds} onOpenConnected={(id) => setSearch({ worker: id })} />
          ) : null}
          {launched.length ? (
            <h2 className="bg-surface px-4 pt-3 pb-2 text-[13px] font-semibold text-fg">Connected to the engine</h2>
          ) : null}
          {workers.isPending ? (
            <LoadingNote what="workers" className="flex-1" />
          ) : workers.isError ? (
            <div className="p-6">
              <ErrorNote title="Could not list workers" error={workers.error} />
            </div>
          ) : list.length === 0 ? (
            <EmptyState icon={Cpu} title={q ? 'No worker matches' : 'No worker process is connected'}>
              {q
                ? 'Try another search.'
                : 'Start a worker with @eng/sdk or iii-sdk (connect to the engine’s bus, port 49134 by default). npm start runs the orders demo worker.'}
            </EmptyState>
          ) : (
            <div className="min-w-[44rem]">
              <div
                aria-hidden="true"
                className={cn(
                  GRID,
                  'sticky top-0 h-9 border-b border-line bg-surface-2 px-4 text-[11px] font-semibold tracking-wider text-faint uppercase',
                )}
              >
                <span>Name</span>
                <span>Runtime</span>
                <span>Address</span>
                <span>Functions</span>
                <span>In flight</span>
                <span>Connected</span>
              </div>
              <ul aria-label="Workers">
                {list.map((w) => (
                  <li key={w.id}>
                    <button
                      type="button"
                      aria-current={w.id === search.worker ? 'true' : undefined}
                      onClick={() => setSearch({ worker: w.id })}
                      className={cn(
                        GRID,
                        'h-12 w-full cursor-pointer border-b border-line px-4 text-left text-[12.5px] outline-none focus-visible:bg-surface-2',
                        w.id === search.worker ? 'bg-accent-soft/70' : 'hover:bg-surface-2/70',
                      )}
                    >
                      <div className="flex min-w-0 items-center gap-2">
                        <StatusDot tone={statusTone(w)} />
                        <div className="min-w-0">
                          <div className="truncate font-medium text-fg">{w.name}</div>
                          <div className="truncate font-mono text-[11px] text-faint">{w.id.slice(0, 8)}</div>
                        </div>
                      </div>
                      <div>
                        <Badge tone={w.runtime === 'engine' ? 'neutral' : 'info'}>
                          {w.runtime ?? '?'} {w.version ?? ''}
                        </Badge>
                      </div>
                      <div className="truncate font-mono text-[12px] text-muted">
                        {w.runtime === 'engine' ? 'in-process' : `${w.ip_address ?? '—'}${w.pid ? ` · pid ${w.pid}` : ''}`}
                      </div>
                      <div className="tabular-nums">{w.function_count}</div>
                      <div className="tabular-nums">{w.active_invocations}</div>
                      <div className="text-muted">{timeAgo(w.connected_at_ms, now)}</div>
                    </button>
                  </li>
                ))}
              </ul>
            </div>
          )}
        </div>
        {selected ? <WorkerDetail worker={selected} onClose={() => setSearch({ worker: undefined })} /> : null}
      </div>
    </div>
  );
}

function WorkerDetail({ worker: w, onClose }: { worker: WorkerRecord; onClose: () => void }) {
  const m = w.latest_metrics;
  return (
    <DetailPanel
      onClose={onClose}
      title={
        <>
          <StatusDot tone={statusTone(w)} />
          <h2 className="truncate text-[14px] font-semibold">{w.name}</h2>
          <CopyButton text={w.id} label="Copy worker id" />
        </>
      }
      subtitle={w.description ?? undefined}
    >
      <PanelSection title="Info">
        <DefinitionList
          items={[
            [
              'Id',
              <span key="id" className="font-mono text-[12px]">
                {w.id}
              </span>,
            ],
            ['Status', w.status],
            ['Runtime', `${w.runtime ?? '?'} ${w.version ?? ''}`],
            ['OS', w.os ?? '—'],
            ['Address', w.ip_address ?? '—'],
            ['PID', w.pid ?? '—'],
            ['Isolation', w.isolation ?? 'none'],
            ['Connected', new Date(w.connected_at_ms).toLocaleString()],
          ]}
        />
      </PanelSection>
      {m ? (
        <PanelSection title="Metrics">
          <DefinitionList
            items={[
              [
                'Heap',
                m.memory_heap_used !== undefined ? `${formatBytes(m.memory_heap_used)} of ${formatBytes(m.memory_heap_total ?? 0)}` : '—',
              ],
              ['RSS', m.memory_rss !== undefined ? formatBytes(m.memory_rss) : '—'],
              ['CPU', m.cpu_percent !== undefined ? `${m.cpu_percent.toFixed(1)} %` : '—'],
              ['Event-loop lag', m.event_loop_lag_ms !== undefined ? formatDuration(m.event_loop_lag_ms) : '—'],
              ['Uptime', m.uptime_seconds !== undefined ? formatDuration(m.uptime_seconds * 1000) : '—'],
            ]}
          />
        </PanelSection>
      ) : null}
      <PanelSection title={`Functions (${w.functions.length || w.function_count})`}>
        {w.functions.length ? (
          <ul className="divide-y divide-line rounded-lg border border-line">
            {w.functions.map((id) => (
              <li key={id}>
                <Link
                  to="/functions"
                  search={{ fn: id, system: w.runtime === 'engine' ? true : undefined }}
                  className="block truncate px-3 py-1.5 font-mono text-[12.5px] hover:bg-surface-2 hover:text-accent"
                >
                  {id}
                </Link>
              </li>
            ))}
          </ul>
        ) : (
          <p className="text-[13px] text-muted">This worker registers no functions (it may only call them).</p>
        )}
      </PanelSection>
    </DetailPanel>
  );
}
