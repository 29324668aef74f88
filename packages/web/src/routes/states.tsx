import { createRoute } from '@tanstack/react-router';
import { bool, str } from '../lib/search.ts';
import { rootRoute } from './root.tsx';

/** States (seed 2.4): the selected scope and key and the key search live in the URL, so a view can be shared. */
export interface StatesSearch {
  scope?: string;
  key?: string;
  q?: string;
  /** Client-side "contains" search instead of the server-side prefix. */
  contains?: boolean;
}

export const statesRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/states',
  validateSearch: (s: Record<string, unknown>): StatesSearch => ({
    scope: str(s.scope),
    key: typeof s.key === 'string' ? s.key : str(s.key),
    q: str(s.q),
    contains: bool(s.contains),
  }),
}).lazy(() => import('./states.lazy.tsx').then((m) => m.Route));
