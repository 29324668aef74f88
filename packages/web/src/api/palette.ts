import { useQuery } from '@tanstack/react-query';
import { callEngine } from './client.ts';
import { useQueueTopics } from './queues.ts';

/**
 * What the ⌘K palette searches besides pages, functions and triggers (issue 19 §11): queue and
 * topic names, state groups and recent trace ids. Read only while the palette is open.
 */
export const paletteKeys = {
  all: ['palette'] as const,
  scopes: () => [...paletteKeys.all, 'state-scopes'] as const,
  traces: () => [...paletteKeys.all, 'recent-traces'] as const,
};

export interface RecentTrace {
  trace_id: string;
  name: string;
}

/** A full trace id (32 hex digits, W3C), or a prefix long enough to mean one (8+). */
export const TRACE_ID_PREFIX = /^[0-9a-f]{8,32}$/i;

export function usePaletteSources(open: boolean) {
  const queues = useQueueTopics({ enabled: open });
  const scopes = useQuery({
    queryKey: paletteKeys.scopes(),
    queryFn: async () => (await callEngine<{ groups?: string[] }>('state::list_groups', {})).groups ?? [],
    enabled: open,
    staleTime: 10_000,
  });
  const traces = useQuery({
    queryKey: paletteKeys.traces(),
    queryFn: async (): Promise<RecentTrace[]> => {
      const res = await callEngine<{ spans: RecentTrace[] }>('engine::traces::list', {
        limit: 200,
        sort_by: 'start_time',
        sort_order: 'desc',
      });
      return res.spans.map((s) => ({ trace_id: s.trace_id, name: s.name }));
    },
    enabled: open,
    staleTime: 10_000,
  });
  return { queues: queues.data ?? [], scopes: scopes.data ?? [], traces: traces.data ?? [] };
}
