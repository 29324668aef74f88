import { useQueryClient } from '@tanstack/react-query';
import { useCallback, useSyncExternalStore } from 'react';
import { chatPrefs, updateChatPrefs } from '../lib/chat/prefs.ts';
import { landNotice, ownerOf, type WorktreeNotice } from '../lib/chat/worktree-notices.ts';
import { chatKeys, type SessionMeta } from './chat-sessions.ts';
import { callEngine } from './client.ts';
import { type LiveEventRecord, useWorktreeLive, type WorktreeInfo, worktreeKeys } from './worktrees.ts';

/**
 * The chat's side of the worktree worker (seed 2.9 "Picker tab", "Working-dir badge", notices;
 * console-worker.md §4.3): a conversation's working directory is a folder or a managed worktree
 * claimed for its session (`worktree::validate` then `worktree::claim`); the console releases
 * its claim, best effort, when the conversation points elsewhere or is deleted; `landed` /
 * `land-blocked` of a worktree become notices in the conversation that owns it.
 */

interface Validation {
  valid: boolean;
  managed: boolean;
  worktree_id?: string;
  path?: string;
  reason?: string;
}

/** Drop the console's claim on a conversation's worktree (best effort: prune is the backstop). */
async function releaseClaim(sessionId: string, worktreeId: string): Promise<void> {
  try {
    await callEngine('worktree::release', { worktree_id: worktreeId, session_id: sessionId });
  } catch {
    // not held any more (released elsewhere, removed, landed): nothing to give back
  }
}

/**
 * Point a conversation at a working directory (`root`; none when undefined) — a managed worktree
 * when `worktreeId` is set (already claimed) — and release the worktree it pointed at before.
 */
export async function pointConversation(sessionId: string, next: { root?: string; worktreeId?: string }): Promise<void> {
  const previous = chatPrefs().worktrees[sessionId];
  updateChatPrefs((p) => {
    const { [sessionId]: _dir, ...workingDirs } = p.workingDirs;
    const { [sessionId]: _claim, ...worktrees } = p.worktrees;
    return {
      workingDirs: next.root ? { ...workingDirs, [sessionId]: next.root } : workingDirs,
      worktrees: next.worktreeId ? { ...worktrees, [sessionId]: next.worktreeId } : worktrees,
    };
  });
  if (previous && previous !== next.worktreeId) await releaseClaim(sessionId, previous);
}

/** Validate a managed worktree's path, claim it for the conversation's session, make it the working directory. */
export async function pickWorktree(sessionId: string, wt: Pick<WorktreeInfo, 'worktree_id' | 'path'>): Promise<void> {
  const check = await callEngine<Validation>('worktree::validate', { path: wt.path });
  if (!check.valid) throw new Error(`${wt.path} cannot be used: ${check.reason ?? 'not a managed worktree'}`);
  const worktreeId = check.worktree_id ?? wt.worktree_id;
  await callEngine('worktree::claim', { worktree_id: worktreeId, session_id: sessionId });
  await pointConversation(sessionId, { root: check.path ?? wt.path, worktreeId });
}

/**
 * A folder typed in: when the worktree worker is there and the folder is (inside) a managed
 * worktree, that worktree is claimed like a picked one (and refused while it lands).
 */
export async function pickFolder(sessionId: string, path: string, worktreesPresent: boolean): Promise<void> {
  const root = path.trim();
  if (!root) return pointConversation(sessionId, {});
  if (worktreesPresent) {
    const check = await callEngine<Validation>('worktree::validate', { path: root });
    if (check.managed && check.worktree_id) {
      if (!check.valid) throw new Error(`${root} is in worktree ${check.worktree_id}, which cannot be used: ${check.reason ?? 'refused'}`);
      await callEngine('worktree::claim', { worktree_id: check.worktree_id, session_id: sessionId });
      return pointConversation(sessionId, { root, worktreeId: check.worktree_id });
    }
  }
  return pointConversation(sessionId, { root });
}

