import { createRoute } from '@tanstack/react-router';

import { rootRoute } from './root.tsx';

export const dashboardRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/',
  validateSearch: (_search: Record<string, unknown>): Record<string, never> => ({}),
}).lazy(() => import('./dashboard.lazy.tsx').then((m) => m.Route));
