import { createHashHistory, createRouter } from '@tanstack/react-router';
import { queryClient } from './api/query-client.ts';
import { chatRouteTree } from './routes/chat.tsx';
import { configRoute } from './routes/config.tsx';
import { dashboardRoute } from './routes/dashboard.tsx';
import { flowRoute } from './routes/flow.tsx';
import { functionsRoute } from './routes/functions.tsx';
import { logsRoute } from './routes/logs.tsx';
import { queuesRoute } from './routes/queues.tsx';
import { rootRoute } from './routes/root.tsx';
import { statesRoute } from './routes/states.tsx';
import { streamsRoute } from './routes/streams.tsx';
import { tracesRoute } from './routes/traces.tsx';
import { triggersRoute } from './routes/triggers.tsx';
import { workersRoute } from './routes/workers.tsx';
import { worktreesRoute } from './routes/worktrees.tsx';

/**
 * Code-based routes with HASH history: both console servers serve one `index.html`, and links
 * such as `#/traces?trace_id=…` work on either without server-side routing (issue 7 §8).
 * Each page is `routes/<page>.tsx` (path + search validation) and `routes/<page>.lazy.tsx`
 * (the component, split into its own chunk).
 */
const routeTree = rootRoute.addChildren([
  dashboardRoute,
  functionsRoute,
  triggersRoute,
  workersRoute,
  statesRoute,
  streamsRoute,
  queuesRoute,
  tracesRoute,
  logsRoute,
  flowRoute,
  configRoute,
  chatRouteTree,
  worktreesRoute,
]);

export const router = createRouter({
  routeTree,
  history: createHashHistory(),
  context: { queryClient },
  defaultPreload: 'intent',
  scrollRestoration: true,
});

declare module '@tanstack/react-router' {
  interface Register {
    router: typeof router;
  }
}
