import { Link } from '@tanstack/react-router';
import { Activity, ChevronRight, History, Pencil, RotateCcw } from 'lucide-react';
import { useState } from 'react';
import { type Run, type RunFilter, useFunctionRuns } from '../../api/runs.ts';
import { formatDateTime, formatDuration, formatTime, timeAgo } from '../../lib/format.ts';
import { rerunText } from '../../lib/runs.ts';
import { LoadingNote } from '../shell/loading-note.tsx';
import { StatusBadge } from '../traces/status-badge.tsx';
import { Button } from '../ui/button.tsx';
import { cn } from '../ui/cn.ts';
import { EmptyState, ErrorNote } from '../ui/empty-state.tsx';
import { JsonView } from '../ui/json-view.tsx';
import { Tabs } from '../ui/tabs.tsx';
import { RerunDialog } from './rerun-dialog.tsx';

const FILTERS: Array<{ value: RunFilter; label: string }> = [
  { value: 'all', label: 'All' },
  { value: 'ok', label: 'OK' },
  { value: 'error', label: 'Failed' },
];

/**
 * The Runs tab of a function (issue 19 §13): its recent invocations from the trace store — time,
 * duration, status, how it was called, input, output or error, a link to the trace — each with
 * Rerun (same input, or edited in a dialog) and "Edit in Invoke".
 */
export function RunHistory({ functionId, onEditInInvoke }: { functionId: string; onEditInInvoke: (text: string) => void }) {
  const [filter, setFilter] = useState<RunFilter>('all');
  const runs = useFunctionRuns(functionId, filter);
  const [open, setOpen] = useState<string | undefined>(undefined);
  const [rerun, setRerun] = useState<Run | undefined>(undefined);
  const notEnabled = (runs.error as { code?: string } | null)?.code === 'memory_exporter_not_enabled';
  const list = runs.data?.runs ?? [];
  return (
    <div className="space-y-3 px-4 py-4" data-testid="run-history">
      <div className="flex flex-wrap items-center gap-2">
        <Tabs label="Run status" items={FILTERS} value={filter} onChange={setFilter} />
        <span className="text-[12px] text-muted" data-testid="run-count">
          {runs.data ? `${list.length} recent ${list.length === 1 ? 'run' : 'runs'}${runs.data.more ? ' (the newest)' : ''}` : ''}
        </span>
      </div>
      {notEnabled ? (
        <EmptyState icon={History} title="The engine keeps no traces" compact>
          Run history comes from the trace store: set <code className="font-mono">exporter: memory</code> (or <code>both</code>) under{' '}
          <code className="font-mono">eng-observability</code>.
        </EmptyState>
      ) : runs.isError ? (
        <ErrorNote title="Could not read the runs" error={runs.error} />
      ) : runs.isPending ? (
        <LoadingNote what="runs" className="py-6 text-sm" />
      ) : list.length === 0 ? (
        <EmptyState
          icon={History}
          title={filter === 'all' ? 'No runs recorded yet' : `No ${filter === 'ok' ? 'successful' : 'failed'} run`}
          compact
        >
          Calls of <code className="font-mono">{functionId}</code> appear here as they happen (from its trigger, another function, Invoke or
          a rerun), as long as their spans are in the trace store.
        </EmptyState>
      ) : (
        <ul className="divide-y divide-line rounded-lg border border-line" aria-label={`Runs of ${functionId}`}>
          {list.map((run) => (
            <RunRow
              key={run.spanId}
              run={run}
              open={open === run.spanId}
              onToggle={() => setOpen(open === run.spanId ? undefined : run.spanId)}
              onRerun={() => setRerun(run)}
              onEdit={() => onEditInInvoke(rerunText(run.input))}
            />
          ))}
        </ul>
      )}
      <RerunDialog
        open={!!rerun}
        onClose={() => setRerun(undefined)}
        functionId={functionId}
        initialText={rerunText(rerun?.input)}
        context={
          rerun ? (
            <>
              Input of the run at {formatDateTime(rerun.startMs)} ({rerun.via}),{' '}
              <Link to="/traces" search={{ trace_id: rerun.traceId, span: rerun.spanId }} className="text-accent hover:underline">
                trace {rerun.traceId.slice(0, 12)}
              </Link>
              .
            </>
          ) : null
        }
        note={rerun ? inputNote(rerun) : undefined}
      />
    </div>
  );
}

