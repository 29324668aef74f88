import { useNavigate } from '@tanstack/react-router';
import { useCallback } from 'react';
import type { TracesSearch } from './trace-search.ts';

const FILTER_KEYS = new Set<keyof TracesSearch>([
  'q',
  'tid',
  'service',
  'op',
  'status',
  'min',
  'max',
  'range',
  'from',
  'to',
  'attr',
  'sort',
  'order',
  'group',
  'size',
  'system',
]);

/**
 * Change the Traces page URL. A change to any filter goes back to the first page; `undefined`
 * removes a key so shared links stay short. `replace` is for keystroke-driven changes.
 */
export function useTracesNav() {
  const navigate = useNavigate();
  return useCallback(
    (patch: Partial<TracesSearch>, options: { replace?: boolean } = {}) => {
      void navigate({
        to: '/traces',
        replace: options.replace,
        search: (prev: TracesSearch) => {
          const next: Record<string, unknown> = { ...prev, ...patch };
          if (Object.keys(patch).some((k) => FILTER_KEYS.has(k as keyof TracesSearch)) && !('page' in patch)) delete next.page;
          // a new trace starts without the previous trace's span selected
          if ('trace_id' in patch && !('span' in patch) && patch.trace_id !== prev.trace_id) delete next.span;
          for (const key of Object.keys(next)) {
            const v = next[key];
            if (v === undefined || v === '' || v === false || (Array.isArray(v) && v.length === 0)) delete next[key];
          }
          return next as TracesSearch;
        },
      });
    },
    [navigate],
  );
}

export type TracesNav = ReturnType<typeof useTracesNav>;
