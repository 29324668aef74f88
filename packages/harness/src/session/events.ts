import { z } from 'zod';
import { type EventTypes, metadataMatches } from '../shared/event-types.ts';
import { Role, type StoredSession } from './types.ts';

// spec: console-worker.md §2.2 — the six trigger types and their binding filters. Unknown
// filter keys are refused at registration (a typo'd filter fails loudly, as the reference does).

export const SessionEvent = {
  Created: 'session::created',
  MessageAdded: 'session::message-added',
  MessageUpdated: 'session::message-updated',
  StatusChanged: 'session::status-changed',
  MetaUpdated: 'session::meta-updated',
  Deleted: 'session::deleted',
} as const;

const metadata = z.record(z.string(), z.unknown(), { error: 'metadata must be an object' }).optional();
const sessionId = z.string({ error: 'session_id must be a string' }).min(1, { error: 'session_id must not be empty' }).optional();
const roles = z.array(Role, { error: 'roles must be an array of roles' }).optional();

const CreatedFilter = z.strictObject({ metadata });
const MessageFilter = z.strictObject({ session_id: sessionId, roles, metadata });
const SessionFilter = z.strictObject({ session_id: sessionId, metadata });

/** What a filter is matched against: the session (its metadata as of the event) and the entry's role. */
export interface EventSubject {
  session_id: string;
  metadata: Record<string, unknown> | undefined;
  /** The message role; null for custom entries (they never match a `roles` filter). */
  role?: Role | null;
}

const matchSession = (f: { session_id?: string; metadata?: Record<string, unknown> }, s: EventSubject) =>
  (f.session_id === undefined || f.session_id === s.session_id) && metadataMatches(f.metadata, s.metadata);
const matchMessage = (f: z.infer<typeof MessageFilter>, s: EventSubject) =>
  matchSession(f, s) && (f.roles === undefined || (s.role != null && f.roles.includes(s.role)));

export function defineSessionEvents(events: EventTypes): void {
  events.define(
    SessionEvent.Created,
    'A session was created (create, ensure, fork); filter: metadata',
    CreatedFilter,
    (f, s: EventSubject) => metadataMatches(f.metadata, s.metadata),
  );
  events.define(SessionEvent.MessageAdded, 'An entry was appended; filters: session_id, roles, metadata', MessageFilter, matchMessage);
  events.define(
    SessionEvent.MessageUpdated,
    "A message's content changed (streaming); filters: session_id, roles, metadata",
    MessageFilter,
    matchMessage,
  );
  events.define(SessionEvent.StatusChanged, 'The session status changed; filters: session_id, metadata', SessionFilter, matchSession);
  events.define(
    SessionEvent.MetaUpdated,
    'Title, description or metadata changed; filters: session_id, metadata',
    SessionFilter,
    matchSession,
  );
  events.define(SessionEvent.Deleted, 'A session was deleted; filters: session_id, metadata', SessionFilter, matchSession);
}

export function subjectOf(session: StoredSession, role?: Role | null): EventSubject {
  return { session_id: session.session_id, metadata: session.metadata, role };
}
