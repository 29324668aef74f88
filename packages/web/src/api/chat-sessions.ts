import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { addConversation, chatPrefs, removeConversation, updateChatPrefs } from '../lib/chat/prefs.ts';
import { onChatEvent } from './chat-live.ts';
import { releaseConversationWorktree } from './chat-worktrees.ts';
import { callEngine, onEngineOpen } from './client.ts';

/**
 * Conversations of this browser (seed 2.9 "Conversation sidebar"): session ids kept in local
 * storage, their title, status and last update read from the session store (`session::list`,
 * `session::get`) and kept live from `session::status-changed`, `meta-updated` and `deleted`.
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

async function fetchConversations(): Promise<SessionMeta[]> {
  const ids = chatPrefs().conversations;
  const listed = await callEngine<{ sessions: SessionMeta[] }>('session::list', {
    metadata: CONSOLE_METADATA,
    order: 'updated_desc',
    limit: 500,
  });
  const byId = new Map(listed.sessions.map((s) => [s.session_id, s]));
  // conversations opened here but not made by a console (or beyond the first page): one read each
  const missing = ids.filter((id) => !byId.has(id));
  const read = await Promise.all(
    missing.map((id) => callEngine<{ meta: SessionMeta } | null>('session::get', { session_id: id }).catch(() => undefined)),
  );
  missing.forEach((id, i) => {
    const got = read[i];
    if (got?.meta) byId.set(id, got.meta);
    // null: the store does not know it (deleted elsewhere): forget it here too
    else if (got === null) removeConversation(id);
  });
  return ids.flatMap((id) => byId.get(id) ?? []).sort((a, b) => b.updated_at - a.updated_at);
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
    const offEvents = onChatEvent((e) => {
      const key = chatKeys.sessions();
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
      else if (e.type === 'deleted') {
        if (chatPrefs().conversations.includes(e.session_id)) {
          void releaseConversationWorktree(e.session_id)();
          removeConversation(e.session_id);
        }
        queryClient.setQueryData<SessionMeta[]>(key, (l) => patchList(l, e.session_id, () => null));
      } else if (e.type === 'message' && e.entry.message?.role === 'user')
        // a new message moves the conversation up (the store bumps updated_at on append)
        queryClient.setQueryData<SessionMeta[]>(key, (l) => patchList(l, e.session_id, (s) => ({ ...s, updated_at: Date.now() })));
    });
    // events missed while the engine was away: read the list again when it is back
    const offOpen = onEngineOpen(() => void queryClient.invalidateQueries({ queryKey: chatKeys.sessions() }));
    return () => {
      offEvents();
      offOpen();
    };
  }, [queryClient]);
  return useQuery({ queryKey: chatKeys.sessions(), queryFn: fetchConversations, staleTime: 30_000 });
}

export function useCreateConversation() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async () => {
      const res = await callEngine<{ session_id: string; meta: SessionMeta }>('session::create', { metadata: CONSOLE_METADATA });
      return res.meta;
    },
    onSuccess: (meta) => {
      addConversation(meta.session_id);
      queryClient.setQueryData<SessionMeta[]>(chatKeys.sessions(), (l) => [
        meta,
        ...(l ?? []).filter((s) => s.session_id !== meta.session_id),
      ]);
    },
  });
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
      removeConversation(sessionId);
      queryClient.setQueryData<SessionMeta[]>(chatKeys.sessions(), (l) => patchList(l, sessionId, () => null));
    },
  });
}

/** Title an untitled conversation from its first message (seed 2.9). */
export async function titleIfUntitled(sessionId: string, title: string): Promise<void> {
  const got = await callEngine<{ meta: SessionMeta } | null>('session::get', { session_id: sessionId });
  if (got?.meta && !got.meta.title && title) await callEngine('session::set-meta', { session_id: sessionId, title });
}

export const setActiveConversation = (id: string | undefined) => updateChatPrefs(() => ({ active: id }));
