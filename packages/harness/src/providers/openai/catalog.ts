import type { Model } from '../../router/types.ts';

// Built-in facts about OpenAI's chat models, used for ids the API lists (it lists ids only) and
// when a server does not offer `GET /models`. Dated ids (`gpt-4o-2024-08-06`) match their family.

type Known = Omit<Model, 'id' | 'provider'>;

const EFFORTS = [{ effort: 'low' }, { effort: 'medium' }, { effort: 'high' }];
const GPT5_EFFORTS = [{ effort: 'minimal' }, ...EFFORTS];

const KNOWN: Record<string, Known> = {
  'gpt-5': {
    display_name: 'GPT-5',
    context_window: 400_000,
    max_output_tokens: 128_000,
    supports_tools: true,
    supports_vision: true,
    supports_thinking: true,
    supports_structured_output: true,
    reasoning_efforts: GPT5_EFFORTS,
  },
  'gpt-5-mini': {
    display_name: 'GPT-5 mini',
    context_window: 400_000,
    max_output_tokens: 128_000,
    supports_tools: true,
    supports_vision: true,
    supports_thinking: true,
    supports_structured_output: true,
    reasoning_efforts: GPT5_EFFORTS,
  },
  'gpt-5-nano': {
    display_name: 'GPT-5 nano',
    context_window: 400_000,
    max_output_tokens: 128_000,
    supports_tools: true,
    supports_vision: true,
    supports_thinking: true,
    supports_structured_output: true,
    reasoning_efforts: GPT5_EFFORTS,
  },
  'gpt-4.1': {
    display_name: 'GPT-4.1',
    context_window: 1_047_576,
    max_output_tokens: 32_768,
    supports_tools: true,
    supports_vision: true,
    supports_structured_output: true,
  },
  'gpt-4.1-mini': {
    display_name: 'GPT-4.1 mini',
    context_window: 1_047_576,
    max_output_tokens: 32_768,
    supports_tools: true,
    supports_vision: true,
    supports_structured_output: true,
  },
  'gpt-4.1-nano': {
    display_name: 'GPT-4.1 nano',
    context_window: 1_047_576,
    max_output_tokens: 32_768,
    supports_tools: true,
    supports_vision: true,
    supports_structured_output: true,
  },
  'gpt-4o': {
    display_name: 'GPT-4o',
    context_window: 128_000,
    max_output_tokens: 16_384,
    supports_tools: true,
    supports_vision: true,
    supports_structured_output: true,
  },
  'gpt-4o-mini': {
    display_name: 'GPT-4o mini',
    context_window: 128_000,
    max_output_tokens: 16_384,
    supports_tools: true,
    supports_vision: true,
    supports_structured_output: true,
  },
  o3: {
    display_name: 'o3',
    context_window: 200_000,
    max_output_tokens: 100_000,
    supports_tools: true,
    supports_vision: true,
    supports_thinking: true,
    reasoning_efforts: EFFORTS,
  },
  'o3-mini': {
    display_name: 'o3-mini',
    context_window: 200_000,
    max_output_tokens: 100_000,
    supports_tools: true,
    supports_thinking: true,
    reasoning_efforts: EFFORTS,
  },
  'o4-mini': {
    display_name: 'o4-mini',
    context_window: 200_000,
    max_output_tokens: 100_000,
    supports_tools: true,
    supports_vision: true,
    supports_thinking: true,
    reasoning_efforts: EFFORTS,
  },
};

/** What an unknown model from a compatible server gets: modest, safe limits. */
const UNKNOWN: Known = { context_window: 32_768, max_output_tokens: 4_096, supports_tools: true };

/** Ids OpenAI lists that are not chat models. */
const NOT_CHAT =
  /^(text-embedding|embedding|whisper|tts|dall-e|gpt-image|omni-moderation|text-moderation|babbage|davinci|computer-use|codex-mini|sora)|-(transcribe|tts|realtime|audio|search)(-|$)/;

function family(id: string): Known | undefined {
  if (KNOWN[id]) return KNOWN[id];
  const prefix = Object.keys(KNOWN)
    .filter((k) => id.startsWith(`${k}-`) && /^\d{4}-\d{2}-\d{2}$/.test(id.slice(k.length + 1)))
    .sort((a, b) => b.length - a.length)[0];
  return prefix ? KNOWN[prefix] : undefined;
}

export function describeModel(id: string, provider: string): Model | undefined {
  if (NOT_CHAT.test(id)) return undefined;
  const known = family(id);
  return { id, provider, ...(known ?? { ...UNKNOWN, display_name: id }) };
}

export function builtinModels(provider: string): Model[] {
  return Object.entries(KNOWN).map(([id, known]) => ({ id, provider, ...known }));
}
