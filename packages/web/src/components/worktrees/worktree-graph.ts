import type { Lifecycle, WorktreeInfo } from '../../api/worktrees.ts';
import type { Tone } from '../ui/badge.tsx';

/**
 * The graph of the Worktrees page (seed 2.9): repository → worktree → owning session. Pure data,
 * so the page can count and test it without React Flow.
 */
export type WorktreeNodeKind = 'repo' | 'worktree' | 'session';

export interface WorktreeNodeData extends Record<string, unknown> {
  kind: WorktreeNodeKind;
  label: string;
  sub: string;
  /** The worktree this node stands for (worktree nodes), or the first one it links (sessions). */
  worktreeId?: string;
  lifecycle?: Lifecycle;
  dirty?: boolean;
  ahead?: number;
  behind?: number;
  integrated?: boolean;
  count?: number;
}

export interface WorktreeGraph {
  nodes: Array<{ id: string; data: WorktreeNodeData }>;
  edges: Array<{ id: string; source: string; target: string; kind: 'contains' | 'owns' }>;
}

export const repoNodeId = (repoPath: string) => `repo:${repoPath}`;
export const worktreeNodeId = (id: string) => `wt:${id}`;
export const sessionNodeId = (session: string) => `session:${session}`;

export function folderName(path: string): string {
  const parts = path.split('/').filter(Boolean);
  return parts[parts.length - 1] ?? path;
}

export function buildWorktreeGraph(worktrees: WorktreeInfo[]): WorktreeGraph {
  const nodes: WorktreeGraph['nodes'] = [];
  const edges: WorktreeGraph['edges'] = [];
  const repos = new Map<string, number>();
  const sessions = new Map<string, string[]>();
  for (const wt of worktrees) {
    repos.set(wt.repo_path, (repos.get(wt.repo_path) ?? 0) + 1);
    if (wt.session_id) sessions.set(wt.session_id, [...(sessions.get(wt.session_id) ?? []), wt.worktree_id]);
  }
  for (const [path, count] of repos) {
    nodes.push({ id: repoNodeId(path), data: { kind: 'repo', label: folderName(path), sub: path, count } });
  }
  for (const wt of worktrees) {
    const s = wt.status;
    nodes.push({
      id: worktreeNodeId(wt.worktree_id),
      data: {
        kind: 'worktree',
        label: wt.branch,
        sub: statusLine(wt),
        worktreeId: wt.worktree_id,
        lifecycle: wt.lifecycle,
        dirty: s ? !s.clean : undefined,
        ahead: s?.ahead,
        behind: s?.behind,
        integrated: s?.integrated,
      },
    });
    edges.push({
      id: `${repoNodeId(wt.repo_path)}->${wt.worktree_id}`,
      source: repoNodeId(wt.repo_path),
      target: worktreeNodeId(wt.worktree_id),
      kind: 'contains',
    });
    if (wt.session_id) {
      edges.push({
        id: `${wt.worktree_id}->${wt.session_id}`,
        source: worktreeNodeId(wt.worktree_id),
        target: sessionNodeId(wt.session_id),
        kind: 'owns',
      });
    }
  }
  for (const [session, ids] of sessions) {
    nodes.push({
      id: sessionNodeId(session),
      data: {
        kind: 'session',
        label: session,
        sub: ids.length === 1 ? 'session · 1 worktree' : `session · ${ids.length} worktrees`,
        worktreeId: ids[0],
        count: ids.length,
      },
    });
  }
  return { nodes, edges };
}

/** `wt_3f2a… · clean · +2 −1` */
export function statusLine(wt: WorktreeInfo): string {
  const short = wt.worktree_id.replace(/^wt_/, '').slice(0, 8);
  const s = wt.status;
  if (!s) return `${short} · ${wt.lifecycle === 'orphaned' ? 'folder gone' : 'status unavailable'}`;
  const parts = [short, s.clean ? 'clean' : 'dirty'];
  if (s.ahead || s.behind) parts.push(`+${s.ahead} −${s.behind}`);
  return parts.join(' · ');
}

export const LIFECYCLE_VISUAL: Record<Lifecycle, { label: string; tone: Tone; color: string }> = {
  active: { label: 'active', tone: 'ok', color: 'var(--c-ok)' },
  claimed: { label: 'claimed', tone: 'info', color: 'var(--c-info)' },
  landing: { label: 'landing', tone: 'accent', color: 'var(--c-accent)' },
  'land-blocked': { label: 'land blocked', tone: 'bad', color: 'var(--c-bad)' },
  orphaned: { label: 'orphaned', tone: 'warn', color: 'var(--c-warn)' },
};

/** "merged upstream (squash, patch ids match)": the integrated marker of the detail panel. */
export const INTEGRATION_TEXT: Record<string, string> = {
  same_commit: 'same commit as its base',
  ancestor: 'contained in its base',
  no_added_changes: 'adds no changes',
  trees_match: 'same files as its base',
  merge_adds_nothing: 'merging it would change nothing',
  patch_id_match: 'its patches are upstream',
};
