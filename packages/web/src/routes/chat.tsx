import { createRoute } from '@tanstack/react-router';
import { rootRoute } from './root.tsx';

/**
 * `#/chat`: a new conversation (an empty composer; the session is made at the first send);
 * `#/chat/<session_id>`: that conversation, in any browser (issue 25 item 2). Both are the one
 * chat page (the parent's component stays mounted from one to the other: the first send moves
 * the URL without a reload of the page); the children only carry the id.
 * Presence-gated (issue 7 §8): without its worker the page shows the install notice.
 */
export const chatRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/chat',
  validateSearch: (_search: Record<string, unknown>): Record<string, never> => ({}),
}).lazy(() => import('./chat.lazy.tsx').then((m) => m.Route));

export const chatNewRoute = createRoute({ getParentRoute: () => chatRoute, path: '/' });

export const chatSessionRoute = createRoute({ getParentRoute: () => chatRoute, path: '$sessionId' });

export const chatRouteTree = chatRoute.addChildren([chatNewRoute, chatSessionRoute]);
