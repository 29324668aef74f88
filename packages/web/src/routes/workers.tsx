import { createRoute } from '@tanstack/react-router';
import { bool, str } from '../lib/search.ts';
import { rootRoute } from './root.tsx';

export const workersRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/workers',
  validateSearch: (s: Record<string, unknown>): { q?: string; worker?: string; internal?: boolean } => ({
    q: str(s.q),
    worker: str(s.worker),
    internal: bool(s.internal),
  }),
}).lazy(() => import('./workers.lazy.tsx').then((m) => m.Route));
