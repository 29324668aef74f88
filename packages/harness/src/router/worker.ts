import { pathToFileURL } from 'node:url';
import { type EngClient, TriggerAction } from '@eng/sdk';
import { z } from 'zod';
import { parseRequest } from '../shared/errors.ts';
import { runWorker } from '../shared/worker.ts';
import { CAPABILITY_NAMES, Catalog } from './catalog.ts';
import { ChatRouter } from './chat.ts';
import { RouterConfigEntry } from './config-entry.ts';
import { routerError } from './errors.ts';
import { EventFanout, noFilters } from './fanout.ts';
import { PROVIDER_ID, ProviderRegistry } from './registry.ts';
import type { Model } from './types.ts';

// `llm-router` (spec: console-worker §2.4, §2.5): the provider registry, the model catalogue, the
// credentials entry and the chat front door. Every other chat worker reaches providers through it.

const ListInput = z.object({
  provider: z.string().min(1).optional(),
  capability: z
    .enum(CAPABILITY_NAMES as [string, ...string[]], { error: `capability must be one of ${CAPABILITY_NAMES.join(', ')}` })
    .optional(),
  modality: z.enum(['chat', 'stt', 'tts', 'any'], { error: 'modality must be chat, stt, tts or any' }).optional(),
});

const RegisterInput = z.object({
  id: z.string().regex(PROVIDER_ID, { error: 'id must be lower-case letters, digits, _ or - (max 64)' }),
  display_name: z.string().min(1).optional(),
  credential_env_var: z.string().min(1).optional(),
  base_url_env_var: z.string().min(1).optional(),
  supports_model_listing: z.boolean().optional(),
  api_url_is_enough: z.boolean().optional(),
  env_credentials: z.boolean().optional(),
});

const ModelSchema = z.object({
  id: z.string().min(1),
  provider: z.string().min(1).optional(),
  context_window: z.number().int().positive(),
  max_output_tokens: z.number().int().positive(),
});
const ReconcileInput = z.object({ provider: z.string().min(1), models: z.array(ModelSchema.passthrough()) });

/** After the router reconnects (an engine restart), providers get this long to declare again before their old connections are checked. */
const VERIFY_AFTER_RECONNECT_MS = 5000;

export interface RouterHandle {
  catalog: Catalog;
  registry: ProviderRegistry;
  stop(): void;
}

