import { type EngError, TriggerAction, type TriggerBinding } from '@eng/sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import { client, closeClients, deferred, functionListed, recordingLogger } from './helpers.ts';

// spec: engine-protocol §5.11 — worker-provided trigger types: bind, fire, unbind, refuse

let engine: EngineProcess;
beforeAll(async () => {
  engine = await startEngine();
});
afterEach(closeClients);
afterAll(async () => {
  await engine?.stop();
});

/** A provider that records every call the SDK makes on it. */
function recordingProvider(refuse?: (t: TriggerBinding) => string | undefined) {
  const registered: TriggerBinding[] = [];
  const unregistered: TriggerBinding[] = [];
  return {
    registered,
    unregistered,
    provider: {
      registerTrigger(t: TriggerBinding) {
        const reason = refuse?.(t);
        if (reason) throw new Error(reason);
        registered.push(t);
      },
      async unregisterTrigger(t: TriggerBinding) {
        unregistered.push(t);
      },
    },
  };
}

describe('custom trigger types', () => {
  it('hands bindings to the provider, lets it fire them, and tells it when they are unbound', async () => {
    const webhooks = recordingProvider();
    const provider = client(engine.busUrl, { name: 'webhook-provider' });
    provider.registerTriggerType({ id: 'sdk.webhook', description: 'test webhooks' }, webhooks.provider);

    const consumer = client(engine.busUrl, { name: 'webhook-consumer' });
    const fired = deferred<{ input: unknown; metadata: unknown }>();
    consumer.registerFunction('sdk::on-hook', (input, ctx) => {
      fired.resolve({ input, metadata: ctx.metadata });
      return null;
    });
    await Promise.all([provider.ready(), consumer.ready()]);
    const binding = consumer.registerTrigger({
      type: 'sdk.webhook',
      function_id: 'sdk::on-hook',
      config: { path: '/hook' },
      metadata: { team: 'a' },
    });

    await waitFor(() => webhooks.registered.length === 1);
    expect(webhooks.registered[0]).toEqual({
      id: binding.id,
      function_id: 'sdk::on-hook',
      config: { path: '/hook' },
      metadata: { team: 'a' },
    });

    // the provider fires the binding with an ordinary call (spec §5.11 step 3)
    await functionListed(provider, 'sdk::on-hook');
    const registeredBinding = webhooks.registered[0] as TriggerBinding;
    await provider.trigger({
      function_id: registeredBinding.function_id,
      payload: { delivery: 1 },
      metadata: registeredBinding.metadata,
      action: TriggerAction.Void(),
    });
    const delivery = await fired.promise;
    expect(delivery.input).toMatchObject({ delivery: 1 });
    expect(delivery.metadata).toEqual({ team: 'a' });

    binding.unregister();
    await waitFor(() => webhooks.unregistered.length === 1);
    // the engine sends only the id; the SDK passes the binding it stored (function_id, config)
    expect(webhooks.unregistered[0]).toEqual({
      id: binding.id,
      function_id: 'sdk::on-hook',
      config: { path: '/hook' },
      metadata: { team: 'a' },
    });
  });

  it('delivers a binding made before any provider existed once the type is registered', async () => {
    const consumer = client(engine.busUrl);
    consumer.registerFunction('sdk::on-late', () => null);
    const binding = consumer.registerTrigger({ type: 'sdk.late', function_id: 'sdk::on-late', config: { n: 1 } });
    await consumer.ready();

    const late = recordingProvider();
    const provider = client(engine.busUrl);
    provider.registerTriggerType({ id: 'sdk.late' }, late.provider);
    await waitFor(() => late.registered.length === 1);
    expect(late.registered[0]).toMatchObject({ id: binding.id, function_id: 'sdk::on-late', config: { n: 1 } });
  });

  it('tells the binding worker when the provider refuses, through an error event and one warning', async () => {
    const strict = recordingProvider((t) => ((t.config as { path?: string }).path?.startsWith('/') ? undefined : 'path must start with /'));
    const provider = client(engine.busUrl);
    provider.registerTriggerType({ id: 'sdk.strict' }, strict.provider);
    await provider.ready();

    const logger = recordingLogger();
    const consumer = client(engine.busUrl, { logger });
    consumer.registerFunction('sdk::on-strict', () => null);
    const refused = deferred<EngError>();
    consumer.on('error', (error) => refused.resolve(error));
    await consumer.ready();
    const binding = consumer.registerTrigger({ type: 'sdk.strict', function_id: 'sdk::on-strict', config: { path: 'no-slash' } });

    const error = await refused.promise;
    expect(error.code).toBe('trigger_registration_failed');
    expect(error.message).toContain('path must start with /');
    expect(error.message).toContain(binding.id);
    expect(strict.registered).toEqual([]);
    expect(logger.lines.filter((l) => l.level === 'warn' && l.message.includes(binding.id))).toHaveLength(1);
  });

  it('withdraws the bindings from the provider when it unregisters the type', async () => {
    const temp = recordingProvider();
    const provider = client(engine.busUrl);
    const type = provider.registerTriggerType({ id: 'sdk.temp' }, temp.provider);
    const consumer = client(engine.busUrl);
    consumer.registerFunction('sdk::on-temp', () => null);
    consumer.registerTrigger({ type: 'sdk.temp', function_id: 'sdk::on-temp', config: {} });
    await Promise.all([provider.ready(), consumer.ready()]);
    await waitFor(() => temp.registered.length === 1);

    type.unregister();
    await waitFor(() => temp.unregistered.length === 1);
    expect(temp.unregistered[0]?.function_id).toBe('sdk::on-temp');
    // the engine keeps the binding parked: a new provider of the type gets it again
    const next = recordingProvider();
    provider.registerTriggerType({ id: 'sdk.temp' }, next.provider);
    await waitFor(() => next.registered.length === 1);
  });
});
