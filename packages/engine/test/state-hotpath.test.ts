/**
 * The state::get / state::set fast path (answered without promises on the memory store, SQLite
 * reads sharing one read transaction per event-loop turn) against real engine processes, for both
 * store methods: pipelined writes keep their order in results and trigger events, values come back
 * exactly as written, bad input gets errors naming the field, SQLite reads see other connections'
 * commits and every acknowledged write survives a restart.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import { RawClient } from '../../../test/raw-client.ts';
import { engSdk, type KvClient } from './kv-clients.ts';

const stateYaml = (method: string) =>
  `  - name: eng-state\n    config:\n      adapter: { name: kv, config: { store_method: ${method} } }\n      max_value_bytes: 4096\n`;

/** Values whose JSON text is easy to get subtly wrong. */
const TRICKY: unknown[] = [
  { text: 'line\nbreak "quoted" \\ back\u2028sep\u0000nul', emoji: '😀 ü € 漢', nested: [[[]], {}, [null, false, 0, '']] },
  0,
  -1.5e-300,
  1e21,
  Number.MAX_SAFE_INTEGER,
  5e-324,
  '',
  'plain',
  false,
  null,
  [1, 'two', { three: [3] }],
  { '': 'empty key', 'a.b': { 'c[0]': true }, __proto__x: 1 },
];

