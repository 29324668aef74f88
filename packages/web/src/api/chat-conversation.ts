import { useCallback, useEffect, useMemo, useSyncExternalStore } from 'react';
import { applyEntry, EMPTY_TRANSCRIPT, type Entry, entriesOf, mergeSnapshot, type Transcript } from '../lib/chat/transcript.ts';
import { type ChatEvent, onChatEvent, watchSession } from './chat-live.ts';
import type { SessionMeta, SessionStatus } from './chat-sessions.ts';
import { callEngine, connectionState, onEngineOpen } from './client.ts';

/**
 * One open conversation, rendered from the session store alone (console-worker.md §2.3): the
 * `message-added/updated` bindings are made first, then the transcript is read
 * (`session::messages`), the status (`session::get`) and the held calls
 * (`approval::list-pending`); events and the snapshot are reconciled by revision, so nothing is
 * lost or rolled back whichever arrives first. A reload mid-turn picks the running turn up the same
 * way: the snapshot has the partial answer, the next updates continue it.
 */

export interface ConversationState {
  transcript: Transcript;
  status: SessionStatus | undefined;
  statusReason?: string;
  title: string;
  /** function_call ids held for approval. */
  pending: ReadonlySet<string>;
  loaded: boolean;
  /** The session store does not know this session (a bad link, or deleted). */
  notFound?: boolean;
  error?: unknown;
}

const INITIAL: ConversationState = { transcript: EMPTY_TRANSCRIPT, status: undefined, title: '', pending: new Set(), loaded: false };

/**
 * The last known state of each conversation, kept outside React (issue 25 item 1): a page that
 * mounts again (another route and back, the chat gate during an outage) shows what was last read
 * instead of an empty transcript, and an outage changes none of it. Bounded: the least recently
 * used conversations nobody shows are forgotten beyond `KEEP`.
 */
const KEEP = 24;
const states = new Map<string, ConversationState>();
const shown = new Map<string, number>();
const listeners = new Set<() => void>();

export function conversationState(sessionId: string): ConversationState {
  return states.get(sessionId) ?? INITIAL;
}

