import type { QueryClient, QueryKey } from '@tanstack/react-query';

/**
 * An engine that shuts down stops the workers it launched first (`npm start`: the orders demo,
 * the MCP server, …) and closes the bus last (1001). In between, the UI hears "a worker left,
 * functions changed" and refetches: the lists it keeps for the outage would then read "0 functions,
 * no workers" (issue 19 §5). So the data the live queries showed before such a burst of departures
 * is remembered, and put back when the engine goes away (close 1001) within moments of the burst.
 */
export const BURST_MS = 10_000;

interface Snapshot {
  startedAt: number;
  lastEventAt: number;
  entries: Array<{ key: QueryKey; data: unknown; updatedAt: number }>;
}

export function createShutdownRollback(queryClient: QueryClient, liveKeys: QueryKey[], now: () => number = Date.now) {
  let snapshot: Snapshot | undefined;
  return {
    /** Call before a live event invalidates the live queries. */
    beforeLiveRefresh(): void {
      const t = now();
      const entries = liveKeys.flatMap((queryKey) =>
        queryClient
          .getQueryCache()
          .findAll({ queryKey })
          .filter((q) => q.state.data !== undefined)
          .map((q) => ({ key: q.queryKey, data: q.state.data, updatedAt: q.state.dataUpdatedAt })),
      );
      if (snapshot && t - snapshot.lastEventAt < BURST_MS) {
        snapshot.lastEventAt = t;
        // a query that had no data when the burst began (the page was still loading: its own
        // registration is an event too) is remembered as it is now, before this event refetches it;
        // else an outage put back some lists and left the others emptied (issue 25 item 14)
        const known = new Set(snapshot.entries.map((e) => JSON.stringify(e.key)));
        for (const entry of entries) if (!known.has(JSON.stringify(entry.key))) snapshot.entries.push(entry);
        return;
      }
      snapshot = { startedAt: t, lastEventAt: t, entries };
    },
    /** The connection closed: after an engine shutdown (1001) right after a burst, show what was there before it. */
    onDisconnected(code: number): boolean {
      const s = snapshot;
      snapshot = undefined;
      if (code !== 1001 || !s || now() - s.lastEventAt > BURST_MS) return false;
      for (const { key, data, updatedAt } of s.entries) queryClient.setQueryData(key, data, { updatedAt });
      return true;
    },
  };
}
