import type { Modality, Model } from './types.ts';

// spec: console-worker §2.4 — the model catalogue: one slice per provider, replaced whole by
// `router::models::reconcile`; `router::models::list {provider?, capability?, modality?}`.

export const MODEL_KEY_SEP = '::';

const CAPABILITIES: Record<string, keyof Model> = {
  tools: 'supports_tools',
  vision: 'supports_vision',
  thinking: 'supports_thinking',
  structured_output: 'supports_structured_output',
};
export const CAPABILITY_NAMES = Object.keys(CAPABILITIES);

export interface ModelFilter {
  provider?: string;
  capability?: string;
  modality?: Modality | 'any';
}

export class Catalog {
  private readonly slices = new Map<string, Model[]>();

  /** Replace a provider's slice; true when something changed. */
  reconcile(provider: string, models: Model[]): boolean {
    const before = JSON.stringify(this.slices.get(provider) ?? []);
    const sorted = [...models].sort((a, b) => a.id.localeCompare(b.id));
    if (sorted.length === 0) this.slices.delete(provider);
    else this.slices.set(provider, sorted);
    return before !== JSON.stringify(sorted);
  }

  count(provider: string): number {
    return this.slices.get(provider)?.length ?? 0;
  }

  providersServing(modelId: string): string[] {
    const out: string[] = [];
    for (const [provider, models] of this.slices) if (models.some((m) => m.id === modelId)) out.push(provider);
    return out;
  }

  get(provider: string, modelId: string): Model | undefined {
    return this.slices.get(provider)?.find((m) => m.id === modelId);
  }

  list(filter: ModelFilter, isLive: (provider: string) => boolean): Model[] {
    const modality = filter.modality ?? 'chat';
    const flag = filter.capability ? CAPABILITIES[filter.capability] : undefined;
    const out: Model[] = [];
    for (const [provider, models] of this.slices) {
      if (filter.provider && filter.provider !== provider) continue;
      if (!isLive(provider)) continue;
      for (const model of models) {
        if (modality !== 'any' && (model.modality ?? 'chat') !== modality) continue;
        if (flag && model[flag] !== true) continue;
        out.push(model);
      }
    }
    return out;
  }
}

/** `provider::modelId` → both halves; a bare id has no provider. */
export function splitModelKey(key: string): { provider?: string; model: string } {
  const at = key.indexOf(MODEL_KEY_SEP);
  if (at <= 0) return { model: key };
  return { provider: key.slice(0, at), model: key.slice(at + MODEL_KEY_SEP.length) };
}

/** spec §2.4: a bare id with no other hint maps by prefix — `claude*` anthropic, `gemini*` google, else openai. */
export function providerByPrefix(modelId: string): string {
  const id = modelId.toLowerCase();
  if (id.startsWith('claude')) return 'anthropic';
  if (id.startsWith('gemini')) return 'google';
  return 'openai';
}
