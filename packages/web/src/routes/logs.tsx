import { createRoute } from '@tanstack/react-router';

import { rootRoute } from './root.tsx';

export const logsRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/logs',
  validateSearch: (s: Record<string, unknown>): Record<string, unknown> => s,
}).lazy(() => import('./logs.lazy.tsx').then((m) => m.Route));
