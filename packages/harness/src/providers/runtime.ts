import { type ChannelWriter, type EngClient, EngError, ErrorCode } from '@eng/sdk';
import type { GenerationResult, Model, ProviderStreamRequest } from '../router/types.ts';
import { runWorker } from '../shared/worker.ts';
import { classifyError, redactSecret } from './errors.ts';
import { GenerationOutput } from './output.ts';
import { parseStreamRequest } from './request.ts';
import { lineTooLong } from './upstream.ts';

// A provider worker (spec: console-worker §2.4, §2.5): it declares itself to the router, keeps its
// model catalogue there (`router::models::reconcile`) and serves `provider::<id>::stream`.

export interface Credentials {
  api_key?: string;
  api_url?: string;
  source: 'config' | 'env' | 'none';
}

export interface ProviderDefinition {
  id: string;
  display_name: string;
  credential_env_var: string;
  /** Environment variable naming a base URL (OPENAI_BASE_URL), read like the key. */
  base_url_env_var?: string;
  supports_model_listing: boolean;
  /** Key-less servers (a local llama.cpp) count as configured once an api_url is set. */
  api_url_is_enough: boolean;
  listModels(credentials: Credentials): Promise<Model[]>;
  stream(
    request: ProviderStreamRequest,
    credentials: Credentials,
    output: GenerationOutput,
    signal: AbortSignal,
  ): Promise<GenerationResult>;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
/** A credential is re-resolved at least this often even without a refresh (an env-only change, a restarted router). */
const CREDENTIAL_TTL_MS = 30_000;

export class ProviderWorker {
  private readonly inflight = new Map<string, AbortController>();
  private declared = false;
  /** Each (re)declaration supersedes the loop of the one before. */
  private declaration = 0;
  private stopped = false;
  /** The last resolved credentials; dropped on every refresh (a key was set) and router restart. */
  private cached?: { at: number; credentials: Promise<Credentials> };

  constructor(
    private readonly client: EngClient,
    private readonly def: ProviderDefinition,
  ) {}

  start(): void {
    const { id } = this.def;
    this.client.registerFunction(`provider::${id}::stream`, (input) => this.stream(input), {
      description: `Stream one generation from ${this.def.display_name} into the caller's channel`,
      metadata: { internal: true },
    });
    this.client.registerFunction(`provider::${id}::refresh_models`, () => this.refresh(), {
      description: `Rediscover ${this.def.display_name}'s models and hand them to the router`,
    });
    this.client.registerFunction(`provider::${id}::abort`, (input) => this.abort(input), {
      description: `Cancel an in-flight ${this.def.display_name} generation by request_id`,
      metadata: { internal: true },
    });
    this.client.registerFunction(`provider::${id}::on-router-ready`, async () => {
      this.redeclare();
      return {};
    });
    this.client.registerTrigger({ type: 'router::ready', function_id: `provider::${id}::on-router-ready`, config: {} });
    // the router marks us unavailable when our connection drops; a new connection declares again,
    // whatever dropped the old one (an oversized frame, an engine restart, a network blip)
    this.client.on('connected', () => this.redeclare());
    void this.declare();
  }

  stop(): void {
    this.stopped = true;
    for (const controller of this.inflight.values()) controller.abort();
  }

  private redeclare(): void {
    this.declared = false;
    this.cached = undefined;
    void this.declare();
  }

  /** Declare to the router until it answers (it may start after us), then fill the catalogue. */
  private async declare(): Promise<void> {
    const declaration = ++this.declaration;
    let delay = 100;
    while (!this.declared && !this.stopped && declaration === this.declaration) {
      try {
        await this.client.call(
          'router::provider::register',
          {
            id: this.def.id,
            display_name: this.def.display_name,
            credential_env_var: this.def.credential_env_var,
            base_url_env_var: this.def.base_url_env_var,
            supports_model_listing: this.def.supports_model_listing,
            api_url_is_enough: this.def.api_url_is_enough,
            env_credentials: this.hasOwnEnvCredentials(),
          },
          { timeoutMs: 5000 },
        );
        if (declaration === this.declaration) this.declared = true;
      } catch {
        await sleep(delay);
        delay = Math.min(delay * 2, 2000);
      }
    }
    if (this.declared && declaration === this.declaration) await this.refresh().catch(() => {});
  }

  private hasOwnEnvCredentials(): boolean {
    if (process.env[this.def.credential_env_var]?.trim()) return true;
    const url = this.def.base_url_env_var ? process.env[this.def.base_url_env_var]?.trim() : undefined;
    return Boolean(url && this.def.api_url_is_enough);
  }

