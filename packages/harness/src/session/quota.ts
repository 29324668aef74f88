import type { SessionContext } from './context.ts';
import { sessionError } from './errors.ts';

// The session store's quotas (issue 24 item 9: 12 × 8 MiB attachments in one session, 5,000
// sessions and a 15 MB message were all accepted): one message, one session (its entries' JSON,
// its attachments' decoded bytes and its record), all sessions together, and how many there are.
// Every write is checked before it changes anything, so a refused write leaves memory and storage
// as they were; a write that shrinks what is stored is never refused, and deleting frees quota.

const KiB = 1024;
const MiB = 1024 * KiB;

/** `1536 bytes (1.5 KiB)`: exact, and readable at a glance. */
export function formatBytes(bytes: number): string {
  if (bytes >= MiB) return `${bytes} bytes (${(bytes / MiB).toFixed(1)} MiB)`;
  if (bytes >= KiB) return `${bytes} bytes (${(bytes / KiB).toFixed(1)} KiB)`;
  return `${bytes} bytes`;
}

const raise = (setting: string) => `raise ${setting} in the session-manager configuration entry (configuration::set)`;

/** One message (or custom entry) as stored, against max_message_bytes: `session/message_too_large`. */
export function checkMessageSize(ctx: SessionContext, fn: string, bytes: number): void {
  const limit = ctx.settings().max_message_bytes;
  if (bytes <= limit) return;
  throw sessionError(
    'message_too_large',
    `${fn}: the message is ${formatBytes(bytes)} stored, over max_message_bytes (${formatBytes(limit)}); ` +
      `store large files with session::put-attachment and refer to them, or ${raise('max_message_bytes')}`,
  );
}

/**
 * A write that adds `added` bytes to a session holding `used` (0 for a new one), against
 * max_session_bytes and max_total_bytes: `session/quota_exceeded` naming the limit and the usage.
 */
export function checkGrowth(ctx: SessionContext, fn: string, sessionId: string, used: number, added: number): void {
  if (added <= 0) return;
  const { max_session_bytes, max_total_bytes } = ctx.settings();
  if (used + added > max_session_bytes) {
    throw sessionError(
      'quota_exceeded',
      `${fn}: session ${sessionId} holds ${formatBytes(used)}; ${formatBytes(added)} more is over max_session_bytes ` +
        `(${formatBytes(max_session_bytes)}). Delete attachments or the session to free space (session::fork copies ` +
        `the part worth keeping), or ${raise('max_session_bytes')}`,
    );
  }
  const total = ctx.store.totalBytes;
  if (total + added > max_total_bytes) {
    throw sessionError(
      'quota_exceeded',
      `${fn}: all sessions hold ${formatBytes(total)}; ${formatBytes(added)} more is over max_total_bytes ` +
        `(${formatBytes(max_total_bytes)}). Delete sessions to free space, or ${raise('max_total_bytes')}`,
    );
  }
}

/** Room for one more session, against max_sessions: `session/quota_exceeded`. */
export function checkSessionCount(ctx: SessionContext, fn: string): void {
  const { max_sessions } = ctx.settings();
  const count = ctx.store.sessions.size;
  if (count < max_sessions) return;
  throw sessionError(
    'quota_exceeded',
    `${fn}: the store holds ${count} sessions, as many as max_sessions (${max_sessions}) allows. ` +
      `Delete sessions to make room, or ${raise('max_sessions')}`,
  );
}
