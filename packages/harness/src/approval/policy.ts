// What a model may never call, and the rule language of the `approval-gate` configuration entry.
// spec: console-worker.md §2.3 (function policy), §2.7 (approval gate). The harness imports this.

/** Functions only a person may call: a model with these approves its own calls or rewrites its settings. */
export const HUMAN_ONLY_FUNCTIONS = ['approval::*', 'configuration::*'] as const;

/**
 * The chat stack's control plane and the audit trail: not a model's tools either. A model that
 * drives the harness or the session store reaches other sessions (and their modes and grants), the
 * router and providers spend the user's credit, and clearing traces or logs erases the record of
 * what it did. Denied in every mode, like the human-only functions, by the gate and the harness.
 */
export const CONTROL_PLANE_FUNCTIONS = [
  'harness::*',
  'session::*',
  'router::*',
  'provider::*',
  'context::*',
  'engine::traces::clear',
  'engine::logs::clear',
] as const;

/** Denied to models as well when the approval-gate entry cannot be read (fail closed). */
export const FALLBACK_DENIED_FUNCTIONS = ['shell::workspace::*'] as const;

export type PermissionMode = 'manual' | 'auto' | 'full';
export const PERMISSION_MODES: readonly PermissionMode[] = ['manual', 'auto', 'full'];

/** A rule: `"glob"` allows, `"!glob"` denies; the object form may `ask` and apply to some modes only. */
export type Rule = string | { function: string; action: 'allow' | 'deny' | 'ask'; modes?: PermissionMode[] };

/** `*` matches any run of characters (including `::`); everything else is literal. */
export function globMatch(pattern: string, text: string): boolean {
  // iterative wildcard match: linear in practice, no regex built from user input
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

export function isHumanOnly(functionId: string): boolean {
  return HUMAN_ONLY_FUNCTIONS.some((pattern) => globMatch(pattern, functionId));
}

export function isControlPlane(functionId: string): boolean {
  return CONTROL_PLANE_FUNCTIONS.some((pattern) => globMatch(pattern, functionId));
}

function normalise(rule: Rule): { function: string; action: 'allow' | 'deny' | 'ask'; modes?: PermissionMode[] } {
  if (typeof rule !== 'string') return rule;
  return rule.startsWith('!') ? { function: rule.slice(1), action: 'deny' } : { function: rule, action: 'allow' };
}

/** The first rule matching `functionId` in `mode` (rules with `modes` apply only in those modes). */
export function matchRule(
  rules: readonly Rule[],
  functionId: string,
  mode: PermissionMode,
): { rule: Rule; action: 'allow' | 'deny' | 'ask' } | undefined {
  for (const rule of rules) {
    const r = normalise(rule);
    if (r.modes && !r.modes.includes(mode)) continue;
    if (globMatch(r.function, functionId)) return { rule, action: r.action };
  }
  return undefined;
}

/**
 * The harness's function policy for a model (§2.3): everything allowed except the human-only
 * functions and every `deny` rule of the approval-gate entry. `rules` undefined means the entry
 * could not be read: then the fallback list is denied too.
 */
export function modelFunctionPolicy(rules?: readonly Rule[]): { allow: string[]; deny: string[] } {
  const deny = new Set<string>(HUMAN_ONLY_FUNCTIONS);
  if (rules === undefined) for (const f of FALLBACK_DENIED_FUNCTIONS) deny.add(f);
  for (const rule of rules ?? []) {
    const r = normalise(rule);
    if (r.action === 'deny' && !r.modes) deny.add(r.function);
  }
  return { allow: ['*'], deny: [...deny] };
}
