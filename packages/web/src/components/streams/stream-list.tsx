import { BellOff, BellRing, Radio } from 'lucide-react';
import { isSystemStream, type StreamInfo } from '../../api/streams.ts';
import { pluralize } from '../../lib/format.ts';
import { LoadingNote } from '../shell/loading-note.tsx';
import { Badge } from '../ui/badge.tsx';
import { Button } from '../ui/button.tsx';
import { cn } from '../ui/cn.ts';
import { EmptyState, ErrorNote } from '../ui/empty-state.tsx';

export interface StreamRow {
  stream: string;
  group: string;
  system: boolean;
}

/** One row per stream group (seed 2.5 columns: name, group, type), each with its own Subscribe. */
export function streamRows(streams: StreamInfo[] | undefined, showSystem: boolean): StreamRow[] {
  const rows: StreamRow[] = [];
  for (const s of streams ?? []) {
    const system = isSystemStream(s.id);
    if (system && !showSystem) continue;
    for (const group of s.groups) rows.push({ stream: s.id, group, system });
  }
  return rows;
}

export function StreamList({
  rows,
  hiddenSystem,
  loading,
  error,
  selected,
  isSubscribed,
  onSelect,
  onToggleSubscription,
}: {
  rows: StreamRow[];
  hiddenSystem: number;
  loading: boolean;
  error: unknown;
  selected: { stream?: string; group?: string };
  isSubscribed: (stream: string, group: string) => boolean;
  onSelect: (row: StreamRow) => void;
  onToggleSubscription: (row: StreamRow) => void;
}) {
  if ((error as { code?: string } | null)?.code === 'function_not_found') {
    return (
      <EmptyState icon={Radio} title="No stream module" compact>
        This engine runs without streams. Add <code className="text-fg">eng-stream</code> to its config.yaml.
      </EmptyState>
    );
  }
  if (error) return <ErrorNote title="Could not list the streams" error={error} className="m-4" />;
  if (loading) {
    return <LoadingNote what="streams" className="justify-start" />;
  }
  if (rows.length === 0) {
    return (
      <EmptyState icon={Radio} title="No streams yet" compact>
        Streams appear once a worker stores an item with <code className="text-fg">stream::set</code>. They come from the{' '}
        <code className="text-fg">eng-stream</code> module, which must be in the engine config.
        {hiddenSystem ? ` ${pluralize(hiddenSystem, 'system stream')} ${hiddenSystem === 1 ? 'is' : 'are'} hidden.` : ''}
      </EmptyState>
    );
  }
  return (
    <div>
      <div className="grid grid-cols-[minmax(0,1.3fr)_minmax(0,1fr)_64px_104px] items-center gap-2 border-b border-line bg-surface-2/60 px-3 py-1.5 text-[10.5px] font-semibold tracking-wider text-faint uppercase">
        <span>Name</span>
        <span>Group</span>
        <span>Type</span>
        <span />
      </div>
      <ul>
        {rows.map((row) => {
          const active = row.stream === selected.stream && row.group === selected.group;
          const on = isSubscribed(row.stream, row.group);
          return (
            <li
              key={`${row.stream}\u0000${row.group}`}
              className={cn(
                'grid grid-cols-[minmax(0,1.3fr)_minmax(0,1fr)_64px_104px] items-center gap-2 border-b border-line/60 px-3 text-[12.5px]',
                active ? 'bg-accent-soft' : 'hover:bg-surface-2',
              )}
              data-testid="stream-row"
              data-stream={row.stream}
              data-group={row.group}
            >
              {/* the whole row but its Subscribe button selects it, the type badge included */}
              <button
                type="button"
                onClick={() => onSelect(row)}
                className="col-span-3 grid min-w-0 cursor-pointer grid-cols-subgrid items-center gap-2 py-2 text-left"
                aria-current={active ? 'true' : undefined}
              >
                <span className={cn('truncate font-mono', active ? 'font-semibold text-accent' : 'text-fg')} title={row.stream}>
                  {row.stream}
                </span>
                <span className="truncate font-mono text-muted" title={row.group}>
                  {row.group}
                </span>
                <span>
                  <Badge tone={row.system ? 'neutral' : 'accent'}>{row.system ? 'system' : 'user'}</Badge>
                </span>
              </button>
              <Button
                size="xs"
                variant={on ? 'subtle' : 'secondary'}
                icon={on ? BellOff : BellRing}
                onClick={() => onToggleSubscription(row)}
                aria-pressed={on}
                data-testid="stream-subscribe"
              >
                {on ? 'Unsubscribe' : 'Subscribe'}
              </Button>
            </li>
          );
        })}
      </ul>
    </div>
  );
}
