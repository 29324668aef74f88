import { randomUUID } from 'node:crypto';
import type { ChannelWriter, EngClient } from '@eng/sdk';
import { z } from 'zod';
import { GenerationFields } from '../providers/request.ts';
import { parseRequest } from '../shared/errors.ts';
import { ANSWER_TOO_LARGE_KIND, answerTooLarge, contentBytes, ROUTER_SLACK_BYTES } from './answer-cap.ts';
import { type Catalog, providerByPrefix, splitModelKey } from './catalog.ts';
import type { RouterConfigEntry } from './config-entry.ts';
import { routerError } from './errors.ts';
import type { ProviderRegistry } from './registry.ts';
import type { ErrorKind, GenerationResult, Model, Usage } from './types.ts';

// spec: console-worker §2.4/§2.5 and #249 — `router::route`, `router::chat` (stream into the
// caller's channel), `router::complete` (no channel), `router::abort {request_id}`.

const RouteInput = z.object({ model: z.string().min(1, { error: 'model is required' }), provider: z.string().min(1).optional() });

const ChatInput = z.object({
  model: z.string({ error: 'model is required' }).min(1, { error: 'model is required' }),
  provider: z.string().min(1).optional(),
  request_id: z.string().min(1).optional(),
  ...GenerationFields,
});

/** Attempts at a provider whose stream function is missing (about 1.5 s in all). */
const PROVIDER_ATTEMPTS = 4;

export interface Route {
  provider: string;
  model: string;
  key: string;
}

export class ChatRouter {
  private readonly inflight = new Map<string, string>();

  constructor(
    private readonly client: EngClient,
    private readonly registry: ProviderRegistry,
    private readonly catalog: Catalog,
    private readonly config: RouterConfigEntry,
    /**
     * A provider's stream function was missing on every attempt: check whether its worker is still
     * connected. Availability follows the connection, never one call's failure.
     */
    private readonly providerMissing: (provider: string) => void = () => {},
  ) {}

  register(): void {
    this.client.registerFunction('router::route', async (input) => this.route(parseRequest('router', 'router::route', RouteInput, input)), {
      description: 'Which provider serves a model: {model, provider?} → {provider, model, key}',
    });
    this.client.registerFunction('router::chat', (input) => this.chat(input, true), {
      description: "Stream one generation into the caller's channel (writer_ref); returns the result",
    });
    this.client.registerFunction('router::complete', (input) => this.chat(input, false), {
      description: 'One generation without streaming; returns the final content',
    });
    this.client.registerFunction('router::abort', (input) => this.abort(input), {
      description: 'Cancel an in-flight generation by request_id',
    });
  }

  /**
   * `provider::model` → that provider; a bare id: explicit provider, routing heuristics, the provider
   * whose catalogue lists it, the default provider, then the prefix rule (spec §2.4).
   */
  route(input: { model: string; provider?: string }): Route {
    const split = splitModelKey(input.model);
    const model = split.model;
    let provider = split.provider ?? input.provider;
    const settings = this.config.settings;
    if (!provider) provider = settings.routing_heuristics.find((rule) => rule.pattern.test(model))?.provider;
    if (!provider) provider = this.catalog.providersServing(model).find((p) => this.registry.isAvailable(p));
    if (!provider && settings.default_provider && this.catalog.get(settings.default_provider, model)) provider = settings.default_provider;
    provider ??= providerByPrefix(model);
    const record = this.registry.get(provider);
    if (!record) {
      const known = this.registry.all().map((r) => r.id);
      throw routerError(
        'no_provider_for_model',
        `no provider for model "${input.model}": provider "${provider}" is not installed (${known.length ? `installed: ${known.join(', ')}` : 'no provider worker is connected'})`,
      );
    }
    if (!record.available) {
      throw routerError('provider_unavailable', `provider "${provider}" serves model "${model}" but its worker is not connected`);
    }
    if (!this.config.isConfigured(record)) {
      throw routerError(
        'no_provider_for_model',
        `no provider for model "${input.model}": ${record.display_name} has no credentials (set ${record.credential_env_var ?? 'its key'} for the router, or the api_key of "${provider}" in the llm-router configuration entry)`,
      );
    }
    return { provider, model, key: `${provider}::${model}` };
  }

  modelInfo(route: Route): Model | undefined {
    return this.catalog.get(route.provider, route.model);
  }