/** A new worktree of a repository, created claimed for the conversation (`worktree::create {session_id}`). */
export async function createWorktreeFor(
  sessionId: string,
  repoPath: string,
  baseRef?: string,
): Promise<{ worktree_id: string; path: string }> {
  const out = await callEngine<{ worktree_id: string; path: string; branch: string }>(
    'worktree::create',
    { repo_path: repoPath.trim(), ...(baseRef?.trim() ? { base_ref: baseRef.trim() } : {}), session_id: sessionId },
    { timeoutMs: 60_000 },
  );
  await pointConversation(sessionId, { root: out.path, worktreeId: out.worktree_id });
  return out;
}

/**
 * A deleted conversation gives its worktree back: what it holds is read now (before the
 * conversation is forgotten), the returned function releases it.
 */
export function releaseConversationWorktree(sessionId: string): () => Promise<void> {
  const claimed = chatPrefs().worktrees[sessionId];
  return async () => {
    if (claimed) await releaseClaim(sessionId, claimed);
  };
}

// ---- notices: per conversation, for this page's life ----

const notices = new Map<string, WorktreeNotice[]>();
const noticeListeners = new Set<() => void>();
const NONE: WorktreeNotice[] = [];

function addNotice(sessionId: string, notice: WorktreeNotice): void {
  const list = notices.get(sessionId) ?? [];
  // a land the worker resumed after a crash may be reported twice
  if (list.some((n) => n.id === notice.id)) return;
  notices.set(sessionId, [...list, notice].slice(-5));
  for (const l of noticeListeners) l();
}

export function dismissWorktreeNotice(sessionId: string, id: string): void {
  const list = notices.get(sessionId);
  if (!list) return;
  notices.set(
    sessionId,
    list.filter((n) => n.id !== id),
  );
  for (const l of noticeListeners) l();
}

export function useWorktreeNotices(sessionId: string | undefined): WorktreeNotice[] {
  return useSyncExternalStore(
    (l) => {
      noticeListeners.add(l);
      return () => noticeListeners.delete(l);
    },
    () => (sessionId ? (notices.get(sessionId) ?? NONE) : NONE),
  );
}

/**
 * While the worktree worker is connected: the six lifecycle bindings (shared with the Worktrees
 * page) keep the list — and so the badge — fresh, and `landed` / `land-blocked` become notices
 * of the conversation that owns the worktree.
 */
export function useChatWorktreeEvents(): void {
  const queryClient = useQueryClient();
  const onEvent = useCallback(
    (event: LiveEventRecord) => {
      const type = event.type;
      if (type !== 'landed' && type !== 'land-blocked') return;
      const prefs = chatPrefs();
      // this console's conversations: those it lists (the engine's sessions) and any it claimed a worktree for
      const listed = queryClient.getQueryData<SessionMeta[]>(chatKeys.sessions())?.map((s) => s.session_id) ?? [];
      const owner = ownerOf(event.payload, [...listed, ...Object.keys(prefs.worktrees)], prefs.worktrees);
      if (!owner) return;
      const worktreeId = typeof event.payload.worktree_id === 'string' ? event.payload.worktree_id : '';
      const known = queryClient.getQueryData<WorktreeInfo[]>(worktreeKeys.list());
      const branch =
        typeof event.payload.branch === 'string' ? event.payload.branch : known?.find((w) => w.worktree_id === worktreeId)?.branch;
      if (branch || !worktreeId) {
        addNotice(owner, landNotice(type, event.payload, event.at, branch));
        return;
      }
      // land-blocked does not name the branch, and the list may not know the worktree yet: ask for it
      void callEngine<WorktreeInfo>('worktree::get', { worktree_id: worktreeId })
        .then((wt) => wt?.branch)
        .catch(() => undefined)
        .then((b) => addNotice(owner, landNotice(type, event.payload, event.at, b)));
    },
    [queryClient],
  );
  useWorktreeLive(onEvent);
}
