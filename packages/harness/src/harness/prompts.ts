import type { EngClient } from '@eng/sdk';
import type { FunctionPolicy } from './policy.ts';
import type { SendOptions } from './types.ts';

// spec: console-worker §2.3 — the system prompt: the router's override for the provider, else the
// embedded default; `mode` prepends a paragraph; `system_prompt` enriches or overrides it.

const DEFAULT_PROMPT = [
  'You are the assistant of an eng engine: a function-and-trigger engine whose workers register functions.',
  'Answer clearly and concisely in Markdown.',
].join(' ');

const MODES: Record<string, string> = {
  ask: 'Mode: ask. Answer from what you know and what the conversation holds. You cannot call functions in this mode.',
  plan: 'Mode: plan. Investigate with read-only function calls where useful, then propose a step-by-step plan. Do not make changes.',
  agent: 'Mode: agent. Carry out the request: call engine functions with the agent_trigger tool when that helps, then report what you did.',
};

const CATALOGUE_TTL_MS = 10_000;
const CATALOGUE_MAX = 80;

let catalogue: { at: number; functions: Array<{ function_id: string; description?: string | null }> } | undefined;

/** Registered functions (not internal ones), cached for a few seconds. */
async function functionList(client: EngClient): Promise<Array<{ function_id: string; description?: string | null }>> {
  if (catalogue && Date.now() - catalogue.at < CATALOGUE_TTL_MS) return catalogue.functions;
  try {
    const listed = await client.call<{ functions: Array<{ function_id: string; description?: string | null }> }>(
      'engine::functions::list',
      {},
      { timeoutMs: 5000 },
    );
    catalogue = { at: Date.now(), functions: listed.functions };
  } catch {
    catalogue = { at: Date.now(), functions: [] };
  }
  return catalogue.functions;
}

export async function functionCatalogue(client: EngClient, policy: Promise<FunctionPolicy>): Promise<string> {
  const [functions, allowed] = await Promise.all([functionList(client), policy]);
  const callable = functions.filter((f) => !allowed.refusal(f.function_id));
  if (callable.length === 0) return '';
  const lines = callable.slice(0, CATALOGUE_MAX).map((f) => `- ${f.function_id}${f.description ? `: ${f.description.slice(0, 160)}` : ''}`);
  const more = callable.length > CATALOGUE_MAX ? `\n(and ${callable.length - CATALOGUE_MAX} more; engine::functions::list lists them)` : '';
  return `Functions you can call:\n${lines.join('\n')}${more}`;
}

/** The operator's override of the system prompt for a provider (the llm-router entry), if any. */
export async function systemPromptOverride(client: EngClient, provider: string): Promise<string | undefined> {
  try {
    const override = await client.call<string | null>('router::system_prompt::get', { provider }, { timeoutMs: 3000 });
    return typeof override === 'string' && override.trim() ? override : undefined;
  } catch {
    // the router answers chat calls; a missing override is no reason to fail a turn
    return undefined;
  }
}

export function systemPrompt(override: string | undefined, options: SendOptions, catalogueText: string): string {
  let base = override ?? DEFAULT_PROMPT;
  if (options.system_prompt && options.system_prompt_strategy === 'override') base = options.system_prompt;
  else if (options.system_prompt) base = `${base}\n\n${options.system_prompt}`;
  const mode = MODES[options.mode ?? 'agent'] ?? MODES.agent;
  const parts = [mode, base];
  if ((options.mode ?? 'agent') !== 'ask' && catalogueText) parts.push(catalogueText);
  return parts.join('\n\n');
}
