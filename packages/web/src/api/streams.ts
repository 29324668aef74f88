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
