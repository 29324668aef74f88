import type { EngClient } from '@eng/sdk';
import { type EngineProcess, startEngine } from '../../../test/harness.ts';
import { type RoleProcess, startRole, testClient } from '../src/shared/test-support.ts';

// A real engine with the state module and the session store launched as `eng-chat session`.

export interface SessionRig {
  engine: EngineProcess;
  worker: RoleProcess;
  client: EngClient;
  stop(): Promise<void>;
}

export async function startSessionRig(options: { stateFile?: string; dataDir?: string } = {}): Promise<SessionRig> {
  const adapter = options.stateFile
    ? `{ name: kv, config: { store_method: file_based, file_path: ${options.stateFile} } }`
    : '{ name: kv, config: { store_method: in_memory } }';
  const engine = await startEngine({
    workersYaml: `  - name: eng-state\n    config:\n      adapter: ${adapter}\n`,
    dataDir: options.dataDir,
  });
  const worker = startRole(engine.busUrl, 'session');
  await worker.ready;
  const client = await testClient(engine.busUrl, 'session-test');
  const rig: SessionRig = {
    engine,
    worker,
    client,
    // the rig's current worker and client: a test that restarts them replaces these fields (the
    // first ones, captured here, left the replacements running after the test)
    async stop() {
      await rig.client.close();
      await rig.worker.stop();
      await rig.engine.stop();
    },
  };
  return rig;
}

export const text = (t: string) => ({ type: 'text', text: t });
export const user = (t: string) => ({ role: 'user', content: [text(t)], timestamp: 1 });
export const assistant = (t: string) => ({
  role: 'assistant',
  content: [text(t)],
  stop_reason: 'end',
  model: 'm',
  provider: 'p',
  timestamp: 2,
});

/** The error a call fails with (the test fails when it succeeds). */
export async function failure(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (err) {
    return err as { code: string; message: string };
  }
  throw new Error('expected the call to fail');
}
