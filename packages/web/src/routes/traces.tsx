import { createRoute } from '@tanstack/react-router';
import { parseTracesSearch, type TracesSearch } from '../components/traces/trace-search.ts';
import { rootRoute } from './root.tsx';

/** Every filter, the open trace and the view live in the URL: `#/traces?trace_id=…` opens a trace. */
export const tracesRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/traces',
  validateSearch: (s: Record<string, unknown>): TracesSearch => parseTracesSearch(s),
}).lazy(() => import('./traces.lazy.tsx').then((m) => m.Route));
