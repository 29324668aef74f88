import { createRoute } from '@tanstack/react-router';
import { bool, str } from '../lib/search.ts';
import { rootRoute } from './root.tsx';

export const functionsRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/functions',
  validateSearch: (s: Record<string, unknown>): { q?: string; fn?: string; system?: boolean } => ({
    q: str(s.q),
    fn: str(s.fn),
    system: bool(s.system),
  }),
}).lazy(() => import('./functions.lazy.tsx').then((m) => m.Route));
