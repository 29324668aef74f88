import { useQueryClient } from '@tanstack/react-query';
import { getRouteApi } from '@tanstack/react-router';
import { Inbox, RefreshCw, X } from 'lucide-react';
import { useCallback } from 'react';
import { queueKeys, useDeadLetters, useQueueTopics, useTopicStats, useTopicStatsMany } from '../../api/queues.ts';
import { countOf } from '../../lib/format.ts';
import { isTyping, useKeydown } from '../../lib/keyboard.ts';
import { Badge } from '../ui/badge.tsx';
import { IconButton } from '../ui/button.tsx';
import { cn } from '../ui/cn.ts';
import { EmptyState } from '../ui/empty-state.tsx';
import { PageHeader } from '../ui/page-header.tsx';
import { SectionTabs } from '../ui/tabs.tsx';
import { DeadLetters } from './dead-letters.tsx';
import { KIND_LABEL, TopicList } from './topic-list.tsx';
import { TopicOverview } from './topic-overview.tsx';

const route = getRouteApi('/queues');

/** Queues & dead letters: topics with their counters, publish, and paged dead letters with redrive / discard. */
export function QueuesPage() {
  const search = route.useSearch();
  const navigate = route.useNavigate();
  const qc = useQueryClient();
  const topics = useQueueTopics();
  const names = (topics.data ?? []).map((t) => t.name);
  const statsByName = useTopicStatsMany(names);
  const selected = topics.data?.find((t) => t.name === search.topic);
  const stats = useTopicStats(selected?.name);
  const tab = search.tab ?? 'overview';
  // the tab badge, the overview tile and the list read one query: the page of dead letters itself
  const dlqSize = search.size ?? 50;
  const dlq = useDeadLetters(selected?.name, ((search.page ?? 1) - 1) * dlqSize, dlqSize);
  const listedTotal = dlq.isPlaceholderData ? undefined : dlq.data?.total;
  const deadLetterCount = listedTotal ?? stats.data?.dlq_count ?? selected?.dlq_count ?? 0;

  const setSearch = useCallback(
    (patch: Partial<typeof search>, replace = false) => void navigate({ search: (prev) => ({ ...prev, ...patch }), replace }),
    [navigate],
  );
  // Esc closes the detail (console spec §4 Global UX); dialogs take Esc first
  useKeydown((e) => {
    if (e.key === 'Escape' && !isTyping(e.target) && search.topic) setSearch({ topic: undefined, tab: undefined, page: undefined });
  });
  const totalDead = (topics.data ?? []).reduce((n, t) => n + t.dlq_count, 0);

  return (
    <div className="flex h-full min-h-0 flex-col">
      <PageHeader
        title="Queues"
        description="Durable queues and topics: what waits, what runs, what failed for good."
        badge={totalDead ? <Badge tone="bad">{countOf(totalDead, 'dead letter')}</Badge> : undefined}
        actions={
          <IconButton
            icon={RefreshCw}
            label="Refresh"
            onClick={() => void qc.invalidateQueries({ queryKey: queueKeys.all })}
            className={topics.isFetching ? 'animate-spin' : undefined}
          />
        }
      />
      <div className="grid min-h-0 flex-1 lg:grid-cols-[minmax(340px,420px)_minmax(0,1fr)]">
        <section
          aria-label="Queues and topics"
          className={cn('min-h-0 overflow-y-auto border-r border-line bg-surface', selected && 'max-lg:hidden')}
        >
          <TopicList
            topics={topics.data}
            stats={statsByName}
            loading={topics.isPending}
            error={topics.error}
            selected={selected?.name}
            selectedDeadLetters={listedTotal}
            onSelect={(topic, dead) => setSearch({ topic, tab: dead ? 'dead-letters' : search.tab, page: undefined })}
          />
        </section>
        <section aria-label="Queue detail" className={cn('flex min-h-0 min-w-0 flex-col', !selected && 'max-lg:hidden')}>
          {selected ? (
            <>
              <div className="flex items-center gap-2 border-b border-line px-4 pt-3 pb-2">
                <h2 className="font-mono text-[15px] font-semibold text-fg" data-testid="queue-title">
                  {selected.name}
                </h2>
                {selected.kinds.map((k) => (
                  <Badge key={k} tone={k === 'topic' ? 'violet' : 'info'}>
                    {KIND_LABEL[k]}
                  </Badge>
                ))}
                <IconButton icon={X} label="Close" className="ml-auto" onClick={() => setSearch({ topic: undefined, tab: undefined })} />
              </div>
              <SectionTabs
                label="Queue sections"
                value={tab}
                onChange={(t) => setSearch({ tab: t, page: undefined }, true)}
                items={[
                  { value: 'overview', label: 'Overview' },
                  { value: 'dead-letters', label: 'Dead letters', count: deadLetterCount },
                ]}
              />
              {tab === 'overview' ? (
                <div className="min-h-0 flex-1 overflow-y-auto">
                  <TopicOverview
                    topic={selected}
                    stats={stats.data}
                    error={stats.error}
                    deadLetters={listedTotal}
                    onOpenDeadLetters={() => setSearch({ tab: 'dead-letters' })}
                  />
                </div>
              ) : (
                <DeadLetters
                  name={selected.name}
                  page={search.page ?? 1}
                  size={search.size ?? 50}
                  onPage={(page) => setSearch({ page: page > 1 ? page : undefined }, true)}
                  onSize={(size) => setSearch({ size, page: undefined }, true)}
                />
              )}
            </>
          ) : (
            <EmptyState icon={Inbox} title="Pick a queue or topic">
              Its counters, subscribers and config appear here, with a form to publish a test message and its dead letters.
            </EmptyState>
          )}
        </section>
      </div>
    </div>
  );
}