  private async chat(input: unknown, streaming: boolean): Promise<GenerationResult> {
    const functionId = streaming ? 'router::chat' : 'router::complete';
    const request = parseRequest('router', functionId, ChatInput, input);
    const writer = (input as { writer_ref?: ChannelWriter }).writer_ref;
    if (streaming && (!writer || typeof writer.sendMessage !== 'function')) {
      throw routerError(
        'invalid_request',
        'router::chat: writer_ref (the write end of a channel) is required; use router::complete without one',
      );
    }
    const route = this.route(request);
    const model = this.modelInfo(route);
    const settings = this.config.settings;
    const ceiling = Math.min(settings.output_token_max, model?.max_output_tokens ?? settings.output_token_max);
    const sliceMax = settings.providers[route.provider]?.max_tokens;
    const maxTokens = Math.min(request.max_output_tokens ?? sliceMax ?? ceiling, ceiling);
    const requestId = request.request_id ?? randomUUID();
    if (this.inflight.has(requestId)) throw routerError('invalid_request', `${functionId}: request_id ${requestId} is already in flight`);
    this.inflight.set(requestId, route.provider);
    const limit = settings.max_answer_bytes;
    let result: GenerationResult;
    try {
      // the provider streams straight into the caller's channel (no relay: a hop per frame cost
      // the first token ~6 ms); the caller's reader counts the same cap (harness/answer-cap.ts)
      const payload = {
        request_id: requestId,
        model: route.model,
        messages: request.messages,
        system: request.system,
        tools: request.tools,
        max_output_tokens: maxTokens,
        thinking_level: request.thinking_level,
        provider_options: request.provider_options,
        max_answer_bytes: limit,
        writer: streaming ? writer : undefined,
      };
      result = this.checked(route, await this.callProvider(route.provider, payload, settings.stream_timeout_ms + 10_000), limit);
    } catch (err) {
      // the provider worker failed or left mid-stream: a result the caller can record, not a throw
      const message = err instanceof Error ? err.message : String(err);
      const code = (err as { code?: string }).code;
      if (code === 'function_not_found') this.providerMissing(route.provider);
      result = failed(route, 'transient', `provider ${route.provider} failed: ${message}`);
    } finally {
      this.inflight.delete(requestId);
    }
    return result;
  }

  /** The provider's result as the router hands it on: well-formed, and no larger than the cap allows. */
  private checked(route: Route, result: GenerationResult, limit: number): GenerationResult {
    if (!result || typeof result !== 'object' || typeof result.ok !== 'boolean' || !Array.isArray(result.content)) {
      return failed(route, 'transient', `provider ${route.provider} returned a malformed result`);
    }
    if (contentBytes(result.content) > limit + ROUTER_SLACK_BYTES) return tooLarge(route, limit, result.usage);
    return result;
  }

  /**
   * The provider's stream function. One that is not registered (its worker reconnecting after an
   * engine restart) is tried again shortly: the call never started, so nothing was streamed twice.
   */
  private async callProvider(provider: string, payload: unknown, timeoutMs: number): Promise<GenerationResult> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.client.call<GenerationResult>(`provider::${provider}::stream`, payload, { timeoutMs });
      } catch (err) {
        if ((err as { code?: string }).code !== 'function_not_found' || attempt >= PROVIDER_ATTEMPTS) throw err;
        await new Promise((r) => setTimeout(r, 250 * attempt));
      }
    }
  }

  private async abort(input: unknown): Promise<{ aborted: boolean }> {
    const requestId = (input as { request_id?: unknown } | null)?.request_id;
    if (typeof requestId !== 'string' || !requestId) throw routerError('invalid_request', 'router::abort: request_id is required');
    const provider = this.inflight.get(requestId);
    if (!provider) return { aborted: false };
    try {
      return await this.client.call<{ aborted: boolean }>(`provider::${provider}::abort`, { request_id: requestId }, { timeoutMs: 5000 });
    } catch {
      return { aborted: false };
    }
  }
}

function failed(route: Route, kind: ErrorKind, message: string, usage?: Usage): GenerationResult {
  const result: GenerationResult = {
    ok: false,
    provider: route.provider,
    model: route.model,
    content: [],
    stop_reason: 'error',
    error: { kind, message },
  };
  if (usage) result.usage = usage;
  return result;
}

/** The cap's error; the caller keeps what was streamed before it. */
function tooLarge(route: Route, limit: number, usage?: Usage): GenerationResult {
  return failed(route, ANSWER_TOO_LARGE_KIND, answerTooLarge(limit), usage);
}
