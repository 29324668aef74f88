import { createRoute } from '@tanstack/react-router';
import { bool, str } from '../lib/search.ts';
import { rootRoute } from './root.tsx';

/** The tabs of a function's detail pane; `runs` (issue 19 §13) can be linked to. */
export type FunctionTab = 'invoke' | 'runs' | 'schema' | 'triggers' | 'metadata';
const TABS: FunctionTab[] = ['invoke', 'runs', 'schema', 'triggers', 'metadata'];

export const functionsRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/functions',
  validateSearch: (s: Record<string, unknown>): { q?: string; fn?: string; system?: boolean; tab?: FunctionTab } => ({
    q: str(s.q),
    fn: str(s.fn),
    system: bool(s.system),
    tab: TABS.includes(s.tab as FunctionTab) && s.tab !== 'invoke' ? (s.tab as FunctionTab) : undefined,
  }),
}).lazy(() => import('./functions.lazy.tsx').then((m) => m.Route));
