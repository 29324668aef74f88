import { useNavigate } from '@tanstack/react-router';
import { GitBranch, RefreshCw } from 'lucide-react';
import { lazy, Suspense, useCallback, useMemo, useState } from 'react';
import { type LiveEventRecord, POLL_MS, useWorktreeLive, useWorktrees } from '../../api/worktrees.ts';
import { blockedReason } from '../../lib/chat/worktree-notices.ts';
import { formatTime, pluralize } from '../../lib/format.ts';
import { worktreesRoute } from '../../routes/worktrees.tsx';
import { Badge } from '../ui/badge.tsx';
import { Button } from '../ui/button.tsx';
import { EmptyState, ErrorNote } from '../ui/empty-state.tsx';
import { Spinner } from '../ui/spinner.tsx';
import { WorktreeDetail } from './worktree-detail.tsx';
import { buildWorktreeGraph, worktreeNodeId } from './worktree-graph.ts';

const WorktreeCanvas = lazy(() => import('./worktree-canvas.tsx'));

const loading = (
  <div className="flex h-full items-center justify-center gap-2 text-sm text-muted">
    <Spinner /> Loading worktrees…
  </div>
);

/** Seed 2.9 Worktrees: the graph page, shown inside the presence gate while the worktree worker is connected. */
export function WorktreesPage() {
  const search = worktreesRoute.useSearch();
  const navigate = useNavigate();
  const [events, setEvents] = useState<LiveEventRecord[]>([]);
  const [landNotice, setLandNotice] = useState<LiveEventRecord | undefined>();
  const onEvent = useCallback((e: LiveEventRecord) => {
    setEvents((prev) => [e, ...prev].slice(0, 6));
    if (e.type === 'landed' || e.type === 'land-blocked') setLandNotice(e);
  }, []);
  const { live } = useWorktreeLive(onEvent);
  const list = useWorktrees(live);
  const worktrees = list.data ?? [];
  const graph = useMemo(() => buildWorktreeGraph(worktrees), [worktrees]);
  const selected = worktrees.find((w) => w.worktree_id === search.wt);
  const select = (wt: string | undefined) => void navigate({ to: '/worktrees', search: (prev) => ({ ...prev, wt }), replace: true });
  const repos = new Set(worktrees.map((w) => w.repo_path)).size;
  const claimed = worktrees.filter((w) => w.session_id).length;

  return (
    <div className="flex min-h-0 flex-1 flex-col" data-testid="worktrees-page">
      <div className="flex flex-wrap items-center gap-x-3 gap-y-1.5 border-b border-line px-4 py-2 text-xs text-muted md:px-6">
        <span data-testid="worktrees-summary">
          {pluralize(repos, 'repository', 'repositories')} · {pluralize(worktrees.length, 'worktree')} · {claimed} claimed
        </span>
        {landNotice ? (
          <Badge tone={landNotice.type === 'landed' ? 'ok' : 'bad'}>
            <span data-testid="worktrees-land-notice">
              {landText(landNotice, (id) => worktrees.find((w) => w.worktree_id === id)?.branch)}
            </span>
          </Badge>
        ) : null}
        <span className="flex-1" />
        {events[0] ? (
          <span className="truncate" data-testid="worktrees-last-event">
            {formatTime(events[0].at)} {describeEvent(events[0])}
          </span>
        ) : null}
        <Badge
          tone={live ? 'ok' : 'warn'}
          title={live ? 'refreshed by the six worktree::* trigger types' : `polling every ${POLL_MS / 1000} s`}
        >
          <span data-testid="worktrees-live" data-live={String(live)}>
            {live ? 'live' : `polling ${POLL_MS / 1000} s`}
          </span>
        </Badge>
        <Button size="xs" variant="ghost" icon={RefreshCw} loading={list.isFetching} onClick={() => void list.refetch()}>
          Refresh
        </Button>
      </div>
      {list.error ? <ErrorNote className="m-4" title="worktree::list failed" error={list.error} /> : null}
      <div className="flex min-h-0 flex-1">
        <div className="relative min-h-[420px] min-w-0 flex-1">
          {list.isPending ? (
            loading
          ) : worktrees.length === 0 ? (
            <EmptyState icon={GitBranch} title="No managed worktrees">
              <p>worktree::list reports no managed worktrees yet.</p>
              <p className="mt-1">
                Create one with <code className="font-mono">worktree::create {'{"repo_path": "/path/to/repo"}'}</code> (from the Functions
                page or an agent); it appears here at once.
              </p>
            </EmptyState>
          ) : (
            <div className="absolute inset-0">
              <Suspense fallback={loading}>
                <WorktreeCanvas
                  graph={graph}
                  selected={selected ? worktreeNodeId(selected.worktree_id) : undefined}
                  onSelect={(nodeId) => {
                    const node = graph.nodes.find((n) => n.id === nodeId);
                    select(node?.data.worktreeId);
                  }}
                />
              </Suspense>
            </div>
          )}
        </div>
        {selected ? <WorktreeDetail key={selected.worktree_id} wt={selected} onClose={() => select(undefined)} /> : null}
      </div>
    </div>
  );
}

function describeEvent(e: LiveEventRecord): string {
  const p = e.payload as Record<string, string | undefined>;
  const id = p.worktree_id ?? '';
  switch (e.type) {
    case 'created':
      return `created ${p.branch ?? id}`;
    case 'claimed':
      return `${p.session_id} claimed ${id}`;
    case 'released':
      return `${p.session_id} released ${id}`;
    case 'removed':
      return `removed ${p.branch ?? id}`;
    case 'landed':
      return `${p.branch ?? id} landed onto ${p.target_branch} (${(p.merged_sha ?? '').slice(0, 8)})`;
    case 'land-blocked':
      return `land of ${id} blocked: ${p.reason}`;
  }
}

/** The land notices of console-worker.md §4.3: target and merged sha, or the block reason and up to 3 files. */
function landText(e: LiveEventRecord, branchOf: (worktreeId: string) => string | undefined): string {
  const p = e.payload as {
    branch?: string;
    worktree_id?: string;
    target_branch?: string;
    merged_sha?: string;
    reason?: string;
    conflict_files?: string[];
    exit_code?: number;
  };
  if (e.type === 'landed') return `${p.branch ?? p.worktree_id} landed onto ${p.target_branch} (${(p.merged_sha ?? '').slice(0, 8)})`;
  const files = p.conflict_files ?? [];
  const why =
    p.reason === 'rebase_conflict' && files.length
      ? `conflicts in ${files.slice(0, 3).join(', ')}${files.length > 3 ? ` and ${files.length - 3} more` : ''}`
      : p.reason === 'test_failed' && p.exit_code !== undefined
        ? `tests failed (exit ${p.exit_code})`
        : p.reason
          ? blockedReason(e.payload) // the chat's wording: git_identity_missing, a refused test command (W500), …
          : 'unknown reason';
  return `land of ${branchOf(p.worktree_id ?? '') ?? p.worktree_id} onto ${p.target_branch} blocked: ${why}`;
}
