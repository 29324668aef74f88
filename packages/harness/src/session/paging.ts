import { sessionError } from './errors.ts';
import type { StoredSession } from './types.ts';

export type ListOrder = 'created_asc' | 'created_desc' | 'updated_desc';

/** Cursors are opaque to callers: base64url JSON naming the kind, the order and the last item seen. */
export function encodeCursor(value: Record<string, unknown>): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

export function decodeCursor(cursor: string, kind: string): Record<string, unknown> {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (typeof value === 'object' && value !== null && value.k === kind) return value;
  } catch {
    // fall through
  }
  throw sessionError('invalid_cursor', `cursor ${JSON.stringify(cursor.slice(0, 64))} is not a ${kind} cursor of this store`);
}

/** `[time, id]` sort key of a session for an order; ties broken by id so paging is total. */
function key(session: StoredSession, order: ListOrder): [number, string] {
  return [order === 'updated_desc' ? session.updated_at : session.created_at, session.session_id];
}

function compare(a: [number, string], b: [number, string], order: ListOrder): number {
  const byTime = a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0);
  return order === 'created_asc' ? byTime : -byTime;
}

/** One page of sessions in `order`, after the cursor's position, and the cursor of the next page. */
export function pageSessions(
  sessions: StoredSession[],
  order: ListOrder,
  cursor: string | undefined,
  limit: number,
): { page: StoredSession[]; next_cursor?: string } {
  let after: [number, string] | undefined;
  if (cursor) {
    const c = decodeCursor(cursor, 'sessions');
    if (c.o !== order) throw sessionError('invalid_cursor', `the cursor was made for order ${String(c.o)}, not ${order}`);
    if (typeof c.t !== 'number' || typeof c.id !== 'string') throw sessionError('invalid_cursor', 'the cursor is malformed');
    after = [c.t, c.id];
  }
  const sorted = sessions.map((s) => ({ s, k: key(s, order) })).sort((a, b) => compare(a.k, b.k, order));
  const start = after ? sorted.findIndex((x) => compare(x.k, after, order) > 0) : 0;
  if (start < 0) return { page: [] };
  const slice = sorted.slice(start, start + limit);
  const more = start + limit < sorted.length;
  const last = slice[slice.length - 1];
  return {
    page: slice.map((x) => x.s),
    ...(more && last ? { next_cursor: encodeCursor({ k: 'sessions', o: order, t: last.k[0], id: last.k[1] }) } : {}),
  };
}

/** The limit a caller gets: the default when absent, capped at the maximum. */
export function effectiveLimit(limit: number | undefined, defaults: { default_list_limit: number; max_list_limit: number }): number {
  return Math.min(limit ?? defaults.default_list_limit, defaults.max_list_limit);
}