  /** Credentials for a generation: resolved once, then reused until a refresh or CREDENTIAL_TTL_MS. */
  credentials(): Promise<Credentials> {
    if (this.cached && Date.now() - this.cached.at < CREDENTIAL_TTL_MS) return this.cached.credentials;
    const credentials = this.resolveCredentials();
    this.cached = { at: Date.now(), credentials };
    credentials.catch(() => {
      this.cached = undefined;
    });
    return credentials;
  }

  /** The router's answer (config > router env), else this process's own environment. */
  private async resolveCredentials(): Promise<Credentials> {
    let resolved: Credentials = { source: 'none' };
    try {
      resolved =
        (await this.client.call<Credentials>('router::provider::resolve', { provider: this.def.id }, { timeoutMs: 5000 })) ?? resolved;
    } catch {
      // router unreachable: fall back to our own environment
    }
    if (resolved.source !== 'none') return resolved;
    const key = process.env[this.def.credential_env_var]?.trim();
    const url = this.def.base_url_env_var ? process.env[this.def.base_url_env_var]?.trim() : undefined;
    if (key || (url && this.def.api_url_is_enough)) return { api_key: key || undefined, api_url: url || undefined, source: 'env' };
    return { source: 'none', api_url: url || undefined };
  }

  private async refresh(): Promise<{ provider: string; count: number; error?: string }> {
    this.cached = undefined;
    const credentials = await this.credentials();
    let models: Model[] = [];
    let error: string | undefined;
    if (credentials.source !== 'none') {
      try {
        models = await this.def.listModels(credentials);
      } catch (err) {
        error = redactSecret(classifyError(err).message, credentials.api_key);
        this.client.log.warn(`${this.def.id}: listing models failed: ${error}`);
      }
    }
    await this.client.call('router::models::reconcile', { provider: this.def.id, models }, { timeoutMs: 10_000 });
    return error ? { provider: this.def.id, count: models.length, error } : { provider: this.def.id, count: models.length };
  }

  private async abort(input: unknown): Promise<{ aborted: boolean }> {
    const requestId = (input as { request_id?: unknown } | null)?.request_id;
    if (typeof requestId !== 'string' || !requestId) throw new EngError(ErrorCode.InvalidArguments, 'request_id is required');
    const controller = this.inflight.get(requestId);
    controller?.abort();
    return { aborted: Boolean(controller) };
  }

  private async stream(input: unknown): Promise<GenerationResult> {
    const request = parseStreamRequest(this.def.id, input);
    const writer = (input as { writer?: ChannelWriter }).writer;
    const controller = new AbortController();
    if (this.inflight.has(request.request_id)) {
      throw new EngError(ErrorCode.InvalidArguments, `request_id ${request.request_id} is already streaming`);
    }
    this.inflight.set(request.request_id, controller);
    const output = new GenerationOutput(
      this.def.id,
      request.model,
      writer && typeof writer.sendMessage === 'function' ? writer : undefined,
      () => controller.abort(),
      request.max_answer_bytes,
    );
    const credentials = await this.credentials();
    try {
      if (credentials.source === 'none') {
        return await output.fail(
          'error',
          'auth_expired',
          `${this.def.display_name} has no credentials: set ${this.def.credential_env_var} or the api_key of "${this.def.id}" in the llm-router configuration entry`,
        );
      }
      return await this.def.stream(request, credentials, output, controller.signal);
    } catch (err) {
      const tooLong = lineTooLong(err);
      if (tooLong) output.exceed(tooLong.message);
      // past the cap, fail() reports the cap whatever the adapter threw (the abort it caused)
      if (controller.signal.aborted || output.exceeded) return await output.fail('aborted', 'transient', 'generation aborted');
      const { kind, message } = classifyError(err);
      return await output.fail('error', kind, redactSecret(message, credentials.api_key));
    } finally {
      this.inflight.delete(request.request_id);
    }
  }
}

/** Run a provider as its own worker process (`eng-chat provider-<id>`). */
export async function runProvider(def: ProviderDefinition, workerName: string): Promise<void> {
  await runWorker({
    name: workerName,
    description: `${def.display_name} provider for the model router`,
    start: async (client) => {
      const worker = new ProviderWorker(client, def);
      worker.start();
      return { summary: `provider::${def.id}::*`, stop: async () => worker.stop() };
    },
  });
}
