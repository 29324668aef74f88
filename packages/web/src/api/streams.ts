import { useQuery } from '@tanstack/react-query';
import { callEngine } from './client.ts';

export interface StreamInfo {
  id: string;
  groups: string[];
}

export const streamKeys = {
  all: ['streams'] as const,
  list: () => [...streamKeys.all, 'list'] as const,
};

/** Internal streams are the engine's own (`eng.`/`eng:`/`iii.`/`iii:` prefixes, console spec §2.5). */
export function isSystemStream(id: string): boolean {
  return /^(eng|iii)[.:]/.test(id);
}

/** `stream::list_all`. Streams fire no "stream created" trigger, so this polls every 10 s. */
export function useStreams() {
  return useQuery({
    queryKey: streamKeys.list(),
    queryFn: async () => {
      const res = await callEngine<{ stream?: StreamInfo[]; streams?: StreamInfo[] }>('stream::list_all', {});
      return res.stream ?? res.streams ?? [];
    },
    refetchInterval: 10_000,
  });
}

export const streamItemKeys = {
  items: (stream: string, group: string) => [...streamKeys.all, 'items', stream, group] as const,
  item: (stream: string, group: string, id: string) => [...streamKeys.all, 'item', stream, group, id] as const,
};

/**
 * Stored items of one stream group (`stream::list`, sorted by item id). The engine answers the
 * values only (iii's wire shape), so a row's id is the value's own `id` field when it has one.
 */
export function useStreamItems(stream: string | undefined, group: string | undefined) {
  return useQuery({
    queryKey: streamItemKeys.items(stream ?? '', group ?? ''),
    queryFn: async () => (await callEngine<unknown[] | null>('stream::list', { stream_name: stream, group_id: group })) ?? [],
    enabled: !!stream && group !== undefined,
    refetchInterval: 5000,
  });
}

/** One item by id (`stream::get`); `found: false` when the group has no such item. */
export function useStreamItem(stream: string | undefined, group: string | undefined, id: string | undefined) {
  return useQuery({
    queryKey: streamItemKeys.item(stream ?? '', group ?? '', id ?? ''),
    queryFn: async () => {
      const value = await callEngine<unknown>('stream::get', { stream_name: stream, group_id: group, item_id: id });
      return { found: value !== undefined && value !== null, value: value ?? null };
    },
    enabled: !!stream && group !== undefined && !!id,
  });
}
