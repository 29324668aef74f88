/**
 * The published iii-sdk 0.11.6 against our engine: the shared §11 checklist plus what only
 * 0.11.6 does (registerService, trigger instances from engine::triggers::list).
 */
import { IIIInvocationError, type ISdk, registerWorker, TriggerAction } from 'iii-sdk-0.11.6';
import { runChecklist } from './checklist.ts';
import { type CompatChannel, type CompatClient, type SdkUnderTest, useCompatEnv } from './compat-env.ts';

const sdk: SdkUnderTest = {
  version: '0.11.6',
  connect: (url, options) =>
    registerWorker(url, {
      workerName: options.name,
      otel: { enabled: options.otel ?? false },
      reconnectionConfig: { initialDelayMs: 100, maxDelayMs: 500 },
    }) as unknown as CompatClient,
  createChannel: async (client) => (await (client as unknown as ISdk).createChannel()) as unknown as CompatChannel,
  ErrorClass: IIIInvocationError,
  voidAction: () => TriggerAction.Void() as { type: 'void' },
};

const env = useCompatEnv(sdk);
runChecklist(env);