function update(sessionId: string, change: (s: ConversationState) => ConversationState): void {
  const prev = conversationState(sessionId);
  const next = change(prev);
  if (next === prev) return;
  states.delete(sessionId);
  states.set(sessionId, next);
  if (states.size > KEEP) {
    for (const id of states.keys()) {
      if (states.size <= KEEP) break;
      if (!shown.has(id)) states.delete(id);
    }
  }
  for (const l of listeners) l();
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Show a message before the store has it (the `e_idem_<key>` entry replaces it, any revision ≥ 0). */
export function addOptimistic(sessionId: string, entry: Entry): void {
  update(sessionId, (s) => ({ ...s, transcript: applyEntry(s.transcript, { ...entry, revision: -1 }) }));
}

export function dropOptimistic(sessionId: string, entryId: string): void {
  update(sessionId, (s) => {
    const known = s.transcript.byId.get(entryId);
    if (!known || known.revision !== -1) return s;
    const byId = new Map(s.transcript.byId);
    byId.delete(entryId);
    return { ...s, transcript: { order: s.transcript.order.filter((id) => id !== entryId), byId } };
  });
}

/** A session this page just created: known to exist, titled, nothing to wait for. */
export function primeConversation(sessionId: string, meta: Pick<SessionMeta, 'title' | 'status'>): void {
  update(sessionId, (s) => ({ ...s, title: s.title || meta.title, status: s.status ?? meta.status, notFound: false }));
}

interface MessagesPage {
  messages: Entry[];
  next_cursor?: string;
}

async function readTranscript(sessionId: string): Promise<Entry[]> {
  const out: Entry[] = [];
  let cursor: string | undefined;
  do {
    const page = await callEngine<MessagesPage>(
      'session::messages',
      { session_id: sessionId, limit: 500, include_custom: true, ...(cursor ? { cursor } : {}) },
      { timeoutMs: 30_000 },
    );
    out.push(...page.messages);
    cursor = page.next_cursor;
  } while (cursor);
  return out;
}

async function readPending(sessionId: string): Promise<Set<string>> {
  try {
    const res = await callEngine<{ pending: Array<{ function_call_id: string }> }>('approval::list-pending', {
      session_id: sessionId,
      limit: 500,
    });
    return new Set(res.pending.map((p) => p.function_call_id));
  } catch {
    // no approval gate: nothing is ever held
    return new Set();
  }
}

/** One live event applied to the state (pure). */
export function reduceEvent(s: ConversationState, e: ChatEvent): ConversationState {
  switch (e.type) {
    case 'message': {
      const transcript = applyEntry(s.transcript, e.entry);
      return transcript === s.transcript ? s : { ...s, transcript };
    }
    case 'status':
      return { ...s, status: e.status as SessionStatus, statusReason: e.status_reason };
    case 'meta':
      return e.title !== undefined ? { ...s, title: e.title } : s;
    case 'pending-created':
      return { ...s, pending: new Set([...s.pending, e.function_call_id]) };
    case 'pending-resolved': {
      const pending = new Set(s.pending);
      pending.delete(e.function_call_id);
      return { ...s, pending };
    }
    case 'turn-completed':
      // the status event follows; the turn's end also clears anything still shown as held
      return { ...s, pending: new Set() };
    case 'deleted':
      return { ...s, notFound: true, status: undefined, pending: new Set() };
    default:
      return s;
  }
}

/**
 * While a read fails with the engine connected (a chat worker still reconnecting after an outage),
 * it is tried again after these pauses, then every 8 s for about a minute.
 */
const RETRY_MS = [1000, 2000, 4000, 8000];
const RETRIES = 10;

export function useConversation(sessionId: string | undefined) {
  const state = useSyncExternalStore(subscribe, () => (sessionId ? conversationState(sessionId) : INITIAL));

  const load = useCallback(async (id: string) => {
    try {
      const [entries, meta, pending] = await Promise.all([
        readTranscript(id),
        callEngine<{ meta: SessionMeta } | null>('session::get', { session_id: id }),
        readPending(id),
      ]);
      update(id, (s) =>
        meta === null
          ? { ...s, loaded: true, notFound: true, status: undefined, pending: new Set(), error: undefined }
          : {
              ...s,
              transcript: mergeSnapshot(s.transcript, entries),
              status: meta.meta.status ?? s.status,
              statusReason: meta.meta.status_reason,
              title: meta.meta.title ?? s.title,
              pending,
              loaded: true,
              notFound: false,
              error: undefined,
            },
      );
      return true;
    } catch (err) {
      if ((err as { code?: string }).code === 'session/not_found') {
        update(id, (s) => ({ ...s, loaded: true, notFound: true, status: undefined, pending: new Set(), error: undefined }));
        return true;
      }
      // the last known state stays; an outage is said by the banner, not as a read error
      update(id, (s) => ({ ...s, loaded: true, error: connectionState().status === 'open' ? err : s.error }));
      return false;
    }
  }, []);

  useEffect(() => {
    if (!sessionId) return;
    shown.set(sessionId, (shown.get(sessionId) ?? 0) + 1);
    const unwatch = watchSession(sessionId);
    // events are applied together once per frame: a streaming answer updates every ~40 ms and
    // other events arrive in bursts; one render per frame whatever their number
    let queue: ChatEvent[] = [];
    let frame = 0;
    let fallback = 0;
    let retry = 0;
    let attempt = 0;
    let closed = false;
    const flush = () => {
      cancelAnimationFrame(frame);
      window.clearTimeout(fallback);
      frame = 0;
      fallback = 0;
      const batch = queue;
      queue = [];
      if (batch.length) update(sessionId, (s) => batch.reduce(reduceEvent, s));
    };
    const off = onChatEvent((e) => {
      if (!('session_id' in e) || e.session_id !== sessionId) return;
      queue.push(e);
      if (!frame) {
        frame = requestAnimationFrame(flush);
        // a hidden tab runs no frames: apply within 250 ms anyway
        fallback = window.setTimeout(flush, 250);
      }
    });
    const read = async () => {
      window.clearTimeout(retry);
      const ok = await load(sessionId);
      if (closed || ok || connectionState().status !== 'open' || attempt >= RETRIES) return;
      retry = window.setTimeout(read, RETRY_MS[Math.min(attempt++, RETRY_MS.length - 1)]);
    };
    // on every (re)connection: read it all again (events missed during an outage are not replayed)
    const offOpen = onEngineOpen(() => {
      attempt = 0;
      void read();
    });
    return () => {
      closed = true;
      cancelAnimationFrame(frame);
      window.clearTimeout(fallback);
      window.clearTimeout(retry);
      unwatch();
      off();
      offOpen();
      const n = (shown.get(sessionId) ?? 1) - 1;
      if (n > 0) shown.set(sessionId, n);
      else shown.delete(sessionId);
    };
  }, [sessionId, load]);

  const entries = useMemo(() => entriesOf(state.transcript), [state.transcript]);
  return { ...state, entries, reload: () => (sessionId ? load(sessionId) : Promise.resolve(false)) };
}
