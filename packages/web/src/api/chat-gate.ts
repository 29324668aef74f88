/**
 * What a chat's model can never call, whatever the session's mode (issue 25 item 5): the composer
 * offers only the functions the approval gate could allow. The web bundle does not depend on
 * @eng/harness, so the gate's fixed lists are mirrored here from
 * packages/harness/src/approval/policy.ts (`HUMAN_ONLY_FUNCTIONS`, `CONTROL_PLANE_FUNCTIONS`) and
 * packages/harness/src/approval/targets.ts (`OPAQUE`, `OPAQUE_PREFIXES`);
 * packages/web/test/chat-gate.test.ts fails when they drift apart. On top of them, the deny rules
 * of the `approval-gate` configuration entry (`"!glob"`, `{action: 'deny'}` without `modes`),
 * which the harness's function policy applies to every chat.
 */

/** Functions only a person may call (policy.ts `HUMAN_ONLY_FUNCTIONS`). */
export const HUMAN_ONLY_FUNCTIONS = ['approval::*', 'configuration::*'] as const;

/** The chat stack's control plane and the audit trail (policy.ts `CONTROL_PLANE_FUNCTIONS`). */
export const CONTROL_PLANE_FUNCTIONS = [
  'harness::*',
  'session::*',
  'router::*',
  'provider::*',
  'context::*',
  'engine::traces::clear',
  'engine::logs::clear',
] as const;

/** Wrappers the gate cannot see through (targets.ts `OPAQUE` ids and `OPAQUE_PREFIXES` as `prefix*`). */
export const OPAQUE_FUNCTIONS = [
  'eng::queue::redrive',
  'eng::queue::redrive_message',
  'iii::queue::redrive',
  'iii::queue::redrive_message',
  'engine::workers::register',
  'mcp::*',
  'a2a::*',
] as const;

/** Every glob the gate refuses to a model in every mode, before any configured rule. */
export const NEVER_CALLABLE_BY_MODELS: readonly string[] = [...HUMAN_ONLY_FUNCTIONS, ...CONTROL_PLANE_FUNCTIONS, ...OPAQUE_FUNCTIONS];

export const APPROVAL_GATE_ENTRY = 'approval-gate';

type Rule = string | { function?: unknown; action?: unknown; modes?: unknown };

/** `*` matches any run of characters (including `::`); everything else is literal (policy.ts `globMatch`). */
export function globMatch(pattern: string, text: string): boolean {
  let p = 0;
  let t = 0;
  let star = -1;
  let mark = 0;
  while (t < text.length) {
    if (p < pattern.length && pattern[p] !== '*' && pattern[p] === text[t]) {
      p++;
      t++;
    } else if (p < pattern.length && pattern[p] === '*') {
      star = p++;
      mark = t;
    } else if (star >= 0) {
      p = star + 1;
      t = ++mark;
    } else return false;
  }
  while (p < pattern.length && pattern[p] === '*') p++;
  return p === pattern.length;
}

/** The deny rules of an approval-gate entry that apply in every mode (policy.ts `modelFunctionPolicy`). */
export function denyRulesOf(rules: unknown): string[] {
  if (!Array.isArray(rules)) return [];
  const out: string[] = [];
  for (const rule of rules as Rule[]) {
    if (typeof rule === 'string') {
      if (rule.startsWith('!') && rule.length > 1) out.push(rule.slice(1));
    } else if (rule && rule.action === 'deny' && rule.modes === undefined && typeof rule.function === 'string') out.push(rule.function);
  }
  return out;
}

/**
 * The globs no model may call here: the fixed lists plus the approval-gate entry's deny rules
 * (the fixed lists alone when the entry cannot be read).
 */
export async function fetchDeniedToModels(call: <T>(functionId: string, payload: unknown) => Promise<T>): Promise<string[]> {
  const entry = await call<{ value?: { rules?: unknown } | null } | null>('configuration::get', { id: APPROVAL_GATE_ENTRY }).catch(
    () => null,
  );
  return [...NEVER_CALLABLE_BY_MODELS, ...denyRulesOf(entry?.value?.rules)];
}

export function deniedToModels(functionId: string, denied: readonly string[]): boolean {
  return denied.some((pattern) => globMatch(pattern, functionId));
}
