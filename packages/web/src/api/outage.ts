import { onlineManager } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { formatTime } from '../lib/format.ts';
import { type ConnectionState, connectionState, subscribeConnection, useConnection } from './client.ts';

/**
 * Engine outages (issue 19 §5): while the engine is unreachable every page keeps its last data,
 * marked stale, instead of showing zeros and "nothing registered yet". TanStack Query's online
 * state follows the engine connection, so queries pause (data kept, no error) while it is down and
 * resume by themselves once it is back; calls cut by the outage are retried then, not shown.
 */

/** The first connection takes a moment: a page is not "down" during its first 1.5 s. */
export const FIRST_CONNECT_GRACE_MS = 1500;

export function isEngineDown(s: ConnectionState, now = Date.now()): boolean {
  if (s.status === 'open') return false;
  return !(s.status === 'connecting' && now - s.since < FIRST_CONNECT_GRACE_MS);
}

/** Queries run only while the engine connection is open (console endpoints opt out with `networkMode: 'always'`). */
export function bindQueriesToEngine(): () => void {
  onlineManager.setEventListener((setOnline) => {
    const update = () => setOnline(connectionState().status === 'open');
    update();
    return subscribeConnection(update);
  });
  return () => onlineManager.setEventListener(() => undefined);
}

/** An error that says nothing about the data: the engine was out of reach when the call ran. */
export function isOutageError(error: unknown): boolean {
  const code = (error as { code?: string } | null)?.code;
  return code === 'not_connected' || connectionState().status !== 'open';
}

/**
 * `retry` for engine queries: failures caused by an outage are retried once the engine is back
 * (the retryer waits while offline), other failures `limit` times.
 */
export function engineRetry(limit: number) {
  return (failureCount: number, error: unknown): boolean => (isOutageError(error) ? failureCount < 30 : failureCount < limit);
}

/** "as of 12:03:04, engine unreachable": what a page shows beside data it can no longer refresh. */
export function staleLabel(lastDataAt: number, format: (ms: number) => string = formatTime): string {
  return lastDataAt > 0 ? `as of ${format(lastDataAt)}, engine unreachable` : 'engine unreachable, no data yet';
}

/** True while the engine is unreachable (after the first-connection grace period). */
export function useEngineDown(): boolean {
  const conn = useConnection();
  const [now, setNow] = useState(Date.now());
  const inGrace = conn.status === 'connecting' && now - conn.since < FIRST_CONNECT_GRACE_MS;
  useEffect(() => {
    if (!inGrace) return;
    const timer = window.setTimeout(() => setNow(Date.now()), FIRST_CONNECT_GRACE_MS - (Date.now() - conn.since) + 20);
    return () => window.clearTimeout(timer);
  }, [inGrace, conn.since]);
  return isEngineDown(conn, now);
}
