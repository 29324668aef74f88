import { createRoute } from '@tanstack/react-router';

import { rootRoute } from './root.tsx';

export const streamsRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/streams',
  validateSearch: (s: Record<string, unknown>): Record<string, unknown> => s,
}).lazy(() => import('./streams.lazy.tsx').then((m) => m.Route));
