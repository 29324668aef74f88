import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { applyEntry, EMPTY_TRANSCRIPT, type Entry, entriesOf, mergeSnapshot, type Transcript } from '../lib/chat/transcript.ts';
import { type ChatEvent, onChatEvent, watchSession } from './chat-live.ts';
import type { SessionMeta, SessionStatus } from './chat-sessions.ts';
import { callEngine, onEngineOpen } from './client.ts';

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
  error?: unknown;
}

const INITIAL: ConversationState = { transcript: EMPTY_TRANSCRIPT, status: undefined, title: '', pending: new Set(), loaded: false };

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
    default:
      return s;
  }
}

export function useConversation(sessionId: string | undefined) {
  const [state, setState] = useState<ConversationState>(INITIAL);
  const current = useRef(sessionId);
  current.current = sessionId;

  const load = useCallback(async (id: string) => {
    try {
      const [entries, meta, pending] = await Promise.all([
        readTranscript(id),
        callEngine<{ meta: SessionMeta } | null>('session::get', { session_id: id }),
        readPending(id),
      ]);
      if (current.current !== id) return;
      setState((s) => ({
        ...s,
        transcript: mergeSnapshot(s.transcript, entries),
        status: meta?.meta.status ?? s.status,
        statusReason: meta?.meta.status_reason,
        title: meta?.meta.title ?? s.title,
        pending,
        loaded: true,
        error: meta === null ? new Error(`session ${id} does not exist in the session store`) : undefined,
      }));
    } catch (err) {
      if (current.current === id) setState((s) => ({ ...s, loaded: true, error: err }));
    }
  }, []);

  useEffect(() => {
    setState(INITIAL);
    if (!sessionId) return;
    const unwatch = watchSession(sessionId);
    // events are applied together once per frame: a streaming answer updates every ~40 ms and
    // other events arrive in bursts; one render per frame whatever their number
    let queue: ChatEvent[] = [];
    let frame = 0;
    let fallback = 0;
    const flush = () => {
      cancelAnimationFrame(frame);
      window.clearTimeout(fallback);
      frame = 0;
      fallback = 0;
      const batch = queue;
      queue = [];
      if (batch.length) setState((s) => batch.reduce(reduceEvent, s));
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
    // on every (re)connection: read it all again (events missed during an outage are not replayed)
    const offOpen = onEngineOpen(() => void load(sessionId));
    return () => {
      cancelAnimationFrame(frame);
      window.clearTimeout(fallback);
      unwatch();
      off();
      offOpen();
    };
  }, [sessionId, load]);

  /** Show a message before the store has it (the `e_idem_<key>` entry replaces it, any revision ≥ 0). */
  const addOptimistic = useCallback((entry: Entry) => {
    setState((s) => ({ ...s, transcript: applyEntry(s.transcript, { ...entry, revision: -1 }) }));
  }, []);

  const dropOptimistic = useCallback((entryId: string) => {
    setState((s) => {
      const known = s.transcript.byId.get(entryId);
      if (!known || known.revision !== -1) return s;
      const byId = new Map(s.transcript.byId);
      byId.delete(entryId);
      return { ...s, transcript: { order: s.transcript.order.filter((id) => id !== entryId), byId } };
    });
  }, []);

  const entries = useMemo(() => entriesOf(state.transcript), [state.transcript]);
  return { ...state, entries, addOptimistic, dropOptimistic, reload: () => sessionId && load(sessionId) };
}