describe.each(['in_memory', 'file_based'])('state fast path (%s)', (method) => {
  let engine: EngineProcess;
  let raw: RawClient;
  let listener: KvClient;

  beforeAll(async () => {
    engine = await startEngine({ workersYaml: stateYaml(method) });
    raw = await RawClient.worker(engine.busUrl);
    listener = await engSdk(engine.busUrl, 'hotpath-listener');
  });
  afterAll(async () => {
    await raw?.close();
    await listener?.close();
    await engine?.stop();
  });

  it('pipelined sets of one key: results and trigger events follow the order the frames were sent', async () => {
    const events: Array<{ event_type: string; old_value: unknown; new_value: unknown }> = [];
    listener.register('hot::on-counter', (input) => {
      events.push(input);
    });
    listener.bind('state', 'hot::on-counter', { scope: 'hot', key: 'counter' });
    await listener.sync();

    const N = 200;
    // every frame written before any answer is read: the engine sees them in few turns
    const results = await Promise.all(
      Array.from({ length: N }, (_, i) => raw.call('state::set', { scope: 'hot', key: 'counter', value: i })),
    );
    results.forEach((frame, i) => {
      expect(frame.error).toBeUndefined();
      expect(frame.result).toEqual({ old_value: i === 0 ? null : i - 1, new_value: i });
    });
    await waitFor(() => events.length >= N, 10_000);
    expect(events).toHaveLength(N);
    events.forEach((event, i) => {
      expect(event).toMatchObject({
        event_type: i === 0 ? 'state:created' : 'state:updated',
        old_value: i === 0 ? null : i - 1,
        new_value: i,
      });
    });
    // a get pipelined right behind a set sees it
    const [, got] = await Promise.all([
      raw.call('state::set', { scope: 'hot', key: 'counter', value: 'last' }),
      raw.call('state::get', { scope: 'hot', key: 'counter' }),
    ]);
    if (method === 'in_memory') expect(got.result).toBe('last');
    expect(await raw.result('state::get', { scope: 'hot', key: 'counter' })).toBe('last');
  });

  it('gives every value back exactly as written, in set results and gets, and no result for a missing key', async () => {
    for (const [i, value] of TRICKY.entries()) {
      const set = await raw.call('state::set', { scope: 'exact', key: `v${i}`, value });
      expect(set.result).toEqual({ old_value: null, new_value: value });
      const got = await raw.call('state::get', { scope: 'exact', key: `v${i}` });
      expect(got.error).toBeUndefined();
      expect(got.result).toEqual(value);
    }
    // `data` is accepted for `value`, and the previous value comes back whole
    const again = await raw.result('state::set', { scope: 'exact', key: 'v0', data: { replaced: true } });
    expect(again).toEqual({ old_value: TRICKY[0], new_value: { replaced: true } });
    const missing = await raw.call('state::get', { scope: 'exact', key: 'nope' });
    expect(missing.error).toBeUndefined();
    expect(missing).not.toHaveProperty('result');
  });

  it('answers bad input with an error naming the field, and a value over max_value_bytes with VALUE_TOO_LARGE', async () => {
    const cases: Array<[string, unknown, RegExp]> = [
      ['state::get', {}, /scope is required/],
      ['state::get', null, /scope is required/],
      ['state::get', { scope: 's' }, /key is required/],
      ['state::get', { scope: 's', key: 5 }, /key must be a string/],
      ['state::get', { scope: '', key: 'k' }, /scope must not be empty/],
      ['state::set', { scope: 's', key: 'k' }, /value is required/],
      ['state::set', { scope: ['s'], key: 'k', value: 1 }, /scope must be a string/],
      ['state::set', 'not an object', /state::set/],
    ];
    for (const [fn, data, message] of cases) {
      const frame = await raw.call(fn, data);
      expect(frame.error, `${fn} ${JSON.stringify(data)}`).toMatchObject({
        code: 'deserialization_error',
        message: expect.stringMatching(message),
      });
    }
    const big = await raw.call('state::set', { scope: 's', key: 'big', value: 'x'.repeat(5000) });
    expect(big.error).toMatchObject({ code: 'VALUE_TOO_LARGE', message: expect.stringMatching(/over the limit of 4096/) });
    // nothing was stored, and the engine still answers
    expect(await raw.call('state::get', { scope: 's', key: 'big' })).not.toHaveProperty('result');
  });

  // the SQLite store's own properties (nothing to test for memory: declared only for file_based)
  if (method !== 'file_based') return;

  it('reads see what another connection committed while the engine runs', async () => {
    const db = new Database(join(engine.dataDir, 'state.db'));
    db.pragma('busy_timeout = 5000');
    try {
      // the engine keeps answering reads in between, so its per-turn read transactions must end
      const reads = Array.from({ length: 300 }, (_, i) => raw.call('state::get', { scope: 'exact', key: `v${i % TRICKY.length}` }));
      db.prepare('INSERT INTO state_kv (scope, key, value) VALUES (?, ?, ?)').run('outside', 'k', '{"from":"outside"}');
      await Promise.all(reads);
      expect(await raw.result('state::get', { scope: 'outside', key: 'k' })).toEqual({ from: 'outside' });
      // and an acknowledged set is committed for the other connection at once
      await raw.result('state::set', { scope: 'outside', key: 'k', value: { from: 'engine' } });
      expect(db.prepare('SELECT value FROM state_kv WHERE scope = ? AND key = ?').pluck().get('outside', 'k')).toBe('{"from":"engine"}');
    } finally {
      db.close();
    }
  });

  it('every acknowledged pipelined set survives a restart, byte for byte', async () => {
    const N = 500;
    const value = (i: number) => ({ i, text: `ü-${i}-😀`, list: [i, -i - 1, i / 7] });
    const acks = await Promise.all(
      Array.from({ length: N }, (_, i) => raw.call('state::set', { scope: 'durable', key: `k${i}`, value: value(i) })),
    );
    expect(acks.every((frame) => frame.error === undefined)).toBe(true);
    await raw.close();
    await listener.close();
    await engine.restart();
    raw = await RawClient.worker(engine.busUrl);
    listener = await engSdk(engine.busUrl, 'hotpath-listener');
    const got = await Promise.all(Array.from({ length: N }, (_, i) => raw.call('state::get', { scope: 'durable', key: `k${i}` })));
    got.forEach((frame, i) => {
      expect(frame.result).toEqual(value(i));
    });
    for (const [i, v] of TRICKY.entries()) {
      if (i === 0) continue; // replaced above
      expect(await raw.result('state::get', { scope: 'exact', key: `v${i}` })).toEqual(v);
    }
  });
});
