/**
 * The published iii-sdk 0.22.1 against our engine: the shared §11 checklist plus what only
 * 0.22.1 has (invocation metadata, the `…::info` functions, reattach eviction).
 */
import { InvocationError, registerWorker, TriggerAction } from 'iii-sdk-0.22.1';
import { createChannel } from 'iii-sdk-0.22.1/helpers';
import { runChecklist } from './checklist.ts';
import { type CompatChannel, type CompatClient, type SdkUnderTest, useCompatEnv } from './compat-env.ts';

const sdk: SdkUnderTest = {
  version: '0.22.1',
  connect: (url, options) =>
    registerWorker(url, {
      workerName: options.name,
      workerDescription: options.description,
      otel: { enabled: options.otel ?? false },
      reconnectionConfig: { initialDelayMs: 100, maxDelayMs: 500 },
    }) as unknown as CompatClient,
  createChannel: async (client) => (await createChannel(client as never)) as unknown as CompatChannel,
  ErrorClass: InvocationError,
  voidAction: () => TriggerAction.Void(),
};

const env = useCompatEnv(sdk);
runChecklist(env);
