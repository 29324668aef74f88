import type { EngClient } from '@eng/sdk';
import { CONTROL_PLANE_FUNCTIONS, HUMAN_ONLY_FUNCTIONS, modelFunctionPolicy, type Rule } from '../approval/policy.ts';
import type { ToolSpec } from '../router/types.ts';
import { AGENT_TOOL } from './transcript.ts';

// spec: console-worker §2.3/§2.7 — which engine functions a model may call. The approval gate and
// the configuration functions are never callable by a model whatever the request says, nor the
// chat stack's control plane (harness, sessions, router, providers) or the audit trail's clear.
// The policy applies to every function a call would run, not only the one named (see calls.ts).

export const ALWAYS_DENIED = [...HUMAN_ONLY_FUNCTIONS, ...CONTROL_PLANE_FUNCTIONS];

const GATE_RULES_TTL_MS = 5000;
let gateRules: { at: number; deny: Promise<string[]> } | undefined;

/**
 * spec §2.3: the `deny` rules of the approval-gate configuration entry apply to every chat; when
 * the entry cannot be read the gate's fallback list is denied as well (fail closed).
 */
export function gateDenials(client: EngClient): Promise<string[]> {
  if (gateRules && Date.now() - gateRules.at < GATE_RULES_TTL_MS) return gateRules.deny;
  const deny = client
    .call<{ value?: { rules?: Rule[] } } | null>('configuration::get', { id: 'approval-gate' }, { timeoutMs: 5000 })
    .then((entry) => modelFunctionPolicy(Array.isArray(entry?.value?.rules) ? entry.value.rules : undefined).deny)
    .catch(() => modelFunctionPolicy(undefined).deny);
  gateRules = { at: Date.now(), deny };
  return deny;
}

function globToRegExp(glob: string): RegExp {
  const escaped = glob.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*');
  return new RegExp(`^${escaped}$`);
}

export class FunctionPolicy {
  private readonly allow: RegExp[];
  private readonly deny: RegExp[];

  /** Set when the chat may call nothing at all (ask mode): every call is refused with this reason. */
  private readonly closed?: string;

  constructor(options: { allow?: string[]; deny?: string[]; closed?: string } = {}) {
    this.closed = options.closed;
    const deny = [...ALWAYS_DENIED, ...(options.deny ?? [])];
    const allow = options.allow?.length ? options.allow : ['*'];
    // `!glob` in allow is a deny, as the approval-gate rules write it
    this.allow = allow.filter((g) => !g.startsWith('!')).map(globToRegExp);
    this.deny = [...deny, ...allow.filter((g) => g.startsWith('!')).map((g) => g.slice(1))].map(globToRegExp);
  }

  /** Why the function may not be called, or undefined when it may. */
  refusal(functionId: string): string | undefined {
    if (this.closed) return this.closed;
    if (this.deny.some((re) => re.test(functionId))) return `${functionId} is not callable from a chat (denied by policy)`;
    if (!this.allow.some((re) => re.test(functionId))) return `${functionId} is not in the functions this chat may call`;
    return undefined;
  }
}

/** The one tool the model gets: call an engine function by id with a JSON payload. */
export function agentTriggerTool(catalogue: string): ToolSpec {
  return {
    name: AGENT_TOOL,
    description: `Call a function registered on the eng engine and get its result. ${catalogue}`.trim(),
    parameters: {
      type: 'object',
      properties: {
        function: { type: 'string', description: 'The function id, e.g. "orders::list"' },
        payload: { type: 'object', description: 'The JSON input of the function', additionalProperties: true },
        description: { type: 'string', description: 'One short line saying why you call it (shown to the user)' },
      },
      required: ['function'],
    },
  };
}
