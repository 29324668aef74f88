import type { Model } from '../../router/types.ts';

// Built-in facts about Anthropic's models: the Models API lists ids and names, not limits.
// Dated ids (`claude-sonnet-4-5-20250929`) match their family by prefix.

type Known = Omit<Model, 'id' | 'provider'>;

const THINKING_BUDGETS = { minimal: 1024, low: 2048, medium: 8192, high: 16_384, xhigh: 32_000 };
const thinking = { supports_thinking: true, thinking_budgets: THINKING_BUDGETS };
const base = { context_window: 200_000, supports_tools: true, supports_vision: true };

const KNOWN: Record<string, Known> = {
  'claude-opus-4-1': { display_name: 'Claude Opus 4.1', ...base, max_output_tokens: 32_000, ...thinking },
  'claude-opus-4': { display_name: 'Claude Opus 4', ...base, max_output_tokens: 32_000, ...thinking },
  'claude-sonnet-4-5': { display_name: 'Claude Sonnet 4.5', ...base, max_output_tokens: 64_000, ...thinking },
  'claude-sonnet-4': { display_name: 'Claude Sonnet 4', ...base, max_output_tokens: 64_000, ...thinking },
  'claude-haiku-4-5': { display_name: 'Claude Haiku 4.5', ...base, max_output_tokens: 64_000, ...thinking },
  'claude-3-7-sonnet': { display_name: 'Claude Sonnet 3.7', ...base, max_output_tokens: 64_000, ...thinking },
  'claude-3-5-haiku': { display_name: 'Claude Haiku 3.5', ...base, max_output_tokens: 8_192 },
};

const UNKNOWN: Known = { ...base, max_output_tokens: 8_192 };

function family(id: string): Known | undefined {
  const match = Object.keys(KNOWN)
    .filter((k) => id === k || id.startsWith(`${k}-`))
    .sort((a, b) => b.length - a.length)[0];
  return match ? KNOWN[match] : undefined;
}

export function describeModel(id: string, provider: string, displayName?: string): Model {
  const known = family(id) ?? UNKNOWN;
  return { id, provider, ...known, display_name: displayName || known.display_name || id };
}

export function builtinModels(provider: string): Model[] {
  return Object.entries(KNOWN).map(([id, known]) => ({ id, provider, ...known }));
}

/** The thinking budget for a level, or undefined when the model does not think. */
export function thinkingBudget(model: Model | undefined, level: string | undefined): number | undefined {
  if (!level || !model?.supports_thinking) return undefined;
  return model.thinking_budgets?.[level];
}
