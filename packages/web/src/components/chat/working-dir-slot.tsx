/**
 * Extension point for the worktrees surface (seed 2.9 "Picker tab", "Working-dir badge"): the
 * composer renders this slot next to the model picker. `value` is the conversation's working
 * directory — sent with every message as `options.metadata.fs_scope.root` and kept per conversation
 * in local storage — and `onChange` sets it (undefined: none). The worktree picker and the badge
 * (branch, short id, dirty `*`, ahead `+n`, lifecycle dot, path as a tooltip) go here; until then
 * the slot renders nothing.
 */
export interface WorkingDirSlotProps {
  sessionId: string | undefined;
  value: string | undefined;
  onChange: (root: string | undefined) => void;
  disabled: boolean;
}

export function WorkingDirSlot(_props: WorkingDirSlotProps) {
  return null;
}
