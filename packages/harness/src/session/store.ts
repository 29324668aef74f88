import type { StateKv } from '../shared/kv.ts';
import { sessionError } from './errors.ts';
import type { AttachmentMeta, SessionMeta, StoredEntry, StoredSession } from './types.ts';

// State layout (engine state module, through state::*): one key per session meta, one key per
// entry, so a streaming update rewrites one entry, never a transcript.
export const SESSIONS_SCOPE = 'session-manager:sessions';
export const entriesScope = (sessionId: string) => `session-manager:entries:${sessionId}`;
export const attachmentsScope = (sessionId: string) => `session-manager:attachments:${sessionId}`;
export const attachmentDataScope = (sessionId: string) => `session-manager:attachment-data:${sessionId}`;

/** Transcripts kept in memory at once; the least recently used beyond this are re-read on demand. */
const CACHED_TRANSCRIPTS = 256;

/**
 * The session store's memory over its durable state: every session's meta (loaded at start, so
 * `get` and `list` never touch storage) and the transcripts of recently used sessions. Mutations
 * change memory synchronously and then persist; callers answer only once the write is stored.
 * One session-manager per engine: two instances would each trust their own memory.
 */
export class SessionStore {
  readonly sessions = new Map<string, StoredSession>();
  private readonly transcripts = new Map<string, Map<string, StoredEntry>>();
  private readonly loading = new Map<string, Promise<Map<string, StoredEntry>>>();
  private readonly attachmentIndex = new Map<string, Map<string, AttachmentMeta>>();

  constructor(readonly kv: StateKv) {}

  async init(): Promise<number> {
    for (const { key, value } of await this.kv.list<StoredSession>(SESSIONS_SCOPE)) this.sessions.set(key, value);
    return this.sessions.size;
  }

  /** The session or `session/not_found`. */
  require(sessionId: string): StoredSession {
    const session = this.sessions.get(sessionId);
    if (!session) throw sessionError('not_found', `session ${sessionId} does not exist`);
    return session;
  }

  /** The session's entries by id (read from storage on first use). */
  async entries(sessionId: string): Promise<Map<string, StoredEntry>> {
    const cached = this.transcripts.get(sessionId);
    if (cached) {
      // refresh its place in the LRU order
      this.transcripts.delete(sessionId);
      this.transcripts.set(sessionId, cached);
      return cached;
    }
    let pending = this.loading.get(sessionId);
    if (!pending) {
      pending = this.load(sessionId).finally(() => this.loading.delete(sessionId));
      this.loading.set(sessionId, pending);
    }
    return pending;
  }

  private async load(sessionId: string): Promise<Map<string, StoredEntry>> {
    await this.kv.flush(); // a write of an evicted transcript may still be on its way
    const map = new Map<string, StoredEntry>();
    const rows = await this.kv.list<StoredEntry>(entriesScope(sessionId));
    rows.sort((a, b) => a.value.seq - b.value.seq);
    for (const { value } of rows) map.set(value.id, value);
    if (!this.sessions.has(sessionId)) return map; // deleted meanwhile: do not cache
    this.transcripts.set(sessionId, map);
    while (this.transcripts.size > CACHED_TRANSCRIPTS) {
      const oldest = this.transcripts.keys().next().value as string;
      this.transcripts.delete(oldest);
    }
    return map;
  }

  /** Cache a transcript built in memory (a fork) so it is not read back from storage. */
  cacheTranscript(sessionId: string, entries: Map<string, StoredEntry>): void {
    this.transcripts.set(sessionId, entries);
  }

  async attachments(sessionId: string): Promise<Map<string, AttachmentMeta>> {
    let index = this.attachmentIndex.get(sessionId);
    if (!index) {
      index = new Map((await this.kv.list<AttachmentMeta>(attachmentsScope(sessionId))).map((row) => [row.key, row.value]));
      if (!this.sessions.has(sessionId)) return index;
      this.attachmentIndex.set(sessionId, index);
    }
    return index;
  }

  saveSession(session: StoredSession): Promise<void> {
    return this.kv.set(SESSIONS_SCOPE, session.session_id, session);
  }

  saveEntry(sessionId: string, entry: StoredEntry): Promise<void> {
    return this.kv.set(entriesScope(sessionId), entry.id, entry);
  }

  /**
   * After a failed write, memory may be ahead of storage: forget the transcript and re-read the
   * meta, so the next call sees what is durable.
   */
  async invalidate(sessionId: string): Promise<void> {
    this.transcripts.delete(sessionId);
    this.attachmentIndex.delete(sessionId);
    try {
      const stored = await this.kv.get<StoredSession>(SESSIONS_SCOPE, sessionId);
      if (stored) this.sessions.set(sessionId, stored);
      else this.sessions.delete(sessionId);
    } catch {
      // storage still failing: keep what memory has; the caller already reports the failure
    }
  }

  /** Forget the session in memory at once (readers see it gone), then remove its keys. */
  async delete(sessionId: string): Promise<void> {
    this.sessions.delete(sessionId);
    this.transcripts.delete(sessionId);
    this.attachmentIndex.delete(sessionId);
    await this.kv.delete(SESSIONS_SCOPE, sessionId);
    await Promise.all([
      this.kv.clear(entriesScope(sessionId)),
      this.kv.clear(attachmentsScope(sessionId)),
      this.kv.clear(attachmentDataScope(sessionId)),
    ]);
  }
}

/** The public meta of a stored session (without the store's bookkeeping). */
export function publicMeta(session: StoredSession): SessionMeta {
  const { active_leaf: _leaf, next_seq: _seq, ...meta } = session;
  return meta;
}
