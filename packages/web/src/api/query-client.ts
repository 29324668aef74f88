import { QueryCache, QueryClient } from '@tanstack/react-query';
import { useSyncExternalStore } from 'react';
import { engineRetry } from './outage.ts';

/**
 * One QueryClient for the app. Data arrives over the engine bus; freshness comes from trigger-driven
 * invalidation (api/live.ts) or per-query polling where the engine has no trigger.
 */
let lastUpdateAt = 0;
const updateListeners = new Set<() => void>();

export const queryClient = new QueryClient({
  queryCache: new QueryCache({
    onSuccess: (_data, query) => {
      // only engine data counts: the serving console's own endpoints say nothing about the engine
      if (query.meta?.source === 'console') return;
      lastUpdateAt = Date.now();
      for (const listener of updateListeners) listener();
    },
  }),
  defaultOptions: {
    // outages pause queries (api/outage.ts): the data stays, the calls resume when the engine is back
    queries: { staleTime: 5_000, retry: engineRetry(1), retryDelay: 800, refetchOnWindowFocus: false },
    // a mutation is something the user asked for now: it fails at once and says the engine is unreachable
    mutations: { networkMode: 'always' },
  },
});

/** Time of the most recent successful fetch of any engine data (shell "updated" stamp). */
export function useLastUpdate(): number {
  return useSyncExternalStore(
    (listener) => {
      updateListeners.add(listener);
      return () => updateListeners.delete(listener);
    },
    () => lastUpdateAt,
  );
}
