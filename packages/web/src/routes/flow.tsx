import { createRoute } from '@tanstack/react-router';
import { bool, str } from '../lib/search.ts';
import { rootRoute } from './root.tsx';

/** Flow (seed 2.8): the selected node and the system toggle live in the URL. */
export interface FlowSearch {
  node?: string;
  system?: boolean;
}

export const flowRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/flow',
  validateSearch: (s: Record<string, unknown>): FlowSearch => {
    const out: FlowSearch = { node: str(s.node), system: bool(s.system) };
    if (out.node === undefined) delete out.node;
    if (out.system === undefined) delete out.system;
    return out;
  },
}).lazy(() => import('./flow.lazy.tsx').then((m) => m.Route));
