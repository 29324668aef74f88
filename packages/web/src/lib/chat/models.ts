/**
 * The model catalogue as the picker shows it (console-worker.md §2.4): `router::models::list`
 * grouped by provider (alphabetical), an empty group for a provider that is present but has no
 * models ("not configured") or whose worker is gone ("not loaded"), and a static fallback of
 * three providers when the catalogue cannot be read. Option ids are `provider::modelId`.
 */

export interface Model {
  id: string;
  provider: string;
  display_name?: string;
  context_window: number;
  max_output_tokens?: number;
  supports_thinking?: boolean;
  supports_tools?: boolean;
  supports_vision?: boolean;
  reasoning_efforts?: Array<{ effort: string; description?: string }>;
}

export interface Provider {
  id: string;
  display_name: string;
  configured: boolean;
  available: boolean;
  supports_model_listing?: boolean;
  credential_env_var?: string;
}

export interface ModelGroup {
  provider: string;
  label: string;
  models: Model[];
  /** Why the group is empty or greyed. */
  state: 'ready' | 'not-configured' | 'not-loaded' | 'fallback';
  credentialEnvVar?: string;
}

export const MODEL_KEY_SEP = '::';

export function modelKey(model: Pick<Model, 'provider' | 'id'>): string {
  return `${model.provider}${MODEL_KEY_SEP}${model.id}`;
}

export function parseModelKey(key: string): { provider: string; id: string } | undefined {
  const at = key.indexOf(MODEL_KEY_SEP);
  if (at <= 0) return undefined;
  return { provider: key.slice(0, at), id: key.slice(at + MODEL_KEY_SEP.length) };
}

export const modelLabel = (m: Model) => m.display_name || m.id;

/**
 * What the picker offers when `router::models::list` is unreachable: three providers with their
 * usual models (the console's README names OpenAI, Anthropic and Google). Picking one still needs
 * the router to route it; the picker says the list is offline.
 */
export const FALLBACK_MODELS: Model[] = [
  { id: 'gpt-4o', provider: 'openai', display_name: 'GPT-4o', context_window: 128_000, supports_vision: true },
  { id: 'gpt-4o-mini', provider: 'openai', display_name: 'GPT-4o mini', context_window: 128_000, supports_vision: true },
  {
    id: 'claude-sonnet-4-5',
    provider: 'anthropic',
    display_name: 'Claude Sonnet 4.5',
    context_window: 200_000,
    supports_vision: true,
    supports_thinking: true,
  },
  { id: 'claude-haiku-4-5', provider: 'anthropic', display_name: 'Claude Haiku 4.5', context_window: 200_000, supports_vision: true },
  { id: 'gemini-2.5-pro', provider: 'google', display_name: 'Gemini 2.5 Pro', context_window: 1_048_576, supports_vision: true },
  { id: 'gemini-2.5-flash', provider: 'google', display_name: 'Gemini 2.5 Flash', context_window: 1_048_576, supports_vision: true },
];

const PROVIDER_LABELS: Record<string, string> = { openai: 'OpenAI', anthropic: 'Anthropic', google: 'Google' };

export function providerLabel(id: string, providers: readonly Provider[] = []): string {
  return providers.find((p) => p.id === id)?.display_name || PROVIDER_LABELS[id] || id;
}

export function groupModels(models: readonly Model[] | undefined, providers: readonly Provider[] | undefined): ModelGroup[] {
  if (!models) {
    const ids = [...new Set(FALLBACK_MODELS.map((m) => m.provider))];
    return ids.map((provider) => ({
      provider,
      label: providerLabel(provider),
      models: FALLBACK_MODELS.filter((m) => m.provider === provider),
      state: 'fallback',
    }));
  }
  const byProvider = new Map<string, Model[]>();
  for (const m of models) {
    if (!(m.context_window > 0)) continue;
    const list = byProvider.get(m.provider) ?? [];
    list.push(m);
    byProvider.set(m.provider, list);
  }
  for (const p of providers ?? []) if (!byProvider.has(p.id)) byProvider.set(p.id, []);
  return [...byProvider.entries()]
    .map(([provider, list]): ModelGroup => {
      const info = providers?.find((p) => p.id === provider);
      const state: ModelGroup['state'] =
        info && !info.available ? 'not-loaded' : list.length === 0 || (info && !info.configured) ? 'not-configured' : 'ready';
      return {
        provider,
        label: providerLabel(provider, providers),
        models: state === 'ready' ? [...list].sort((a, b) => modelLabel(a).localeCompare(modelLabel(b))) : [],
        state,
        ...(info?.credential_env_var ? { credentialEnvVar: info.credential_env_var } : {}),
      };
    })
    .sort((a, b) => a.label.localeCompare(b.label));
}

export const DEFAULT_EFFORT = 'default';
const THINKING_LEVELS = ['minimal', 'low', 'medium', 'high', 'xhigh'];

/** The reasoning-effort row: the model's efforts plus `default`, else the thinking levels when it thinks; empty: no row. */
export function effortsOf(model: Model | undefined): string[] {
  if (!model) return [];
  if (model.reasoning_efforts?.length) return [DEFAULT_EFFORT, ...model.reasoning_efforts.map((e) => e.effort)];
  if (model.supports_thinking) return [DEFAULT_EFFORT, ...THINKING_LEVELS];
  return [];
}

/** `harness::send` options for an effort (nothing for `default`). */
export function effortOptions(model: Model, effort: string | undefined): Record<string, unknown> {
  if (!effort || effort === DEFAULT_EFFORT || !effortsOf(model).includes(effort)) return {};
  const out: Record<string, unknown> = { provider_options: { [model.provider]: { reasoning_effort: effort } } };
  if (THINKING_LEVELS.includes(effort)) out.thinking_level = effort;
  return out;
}

/** True: the model reads images. Unknown counts as no: an image sent to a text-only model fails the turn. */
export function readsImages(model: Model | undefined): boolean {
  return model?.supports_vision === true;
}
