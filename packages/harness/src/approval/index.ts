// The approval gate's policy helpers and wire types, for the harness (which must never expose
// approval::* or configuration::* to a model) and for tests.
export { ApprovalEvent } from './events.ts';
export type { Outcome, PendingRecord } from './pending.ts';
export {
  CONTROL_PLANE_FUNCTIONS,
  FALLBACK_DENIED_FUNCTIONS,
  globMatch,
  HUMAN_ONLY_FUNCTIONS,
  isControlPlane,
  isHumanOnly,
  matchRule,
  modelFunctionPolicy,
  type PermissionMode,
  type Rule,
} from './policy.ts';
export { type CallChain, engineLookup, isValidFunctionId, RESERVED_STATE_SCOPES, resolveChain, type TargetLookup } from './targets.ts';