/** Why the recorded input cannot be sent back as is. */
function inputNote(run: Run): string | undefined {
  if (!run.input) return 'This run recorded no input (its worker sends no payloads with its spans): write the input to send.';
  if (run.input.truncated) return 'The SDK cut this input when it recorded it: complete the JSON before running.';
  return undefined;
}

function RunRow({
  run,
  open,
  onToggle,
  onRerun,
  onEdit,
}: {
  run: Run;
  open: boolean;
  onToggle: () => void;
  onRerun: () => void;
  onEdit: () => void;
}) {
  return (
    <li data-testid="run-row" data-status={run.status} data-trace-id={run.traceId} className={cn(open && 'bg-surface-2/60')}>
      <div className="flex flex-wrap items-center gap-x-2.5 gap-y-1 px-3 py-2 text-[12.5px]">
        <button
          type="button"
          onClick={onToggle}
          aria-expanded={open}
          className="flex min-w-0 flex-[1_1_14rem] cursor-pointer items-center gap-2.5 text-left"
        >
          <ChevronRight size={14} className={cn('shrink-0 text-muted transition-transform', open && 'rotate-90')} />
          <StatusBadge status={run.status === 'ok' ? 'OK' : run.status === 'error' ? 'Error' : 'Pending'} />
          <span className="shrink-0 font-mono tabular-nums" title={formatDateTime(run.startMs)}>
            {formatTime(run.startMs)}
          </span>
          <span className="shrink-0 font-mono text-muted tabular-nums">{formatDuration(run.durationMs)}</span>
          <span className="min-w-0 truncate text-muted" title={`Called by: ${run.via}`}>
            {run.via}
          </span>
        </button>
        <div className="ml-auto flex shrink-0 items-center gap-1">
          <Button size="xs" icon={RotateCcw} onClick={onRerun} data-testid="run-rerun">
            Rerun
          </Button>
          <Link
            to="/traces"
            search={{ trace_id: run.traceId, span: run.spanId }}
            className="inline-flex h-6 items-center gap-1 rounded-md px-1.5 text-xs font-medium text-accent hover:bg-surface-2"
            data-testid="run-trace-link"
            title="Open this run's trace"
          >
            <Activity size={13} /> Trace
          </Link>
        </div>
      </div>
      {run.status === 'error' && run.error && !open ? (
        <p className="truncate px-3 pb-2 pl-9 font-mono text-[12px] text-bad" title={run.error}>
          {run.error}
        </p>
      ) : null}
      {open ? (
        <div className="space-y-2.5 px-3 pb-3 pl-9" data-testid="run-detail">
          <p className="text-[12px] text-muted">
            {formatDateTime(run.startMs)} · {timeAgo(run.startMs)} · {run.worker ? `worker ${run.worker}` : ''}
          </p>
          <Section title="Input">
            {run.input ? (
              <>
                <JsonView value={run.input.value ?? run.input.text} label="input" maxHeight={240} />
                {run.input.truncated ? <p className="mt-1 text-[12px] text-warn">Cut by the SDK when it was recorded.</p> : null}
              </>
            ) : (
              <p className="text-[12.5px] text-muted">Not recorded: the worker sent no payloads with its spans.</p>
            )}
          </Section>
          {run.status === 'error' ? (
            <Section title="Error">
              <pre className="max-h-48 overflow-auto rounded-lg border border-bad/30 bg-bad-soft px-3 py-2 font-mono text-[12px] whitespace-pre-wrap text-bad">
                {run.error ?? '(no message recorded)'}
              </pre>
            </Section>
          ) : run.status === 'ok' ? (
            <Section title="Output">
              {run.output ? (
                <JsonView value={run.output.value ?? run.output.text} label="output" maxHeight={240} />
              ) : (
                <p className="text-[12.5px] text-muted">Not recorded.</p>
              )}
            </Section>
          ) : null}
          <Button size="xs" variant="ghost" icon={Pencil} onClick={onEdit} data-testid="run-edit">
            Edit in Invoke
          </Button>
        </div>
      ) : null}
    </li>
  );
}

function Section({ title, children }: { title: string; children: React.ReactNode }) {
  return (
    <div>
      <p className="mb-1 text-[11px] font-semibold tracking-wider text-muted uppercase">{title}</p>
      {children}
    </div>
  );
}
