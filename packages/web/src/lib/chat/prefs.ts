import { useSyncExternalStore } from 'react';

/**
 * What the chat keeps in this browser: UI preferences only — the last model, mode and effort, the
 * sidebar state, and each conversation's working directory and worktree claim. The conversations
 * themselves are the engine's sessions (issue 25 item 2: listed from the session store, opened by
 * their URL `#/chat/<session_id>` in any browser); `legacyConversations` are the ids an older
 * console kept here, still listed while the engine has them.
 */

export type ChatMode = 'plan' | 'ask' | 'agent';
export const MODES: readonly ChatMode[] = ['ask', 'plan', 'agent'];

export interface ChatPrefs {
  /** Conversation ids an older console kept in this browser (read once, pruned when the engine forgets them). */
  legacyConversations: string[];
  /** `provider::modelId` */
  model?: string;
  effort?: string;
  mode: ChatMode;
  sidebar: { collapsed: boolean };
  /** Working directory per conversation (`options.metadata.fs_scope.root`), set through the composer's slot. */
  workingDirs: Record<string, string>;
  /** The managed worktree this console claimed for a conversation (released when it points elsewhere). */
  worktrees: Record<string, string>;
}

export const PREFS_KEY = 'eng-chat';
const DEFAULTS: ChatPrefs = { legacyConversations: [], mode: 'agent', sidebar: { collapsed: false }, workingDirs: {}, worktrees: {} };

function stringMap(value: unknown): Record<string, string> {
  if (!value || typeof value !== 'object') return {};
  return Object.fromEntries(Object.entries(value).filter((kv): kv is [string, string] => typeof kv[1] === 'string'));
}

function read(): ChatPrefs {
  try {
    const raw = JSON.parse(localStorage.getItem(PREFS_KEY) ?? 'null') as (Partial<ChatPrefs> & { conversations?: unknown }) | null;
    if (!raw || typeof raw !== 'object') return DEFAULTS;
    // `conversations` is what consoles before issue 25 called the list they kept here
    const legacy = raw.legacyConversations ?? raw.conversations;
    return {
      legacyConversations: Array.isArray(legacy) ? legacy.filter((c): c is string => typeof c === 'string') : [],
      model: typeof raw.model === 'string' ? raw.model : undefined,
      effort: typeof raw.effort === 'string' ? raw.effort : undefined,
      mode: MODES.includes(raw.mode as ChatMode) ? (raw.mode as ChatMode) : 'agent',
      sidebar: { collapsed: raw.sidebar?.collapsed === true },
      workingDirs: stringMap(raw.workingDirs),
      worktrees: stringMap(raw.worktrees),
    };
  } catch {
    return DEFAULTS;
  }
}

let current: ChatPrefs | undefined;
const listeners = new Set<() => void>();

export function chatPrefs(): ChatPrefs {
  current ??= read();
  return current;
}

export function updateChatPrefs(change: (prefs: ChatPrefs) => Partial<ChatPrefs>): void {
  const prev = chatPrefs();
  current = { ...prev, ...change(prev) };
  try {
    localStorage.setItem(PREFS_KEY, JSON.stringify(current));
  } catch {
    // private mode or a full storage: the prefs hold for this page only
  }
  for (const l of listeners) l();
}

export function useChatPrefs(): ChatPrefs {
  return useSyncExternalStore((l) => {
    listeners.add(l);
    const onStorage = (e: StorageEvent) => {
      if (e.key !== PREFS_KEY) return;
      current = read();
      l();
    };
    window.addEventListener('storage', onStorage);
    return () => {
      listeners.delete(l);
      window.removeEventListener('storage', onStorage);
    };
  }, chatPrefs);
}

/** A conversation is gone from the session store: forget what this browser kept for it. */
export const forgetConversation = (id: string) =>
  updateChatPrefs((p) => {
    const { [id]: _gone, ...workingDirs } = p.workingDirs;
    const { [id]: _claim, ...worktrees } = p.worktrees;
    return { legacyConversations: p.legacyConversations.filter((c) => c !== id), workingDirs, worktrees };
  });
