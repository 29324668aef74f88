/**
 * The published iii-sdk 0.22.1 against our engine: the shared §11 checklist plus what only
 * 0.22.1 has (invocation metadata, the `…::info` functions, reattach eviction).
 */
import { connect } from '@eng/sdk';
import { InvocationError, registerWorker, TriggerAction } from 'iii-sdk-0.22.1';
import { createChannel } from 'iii-sdk-0.22.1/helpers';
import { beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../../test/harness.ts';
import { RawClient } from '../../../../test/raw-client.ts';
import { runChecklist } from './checklist.ts';
import { spawnIiiWorker } from './child-worker.ts';
import {
  type CompatChannel,
  type CompatClient,
  ready,
  recordingProvider,
  type SdkUnderTest,
  type TriggerConfig,
  UUID,
  useCompatEnv,
  workerIdOf,
} from './compat-env.ts';
import { startWireTap } from './wire-tap.ts';

const sdk: SdkUnderTest = {
  version: '0.22.1',
  connect: (url, options) =>
    registerWorker(url, {
      workerName: options.name,
      workerDescription: options.description,
      otel: { enabled: options.otel ?? false },
      reconnectionConfig: { initialDelayMs: 100, maxDelayMs: 500 },
    }) as unknown as CompatClient,
  createChannel: async (client, bufferSize) => (await createChannel(client as never, bufferSize)) as unknown as CompatChannel,
  ErrorClass: InvocationError,
  voidAction: () => TriggerAction.Void(),
};

const env = useCompatEnv(sdk);
runChecklist(env);

const v = sdk.version;

describe('iii-sdk 0.22.1 §11.15 invocation metadata', () => {
  it('hands trigger({metadata}) to the handler as its second argument, unchanged', async () => {
    env.a.registerFunction('meta::echo', async (input, metadata) => ({ input, metadata: metadata ?? 'absent' }));
    await ready(env.a);
    const call = (metadata?: unknown) => env.b.trigger({ function_id: 'meta::echo', payload: { q: 1 }, metadata });
    expect(await call({ tenant: 't1' })).toEqual({ input: { q: 1, _caller_worker_id: env.bId }, metadata: { tenant: 't1' } });
    expect(await call()).toMatchObject({ metadata: 'absent' });
    // arbitrary JSON, not only objects (§2.3.9)
    expect(await call(['a', 2, { deep: [true] }])).toMatchObject({ metadata: ['a', 2, { deep: [true] }] });
    expect(await call('just-a-string')).toMatchObject({ metadata: 'just-a-string' });
    // void calls carry it too
    const seen: unknown[] = [];
    env.a.registerFunction('meta::sink', async (_input, metadata) => {
      seen.push(metadata);
    });
    await ready(env.a);
    await env.b.trigger({ function_id: 'meta::sink', payload: {}, action: TriggerAction.Void(), metadata: { tenant: 'void' } });
    await waitFor(() => seen.length === 1);
    expect(seen[0]).toEqual({ tenant: 'void' });
  });

  it('delivers a trigger binding’s metadata with each firing (engine::workers-available)', async () => {
    const events: Array<{ input: any; metadata: unknown }> = [];
    env.b.registerFunction('meta::on-worker', async (input, metadata) => {
      events.push({ input, metadata });
    });
    const binding = env.b.registerTrigger({
      type: 'engine::workers-available',
      function_id: 'meta::on-worker',
      config: {},
      metadata: { tenant: 't2' },
    });
    await ready(env.b);
    const c = env.connect({ name: 'meta-newcomer' });
    const cId = await ready(c);
    const connected = await waitFor(() => events.find((e) => e.input.event === 'worker_connected' && e.input.worker_id === cId));
    expect(connected.metadata).toEqual({ tenant: 't2' });
    // engine-originated calls carry no _caller_worker_id (§2.5 step 7)
    expect(connected.input).toEqual({ event: 'worker_connected', worker_id: cId });
    binding.unregister();
    await c.shutdown();
  });

  it('passes the provider the binding’s metadata for a custom trigger type', async () => {
    const provider = recordingProvider();
    env.a.registerTriggerType({ id: 'compat.meta', description: 'Metadata to the provider' }, provider.handler);
    env.b.registerFunction('meta::bound', async () => null);
    env.b.registerTrigger({ type: 'compat.meta', function_id: 'meta::bound', config: { c: 1 }, metadata: { tenant: 't3' } });
    const delivered = await waitFor(() => provider.registered[0]);
    expect(delivered).toEqual({
      id: expect.stringMatching(UUID),
      function_id: 'meta::bound',
      config: { c: 1 },
      metadata: { tenant: 't3' },
    });
  });

  it('carries metadata between an iii-sdk worker and an @eng/sdk worker both ways', async () => {
    const eng = connect(env.engine.busUrl, { name: 'eng-sdk-meta' });
    try {
      await eng.ready({ timeoutMs: 10_000 });
      eng.registerFunction('engsdk::meta', (_input, ctx) => ({ metadata: ctx.metadata }));
      env.a.registerFunction('meta::cross', async (input, metadata) => ({ input, metadata }));
      await Promise.all([eng.call('engine::functions::list', {}), ready(env.a)]);
      expect(await env.a.trigger({ function_id: 'engsdk::meta', payload: {}, metadata: { tenant: 'from-iii' } })).toEqual({
        metadata: { tenant: 'from-iii' },
      });
      expect(await eng.call('meta::cross', { q: 2 }, { metadata: { tenant: 'from-eng' } })).toEqual({
        input: { q: 2, _caller_worker_id: eng.workerId },
        metadata: { tenant: 'from-eng' },
      });
    } finally {
      await eng.close();
    }
  });
});

describe('iii-sdk 0.22.1 §11.16 detail functions', () => {
  const requestFormat = { type: 'object', properties: { sku: { type: 'string' } }, required: ['sku'] };
  let binding: TriggerConfig;

  beforeAll(async () => {
    env.a.registerFunction('detail::order', async () => null, {
      description: 'Order detail',
      request_format: requestFormat,
      response_format: { type: 'object' },
      metadata: { 'mcp.expose': true },
    });
    const provider = recordingProvider();
    env.a.registerTriggerType({ id: 'compat.detail', description: 'Detail trigger type' }, provider.handler);
    env.b.registerTrigger({ type: 'compat.detail', function_id: 'detail::order', config: { route: '/orders' } });
    await ready(env.b);
    binding = await waitFor(() => provider.registered[0]);
  });

  it('engine::functions::info returns FunctionDetail, one or many', async () => {
    const detail = await env.call('engine::functions::info', { function_id: 'detail::order' });
    expect(detail).toMatchObject({
      function_id: 'detail::order',
      worker_name: `compat-a-${v}`,
      description: 'Order detail',
      request_schema: requestFormat,
      response_schema: { type: 'object' },
      metadata: { 'mcp.expose': true },
      registered_triggers: [{ id: binding.id, trigger_type: 'compat.detail', config: { route: '/orders' } }],
    });
    const many = await env.call('engine::functions::info', { function_ids: ['detail::order', 'detail::missing'] });
    expect(many.functions).toMatchObject([{ function_id: 'detail::order' }, { function_id: 'detail::missing', error: 'not_found' }]);
    const missing = await env.call('engine::functions::info', { function_id: 'detail::missing' }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(InvocationError);
    expect(missing).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('engine::workers::info returns the worker with its functions, trigger types and registered triggers', async () => {
    const info = await env.call('engine::workers::info', { name: `compat-a-${v}` });
    expect(info.worker).toMatchObject({ id: env.aId, name: `compat-a-${v}`, description: 'worker A of the compat suite', runtime: 'node' });
    expect(info.functions.map((f: { function_id: string }) => f.function_id)).toContain('detail::order');
    expect(info.trigger_types.map((t: { id: string }) => t.id)).toContain('compat.detail');
    expect(info.registered_triggers).toEqual(
      expect.arrayContaining([expect.objectContaining({ trigger_type: 'compat.detail', function_id: 'detail::order' })]),
    );
    const unknown = await env.call('engine::workers::info', { name: 'no-such-worker' }).catch((e: unknown) => e);
    expect(unknown).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('engine::registered-triggers::list returns RegisteredTriggerSummary records; ::info and triggers::info the details', async () => {
    const { registered_triggers } = await env.call('engine::registered-triggers::list', { function_id: 'detail::order' });
    expect(registered_triggers).toHaveLength(1);
    const summary = registered_triggers[0];
    expect(summary).toMatchObject({
      id: expect.stringMatching(UUID),
      trigger_type: 'compat.detail',
      function_id: 'detail::order',
      worker_name: `compat-b-${v}`,
      config: { route: '/orders' },
      config_summary: '{"route":"/orders"}',
    });
    const detail = await env.call('engine::registered-triggers::info', { id: summary.id });
    expect(detail).toMatchObject({
      id: summary.id,
      trigger: { id: 'compat.detail', worker_name: `compat-a-${v}`, instance_count: 1 },
      function: { function_id: 'detail::order' },
    });
    expect(await env.call('engine::triggers::info', { id: 'compat.detail' })).toMatchObject({
      id: 'compat.detail',
      worker_name: `compat-a-${v}`,
      description: 'Detail trigger type',
      instance_count: 1,
    });
  });
});

describe('iii-sdk 0.22.1 reattach', () => {
  it('after a half-open drop, the reattach evicts the stale connection: one worker entry, functions still callable', async () => {
    const tap = await startWireTap(env.engine.busUrl);
    try {
      const child = await spawnIiiWorker({ version: v, url: tap.url, prefix: 'blip' });
      const first = tap.connections[0]!;
      const greeting = first.received[0]!;
      const staleClosed = new Promise<number>((resolve) => first.upstream.once('close', (code) => resolve(code)));
      // the SDK loses its socket, the engine does not notice (it never pings: §2.10)
      tap.dropClientKeepUpstream(first);
      const second = await waitFor(() => tap.connections.find((c) => c.index > 0 && c.received[0]?.type === 'workerregistered'), 10_000);
      expect(second.sent[0]).toEqual({ type: 'reattach', previous_worker_id: child.workerId, reattach_token: greeting.reattach_token });
      // the engine closed the stale connection itself (4000: replaced by a reattaching connection)
      expect(await staleClosed).toBe(4000);
      const newId = second.received[0]!.worker_id as string;
      const entries = await waitFor(async () => {
        const { workers } = await env.call('engine::workers::list');
        const mine = workers.filter((w: { pid: number }) => w.pid === child.pid);
        return mine.length === 1 && mine[0].id === newId ? mine : undefined;
      });
      expect(entries[0]).toMatchObject({ functions: ['blip::echo', 'blip::hang'] });
      expect(await env.call('blip::echo', { after: 'reattach' })).toEqual({ after: 'reattach', _caller_worker_id: env.aId });
      await child.kill();
    } finally {
      await tap.close();
    }
  });

  it('ignores a reattach with a wrong token: the other connection is untouched', async () => {
    const victim = env.connect({ name: 'reattach-victim' });
    const victimId = await ready(victim);
    victim.registerFunction('victim::echo', async (input) => input);
    await ready(victim);
    const intruder = await RawClient.worker(env.engine.busUrl);
    try {
      intruder.send({ type: 'reattach', previous_worker_id: victimId, reattach_token: crypto.randomUUID() });
      await intruder.call('engine::functions::list', {});
      expect(await env.call('victim::echo', { still: 'here' })).toEqual({ still: 'here', _caller_worker_id: env.aId });
      expect(workerIdOf(victim)).toBe(victimId);
    } finally {
      await intruder.terminate();
      await victim.shutdown();
    }
  });
});
