import { TriggerAction } from '@eng/sdk';
import { keepPreviousData, useMutation, useQueries, useQuery, useQueryClient } from '@tanstack/react-query';
import { callEngine, EngineCallError, engine } from './client.ts';

/**
 * Durable queues and dead letters through the queue module's functions (queue README):
 * `engine::queue::list_topics`, `topic_stats`, `dlq_messages` (paged, with a total), the enqueue
 * action and `eng::durable::publish`, and redrive / discard.
 */

/** Page sizes of the dead-letter list (`dlq_messages` takes 1–1000). */
export const DLQ_PAGE_SIZES = [25, 50, 100, 250] as const;

export type BrokerType = 'function_queue' | 'topic';

/**
 * A queue name with everything stored under it. A name can be a function queue AND a durable
 * topic at once (the orders demo's `fulfilment`); their messages, counters and dead letters are
 * kept per name, so the page shows one row per name with both kinds (no empty DLQ tab, iii#1653).
 */
export interface QueueTopic {
  name: string;
  kinds: BrokerType[];
  depth: number;
  dlq_count: number;
  subscriber_count: number;
}

export interface TopicStats {
  topic: string;
  depth: number;
  in_flight: number;
  delivered: number;
  failed: number;
  dlq_depth: number;
  dlq_count: number;
  consumer_count: number;
  config: Record<string, unknown> | null;
  subscribers: Array<{ function_id: string; active: boolean; dormant_since: number | null; in_flight: number }>;
}

export interface DeadLetter {
  id: string;
  queue: string;
  function_id: string;
  payload: unknown;
  error: string;
  failed_at: number;
  retries: number;
  enqueued_at: number;
  size_bytes: number;
}

export interface DeadLetterPage {
  topic: string;
  messages: DeadLetter[];
  total: number;
  offset: number;
  limit: number;
}

export const queueKeys = {
  all: ['queues'] as const,
  topics: () => [...queueKeys.all, 'topics'] as const,
  stats: (name: string) => [...queueKeys.all, 'stats', name] as const,
  dlq: (name: string) => [...queueKeys.all, 'dlq', name] as const,
  dlqPage: (name: string, offset: number, limit: number) => [...queueKeys.dlq(name), offset, limit] as const,
};

interface ListedTopic {
  name: string;
  broker_type: BrokerType;
  subscriber_count: number;
  depth: number;
  dlq_count: number;
}

/** Every queue and topic, merged by name. Queues fire no trigger when they change, so this polls every 3 s. */
export function useQueueTopics(options: { enabled?: boolean } = {}) {
  return useQuery({
    enabled: options.enabled ?? true,
    queryKey: queueKeys.topics(),
    queryFn: async (): Promise<QueueTopic[]> => {
      const listed = await callEngine<ListedTopic[]>('engine::queue::list_topics', {});
      const byName = new Map<string, QueueTopic>();
      for (const t of listed ?? []) {
        const row = byName.get(t.name);
        if (row) {
          if (!row.kinds.includes(t.broker_type)) row.kinds.push(t.broker_type);
          row.subscriber_count += t.broker_type === 'topic' ? t.subscriber_count : 0;
          row.depth = Math.max(row.depth, t.depth);
          row.dlq_count = Math.max(row.dlq_count, t.dlq_count);
        } else {
          byName.set(t.name, {
            name: t.name,
            kinds: [t.broker_type],
            depth: t.depth,
            dlq_count: t.dlq_count,
            subscriber_count: t.broker_type === 'topic' ? t.subscriber_count : 0,
          });
        }
      }
      return [...byName.values()];
    },
    refetchInterval: 3000,
  });
}

/**
 * The engine's `consumer_count` adds a topic's bound subscribers to a function queue's concurrency
 * (iii's way); the page shows the two apart. Concurrency only for names that are function queues.
 */
export function consumersOf(
  topic: QueueTopic,
  stats: TopicStats | undefined,
): { subscribers: number | undefined; concurrency: number | undefined } {
  const subscribers = stats ? stats.subscribers.filter((s) => s.active).length : topic.subscriber_count;
  const concurrency = stats && topic.kinds.includes('function_queue') ? Math.max(0, stats.consumer_count - subscribers) : undefined;
  return { subscribers, concurrency };
}

function fetchStats(name: string): Promise<TopicStats> {
  return callEngine<TopicStats>('engine::queue::topic_stats', { topic: name });
}

