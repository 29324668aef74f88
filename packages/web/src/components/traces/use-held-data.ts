import { useRef } from 'react';

/**
 * Live data that holds still while the user is reading it (console spec §4 Traces: updates are
 * held while the pointer is over the list and flushed on leave; paused lists do not move).
 * A new `key` (other filters or page) always shows at once: once its first real answer arrives.
 */
export function useHeldData<T>(
  data: T | undefined,
  key: string,
  hold: boolean,
  isPlaceholder: boolean,
): { shown: T | undefined; held: boolean } {
  const state = useRef<{ data: T | undefined; key: string; awaiting: boolean }>({ data, key, awaiting: false });
  const s = state.current;
  if (s.key !== key) {
    s.key = key;
    s.awaiting = true;
  }
  if (s.awaiting) {
    // the previous page's rows stay until this key's first answer, whatever the pointer does
    if (!isPlaceholder && data !== undefined) {
      s.data = data;
      s.awaiting = false;
    } else if (s.data === undefined) s.data = data;
  } else if (!hold) s.data = data;
  return { shown: s.data, held: !s.awaiting && s.data !== data };
}

/** Ids that appeared since the previous render of a live list, for the flash animation. */
export function useNewIds(ids: string[] | undefined, key: string): Set<string> {
  const state = useRef<{ key: string; seen: Set<string> | null; fresh: Set<string>; last: string[] | undefined }>({
    key,
    seen: null,
    fresh: new Set(),
    last: undefined,
  });
  const s = state.current;
  if (s.key !== key) {
    s.key = key;
    s.seen = null;
  }
  if (ids && ids !== s.last) {
    s.last = ids;
    s.fresh = s.seen ? new Set(ids.filter((id) => !s.seen?.has(id))) : new Set();
    s.seen = new Set(ids);
  }
  return s.fresh;
}