export function startRouter(client: EngClient): RouterHandle {
  const registry = new ProviderRegistry();
  const catalog = new Catalog();
  const modelsChanged = new EventFanout<{ provider: string; count: number }>(
    client,
    'router::models::changed',
    'A provider reconciled its catalogue slice. Payload: {provider, count}',
    undefined,
    noFilters('router::models::changed'),
  );
  const providerChanged = new EventFanout<{ provider: string; op: 'register' | 'available' | 'unavailable' }>(
    client,
    'router::provider::changed',
    'The provider registry changed. Payload: {provider, op: register|available|unavailable}',
    undefined,
    noFilters('router::provider::changed'),
  );
  const ready = new EventFanout<Record<string, never>>(
    client,
    'router::ready',
    'The router (re)started; providers declare themselves again',
    undefined,
    noFilters('router::ready'),
  );

  const refresh = (ids: string[]) => {
    for (const id of ids) {
      if (!registry.isAvailable(id)) continue;
      client.trigger({ function_id: `provider::${id}::refresh_models`, payload: {}, action: TriggerAction.Void() }).catch(() => {});
    }
  };
  const config = new RouterConfigEntry(client, refresh);

  // a provider whose worker leaves stays listed, unavailable; its models leave the list
  const workerGone = (workerId: string) => {
    for (const record of registry.workerGone(workerId)) {
      providerChanged.emit({ provider: record.id, op: 'unavailable' });
      modelsChanged.emit({ provider: record.id, count: 0 });
    }
  };
  /**
   * Availability follows the provider's connection, never one call's failure: a provider whose
   * worker the engine no longer lists is unavailable (its disconnect was missed, e.g. across an
   * engine restart). One that declared again meanwhile has a new worker id and is left as it is.
   */
  const verify = async (ids: string[]) => {
    for (const id of ids) {
      const workerId = registry.get(id)?.worker_id;
      if (!workerId || !registry.isAvailable(id)) continue;
      try {
        const listed = await client.call<{ workers: Array<{ id: string }> }>(
          'engine::workers::list',
          { worker_id: workerId },
          { timeoutMs: 5000 },
        );
        if (!listed.workers.some((w) => w.id === workerId)) workerGone(workerId);
      } catch {
        // the engine did not answer: nothing learned
      }
    }
  };
  const chat = new ChatRouter(client, registry, catalog, config, (provider) => void verify([provider]));
  chat.register();

  client.registerFunction(
    'router::models::list',
    async (input) => {
      const filter = parseRequest('router', 'router::models::list', ListInput, input);
      return { models: catalog.list(filter as Parameters<Catalog['list']>[0], (p) => registry.isAvailable(p)) };
    },
    { description: 'The model catalogue: {provider?, capability?, modality?: chat|stt|tts|any} → {models}' },
  );
  client.registerFunction(
    'router::models::get',
    async (input) => {
      const { model, provider } = parseRequest(
        'router',
        'router::models::get',
        z.object({ model: z.string().min(1), provider: z.string().min(1).optional() }),
        input,
      );
      try {
        const route = chat.route({ model, provider });
        return chat.modelInfo(route) ?? null;
      } catch {
        return null;
      }
    },
    { description: 'One model record by key (provider::id or a bare id), or null' },
  );
  client.registerFunction(
    'router::provider::list',
    async () => ({ providers: registry.all().map((r) => registry.info(r.id, config.isConfigured(r))) }),
    {
      description:
        'Registered providers: {providers: [{id, display_name, configured, available, supports_model_listing, credential_env_var?}]}',
    },
  );
  client.registerFunction(
    'router::provider::register',
    async (input, ctx) => {
      const decl = parseRequest('router', 'router::provider::register', RegisterInput, input);
      const record = {
        id: decl.id,
        display_name: decl.display_name ?? decl.id,
        credential_env_var: decl.credential_env_var,
        base_url_env_var: decl.base_url_env_var,
        supports_model_listing: decl.supports_model_listing ?? false,
        api_url_is_enough: decl.api_url_is_enough ?? false,
        env_credentials: decl.env_credentials ?? false,
        worker_id: ctx.callerWorkerId,
        available: true,
      };
      const op = registry.declare(record);
      config.addProvider(record);
      if (op !== 'unchanged') providerChanged.emit({ provider: record.id, op });
      if (op === 'available') modelsChanged.emit({ provider: record.id, count: catalog.count(record.id) });
      return { registered: true, provider: record.id };
    },
    { description: 'A provider worker declares itself (idempotent)', metadata: { internal: true } },
  );
  client.registerFunction(
    'router::provider::resolve',
    async (input) => {
      const { provider } = parseRequest('router', 'router::provider::resolve', z.object({ provider: z.string().min(1) }), input);
      return config.resolve(registry.get(provider), provider);
    },
    { description: "A provider's credential and endpoint: config > the router's environment > none", metadata: { internal: true } },
  );
  client.registerFunction(
    'router::models::reconcile',
    async (input) => {
      const { provider, models } = parseRequest('router', 'router::models::reconcile', ReconcileInput, input);
      if (!registry.get(provider))
        throw routerError('invalid_request', `router::models::reconcile: provider "${provider}" has not registered`);
      const slice = models.map((m) => ({ ...m, provider }) as Model);
      if (catalog.reconcile(provider, slice)) modelsChanged.emit({ provider, count: slice.length });
      return { provider, count: slice.length };
    },
    { description: "Replace a provider's catalogue slice", metadata: { internal: true } },
  );
  client.registerFunction(
    'router::system_prompt::get',
    async (input) => {
      const provider = (input as { provider?: unknown } | null)?.provider;
      const id = typeof provider === 'string' ? provider : config.settings.default_provider;
      return (id && config.settings.providers[id]?.system_prompt) || null;
    },
    { description: 'The operator override of the system prompt for {provider?}, or null' },
  );

  client.registerFunction(
    'router::on-worker-change',
    async (event) => {
      const e = event as { event?: unknown; worker_id?: unknown } | null;
      if (e?.event === 'worker_disconnected' && typeof e.worker_id === 'string') workerGone(e.worker_id);
      return {};
    },
    { metadata: { internal: true } },
  );
  client.registerTrigger({ type: 'engine::workers-available', function_id: 'router::on-worker-change', config: {} });

  config.start();
  // once the engine has handed us the existing bindings, tell providers to declare (again)
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const later = (ms: number, run: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      run();
    }, ms);
    timers.add(timer);
  };
  const announce = () => {
    for (const ms of [150, 1500]) later(ms, () => ready.emit({}));
  };
  announce();
  client.on('connected', () => {
    announce();
    later(VERIFY_AFTER_RECONNECT_MS, () => void verify(registry.all().map((r) => r.id)));
  });
  return {
    catalog,
    registry,
    stop: () => {
      config.stop();
      for (const t of timers) clearTimeout(t);
    },
  };
}

export async function main(): Promise<void> {
  await runWorker({
    name: 'llm-router',
    description: 'model router: provider registry, model catalogue, credentials, generation',
    start: async (client) => {
      const router = startRouter(client);
      return { summary: 'router::* (models, providers, chat)', stop: async () => router.stop() };
    },
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) void main();
