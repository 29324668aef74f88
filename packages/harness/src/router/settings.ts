// spec: console-worker §2.5 — the `llm-router` configuration entry: one slice per provider
// (secret `api_key`, `api_url`, …), routing heuristics and stream budgets.

export const ENTRY_ID = 'llm-router';

export interface ProviderSlice {
  api_key?: string;
  api_url?: string;
  max_tokens?: number;
  system_prompt?: string | null;
}

export interface RouterSettings {
  default_provider?: string;
  providers: Record<string, ProviderSlice>;
  routing_heuristics: Array<{ pattern: RegExp; provider: string }>;
  stream_timeout_ms: number;
  idle_timeout_ms: number;
  output_token_max: number;
  /** Bytes one answer may carry (text, thinking, tool-call arguments): issue 24 item 4. */
  max_answer_bytes: number;
}

/**
 * Bounds of `max_answer_bytes`. The whole answer travels in one result frame, and JSON escaping
 * can grow it up to six-fold: 8 MiB stays under the engine's 64 MiB frame limit (max_frame_bytes).
 */
export const MIN_ANSWER_BYTES = 1024;
export const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

export const DEFAULT_SETTINGS: RouterSettings = {
  providers: {},
  routing_heuristics: [],
  stream_timeout_ms: 300_000,
  idle_timeout_ms: 120_000,
  output_token_max: 32_000,
  max_answer_bytes: 4 * 1024 * 1024,
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const nonEmpty = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);
const positive = (v: unknown, fallback: number): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : fallback);
/** The schema refuses a bad cap on `configuration::set`; a stored value out of bounds still falls back. */
export const answerCap = (v: unknown): number =>
  Number.isInteger(v) && (v as number) >= MIN_ANSWER_BYTES && (v as number) <= MAX_ANSWER_BYTES
    ? (v as number)
    : DEFAULT_SETTINGS.max_answer_bytes;

/** Read the stored value tolerantly: whatever is malformed falls back to the default. */
export function parseSettings(value: unknown): RouterSettings {
  if (!isObject(value)) return { ...DEFAULT_SETTINGS, providers: {} };
  const providers: Record<string, ProviderSlice> = {};
  if (isObject(value.providers)) {
    for (const [id, raw] of Object.entries(value.providers)) {
      if (!isObject(raw)) continue;
      providers[id] = {
        api_key: nonEmpty(raw.api_key),
        api_url: nonEmpty(raw.api_url),
        max_tokens: typeof raw.max_tokens === 'number' && raw.max_tokens > 0 ? raw.max_tokens : undefined,
        system_prompt: nonEmpty(raw.system_prompt) ?? null,
      };
    }
  }
  const heuristics: RouterSettings['routing_heuristics'] = [];
  if (Array.isArray(value.routing_heuristics)) {
    for (const rule of value.routing_heuristics) {
      if (!isObject(rule) || typeof rule.pattern !== 'string' || typeof rule.provider !== 'string') continue;
      try {
        heuristics.push({ pattern: new RegExp(rule.pattern), provider: rule.provider });
      } catch {
        // a pattern that does not compile is skipped; the schema already warns the editor
      }
    }
  }
  const settings = isObject(value.settings) ? value.settings : {};
  return {
    default_provider: nonEmpty(value.default_provider),
    providers,
    routing_heuristics: heuristics,
    stream_timeout_ms: positive(settings.stream_timeout_ms, DEFAULT_SETTINGS.stream_timeout_ms),
    idle_timeout_ms: positive(settings.idle_timeout_ms, DEFAULT_SETTINGS.idle_timeout_ms),
    output_token_max: positive(settings.output_token_max, DEFAULT_SETTINGS.output_token_max),
    max_answer_bytes: answerCap(settings.max_answer_bytes),
  };
}

/** A comparable fingerprint per provider slice, so a change of one key refreshes only that provider. */
export function sliceFingerprints(settings: RouterSettings): Map<string, string> {
  const out = new Map<string, string>();
  for (const [id, slice] of Object.entries(settings.providers)) {
    out.set(id, JSON.stringify([slice.api_key ?? '', slice.api_url ?? '']));
  }
  return out;
}

export function changedSlices(before: Map<string, string>, after: Map<string, string>): string[] {
  const ids = new Set([...before.keys(), ...after.keys()]);
  return [...ids].filter((id) => before.get(id) !== after.get(id));
}

/** The slice schema every provider gets unless it declares its own. `api_key` is a write-only secret. */
export function defaultSliceSchema(displayName: string, envVar?: string): Record<string, unknown> {
  return {
    type: 'object',
    title: displayName,
    additionalProperties: false,
    properties: {
      api_key: {
        type: 'string',
        title: 'API key',
        writeOnly: true,
        // an empty or blank key is refused by configuration::set (issue 25 item 4): it would read
        // as "set" while the provider has no credential
        minLength: 1,
        pattern: '\\S',
        errorMessage: 'must not be empty or only spaces: leave the field out to keep the stored key, or send {"set": false} to remove it',
        description: envVar ? `Secret. Without it the router reads ${envVar} from its environment.` : 'Secret.',
      },
      api_url: {
        type: 'string',
        title: 'API URL',
        description: 'Base URL of the API, for a compatible or local server (llama.cpp, Ollama, vLLM, …).',
      },
      max_tokens: { type: 'integer', minimum: 1, title: 'Default max output tokens' },
      system_prompt: { type: ['string', 'null'], title: 'System prompt override' },
    },
  };
}

/** The whole entry schema, composed from the registered providers' slices. */
export function composeEntrySchema(slices: Record<string, Record<string, unknown>>): Record<string, unknown> {
  return {
    type: 'object',
    additionalProperties: false,
    properties: {
      default_provider: { type: 'string', enum: Object.keys(slices).length ? Object.keys(slices) : undefined },
      providers: { type: 'object', additionalProperties: false, properties: slices },
      routing_heuristics: {
        type: 'array',
        items: {
          type: 'object',
          required: ['pattern', 'provider'],
          properties: { pattern: { type: 'string', description: 'regular expression on the model id' }, provider: { type: 'string' } },
        },
      },
      settings: {
        type: 'object',
        properties: {
          stream_timeout_ms: { type: 'integer', minimum: 1, default: DEFAULT_SETTINGS.stream_timeout_ms },
          idle_timeout_ms: { type: 'integer', minimum: 1, default: DEFAULT_SETTINGS.idle_timeout_ms },
          output_token_max: { type: 'integer', minimum: 1, default: DEFAULT_SETTINGS.output_token_max },
          max_answer_bytes: {
            type: 'integer',
            minimum: MIN_ANSWER_BYTES,
            maximum: MAX_ANSWER_BYTES,
            default: DEFAULT_SETTINGS.max_answer_bytes,
            title: 'Max answer bytes',
            description: `Bytes one answer may carry (text, thinking and tool-call arguments), ${MIN_ANSWER_BYTES} to ${MAX_ANSWER_BYTES}; a longer answer ends its turn with an error.`,
          },
        },
      },
    },
  };
}
