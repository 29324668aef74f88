import type { EngClient } from '@eng/sdk';
import type { EventTypes } from '../shared/event-types.ts';
import { sessionStorageError } from './errors.ts';
import type { SessionSettings } from './settings.ts';
import type { SessionStore } from './store.ts';

/** What every session function works with. */
export interface SessionContext {
  client: EngClient;
  store: SessionStore;
  events: EventTypes;
  settings(): SessionSettings;
  now(): number;
}

/**
 * Await the writes of a mutation. On failure memory may be ahead of storage, so the session is
 * re-read from storage and the caller gets `session/storage` (retryable); no event is fired.
 */
export async function persist(ctx: SessionContext, sessionId: string, what: string, writes: Array<Promise<void>>): Promise<void> {
  const results = await Promise.allSettled(writes);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (!failed) return;
  await ctx.store.invalidate(sessionId);
  throw sessionStorageError(what, failed.reason);
}
