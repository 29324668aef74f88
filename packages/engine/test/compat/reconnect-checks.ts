/**
 * §11 item 13 (reconnect) for either iii-sdk version: the engine restarts under a connected
 * worker, which must replay its registrations; 0.22.1 must open with `reattach` (§2.3.2).
 * Runs on an engine of its own, since restarting the shared one would disturb other tests.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine, waitFor } from '../../../../test/harness.ts';
import { spawnIiiWorker } from './child-worker.ts';
import { type CompatEnv, ready, recordingProvider, UUID, workerIdOf } from './compat-env.ts';
import { startWireTap } from './wire-tap.ts';

export function runReconnectChecks(env: CompatEnv): void {
  const { sdk } = env;
  const v = sdk.version;
  describe(`iii-sdk ${v} §11.13 reconnect`, () => {
    let engine: EngineProcess;
    beforeAll(async () => {
      engine = await startEngine();
    });
    afterAll(async () => {
      await engine?.stop();
    });

    it('after an engine restart the SDK replays its registrations and its functions are callable again', async () => {
      const tap = await startWireTap(engine.busUrl);
      const caller = sdk.connect(engine.busUrl, { name: 'restart-caller' });
      try {
        const provider = recordingProvider();
        caller.registerTriggerType({ id: 'compat.restart', description: 'Survives engine restarts' }, provider.handler);
        const callerIdBefore = await ready(caller);
        const child = await spawnIiiWorker({
          version: v,
          url: tap.url,
          prefix: 'phoenix',
          bind: [{ type: 'compat.restart', function_id: 'phoenix::echo', config: { keep: true } }],
        });
        const binding = await waitFor(() => provider.registered[0]);
        expect(await caller.trigger({ function_id: 'phoenix::echo', payload: { n: 1 } })).toEqual({
          n: 1,
          _caller_worker_id: callerIdBefore,
        });

        // a call in flight when the engine goes down ends at once, not after the SDK's timeout
        const inFlight = caller.trigger({ function_id: 'phoenix::hang', payload: {}, timeoutMs: 15_000 }).catch((e: unknown) => e);
        await child.next((e) => e.event === 'invoked' && e.function_id === 'phoenix::hang');
        const stoppedAt = Date.now();
        await engine.restart();
        expect(await inFlight).toMatchObject({ code: 'invocation_stopped' });
        expect(Date.now() - stoppedAt).toBeLessThan(10_000);

        const answer = await waitFor(
          () => caller.trigger({ function_id: 'phoenix::echo', payload: { n: 2 }, timeoutMs: 1000 }),
          20_000,
          100,
        );
        const callerIdAfter = workerIdOf(caller);
        expect(callerIdAfter).not.toBe(callerIdBefore);
        expect(answer).toEqual({ n: 2, _caller_worker_id: callerIdAfter });
        // the replayed binding reached the replayed provider, under the same trigger id
        await waitFor(() => provider.registered.length >= 2);
        expect(provider.registered.at(-1)).toEqual({ id: binding.id, function_id: 'phoenix::echo', config: { keep: true } });
        // the worker re-announced itself (pid) on the new engine
        const listed = await waitFor(async () => {
          const { workers } = await caller.trigger({ function_id: 'engine::workers::list', payload: {} });
          return workers.find((w: any) => w.pid === child.pid);
        });
        expect(listed).toMatchObject({ name: 'phoenix-worker', version: v, functions: ['phoenix::echo', 'phoenix::hang'] });

        const first = tap.connections[0]!;
        const greeting = first.received[0]!;
        // attempts the tap dropped before the SDK saw the socket open carry no frames
        const reconnects = tap.connections.slice(1).filter((c) => c.sent.length > 0);
        expect(reconnects.length).toBeGreaterThan(0);
        const live = reconnects.find((c) => c.received[0]?.type === 'workerregistered' && c.received[0]?.worker_id === listed.id);
        expect(live).toBeDefined();
        for (const connection of reconnects) {
          if (v === '0.22.1') {
            // §2.3.2: reattach goes first on every reconnect, naming the last worker id it was given
            expect(connection.sent[0]).toMatchObject({ type: 'reattach', reattach_token: expect.stringMatching(UUID) });
          } else {
            expect(connection.sent.some((f) => f.type === 'reattach')).toBe(false);
          }
        }
        if (v === '0.22.1') {
          // the first reconnect names the connection the engine forgot in the restart
          expect(reconnects[0]!.sent[0]).toEqual({
            type: 'reattach',
            previous_worker_id: greeting.worker_id,
            reattach_token: greeting.reattach_token,
          });
        }
        // §2.7 on-open order: (reattach), functions, triggers, then the worker metadata
        const order = live!.sent.map((f) => (f.type === 'invokefunction' ? `invoke ${f.function_id}` : f.type));
        expect(order.filter((t) => t !== 'reattach').slice(0, 4)).toEqual([
          'registerfunction',
          'registerfunction',
          'registertrigger',
          'invoke engine::workers::register',
        ]);
        await child.kill();
      } finally {
        await caller.shutdown();
        await tap.close();
      }
    });
  });
}
