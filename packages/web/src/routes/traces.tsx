import { createRoute } from '@tanstack/react-router';

import { rootRoute } from './root.tsx';

export const tracesRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/traces',
  validateSearch: (s: Record<string, unknown>): Record<string, unknown> => s,
}).lazy(() => import('./traces.lazy.tsx').then((m) => m.Route));
