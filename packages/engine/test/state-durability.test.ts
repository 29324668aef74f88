/**
 * Durability of the file_based state store: every write the engine acknowledged survives
 * `kill -9` of the engine, and the SQLite file it leaves behind is intact.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import { engSdk, type KvClient } from './kv-clients.ts';

const IN_FLIGHT = 100;

/** Write keys k<from>… with `IN_FLIGHT` calls outstanding until `count` are acknowledged or `stop()` says so. */
async function writeKeys(client: KvClient, from: number, count: number, acked: Set<number>, stop = () => false): Promise<void> {
  let next = from;
  const end = from + count;
  const lane = async () => {
    while (next < end && !stop()) {
      const i = next++;
      try {
        await client.call('state::set', { scope: 'durable', key: `k${i}`, value: { i, pad: 'x'.repeat(64) } });
        acked.add(i);
      } catch {
        return; // the engine is gone
      }
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
}

describe('file_based state survives kill -9', () => {
  let engine: EngineProcess;
  afterAll(async () => {
    await engine?.stop();
  });

  it('keeps every acknowledged key of 10,000 (and of writes cut off mid-flight), in a file that passes integrity_check', async () => {
    engine = await startEngine({ workersYaml: '  - name: eng-state\n' });
    let client = await engSdk(engine.busUrl, 'durable-writer');
    const acked = new Set<number>();
    await writeKeys(client, 0, 10_000, acked);
    expect(acked.size).toBe(10_000);

    // keep writing and pull the plug while ~100 writes are in flight
    let killed = false;
    const writing = writeKeys(client, 10_000, 1_000_000, acked, () => killed);
    // some writes of this second run are acknowledged, the next ones in flight, when the plug is pulled
    await waitFor(() => acked.size > 10_000 + IN_FLIGHT, 30_000);
    const ackedBeforeKill = acked.size;
    await engine.kill('SIGKILL');
    killed = true;
    // calls cut off by the kill end when the client closes (they were never acknowledged)
    await client.close();
    await writing;
    expect(ackedBeforeKill).toBeGreaterThan(10_000);

    // the file as the crash left it: recovers to a consistent database holding every acknowledged key
    const file = join(engine.dataDir, 'state.db');
    const db = new Database(file);
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    const stored = new Map<string, string>(
      db
        .prepare<[], { key: string; value: string }>("SELECT key, value FROM state_kv WHERE scope = 'durable'")
        .all()
        .map((r) => [r.key, r.value]),
    );
    db.close();
    const missing = [...acked].filter((i) => !stored.has(`k${i}`));
    expect(missing).toEqual([]);
    expect(JSON.parse(stored.get('k9999') as string)).toEqual({ i: 9999, pad: 'x'.repeat(64) });

    // and the engine restarted on the same data dir serves them
    await engine.restart();
    client = await engSdk(engine.busUrl, 'durable-reader');
    const listed = await client.call('state::list', { scope: 'durable', with_keys: true, limit: 10_000 });
    expect(listed.total).toBeGreaterThanOrEqual(acked.size);
    for (const i of [0, 1234, 9999, Math.max(...acked)]) {
      expect(await client.call('state::get', { scope: 'durable', key: `k${i}` })).toEqual({ i, pad: 'x'.repeat(64) });
    }
    await client.close();
  }, 120_000);
});
