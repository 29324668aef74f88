// The approval gate's policy helpers and wire types, for the harness (which must never expose
// approval::* or configuration::* to a model) and for tests.
export { ApprovalEvent } from './events.ts';
export type { Outcome, PendingRecord } from './pending.ts';
export {
  FALLBACK_DENIED_FUNCTIONS,
  globMatch,
  HUMAN_ONLY_FUNCTIONS,
  isHumanOnly,
  matchRule,
  modelFunctionPolicy,
  type PermissionMode,
  type Rule,
} from './policy.ts';
