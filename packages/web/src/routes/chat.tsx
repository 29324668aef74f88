import { createRoute } from '@tanstack/react-router';
import { rootRoute } from './root.tsx';

// Presence-gated (issue 7 §8): without its worker the page shows the install notice.
export const chatRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/chat',
  validateSearch: (_search: Record<string, unknown>): Record<string, never> => ({}),
}).lazy(() => import('./chat.lazy.tsx').then((m) => m.Route));
