import { createRoute } from '@tanstack/react-router';
import { bool, str } from '../lib/search.ts';
import { rootRoute } from './root.tsx';

export const triggersRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/triggers',
  validateSearch: (s: Record<string, unknown>): { q?: string; type?: string; id?: string; system?: boolean } => ({
    q: str(s.q),
    type: str(s.type),
    id: str(s.id),
    system: bool(s.system),
  }),
}).lazy(() => import('./triggers.lazy.tsx').then((m) => m.Route));
