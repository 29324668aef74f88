import { type QueryClient, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { chatPrefs, forgetConversation } from '../lib/chat/prefs.ts';
import { onChatEvent } from './chat-live.ts';
import { releaseConversationWorktree } from './chat-worktrees.ts';
import { callEngine, onEngineOpen } from './client.ts';
import { isOutageError } from './outage.ts';

/**
 * The conversations (issue 25 item 2): the engine's sessions, not a list kept in one browser. The
 * sidebar lists those the console made (metadata `{surface: 'console'}`) and every other session
 * with a transcript (`min_message_count: 1`), marked by origin; ids an older console kept in
 * local storage still show while the store has them. Title, status and last update come from the
 * session store (`session::list`, `session::get`) and stay live from `session::created`,
 * `status-changed`, `meta-updated`, `deleted` and each new user message (`message-added`).
 */

export type SessionStatus = 'idle' | 'working' | 'done' | 'error';

export interface SessionMeta {
  session_id: string;
  title: string;
  description?: string;
  status: SessionStatus;
  status_reason?: string;
  metadata?: Record<string, unknown>;
  created_at: number;
  updated_at: number;
  message_count: number;
}

/** Sessions the console creates carry this metadata (filters for the list and the bindings). */
export const CONSOLE_METADATA = { surface: 'console' } as const;

export const chatKeys = {
  all: ['chat'] as const,
  sessions: () => [...chatKeys.all, 'sessions'] as const,
  models: () => [...chatKeys.all, 'models'] as const,
  providers: () => [...chatKeys.all, 'providers'] as const,
  routerConfig: () => [...chatKeys.all, 'router-config'] as const,
};

/** Sessions listed per query; the sidebar shows the most recently updated. */
const LIST_LIMIT = 200;

async function listSessions(filter: Record<string, unknown>): Promise<SessionMeta[]> {
  const out = await callEngine<{ sessions: SessionMeta[] }>('session::list', { ...filter, order: 'updated_desc', limit: LIST_LIMIT });
  return out.sessions;
}

async function fetchConversations(): Promise<SessionMeta[]> {
  const [mine, talked] = await Promise.all([listSessions({ metadata: CONSOLE_METADATA }), listSessions({ min_message_count: 1 })]);
  const byId = new Map<string, SessionMeta>();
  for (const s of mine) byId.set(s.session_id, s);
  // (a session store from before min_message_count lists every session: the count is checked here too)
  for (const s of talked) if (s.message_count > 0) byId.set(s.session_id, s);
  // ids an older console kept in this browser: one read each, forgotten once the store does not know them
  const legacy = chatPrefs().legacyConversations.filter((id) => !byId.has(id));
  const read = await Promise.all(
    legacy.map((id) => callEngine<{ meta: SessionMeta } | null>('session::get', { session_id: id }).catch(() => undefined)),
  );
  legacy.forEach((id, i) => {
    const got = read[i];
    if (got?.meta) byId.set(id, got.meta);
    else if (got === null) forgetConversation(id);
  });
  return [...byId.values()].sort((a, b) => b.updated_at - a.updated_at);
}

/**
 * Where a session came from, for the badge beside a conversation the console did not make: its
 * metadata's `surface` (or `origin`, `source`, `client`), "sub-agent" for a child of a harness
 * turn, else "other". Undefined for the console's own.
 */
export function originOf(meta: Pick<SessionMeta, 'metadata'>): string | undefined {
  const m = meta.metadata ?? {};
  if (m.surface === CONSOLE_METADATA.surface) return undefined;
  for (const key of ['surface', 'origin', 'source', 'client']) {
    const v = m[key];
    if (typeof v === 'string' && v.trim()) return v.trim();
  }
  if (typeof m.parent_session_id === 'string') return 'sub-agent';
  return 'other';
}

/** The listed sessions, each replaced by the cached one when that is more recent (a status or title event since). */
export function keepNewer(listed: SessionMeta[], cached: readonly SessionMeta[] | undefined): SessionMeta[] {
  if (!cached?.length) return listed;
  const byId = new Map(cached.map((s) => [s.session_id, s]));
  return listed
    .map((s) => {
      const c = byId.get(s.session_id);
      return c && c.updated_at > s.updated_at
        ? { ...s, status: c.status, status_reason: c.status_reason, title: c.title, updated_at: c.updated_at }
        : s;
    })
    .sort((a, b) => b.updated_at - a.updated_at);
}

/** Apply a live event to the cached list. */
function patchList(list: SessionMeta[] | undefined, sessionId: string, patch: (s: SessionMeta) => SessionMeta | null) {
  if (!list) return list;
  const next = list.flatMap((s) => {
    if (s.session_id !== sessionId) return [s];
    const p = patch(s);
    return p ? [p] : [];
  });
  return next.sort((a, b) => b.updated_at - a.updated_at);
}

export function useConversations() {
  const queryClient = useQueryClient();
  useEffect(() => {
    const key = chatKeys.sessions();
    let refetch = 0;
    // a session made elsewhere, or one that just got its first message: read the list again (once per burst)
    const reread = () => {
      window.clearTimeout(refetch);
      refetch = window.setTimeout(() => void queryClient.invalidateQueries({ queryKey: key }), 300);
    };
    const known = (id: string) => !!queryClient.getQueryData<SessionMeta[]>(key)?.some((s) => s.session_id === id);
    const offEvents = onChatEvent((e) => {
      if (e.type === 'status')
        queryClient.setQueryData<SessionMeta[]>(key, (l) =>
          patchList(l, e.session_id, (s) => ({
            ...s,
            status: e.status as SessionStatus,
            status_reason: e.status_reason,
            updated_at: e.timestamp ?? s.updated_at,
          })),
        );
      else if (e.type === 'meta')
        queryClient.setQueryData<SessionMeta[]>(key, (l) =>
          patchList(l, e.session_id, (s) => ({ ...s, title: e.title ?? s.title, updated_at: e.timestamp ?? s.updated_at })),
        );
      // (one this page made is in the list already)
      else if (e.type === 'created') {
        if (!known(e.session_id)) reread();
      } else if (e.type === 'deleted') {
        void releaseConversationWorktree(e.session_id)();
        forgetConversation(e.session_id);
        queryClient.setQueryData<SessionMeta[]>(key, (l) => patchList(l, e.session_id, () => null));
      } else if (e.type === 'activity') {
        // a new user message moves the conversation up (the store bumps updated_at on append)
        if (known(e.session_id))
          queryClient.setQueryData<SessionMeta[]>(key, (l) =>
            patchList(l, e.session_id, (s) => ({ ...s, updated_at: e.timestamp ?? Date.now() })),
          );
        else reread();
      }
    });
    // events missed while the engine was away: read the list again when it is back
    const offOpen = onEngineOpen(() => void queryClient.invalidateQueries({ queryKey: key }));
    return () => {
      window.clearTimeout(refetch);
      offEvents();
      offOpen();
    };
  }, [queryClient]);
  return useQuery({
    queryKey: chatKeys.sessions(),
    // a live event that arrived while the list was read is newer than what the read returns
    queryFn: async () => keepNewer(await fetchConversations(), queryClient.getQueryData<SessionMeta[]>(chatKeys.sessions())),
    staleTime: 30_000,
    // after an outage the session store may reconnect after the page does: keep trying a while
    retry: (failures, error) => failures < (isOutageError(error) ? 30 : 12),
    retryDelay: (failures) => Math.min(1000 * 2 ** failures, 8000),
  });
}

/**
 * Make the session of a new conversation, at its first send (issue 25 item 2: "New chat" only
 * clears the composer, so no empty sessions pile up). The id was chosen when the draft began, so
 * a working directory picked before the first message already belongs to it.
 */
export async function createConversation(queryClient: QueryClient, sessionId: string): Promise<{ meta: SessionMeta; created: boolean }> {
  const res = await callEngine<{ session_id: string; meta: SessionMeta; created: boolean }>('session::ensure', {
    session_id: sessionId,
    metadata: CONSOLE_METADATA,
  });
  queryClient.setQueryData<SessionMeta[]>(chatKeys.sessions(), (l) => [
    res.meta,
    ...(l ?? []).filter((s) => s.session_id !== res.meta.session_id),
  ]);
  return { meta: res.meta, created: res.created };
}

/** A new conversation's session id, chosen by the console (console-worker.md: `console-<uuid>`). */
export function newConversationId(): string {
  return `console-${crypto.randomUUID()}`;
}

export function useRenameConversation() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: { sessionId: string; title: string }) =>
      callEngine<{ meta: SessionMeta }>('session::set-meta', { session_id: input.sessionId, title: input.title }),
    onSuccess: ({ meta }) => queryClient.setQueryData<SessionMeta[]>(chatKeys.sessions(), (l) => patchList(l, meta.session_id, () => meta)),
  });
}

export function useDeleteConversation() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (sessionId: string) => {
      // read before the delete: its `deleted` event may forget the conversation before this resolves
      const giveBack = releaseConversationWorktree(sessionId);
      const out = await callEngine<{ deleted: boolean }>('session::delete', { session_id: sessionId });
      // its worktree is given back (best effort)
      void giveBack();
      return out;
    },
    onSuccess: (_r, sessionId) => {
      forgetConversation(sessionId);
      queryClient.setQueryData<SessionMeta[]>(chatKeys.sessions(), (l) => patchList(l, sessionId, () => null));
    },
  });
}

/** Title an untitled conversation from its first message (seed 2.9). */
export async function titleIfUntitled(sessionId: string, title: string): Promise<void> {
  const got = await callEngine<{ meta: SessionMeta } | null>('session::get', { session_id: sessionId });
  if (got?.meta && !got.meta.title && title) await callEngine('session::set-meta', { session_id: sessionId, title });
}
