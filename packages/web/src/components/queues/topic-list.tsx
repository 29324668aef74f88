import { Inbox } from 'lucide-react';
import { consumersOf, type QueueTopic, type TopicStats } from '../../api/queues.ts';
import { formatCount } from '../../lib/format.ts';
import { LoadingNote } from '../shell/loading-note.tsx';
import { Badge } from '../ui/badge.tsx';
import { cn } from '../ui/cn.ts';
import { EmptyState, ErrorNote } from '../ui/empty-state.tsx';

export const KIND_LABEL = { function_queue: 'queue', topic: 'topic' } as const;

/** Queues and topics with depth, in flight, consumers, delivered / failed and dead letters. */
export function TopicList({
  topics,
  stats,
  loading,
  error,
  selected,
  selectedDeadLetters,
  onSelect,
}: {
  topics: QueueTopic[] | undefined;
  stats: Map<string, TopicStats>;
  loading: boolean;
  error: unknown;
  selected: string | undefined;
  /** The selected name's dead-letter total as its Dead letters tab shows it. */
  selectedDeadLetters?: number;
  onSelect: (name: string, deadLetters?: boolean) => void;
}) {
  if ((error as { code?: string } | null)?.code === 'function_not_found') {
    return (
      <EmptyState icon={Inbox} title="No queue module" compact>
        This engine runs without durable queues. Add <code className="text-fg">eng-queue</code> to its config.yaml.
      </EmptyState>
    );
  }
  if (error) return <ErrorNote title="Could not list the queues" error={error} className="m-4" />;
  if (loading) {
    return <LoadingNote what="queues" className="justify-start" />;
  }
  if (!topics?.length) {
    return (
      <EmptyState icon={Inbox} title="No queues yet" compact>
        Queues appear when a worker enqueues (<code className="text-fg">TriggerAction.Enqueue</code>) or binds a{' '}
        <code className="text-fg">durable:subscriber</code> trigger. This needs the <code className="text-fg">eng-queue</code> module.
      </EmptyState>
    );
  }
  return (
    <div className="min-w-0">
      <div className="grid grid-cols-[minmax(0,1fr)_repeat(5,46px)_52px] items-center gap-1 border-b border-line bg-surface-2/60 px-3 py-1.5 text-[10.5px] font-semibold tracking-wider text-faint uppercase">
        <span>Name</span>
        <span className="text-right" title="Stored and not in flight (waiting retries included)">
          Depth
        </span>
        <span className="text-right" title="Deliveries running now">
          Flight
        </span>
        <span
          className="text-right"
          title="durable:subscriber functions bound to the topic (a function queue's concurrency is on its page)"
        >
          Subs
        </span>
        <span className="text-right" title="Successful deliveries">
          OK
        </span>
        <span className="text-right" title="Failed delivery attempts">
          Fail
        </span>
        <span className="text-right">DLQ</span>
      </div>
      <ul>
        {topics.map((t) => {
          const s = stats.get(t.name);
          const active = t.name === selected;
          const dead = active && selectedDeadLetters !== undefined ? selectedDeadLetters : t.dlq_count;
          return (
            <li key={t.name}>
              <div
                className={cn(
                  'grid grid-cols-[minmax(0,1fr)_repeat(5,46px)_52px] items-center gap-1 border-b border-line/60 px-3 text-[12.5px] tabular-nums transition-colors',
                  active ? 'bg-accent-soft' : 'hover:bg-surface-2',
                )}
              >
                <button
                  type="button"
                  onClick={() => onSelect(t.name)}
                  aria-current={active ? 'true' : undefined}
                  data-testid="queue-row"
                  data-name={t.name}
                  className="min-w-0 cursor-pointer py-1.5 text-left"
                >
                  <span className={cn('block truncate font-mono', active ? 'font-semibold text-accent' : 'text-fg')} title={t.name}>
                    {t.name}
                  </span>
                  <span className="mt-0.5 flex gap-1">
                    {t.kinds.map((k) => (
                      <Badge key={k} tone={k === 'topic' ? 'violet' : 'info'} className="h-4! px-1! text-[10px]!">
                        {KIND_LABEL[k]}
                      </Badge>
                    ))}
                  </span>
                </button>
                <Num value={s?.depth ?? t.depth} />
                <Num value={s?.in_flight} highlight="info" />
                <Num value={consumersOf(t, s).subscribers} />
                <Num value={s?.delivered} />
                <Num value={s?.failed} highlight="warn" />
                <span className="text-right">
                  {dead > 0 ? (
                    <button
                      type="button"
                      onClick={() => onSelect(t.name, true)}
                      className="cursor-pointer"
                      title="Open the dead letters"
                      data-testid="queue-dlq-badge"
                    >
                      <Badge tone="bad">{formatCount(dead)}</Badge>
                    </button>
                  ) : (
                    <span className="text-faint">0</span>
                  )}
                </span>
              </div>
            </li>
          );
        })}
      </ul>
    </div>
  );
}

function Num({ value, highlight }: { value: number | undefined; highlight?: 'info' | 'warn' }) {
  return (
    <span
      className={cn(
        'text-right',
        value ? (highlight === 'info' ? 'text-info' : highlight === 'warn' ? 'text-warn' : 'text-fg') : 'text-faint',
      )}
    >
      {value === undefined ? '–' : formatCount(value)}
    </span>
  );
}
