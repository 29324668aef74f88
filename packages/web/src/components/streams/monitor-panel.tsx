import { Download, Eraser, Pause, Play, Plus, X } from 'lucide-react';
import { useMemo, useState } from 'react';
import { BUFFER_CAP, type Direction, type MonitorSnapshot, streamMonitor } from '../../api/stream-monitor.ts';
import { formatBytes, formatCount, formatTime, pluralize } from '../../lib/format.ts';
import { Badge, StatusDot } from '../ui/badge.tsx';
import { Button, IconButton } from '../ui/button.tsx';
import { cn } from '../ui/cn.ts';
import { SearchInput, TextInput } from '../ui/inputs.tsx';
import { JsonView } from '../ui/json-view.tsx';
import { Tabs } from '../ui/tabs.tsx';
import { MonitorMessages } from './monitor-messages.tsx';

/** The live monitor (seed 2.5): counters, subscriptions, direction tabs, pause, clear, export and the message log. */
export function MonitorPanel({
  monitor,
  direction,
  onDirection,
  showSystem,
}: {
  monitor: MonitorSnapshot;
  direction: Direction | undefined;
  onDirection: (d: Direction | undefined) => void;
  showSystem: boolean;
}) {
  const [query, setQuery] = useState('');
  const [selected, setSelected] = useState<number | undefined>();
  const newestFirst = useMemo(() => monitor.messages.slice().reverse(), [monitor.messages]);
  const visible = useMemo(() => {
    const q = query.toLowerCase();
    return newestFirst.filter((m) => {
      if (!showSystem && m.stream && /^(eng|iii)[.:]/.test(m.stream)) return false;
      if (!q) return true;
      return `${m.stream ?? ''} ${m.group ?? ''} ${m.event} ${JSON.stringify(m.data) ?? ''}`.toLowerCase().includes(q);
    });
  }, [newestFirst, query, showSystem]);
  const byDirection = useMemo(() => {
    const counts = { inbound: 0, outbound: 0, system: 0 };
    for (const m of visible) counts[m.direction]++;
    return counts;
  }, [visible]);
  const shown = direction ? visible.filter((m) => m.direction === direction) : visible;
  const detail = selected === undefined ? undefined : monitor.messages.find((m) => m.seq === selected);

  const exportShown = () => {
    const blob = new Blob([JSON.stringify(shown, null, 2)], { type: 'application/json' });
    const a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = `eng-stream-messages-${new Date().toISOString().slice(0, 19).replace(/:/g, '-')}.json`;
    a.click();
    setTimeout(() => URL.revokeObjectURL(a.href), 5000);
  };

  return (
    <div className="flex min-h-0 flex-1 flex-col">
      <div className="grid grid-cols-4 gap-2 border-b border-line p-3" data-testid="monitor-counters">
        <Counter label="Total" value={monitor.counters.total} hint={formatBytes(monitor.counters.bytes)} testId="total" />
        <Counter label="Inbound" value={monitor.counters.inbound} tone="text-ok" testId="inbound" />
        <Counter label="Outbound" value={monitor.counters.outbound} tone="text-accent" testId="outbound" />
        <Counter
          label="Buffer"
          value={monitor.messages.length}
          hint={`of ${formatCount(BUFFER_CAP)}${monitor.held ? ` · ${monitor.held} held` : ''}`}
          testId="buffer"
        />
      </div>
      <Subscriptions monitor={monitor} />
      <div className="flex flex-wrap items-center gap-2 border-b border-line px-3 py-2">
        <Tabs
          label="Direction"
          value={direction ?? 'all'}
          onChange={(d) => onDirection(d === 'all' ? undefined : d)}
          items={[
            { value: 'all', label: 'All', count: visible.length },
            { value: 'inbound', label: 'Inbound', count: byDirection.inbound },
            { value: 'outbound', label: 'Outbound', count: byDirection.outbound },
            { value: 'system', label: 'System', count: byDirection.system },
          ]}
        />
        <SearchInput className="min-w-36 flex-1" value={query} onChange={setQuery} placeholder="Search messages…" />
        <div className="ml-auto flex items-center gap-1.5">
          <Button
            size="sm"
            variant={monitor.paused ? 'primary' : 'secondary'}
            icon={monitor.paused ? Play : Pause}
            onClick={() => streamMonitor.setPaused(!monitor.paused)}
            data-testid="monitor-pause"
          >
            {monitor.paused ? `Resume${monitor.held ? ` (${monitor.held})` : ''}` : 'Pause'}
          </Button>
          <Button size="sm" icon={Eraser} onClick={() => streamMonitor.clear()}>
            Clear
          </Button>
          <Button size="sm" icon={Download} disabled={!shown.length} onClick={exportShown}>
            Export
          </Button>
        </div>
      </div>
      <div className="flex min-h-0 flex-1 flex-col">
        <MonitorMessages
          messages={shown}
          selected={selected}
          onSelect={(seq) => setSelected(seq === selected ? undefined : seq)}
          emptyHint={
            monitor.subscriptions.length
              ? 'Waiting for events on the subscribed streams. Changes made by any worker show up here.'
              : 'Subscribe to a stream group on the left (or type one above) to watch its events live.'
          }
        />
        {detail ? (
          <aside className="flex max-h-[45%] shrink-0 flex-col border-t border-line bg-surface" aria-label="Message detail">
            <div className="flex items-center gap-2 border-b border-line px-3 py-1.5 text-[12px]">
              <Badge tone={detail.direction === 'inbound' ? 'ok' : detail.direction === 'outbound' ? 'accent' : 'warn'}>
                {detail.direction}
              </Badge>
              <Badge>{detail.event}</Badge>
              <span className="min-w-0 flex-1 truncate font-mono text-fg">
                {detail.stream ? `${detail.stream} / ${detail.group}${detail.itemId ? ` / ${detail.itemId}` : ''}` : ''}
              </span>
              <span className="text-faint tabular-nums">
                {formatTime(detail.at, true)} · {formatBytes(detail.bytes)}
              </span>
              <IconButton icon={X} label="Close detail" onClick={() => setSelected(undefined)} />
            </div>
            <div className="min-h-0 flex-1 overflow-y-auto p-3">
              <JsonView value={detail.data} maxHeight={10_000} label="message data" />
            </div>
          </aside>
        ) : null}
      </div>
    </div>
  );
}

