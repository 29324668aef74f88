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

/** Bytes a value takes stored: its JSON in UTF-8 (how the quotas measure entries and records). */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');
}

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
  /**
   * The quotas' count per session: its `content_bytes` (entries and attachments) plus its record's
   * own JSON, as of its latest save; `total` is their sum. Every write that changes a session saves
   * its record, so the count follows each write (`track`).
   */
  private readonly counted = new Map<string, number>();
  private total = 0;
  /** Entry sizes measured so far; update-message replaces an entry's message in place and sets it again. */
  private readonly entrySizes = new WeakMap<StoredEntry, number>();

  constructor(readonly kv: StateKv) {}

  async init(): Promise<number> {
    for (const { key, value } of await this.kv.list<StoredSession>(SESSIONS_SCOPE)) this.sessions.set(key, value);
    for (const session of this.sessions.values()) {
      if (session.content_bytes !== undefined) {
        this.track(session);
        continue;
      }
      // a record from before the quotas: count what the session holds once, and keep the count with it
      session.content_bytes = await this.measure(session.session_id);
      await this.saveSession(session);
    }
    return this.sessions.size;
  }

  /** Bytes of a session's entries and attachments, read from storage. */
  private async measure(sessionId: string): Promise<number> {
    let bytes = 0;
    for (const { value } of await this.kv.list<StoredEntry>(entriesScope(sessionId))) bytes += jsonBytes(value);
    for (const { value } of await this.kv.list<AttachmentMeta>(attachmentsScope(sessionId))) bytes += value.size;
    return bytes;
  }

  /** Bytes the session holds, as the quotas count them (0 when unknown). */
  usage(sessionId: string): number {
    return this.counted.get(sessionId) ?? 0;
  }

  /** What `session` would hold with its record as it is now (a candidate not stored yet). */
  usageOf(session: StoredSession): number {
    return (session.content_bytes ?? 0) + jsonBytes(session);
  }

  /** Bytes all sessions hold together. */
  get totalBytes(): number {
    return this.total;
  }

  /** The stored size of an entry (measured once, then kept). */
  entryBytes(entry: StoredEntry): number {
    let size = this.entrySizes.get(entry);
    if (size === undefined) {
      size = jsonBytes(entry);
      this.entrySizes.set(entry, size);
    }
    return size;
  }

  /** An entry changed in place: its new stored size. */
  setEntryBytes(entry: StoredEntry, bytes: number): void {
    this.entrySizes.set(entry, bytes);
  }

  /** Count the session as it is now (a session deleted meanwhile is not counted back). */
  private track(session: StoredSession): void {
    if (this.sessions.get(session.session_id) !== session) return;
    const now = this.usageOf(session);
    this.total += now - (this.counted.get(session.session_id) ?? 0);
    this.counted.set(session.session_id, now);
  }

  private untrack(sessionId: string): void {
    this.total -= this.counted.get(sessionId) ?? 0;
    this.counted.delete(sessionId);
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
    this.track(session);
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
      if (stored) {
        this.sessions.set(sessionId, stored);
        this.track(stored);
      } else {
        this.sessions.delete(sessionId);
        this.untrack(sessionId);
      }
    } catch {
      // storage still failing: keep what memory has; the caller already reports the failure
    }
  }

  /** Forget the session in memory at once (readers see it gone), then remove its keys. */
  async delete(sessionId: string): Promise<void> {
    this.sessions.delete(sessionId);
    this.untrack(sessionId);
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
  const { active_leaf: _leaf, next_seq: _seq, content_bytes: _bytes, ...meta } = session;
  return meta;
}
