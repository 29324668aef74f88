/**
 * The published iii-sdk 0.11.6 against our engine: the shared §11 checklist plus what only
 * 0.11.6 does (registerService, trigger instances from engine::triggers::list).
 */
import { IIIInvocationError, type ISdk, registerWorker, TriggerAction } from 'iii-sdk-0.11.6';
import { describe, expect, it } from 'vitest';
import { RawClient } from '../../../../test/raw-client.ts';
import { runChecklist } from './checklist.ts';
import { type CompatChannel, type CompatClient, ready, type SdkUnderTest, useCompatEnv } from './compat-env.ts';

const sdk: SdkUnderTest = {
  version: '0.11.6',
  connect: (url, options) =>
    registerWorker(url, {
      workerName: options.name,
      otel: { enabled: options.otel ?? false },
      reconnectionConfig: { initialDelayMs: 100, maxDelayMs: 500 },
    }) as unknown as CompatClient,
  createChannel: async (client, bufferSize) => (await (client as unknown as ISdk).createChannel(bufferSize)) as unknown as CompatChannel,
  ErrorClass: IIIInvocationError,
  voidAction: () => TriggerAction.Void() as { type: 'void' },
};

const env = useCompatEnv(sdk);
runChecklist(env);

describe('iii-sdk 0.11.6 only', () => {
  it('registerService (sent and replayed only by 0.11.6) is accepted without disturbing the worker', async () => {
    const client = env.a as unknown as ISdk;
    client.registerService({ id: 'billing', description: 'Billing functions' });
    client.registerService({ id: 'billing.invoices', parent_service_id: 'billing' });
    env.a.registerFunction('billing::total', async (input) => ({ total: input.a + input.b }));
    await ready(env.a);
    expect(await env.b.trigger({ function_id: 'billing::total', payload: { a: 2, b: 3 } })).toEqual({ total: 5 });
  });

  it('hands the handler only the payload: a 0.22.1-style metadata sidecar cannot reach it', async () => {
    const args: unknown[][] = [];
    env.a.registerFunction('old::args', async (...received: unknown[]) => {
      args.push(received);
      return null;
    });
    await ready(env.a);
    // 0.11.6 has no `metadata` in TriggerRequest; a newer caller's sidecar is simply not passed on
    const newer = await RawClient.worker(env.engine.busUrl);
    try {
      const frame = await newer.call('old::args', { q: 1 }, { metadata: { tenant: 't1' } });
      expect(frame.error).toBeUndefined();
      expect(args).toEqual([[{ q: 1, _caller_worker_id: newer.workerId }]]);
    } finally {
      await newer.terminate();
    }
  });
});
