import { createRoute } from '@tanstack/react-router';
import { DLQ_PAGE_SIZES } from '../api/queues.ts';
import { num, str } from '../lib/search.ts';
import { rootRoute } from './root.tsx';

export type QueueTab = 'overview' | 'dead-letters';

/** Queues (issue 6): the selected name, tab and dead-letter page live in the URL (`#/queues?topic=x&tab=dead-letters&page=2`). */
export interface QueuesSearch {
  topic?: string;
  tab?: QueueTab;
  /** Dead-letter page, 1-based. */
  page?: number;
  size?: number;
}

export const queuesRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/queues',
  validateSearch: (s: Record<string, unknown>): QueuesSearch => {
    const page = num(s.page);
    const size = num(s.size);
    return {
      topic: str(s.topic),
      tab: s.tab === 'dead-letters' || s.tab === 'overview' ? s.tab : undefined,
      page: page !== undefined && page >= 1 ? Math.floor(page) : undefined,
      size: size !== undefined && (DLQ_PAGE_SIZES as readonly number[]).includes(size) ? size : undefined,
    };
  },
}).lazy(() => import('./queues.lazy.tsx').then((m) => m.Route));
