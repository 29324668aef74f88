import type { StoredSpan } from '@eng/protocol';
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { useRef } from 'react';
import { type Run, runsFromSpans } from '../lib/runs.ts';
import { callEngine } from './client.ts';
import { traceKeys, useTraceFeed } from './traces.ts';

/**
 * A function's run history (issue 19 §13) from the engine's trace store: every span carrying
 * `function_id = <fn>` (`engine::traces::list` with `search_all_spans`), paired and read by
 * lib/runs.ts. Fresh through the engine's `trace` trigger (useTraceFeed), like the trace explorer.
 */
export type { Run };

export type RunFilter = 'all' | 'ok' | 'error';

/** Spans read per refresh: a run is one or two of them. */
const SPAN_LIMIT = 200;

export const runKeys = {
  all: [...traceKeys.all, 'runs'] as const,
  of: (functionId: string, filter: RunFilter) => [...runKeys.all, functionId, filter] as const,
};

export function useFunctionRuns(functionId: string, filter: RunFilter) {
  const queryClient = useQueryClient();
  const timer = useRef<number | undefined>(undefined);
  useTraceFeed(() => {
    if (timer.current !== undefined) return;
    timer.current = window.setTimeout(() => {
      timer.current = undefined;
      void queryClient.invalidateQueries({ queryKey: runKeys.all });
    }, 300);
  });
  return useQuery({
    queryKey: runKeys.of(functionId, filter),
    queryFn: async () => {
      const res = await callEngine<{ spans: StoredSpan[]; total: number }>('engine::traces::list', {
        search_all_spans: true,
        include_internal: true,
        attributes: [['function_id', functionId]],
        ...(filter === 'all' ? {} : { status: filter }),
        sort_by: 'start_time',
        sort_order: 'desc',
        limit: SPAN_LIMIT,
      });
      return { runs: runsFromSpans(res.spans, functionId), more: res.total > SPAN_LIMIT };
    },
    placeholderData: keepPreviousData,
  });
}