function Counter({ label, value, tone, hint, testId }: { label: string; value: number; tone?: string; hint?: string; testId: string }) {
  return (
    <div className="min-w-0 rounded-lg border border-line bg-surface px-3 py-2 max-sm:px-2">
      <div className="truncate text-[11.5px] text-muted">{label}</div>
      <div className="mt-0.5 flex items-baseline gap-1.5">
        <span
          className={cn('text-lg font-semibold tabular-nums', value ? (tone ?? 'text-fg') : 'text-faint')}
          data-testid={`counter-${testId}`}
          data-value={value}
        >
          {formatCount(value)}
        </span>
        {hint ? <span className="truncate text-[11px] text-faint max-sm:hidden">{hint}</span> : null}
      </div>
    </div>
  );
}

function Subscriptions({ monitor }: { monitor: MonitorSnapshot }) {
  const [stream, setStream] = useState('');
  const [group, setGroup] = useState('');
  const add = () => {
    if (!stream.trim() || !group.trim()) return;
    streamMonitor.subscribe(stream.trim(), group.trim());
    setStream('');
    setGroup('');
  };
  return (
    <div className="flex flex-wrap items-center gap-1.5 border-b border-line px-3 py-2" data-testid="subscriptions">
      <span className="mr-1 inline-flex items-center gap-1.5 text-[12px] text-muted" title={monitor.transportNote}>
        <StatusDot tone={monitor.transport === 'probing' ? 'warn' : 'ok'} pulse={monitor.transport === 'probing'} />
        <span data-testid="monitor-transport" data-transport={monitor.transport}>
          {monitor.transport === 'socket' ? 'WebSocket' : monitor.transport === 'triggers' ? 'Stream triggers' : 'Connecting'}
        </span>
      </span>
      <span className="mr-1 text-[12px] text-faint" data-testid="subscription-count" data-value={monitor.subscriptions.length}>
        {monitor.subscriptions.length === 0 ? 'No subscriptions' : `${pluralize(monitor.subscriptions.length, 'subscription')}:`}
      </span>
      {monitor.subscriptions.map((s) => (
        <span
          key={s.key}
          className={cn(
            'inline-flex h-6 items-center gap-1 rounded-md border pr-0.5 pl-2 font-mono text-[11.5px]',
            s.status === 'refused' ? 'border-bad/40 bg-bad-soft text-bad' : 'border-accent/30 bg-accent-soft text-accent',
          )}
          title={s.status === 'refused' ? 'the engine refused this subscription (unauthorized)' : `subscription ${s.subscriptionId}`}
          data-testid="subscription-chip"
        >
          {s.stream} / {s.group}
          <button
            type="button"
            aria-label={`Unsubscribe from ${s.stream} / ${s.group}`}
            onClick={() => streamMonitor.unsubscribe(s.key)}
            className="cursor-pointer rounded p-0.5 hover:bg-accent/15"
          >
            <X size={11} />
          </button>
        </span>
      ))}
      <form
        className="ml-auto flex items-center gap-1"
        onSubmit={(e) => {
          e.preventDefault();
          add();
        }}
      >
        <TextInput
          value={stream}
          onChange={(e) => setStream(e.target.value)}
          placeholder="stream"
          aria-label="Stream name"
          className="h-7! w-28 font-mono text-[12px]"
        />
        <TextInput
          value={group}
          onChange={(e) => setGroup(e.target.value)}
          placeholder="group"
          aria-label="Group id"
          className="h-7! w-24 font-mono text-[12px]"
        />
        <Button size="sm" type="submit" icon={Plus} disabled={!stream.trim() || !group.trim()}>
          Subscribe
        </Button>
      </form>
    </div>
  );
}
