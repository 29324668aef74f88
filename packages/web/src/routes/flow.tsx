import { createRoute } from '@tanstack/react-router';
import { FILTER_KINDS, type FlowKind } from '../lib/flow-kinds.ts';
import { bool, str } from '../lib/search.ts';
import { rootRoute } from './root.tsx';

/** Flow (seed 2.8): the selected node, the system toggle, the search, the kind filter and the opened packs live in the URL. */
export interface FlowSearch {
  node?: string;
  system?: boolean;
  q?: string;
  /** Kinds to show (with their neighbours); the router writes them as a JSON array, `kinds=cron,queue` is read too. */
  kinds?: FlowKind[];
  /** Packs of functions without triggers opened one by one (worker names; `open=a,b` is read too). */
  open?: string[];
}

function kindsOf(value: unknown): FlowKind[] | undefined {
  const list = (typeof value === 'string' ? value.split(',') : Array.isArray(value) ? value : []).filter((k): k is FlowKind =>
    (FILTER_KINDS as unknown[]).includes(k),
  );
  return list.length ? list : undefined;
}

function namesOf(value: unknown): string[] | undefined {
  const list = (typeof value === 'string' ? value.split(',') : Array.isArray(value) ? value : []).filter(
    (k): k is string => typeof k === 'string' && k !== '',
  );
  return list.length ? [...new Set(list)] : undefined;
}

export const flowRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/flow',
  validateSearch: (s: Record<string, unknown>): FlowSearch => {
    const out: FlowSearch = { node: str(s.node), system: bool(s.system), q: str(s.q), kinds: kindsOf(s.kinds), open: namesOf(s.open) };
    for (const k of Object.keys(out) as Array<keyof FlowSearch>) if (out[k] === undefined) delete out[k];
    return out;
  },
}).lazy(() => import('./flow.lazy.tsx').then((m) => m.Route));