/** `topic_stats` of one name, every 2 s while it is on screen. */
export function useTopicStats(name: string | undefined) {
  return useQuery({
    queryKey: queueKeys.stats(name ?? ''),
    queryFn: () => fetchStats(name as string),
    enabled: !!name,
    refetchInterval: 2000,
  });
}

/** `topic_stats` of every listed name, for the in-flight / delivered / failed columns. */
export function useTopicStatsMany(names: string[]): Map<string, TopicStats> {
  const results = useQueries({
    queries: names.map((name) => ({ queryKey: queueKeys.stats(name), queryFn: () => fetchStats(name), refetchInterval: 3000 })),
  });
  const out = new Map<string, TopicStats>();
  results.forEach((r, i) => {
    if (r.data) out.set(names[i] as string, r.data);
  });
  return out;
}

/** One page of a name's dead letters, oldest failure first, with the total (no cut at 50). */
export function useDeadLetters(name: string | undefined, offset: number, limit: number) {
  return useQuery({
    queryKey: queueKeys.dlqPage(name ?? '', offset, limit),
    queryFn: () => callEngine<DeadLetterPage>('engine::queue::dlq_messages', { paged: true, topic: name, offset, limit }),
    enabled: !!name,
    placeholderData: keepPreviousData,
    refetchInterval: 3000,
  });
}

function useInvalidateQueues() {
  const qc = useQueryClient();
  return () => void qc.invalidateQueries({ queryKey: queueKeys.all });
}

export type PublishInput =
  | { kind: 'topic'; topic: string; data: unknown }
  | { kind: 'queue'; queue: string; function_id: string; data: unknown };

/**
 * Publish: to a durable topic with `eng::durable::publish` (every subscriber gets a copy), or
 * onto a function queue with the enqueue action, exactly as a worker does
 * (`trigger({function_id, payload, action: Enqueue({queue})})`, answered with the receipt id).
 */
export function usePublish() {
  const invalidate = useInvalidateQueues();
  return useMutation({
    mutationFn: async (input: PublishInput): Promise<{ messageReceiptId?: string }> => {
      if (input.kind === 'topic') {
        await callEngine('eng::durable::publish', { topic: input.topic, data: input.data });
        return {};
      }
      try {
        const receipt = await engine().trigger({
          function_id: input.function_id,
          payload: input.data,
          action: TriggerAction.Enqueue({ queue: input.queue }),
          timeoutMs: 10_000,
        });
        return (receipt ?? {}) as { messageReceiptId?: string };
      } catch (err) {
        const e = err as { code?: string; message?: string };
        throw new EngineCallError(e.code ?? 'error', e.message ?? String(err));
      }
    },
    onSuccess: invalidate,
  });
}

export function useRedriveMessage() {
  const invalidate = useInvalidateQueues();
  return useMutation({
    mutationFn: (input: { queue: string; message_id: string }) =>
      callEngine<{ queue: string; message_id: string; redriven: number }>('eng::queue::redrive_message', input),
    onSuccess: invalidate,
  });
}

export function useDiscardMessage() {
  const invalidate = useInvalidateQueues();
  return useMutation({
    mutationFn: (input: { queue: string; message_id: string }) =>
      callEngine<{ queue: string; message_id: string; discarded: number }>('eng::queue::discard_message', input),
    onSuccess: invalidate,
  });
}

export function useRedriveAll() {
  const invalidate = useInvalidateQueues();
  return useMutation({
    mutationFn: (queue: string) => callEngine<{ queue: string; redriven: number }>('eng::queue::redrive', { queue }),
    onSuccess: invalidate,
  });
}

/**
 * The part of a dead letter's last error worth a table cell: the engine stores `<code>: <message>`;
 * workers sometimes put a JSON envelope or a stack after it. First line, at most `max` chars.
 */
export function errorSummary(error: string, max = 120): string {
  let text = error.trim();
  const brace = text.indexOf('{');
  if (brace >= 0) {
    try {
      const parsed = JSON.parse(text.slice(brace)) as { message?: unknown; error?: unknown };
      const inner = typeof parsed.message === 'string' ? parsed.message : typeof parsed.error === 'string' ? parsed.error : undefined;
      if (inner) text = `${text.slice(0, brace).trim()} ${inner}`.trim();
    } catch {
      // not JSON: keep the text
    }
  }
  const line = text.split('\n', 1)[0] ?? '';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line || '(no error recorded)';
}
