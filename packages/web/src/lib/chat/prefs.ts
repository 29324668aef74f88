import { useSyncExternalStore } from 'react';

/**
 * What the chat keeps in this browser (seed 2.9 "Persistence"): the conversations (session ids,
 * newest first), the active one, the last model, mode and effort, and the sidebar state. The
 * transcripts themselves live in the session store; a reload reads them back from there.
 */

export type ChatMode = 'plan' | 'ask' | 'agent';
export const MODES: readonly ChatMode[] = ['ask', 'plan', 'agent'];

export interface ChatPrefs {
  conversations: string[];
  active?: string;
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
const DEFAULTS: ChatPrefs = { conversations: [], mode: 'agent', sidebar: { collapsed: false }, workingDirs: {}, worktrees: {} };

function stringMap(value: unknown): Record<string, string> {
  if (!value || typeof value !== 'object') return {};
  return Object.fromEntries(Object.entries(value).filter((kv): kv is [string, string] => typeof kv[1] === 'string'));
}

function read(): ChatPrefs {
  try {
    const raw = JSON.parse(localStorage.getItem(PREFS_KEY) ?? 'null') as Partial<ChatPrefs> | null;
    if (!raw || typeof raw !== 'object') return DEFAULTS;
    return {
      conversations: Array.isArray(raw.conversations) ? raw.conversations.filter((c): c is string => typeof c === 'string') : [],
      active: typeof raw.active === 'string' ? raw.active : undefined,
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

export const addConversation = (id: string) =>
  updateChatPrefs((p) => ({ conversations: [id, ...p.conversations.filter((c) => c !== id)], active: id }));

export const removeConversation = (id: string) =>
  updateChatPrefs((p) => {
    const conversations = p.conversations.filter((c) => c !== id);
    const { [id]: _gone, ...workingDirs } = p.workingDirs;
    const { [id]: _claim, ...worktrees } = p.worktrees;
    return { conversations, active: p.active === id ? conversations[0] : p.active, workingDirs, worktrees };
  });
