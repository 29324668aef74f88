import { createRoute } from '@tanstack/react-router';
import { rootRoute } from './root.tsx';

export interface WorktreesSearch {
  /** The worktree whose detail panel is open. */
  wt?: string;
}

// Presence-gated (issue 7 §8): without its worker the page shows the install notice.
export const worktreesRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/worktrees',
  validateSearch: (search: Record<string, unknown>): WorktreesSearch =>
    typeof search.wt === 'string' && /^wt_[0-9a-f]{6,32}$/.test(search.wt) ? { wt: search.wt } : {},
}).lazy(() => import('./worktrees.lazy.tsx').then((m) => m.Route));
