/**
 * iii's queue adapter spelling `{name: builtin, config: {store_method}}` (its default): in memory
 * unless `store_method: file_based`, which is the SQLite store and keeps messages across a restart.
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type EngClient, TriggerAction } from '@eng/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine } from '../../../test/harness.ts';

let engine: EngineProcess | undefined;
let client: EngClient | undefined;
afterEach(async () => {
  await client?.close().catch(() => {});
  await engine?.stop();
});

const queueYaml = (adapter: string) => `  - name: iii-queue\n    config:\n      adapter: ${adapter}\n`;

async function enqueueThree(e: EngineProcess): Promise<EngClient> {
  const c = connect(e.busUrl, { name: 'builtin-producer', reconnect: { maxRetries: 0 } });
  await c.ready({ timeoutMs: 5000 });
  for (let n = 0; n < 3; n++)
    await c.trigger({ function_id: 'nobody::consumes', payload: { n }, action: TriggerAction.Enqueue({ queue: 'jobs' }) });
  return c;
}
const depth = async (c: EngClient) => (await c.call<{ depth: number }>('engine::queue::topic_stats', { topic: 'jobs' })).depth;

describe('queue adapter {name: builtin}', () => {
  it('store_method file_based is the SQLite store: messages survive a restart in the named file', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'eng-builtin-queue-')), 'builtin.db');
    engine = await startEngine({ workersYaml: queueYaml(`{ name: builtin, config: { store_method: file_based, file_path: ${file} } }`) });
    expect(engine.logs()).toContain('queue store: sqlite');
    client = await enqueueThree(engine);
    expect(await depth(client)).toBe(3);
    await client.close();
    await engine.restart();
    client = connect(engine.busUrl, { name: 'builtin-reader', reconnect: { maxRetries: 0 } });
    await client.ready({ timeoutMs: 5000 });
    expect(await depth(client)).toBe(3);
    expect(existsSync(file)).toBe(true);
    expect(existsSync(join(engine.dataDir, 'queue.db'))).toBe(false);
  }, 60_000);

  it('without store_method (and with in_memory) it is the memory store', async () => {
    for (const adapter of ['{ name: builtin }', '{ name: builtin, config: { store_method: in_memory } }']) {
      engine = await startEngine({ workersYaml: queueYaml(adapter) });
      expect(engine.logs()).toContain('queue store: memory');
      client = await enqueueThree(engine);
      expect(await depth(client)).toBe(3);
      await client.close();
      await engine.stop();
    }
    engine = undefined;
    client = undefined;
  }, 60_000);

  it('a wrong store_method is refused with the key named', async () => {
    await expect(
      startEngine({ workersYaml: queueYaml('{ name: builtin, config: { store_method: disk } }'), readyTimeoutMs: 10_000 }),
    ).rejects.toThrow(/store_method/);
    engine = undefined;
  }, 30_000);
});
