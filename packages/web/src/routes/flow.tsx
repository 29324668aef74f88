import { createRoute } from '@tanstack/react-router';

import { rootRoute } from './root.tsx';

export const flowRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/flow',
  validateSearch: (s: Record<string, unknown>): Record<string, unknown> => s,
}).lazy(() => import('./flow.lazy.tsx').then((m) => m.Route));
