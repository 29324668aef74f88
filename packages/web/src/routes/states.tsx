import { createRoute } from '@tanstack/react-router';

import { rootRoute } from './root.tsx';

export const statesRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/states',
  validateSearch: (s: Record<string, unknown>): Record<string, unknown> => s,
}).lazy(() => import('./states.lazy.tsx').then((m) => m.Route));
