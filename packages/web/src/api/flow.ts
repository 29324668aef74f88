import type { StoredSpan } from '@eng/protocol';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { callEngine } from './client.ts';

/**
 * The Flow page's data besides functions and triggers: the saved layout, kept in the engine's
 * state store (seed 2.8 "layout configuration is saved to the engine state store") under scope
 * `eng:console:flow`, and the spans from which function → state/queue edges are observed.
 */

export const FLOW_SCOPE = 'eng:console:flow';
export const FLOW_LAYOUT_KEY = 'layout';

export interface FlowLayout {
  version: 1;
  /** Top-left corner of each node, by node id. */
  positions: Record<string, { x: number; y: number }>;
  saved_at: number;
}

export const flowKeys = {
  all: ['flow'] as const,
  layout: () => [...flowKeys.all, 'layout'] as const,
  observed: () => [...flowKeys.all, 'observed'] as const,
};

function isLayout(value: unknown): value is FlowLayout {
  const v = value as FlowLayout | null;
  return !!v && typeof v === 'object' && !!v.positions && typeof v.positions === 'object';
}

export function useFlowLayout() {
  return useQuery({
    queryKey: flowKeys.layout(),
    queryFn: async () => {
      const value = await callEngine<unknown>('state::get', { scope: FLOW_SCOPE, key: FLOW_LAYOUT_KEY });
      return isLayout(value) ? value : null;
    },
    staleTime: Number.POSITIVE_INFINITY,
  });
}

export function useSaveFlowLayout() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (positions: FlowLayout['positions']) => {
      const layout: FlowLayout = { version: 1, positions, saved_at: Date.now() };
      await callEngine('state::set', { scope: FLOW_SCOPE, key: FLOW_LAYOUT_KEY, value: layout });
      return layout;
    },
    onSuccess: (layout) => queryClient.setQueryData(flowKeys.layout(), layout),
  });
}

export function useResetFlowLayout() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => callEngine('state::delete', { scope: FLOW_SCOPE, key: FLOW_LAYOUT_KEY }),
    onSuccess: () => queryClient.setQueryData(flowKeys.layout(), null),
  });
}

/** Recent spans (last hour, every span, internal ones included) for observed edges. */
export function useObservedSpans() {
  return useQuery({
    queryKey: flowKeys.observed(),
    queryFn: async () => {
      try {
        const res = await callEngine<{ spans: StoredSpan[] }>('engine::traces::list', {
          search_all_spans: true,
          include_internal: true,
          start_time: Date.now() - 3_600_000,
          sort_by: 'start_time',
          sort_order: 'desc',
          limit: 2000,
        });
        return res.spans;
      } catch {
        // no trace store (exporter otlp): the graph still has triggers and metadata
        return [] as StoredSpan[];
      }
    },
    refetchInterval: 15_000,
  });
}
