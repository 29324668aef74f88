import { createRoute } from '@tanstack/react-router';
import type { Direction } from '../api/stream-monitor.ts';
import { bool, str } from '../lib/search.ts';
import { rootRoute } from './root.tsx';

/** Streams (seed 2.5): selected stream/group, the right-hand view, the direction tab and the system toggle, in the URL. */
export interface StreamsSearch {
  stream?: string;
  group?: string;
  view?: 'monitor' | 'items';
  dir?: Direction;
  system?: boolean;
}

export const streamsRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/streams',
  validateSearch: (s: Record<string, unknown>): StreamsSearch => ({
    stream: str(s.stream),
    group: typeof s.group === 'string' ? s.group : str(s.group),
    view: s.view === 'items' || s.view === 'monitor' ? s.view : undefined,
    dir: s.dir === 'inbound' || s.dir === 'outbound' || s.dir === 'system' ? s.dir : undefined,
    system: bool(s.system),
  }),
}).lazy(() => import('./streams.lazy.tsx').then((m) => m.Route));
