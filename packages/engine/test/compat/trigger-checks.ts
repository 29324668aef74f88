/**
 * §11 items 11 and 12 for either iii-sdk version: worker-provided trigger types (§5.11) and what
 * a worker's death does to its functions, calls and bindings (§2.8).
 */
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../../../test/harness.ts';
import { spawnIiiWorker } from './child-worker.ts';
import { type CompatEnv, ready, recordingProvider, UUID } from './compat-env.ts';
import { startWireTap } from './wire-tap.ts';

export function runTriggerChecks(env: CompatEnv): void {
  const { sdk } = env;
  const v = sdk.version;
  const list = async <T = any>(functionId: string, payload: unknown = {}): Promise<T> => env.call<T>(functionId, payload);
  const functionIds = async () =>
    (await list<{ functions: Array<{ function_id: string }> }>('engine::functions::list')).functions.map((f) => f.function_id);

  describe(`iii-sdk ${v} §11.11 custom trigger type`, () => {
    it('hands a binding to the provider, which fires the consumer through trigger(); unbinding reaches the engine', async () => {
      const provider = recordingProvider();
      env.a.registerTriggerType({ id: 'compat.tick', description: 'Fires when the provider says so' }, provider.handler);
      const fired: unknown[] = [];
      env.b.registerFunction('tick::on-tick', async (input) => {
        fired.push(input);
        return null;
      });
      await ready(env.a);
      const trigger = env.b.registerTrigger({ type: 'compat.tick', function_id: 'tick::on-tick', config: { every: 'second', n: 3 } });

      const binding = await waitFor(() => provider.registered[0]);
      expect(binding).toEqual({ id: expect.stringMatching(UUID), function_id: 'tick::on-tick', config: { every: 'second', n: 3 } });
      const { registered_triggers } = await list<{ registered_triggers: any[] }>('engine::registered-triggers::list', {
        trigger_type: 'compat.tick',
      });
      expect(registered_triggers).toMatchObject([{ id: binding.id, function_id: 'tick::on-tick', status: 'active' }]);

      // §5.11 step 3: the provider fires with an ordinary (void) invocation
      await env.a.trigger({ function_id: binding.function_id, payload: { tick: 1 }, action: sdk.voidAction() });
      await waitFor(() => fired.length === 1);
      expect(fired[0]).toEqual({ tick: 1, _caller_worker_id: env.aId });

      trigger.unregister();
      await waitFor(async () => {
        const after = await list<{ registered_triggers: any[] }>('engine::registered-triggers::list', { trigger_type: 'compat.tick' });
        return after.registered_triggers.length === 0;
      });
      if (v === '0.22.1') {
        // §2.3.8: the engine tells the provider; 0.22.1 calls unregisterTrigger (function_id is empty on this frame)
        await waitFor(() => provider.unregistered.length === 1);
        expect(provider.unregistered[0]).toMatchObject({ id: binding.id, function_id: '' });
      }
    });

    it('parks a binding whose type has no provider yet and delivers it when the provider registers the type', async () => {
      env.b.registerFunction('tick::early', async () => null);
      env.b.registerTrigger({ type: 'compat.late', function_id: 'tick::early', config: { when: 'later' } });
      await ready(env.b);
      const parked = await list<{ registered_triggers: any[] }>('engine::registered-triggers::list', { trigger_type: 'compat.late' });
      expect(parked.registered_triggers).toMatchObject([{ function_id: 'tick::early', status: 'inactive' }]);

      const provider = recordingProvider();
      env.a.registerTriggerType({ id: 'compat.late', description: 'Registered after its first binding' }, provider.handler);
      const delivered = await waitFor(() => provider.registered[0]);
      expect(delivered).toMatchObject({ id: parked.registered_triggers[0].id, function_id: 'tick::early', config: { when: 'later' } });
    });
  });

  describe(`iii-sdk ${v} refused binding`, () => {
    it('records a provider’s refusal and forwards it to the worker that bound the trigger', async () => {
      env.a.registerTriggerType(
        { id: 'compat.picky', description: 'Refuses bindings without a topic' },
        {
          async registerTrigger(binding) {
            if (!(binding.config as { topic?: string }).topic) throw new Error('config.topic is required');
          },
          async unregisterTrigger() {},
        },
      );
      await ready(env.a);
      const tap = await startWireTap(env.engine.busUrl);
      try {
        const child = await spawnIiiWorker({
          version: v,
          url: tap.url,
          prefix: 'picky',
          bind: [{ type: 'compat.picky', function_id: 'picky::echo', config: {} }],
        });
        const connection = tap.connections[0]!;
        const bind = connection.sent.find((f) => f.type === 'registertrigger')!;
        // §2.3.7 (0.22.1 semantics): the provider's error goes back to the binder, same id and fields
        const forwarded = await waitFor(() => connection.received.find((f) => f.type === 'triggerregistrationresult'));
        expect(forwarded).toEqual({
          type: 'triggerregistrationresult',
          id: bind.id,
          trigger_type: 'compat.picky',
          function_id: 'picky::echo',
          error: { code: 'trigger_registration_failed', message: 'config.topic is required' },
        });
        const { registered_triggers } = await list<{ registered_triggers: any[] }>('engine::registered-triggers::list', {
          trigger_type: 'compat.picky',
        });
        expect(registered_triggers).toMatchObject([
          { id: bind.id, status: 'error', error: 'trigger_registration_failed: config.topic is required' },
        ]);
        if (v === '0.22.1') {
          // the 0.22.1 SDK reports it to its user; 0.11.6 ignores the frame
          await waitFor(() =>
            child.output().includes(`Trigger registration failed for "${bind.id}" (compat.picky): config.topic is required`),
          );
        }
        await child.kill();
      } finally {
        await tap.close();
      }
    });
  });

  describe(`iii-sdk ${v} unregistertriggertype`, () => {
    it('removes a type its provider unregisters and parks the type’s bindings until a provider returns', async () => {
      const provider = recordingProvider();
      const type = env.a.registerTriggerType({ id: 'compat.leaving', description: 'About to be unregistered' }, provider.handler) as {
        unregister(): void;
      };
      env.b.registerFunction('tick::leaving', async () => null);
      env.b.registerTrigger({ type: 'compat.leaving', function_id: 'tick::leaving', config: {} });
      const binding = await waitFor(() => provider.registered[0]);
      // both SDKs send unregistertriggertype; iii drops it, we act on it (spec §9 row 16)
      type.unregister();
      await ready(env.a);
      const { trigger_types } = await list<{ trigger_types: any[] }>('engine::trigger-types::list');
      expect(trigger_types.some((t) => t.id === 'compat.leaving')).toBe(false);
      const { registered_triggers } = await list<{ registered_triggers: any[] }>('engine::registered-triggers::list', {
        trigger_type: 'compat.leaving',
      });
      expect(registered_triggers).toMatchObject([{ id: binding.id, status: 'inactive' }]);
      const next = recordingProvider();
      env.a.registerTriggerType({ id: 'compat.leaving', description: 'Back again' }, next.handler);
      expect(await waitFor(() => next.registered[0])).toMatchObject({ id: binding.id, function_id: 'tick::leaving' });
    });
  });

  describe(`iii-sdk ${v} §11.12 disconnect`, () => {
    it('a SIGKILLed executor: the caller gets invocation_stopped, its functions and trigger bindings go away', async () => {
      const provider = recordingProvider();
      env.a.registerTriggerType({ id: 'compat.doom', description: 'Bound by a worker about to die' }, provider.handler);
      await ready(env.a);
      const child = await spawnIiiWorker({
        version: v,
        url: env.engine.busUrl,
        prefix: 'doomed',
        bind: [{ type: 'compat.doom', function_id: 'doomed::echo', config: { k: 1 } }],
      });
      const binding = await waitFor(() => provider.registered.find((r) => r.function_id === 'doomed::echo'));
      expect(await functionIds()).toEqual(expect.arrayContaining(['doomed::echo', 'doomed::hang']));

      const pending = env.b.trigger({ function_id: 'doomed::hang', payload: { n: 1 } }).catch((e: unknown) => e);
      await child.next((e) => e.event === 'invoked' && e.function_id === 'doomed::hang');
      await child.kill('SIGKILL');

      const err = await pending;
      expect(err).toBeInstanceOf(sdk.ErrorClass);
      expect(err).toMatchObject({ code: 'invocation_stopped', message: 'invocation_stopped: Invocation stopped' });
      // §2.8: cleanup is done by the time the caller hears about it
      expect((await functionIds()).filter((id) => id.startsWith('doomed::'))).toEqual([]);
      const { registered_triggers } = await list<{ registered_triggers: any[] }>('engine::registered-triggers::list', {
        trigger_type: 'compat.doom',
      });
      expect(registered_triggers).toEqual([]);
      const { workers } = await list<{ workers: any[] }>('engine::workers::list');
      expect(workers.some((w) => w.id === child.workerId)).toBe(false);
      if (v === '0.22.1') {
        await waitFor(() => provider.unregistered.some((u) => u.id === binding.id));
      }
      const gone = await env.b.trigger({ function_id: 'doomed::echo', payload: {} }).catch((e: unknown) => e);
      expect(gone).toMatchObject({ code: 'function_not_found' });
    });
  });
}
