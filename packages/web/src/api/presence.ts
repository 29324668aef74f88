import { useFunctions } from './functions.ts';

/**
 * Presence gating (seed 2.9, issue 7 §8): the chat and worktree surfaces exist only while their
 * workers are connected, i.e. while the engine lists a function of theirs. The function list is
 * refreshed live by `engine::functions-available` (api/live.ts), so entries come and go with
 * the workers, without polling.
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

/** Which surfaces a list of function ids makes available. */
export function surfacesPresent(functionIds: Iterable<string>): Record<Surface, boolean> {
  const present: Record<Surface, boolean> = { chat: false, worktrees: false };
  for (const id of functionIds) {
    for (const surface of Object.keys(SURFACES) as Surface[]) {
      if (!present[surface] && SURFACES[surface].prefixes.some((p) => id.startsWith(p))) present[surface] = true;
    }
  }
  return present;
}

export interface Presence extends Record<Surface, boolean> {
  /** False until the first function list arrived (then absence is real, not just unknown). */
  known: boolean;
}

export function usePresence(): Presence {
  const { data } = useFunctions();
  if (!data) return { chat: false, worktrees: false, known: false };
  return { ...surfacesPresent(data.map((f) => f.function_id)), known: true };
}
