import { createRoute } from '@tanstack/react-router';

import { rootRoute } from './root.tsx';

export const configRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/config',
  validateSearch: (_search: Record<string, unknown>): Record<string, never> => ({}),
}).lazy(() => import('./config.lazy.tsx').then((m) => m.Route));
