import { createRoute } from '@tanstack/react-router';

import { rootRoute } from './root.tsx';

export const queuesRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/queues',
  validateSearch: (s: Record<string, unknown>): Record<string, unknown> => s,
}).lazy(() => import('./queues.lazy.tsx').then((m) => m.Route));
