import { consumersOf, type QueueTopic, type TopicStats } from '../../api/queues.ts';
import { formatCount, timeAgo } from '../../lib/format.ts';
import { Badge, StatusDot } from '../ui/badge.tsx';
import { Card, CardHeader } from '../ui/card.tsx';
import { cn } from '../ui/cn.ts';
import { ErrorNote } from '../ui/empty-state.tsx';
import { JsonView } from '../ui/json-view.tsx';
import { PublishForm } from './publish-form.tsx';

/** Counters, subscribers, the effective config and Publish for one queue or topic. */
export function TopicOverview({
  topic,
  stats,
  error,
  deadLetters,
  onOpenDeadLetters,
}: {
  topic: QueueTopic;
  stats: TopicStats | undefined;
  error: unknown;
  /** The count the Dead letters tab shows (one source for both, issue 19 §11). */
  deadLetters: number | undefined;
  onOpenDeadLetters: () => void;
}) {
  const { subscribers, concurrency } = consumersOf(topic, stats);
  const tiles: Array<{ label: string; value: number | undefined; tone?: string; hint: string; onClick?: () => void }> = [
    { label: 'Depth', value: stats?.depth ?? topic.depth, hint: 'stored, not in flight (waiting retries included)' },
    { label: 'In flight', value: stats?.in_flight, tone: 'text-info', hint: 'deliveries running now' },
    { label: 'Subscribers', value: subscribers, hint: 'durable:subscriber functions bound to this topic now' },
    {
      label: 'Concurrency',
      value: concurrency,
      hint: topic.kinds.includes('function_queue')
        ? 'deliveries this function queue runs at once (its queue_configs entry or the default)'
        : 'a topic has no concurrency of its own: each subscriber sets it in its queue_config',
    },
    { label: 'Delivered', value: stats?.delivered, tone: 'text-ok', hint: 'successful deliveries' },
    { label: 'Failed', value: stats?.failed, tone: 'text-warn', hint: 'failed delivery attempts (each retry counts)' },
    {
      label: 'Dead letters',
      value: deadLetters ?? stats?.dlq_count ?? topic.dlq_count,
      tone: 'text-bad',
      hint: 'messages that used up their retries',
      onClick: onOpenDeadLetters,
    },
  ];
  return (
    <div className="space-y-4 p-4">
      {error ? <ErrorNote title="Could not read the counters" error={error} /> : null}
      <div className="grid grid-cols-2 gap-2 md:grid-cols-4 2xl:grid-cols-7" data-testid="queue-stats">
        {tiles.map((t) => {
          const body = (
            <>
              <div className="text-[11.5px] text-muted">{t.label}</div>
              <div
                className={cn('mt-1 text-xl font-semibold tabular-nums', t.value ? (t.tone ?? 'text-fg') : 'text-faint')}
                data-testid={`stat-${t.label.toLowerCase().replace(/\s+/g, '-')}`}
                data-value={t.value ?? ''}
              >
                {t.value === undefined ? '–' : formatCount(t.value)}
              </div>
            </>
          );
          return t.onClick ? (
            <button
              key={t.label}
              type="button"
              onClick={t.onClick}
              title={t.hint}
              className="cursor-pointer rounded-xl border border-line bg-surface px-3 py-2.5 text-left shadow-card transition-colors hover:border-line-strong"
            >
              {body}
            </button>
          ) : (
            <div key={t.label} title={t.hint} className="rounded-xl border border-line bg-surface px-3 py-2.5 shadow-card">
              {body}
            </div>
          );
        })}
      </div>
      <div className="grid gap-4 2xl:grid-cols-2">
        <Card>
          <CardHeader title="Publish a message" description="Send test data through the real delivery path." />
          <div className="p-4">
            <PublishForm key={topic.name} topic={topic} />
          </div>
        </Card>
        <div className="space-y-4">
          <Card>
            <CardHeader title="Subscribers" description="durable:subscriber bindings of this topic" />
            {stats?.subscribers.length ? (
              <ul className="divide-y divide-line">
                {stats.subscribers.map((s) => (
                  <li key={s.function_id} className="flex items-center gap-2 px-4 py-2 text-[13px]">
                    <StatusDot tone={s.active ? 'ok' : 'warn'} />
                    <span className="min-w-0 flex-1 truncate font-mono text-[12.5px]">{s.function_id}</span>
                    {s.active ? null : (
                      <Badge tone="warn" title="its worker is gone; copies wait for it">
                        dormant{s.dormant_since ? ` ${timeAgo(s.dormant_since)}` : ''}
                      </Badge>
                    )}
                    <span className="text-[12px] text-faint tabular-nums">{s.in_flight} in flight</span>
                  </li>
                ))}
              </ul>
            ) : (
              <p className="px-4 py-3 text-[13px] text-muted">
                {topic.kinds.includes('topic')
                  ? 'No subscriber is bound right now: published messages wait for one.'
                  : 'A function queue delivers to the function named by each message.'}
              </p>
            )}
          </Card>
          <Card>
            <CardHeader title="Config" description="Queue settings in force (config.yaml queue_configs or the defaults)" />
            <div className="p-4">
              {stats?.config ? (
                <JsonView value={stats.config} maxHeight={240} label="config" />
              ) : (
                <p className="text-[13px] text-muted">Topics take their settings from each subscriber's queue_config.</p>
              )}
            </div>
          </Card>
        </div>
      </div>
    </div>
  );
}
