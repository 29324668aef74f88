import { createRoute } from '@tanstack/react-router';
import { FILTER_KINDS, type FlowKind } from '../lib/flow-kinds.ts';
import { bool, str } from '../lib/search.ts';
import { rootRoute } from './root.tsx';

/** Flow (seed 2.8): the selected node, the system toggle, the search and the kind filter live in the URL. */
export interface FlowSearch {
  node?: string;
  system?: boolean;
  q?: string;
  /** Kinds to show (with their neighbours); the router writes them as a JSON array, `kinds=cron,queue` is read too. */
  kinds?: FlowKind[];
}

function kindsOf(value: unknown): FlowKind[] | undefined {
  const list = (typeof value === 'string' ? value.split(',') : Array.isArray(value) ? value : []).filter((k): k is FlowKind =>
    (FILTER_KINDS as unknown[]).includes(k),
  );
  return list.length ? list : undefined;
}

export const flowRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/flow',
  validateSearch: (s: Record<string, unknown>): FlowSearch => {
    const out: FlowSearch = { node: str(s.node), system: bool(s.system), q: str(s.q), kinds: kindsOf(s.kinds) };
    for (const k of Object.keys(out) as Array<keyof FlowSearch>) if (out[k] === undefined) delete out[k];
    return out;
  },
}).lazy(() => import('./flow.lazy.tsx').then((m) => m.Route));
