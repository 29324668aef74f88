import { z } from 'zod';
import { domainError } from '../shared/errors.ts';
import type { TranscriptItem } from './transcript.ts';
import { SendInput } from './types.ts';

// Answering the last user message again (`harness::regenerate`: Retry after a failed turn,
// Regenerate after a finished one) and replacing it (`harness::edit`). Neither deletes anything:
// the session's active path is moved back (session::set-active-leaf) and the new turn's entries
// branch from there, so what they replace stays stored on a branch of its own and is no longer on
// the path every reader (the console, the context a model is sent) follows.

const TurnFields = SendInput.pick({ session_id: true, model: true, provider: true, options: true });

export const RegenerateInput = TurnFields.extend({
  /** The user message to answer again; it must be the last one on the active path (default: that one). */
  entry_id: z.string({ error: 'entry_id must be a string' }).min(1, { error: 'entry_id must not be empty' }).optional(),
});
export type RegenerateInput = z.infer<typeof RegenerateInput>;

export const EditInput = TurnFields.extend({
  /** The user message replaced: the last one on the active path. */
  entry_id: z.string({ error: 'entry_id is required' }).min(1, { error: 'entry_id must not be empty' }),
  message: SendInput.shape.message,
  idempotency_key: SendInput.shape.idempotency_key,
});
export type EditInput = z.infer<typeof EditInput>;

export interface RewindPoint {
  /** The last user message on the active path. */
  user: { entry_id: string; parent_id: string | null };
  /** Entries after it on the path (the answer, its calls and results, notes): what a new answer replaces. */
  after: string[];
}

/**
 * Where a regenerate or an edit starts from: the last user message of the active path. `wanted`
 * (an entry id the caller saw as the last user message) must be that message: answering an older
 * one again would silently drop every later exchange.
 */
export function rewindPoint(sessionId: string, path: TranscriptItem[], wanted: string | undefined, fn: string): RewindPoint {
  let at = -1;
  for (let i = path.length - 1; i >= 0 && at < 0; i--) if (path[i]?.message?.role === 'user') at = i;
  const user = path[at];
  if (!user) throw domainError('harness', 'nothing_to_answer', `${fn}: session ${sessionId} has no user message to answer`);
  if (wanted !== undefined && wanted !== user.entry_id) {
    const known = path.some((item) => item.entry_id === wanted);
    throw domainError(
      'harness',
      'not_last_user_message',
      known
        ? `${fn}: entry ${wanted} is not the last user message of session ${sessionId} (${user.entry_id} is): only the last one can be answered again or edited`
        : `${fn}: entry ${wanted} is not on the active path of session ${sessionId}`,
    );
  }
  return {
    user: { entry_id: user.entry_id, parent_id: user.parent_id ?? null },
    after: path.slice(at + 1).map((item) => item.entry_id),
  };
}

export function turnActive(sessionId: string, fn: string) {
  return domainError(
    'harness',
    'turn_active',
    `${fn}: a turn is running in session ${sessionId}: stop it (harness::stop) or wait for it to finish first`,
  );
}
