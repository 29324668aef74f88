import { useEffect, useMemo, useSyncExternalStore } from 'react';
import { useConnection } from './client.ts';
import { useFunctions } from './functions.ts';

/**
 * Presence gating (seed 2.9, issue 7 §8): the chat and worktree surfaces exist only while their
 * workers are connected, i.e. while the engine lists a function of theirs. The function list is
 * refreshed live by `engine::functions-available` (api/live.ts), so entries come and go with
 * the workers, without polling.
 *
 * An outage is not an uninstall (issue 25 item 1): an engine that shuts down stops the workers it
 * launched before it closes its bus, so the UI hears the chat stack leave moments before the
 * engine goes. What was present is remembered while the engine is unreachable, and a surface goes
 * only once the engine is connected and its worker has stayed away: `DROP_GRACE_MS` normally,
 * `RECONNECT_GRACE_MS` after a reconnection (the workers reconnect with their own backoff).
 */
export type Surface = 'chat' | 'worktrees';

export interface SurfaceInfo {
  /** Function id prefixes whose presence means the worker is connected. */
  prefixes: readonly string[];
  /** The command that installs the worker (shown by the install notice). */
  install: string;
  /** What the worker is, for the notice. */
  worker: string;
}

export const SURFACES: Readonly<Record<Surface, SurfaceInfo>> = {
  chat: { prefixes: ['harness::', 'session::', 'router::'], install: 'eng worker add harness', worker: 'chat stack (harness)' },
  // the graph page reads worktree::list, so that function is what makes the surface present
  worktrees: { prefixes: ['worktree::list'], install: 'eng worker add worktree', worker: 'worktree worker' },
};

const SURFACE_NAMES = Object.keys(SURFACES) as Surface[];

/** Which surfaces a list of function ids makes available. */
export function surfacesPresent(functionIds: Iterable<string>): Record<Surface, boolean> {
  const present: Record<Surface, boolean> = { chat: false, worktrees: false };
  for (const id of functionIds) {
    for (const surface of SURFACE_NAMES) {
      if (!present[surface] && SURFACES[surface].prefixes.some((p) => id.startsWith(p))) present[surface] = true;
    }
  }
  return present;
}

export interface Presence extends Record<Surface, boolean> {
  /** False until the first function list arrived (then absence is real, not just unknown). */
  known: boolean;
}

/** A surface missing from the list of a connected engine goes after this long. */
export const DROP_GRACE_MS = 5_000;
/** After a reconnection, a surface that was present gets this long for its worker to come back. */
export const RECONNECT_GRACE_MS = 45_000;

export interface PresenceMemory {
  /** What the UI shows. */
  shown: Record<Surface, boolean>;
  known: boolean;
  /** The engine connection was open at the last input. */
  online: boolean;
  /** When each shown surface was first missing from a connected engine's list. */
  missingSince: Partial<Record<Surface, number>>;
  /** Until then, surfaces shown before a reconnection stay while their workers come back. */
  graceUntil: number;
}

export interface PresenceInput {
  /** The surfaces the function list makes present; undefined until a list arrived. */
  listed: Record<Surface, boolean> | undefined;
  online: boolean;
}

export const INITIAL_PRESENCE: PresenceMemory = {
  shown: { chat: false, worktrees: false },
  known: false,
  online: false,
  missingSince: {},
  graceUntil: 0,
};

/** The presence shown after `input` at `now` (pure). */
export function nextPresence(memory: PresenceMemory, input: PresenceInput, now: number): PresenceMemory {
  const { listed } = input;
  if (!memory.known) {
    // nothing shown yet: the first list there is says it (a cached one during an outage too)
    return listed
      ? { shown: { ...listed }, known: true, online: input.online, missingSince: {}, graceUntil: 0 }
      : { ...memory, online: input.online };
  }
  if (!input.online) {
    // unreachable: keep what was shown; a departure heard just before (a shutdown) is forgotten
    return memory.online || Object.keys(memory.missingSince).length ? { ...memory, online: false, missingSince: {} } : memory;
  }
  const graceUntil = memory.online ? memory.graceUntil : now + RECONNECT_GRACE_MS;
  if (!listed) return { ...memory, online: true, graceUntil };
  const shown = { ...memory.shown };
  const missingSince: Partial<Record<Surface, number>> = {};
  for (const surface of SURFACE_NAMES) {
    if (listed[surface]) shown[surface] = true;
    else if (shown[surface]) {
      const since = memory.missingSince[surface] ?? now;
      if (now >= Math.max(since + DROP_GRACE_MS, graceUntil)) shown[surface] = false;
      else missingSince[surface] = since;
    }
  }
  return { shown, known: true, online: true, missingSince, graceUntil };
}

/** When the next pending drop falls due (undefined when none is pending). */
export function nextDropAt(memory: PresenceMemory): number | undefined {
  const due = Object.values(memory.missingSince).map((since) => Math.max(since + DROP_GRACE_MS, memory.graceUntil));
  return due.length ? Math.min(...due) : undefined;
}

// One memory for the page: every component that asks (nav, palette, gated pages) sees the same.
let memory = INITIAL_PRESENCE;
let lastInput: PresenceInput | undefined;
let timer: ReturnType<typeof setTimeout> | undefined;
const listeners = new Set<() => void>();

function sameShown(a: PresenceMemory, b: PresenceMemory): boolean {
  return a.known === b.known && SURFACE_NAMES.every((s) => a.shown[s] === b.shown[s]);
}

function evaluate(): void {
  if (!lastInput) return;
  const next = nextPresence(memory, lastInput, Date.now());
  const changed = !sameShown(memory, next);
  memory = next;
  if (timer) clearTimeout(timer);
  timer = undefined;
  const due = nextDropAt(memory);
  if (due !== undefined) timer = setTimeout(evaluate, Math.max(0, due - Date.now()) + 20);
  if (changed) for (const l of listeners) l();
}

function feed(input: PresenceInput): void {
  lastInput = input;
  evaluate();
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function usePresence(): Presence {
  const { data } = useFunctions();
  const online = useConnection().status === 'open';
  const listed = useMemo(() => (data ? surfacesPresent(data.map((f) => f.function_id)) : undefined), [data]);
  const remembered = useSyncExternalStore(subscribe, () => memory);
  useEffect(() => feed({ listed, online }), [listed, online]);
  // until the effect has fed this render's input, show what it will make of it
  const view = nextPresence(remembered, { listed, online }, Date.now());
  return { chat: view.shown.chat, worktrees: view.shown.worktrees, known: view.known };
}
