import { useVirtualizer } from '@tanstack/react-virtual';
import { ArrowDownLeft, ArrowUpRight, Info, Radio } from 'lucide-react';
import { useRef } from 'react';
import type { MonitorMessage } from '../../api/stream-monitor.ts';
import { formatBytes, formatTime } from '../../lib/format.ts';
import { Badge, type Tone } from '../ui/badge.tsx';
import { cn } from '../ui/cn.ts';
import { EmptyState } from '../ui/empty-state.tsx';

const ROW = 30;
// phones: time, direction, stream and event (the data opens in the detail)
const COLUMNS = 'grid-cols-[84px_16px_minmax(0,1fr)_84px] md:grid-cols-[92px_28px_minmax(0,1fr)_92px_minmax(0,1.4fr)_60px]';

const EVENT_TONE: Record<string, Tone> = {
  create: 'ok',
  update: 'info',
  delete: 'bad',
  sync: 'violet',
  unauthorized: 'bad',
  join: 'accent',
  leave: 'accent',
  bind: 'accent',
  unbind: 'accent',
};

export function preview(value: unknown, max = 160): string {
  let text: string;
  try {
    text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
  } catch {
    text = String(value);
  }
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** The monitor's message log, newest first and virtualised (the buffer holds up to 5,000 lines). */
export function MonitorMessages({
  messages,
  selected,
  onSelect,
  emptyHint,
}: {
  messages: MonitorMessage[];
  selected: number | undefined;
  onSelect: (seq: number) => void;
  emptyHint: string;
}) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: messages.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW,
    overscan: 16,
    getItemKey: (i) => messages[i]?.seq ?? i,
  });
  return (
    <div className="flex min-h-0 flex-1 flex-col">
      <div
        className={cn(
          'grid items-center gap-2 border-b border-line bg-surface-2/60 px-3 py-1.5 text-[10.5px] font-semibold tracking-wider text-faint uppercase',
          COLUMNS,
        )}
      >
        <span>Time</span>
        <span />
        <span>Stream / group</span>
        <span>Event</span>
        <span className="max-md:hidden">Data</span>
        <span className="text-right max-md:hidden">Size</span>
      </div>
      <div ref={scrollRef} className="min-h-0 flex-1 overflow-y-auto" data-testid="monitor-scroll">
        {messages.length === 0 ? (
          <EmptyState icon={Radio} title="No messages" compact>
            {emptyHint}
          </EmptyState>
        ) : null}
        <div className="relative w-full" style={{ height: virtualizer.getTotalSize() }}>
          {virtualizer.getVirtualItems().map((v) => {
            const m = messages[v.index];
            if (!m) return null;
            const active = m.seq === selected;
            return (
              <button
                key={v.key}
                type="button"
                onClick={() => onSelect(m.seq)}
                data-testid="monitor-message"
                data-direction={m.direction}
                data-event={m.event}
                data-stream={m.stream ?? ''}
                className={cn(
                  'absolute top-0 left-0 grid w-full cursor-pointer items-center gap-2 border-b border-line/50 px-3 text-left text-[12px]',
                  COLUMNS,
                  active ? 'bg-accent-soft' : 'hover:bg-surface-2',
                )}
                style={{ transform: `translateY(${v.start}px)`, height: ROW }}
              >
                <span className="font-mono text-[11px] text-muted tabular-nums">{formatTime(m.at, true)}</span>
                <DirectionIcon direction={m.direction} />
                <span className="truncate font-mono text-[11.5px] text-fg">
                  {m.stream ? (
                    <>
                      {m.stream}
                      <span className="text-faint"> / {m.group}</span>
                      {m.itemId ? <span className="text-faint"> / {m.itemId}</span> : null}
                    </>
                  ) : (
                    <span className="text-faint">—</span>
                  )}
                </span>
                <span>
                  <Badge tone={EVENT_TONE[m.event] ?? (m.direction === 'system' ? 'warn' : 'neutral')}>{m.event}</Badge>
                </span>
                <span className="truncate font-mono text-[11.5px] text-muted max-md:hidden">{preview(m.data)}</span>
                <span className="text-right text-[11px] text-faint tabular-nums max-md:hidden">{formatBytes(m.bytes)}</span>
              </button>
            );
          })}
        </div>
      </div>
    </div>
  );
}

function DirectionIcon({ direction }: { direction: MonitorMessage['direction'] }) {
  if (direction === 'inbound') return <ArrowDownLeft size={14} className="text-ok" aria-label="inbound" />;
  if (direction === 'outbound') return <ArrowUpRight size={14} className="text-accent" aria-label="outbound" />;
  return <Info size={14} className="text-warn" aria-label="system" />;
}
