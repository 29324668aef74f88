/**
 * The storage adapters behind state and streams, run against the real thing: a SQLite file, a
 * redis-server process, and the in-process map. One contract, three backends.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisProcess, startRedis } from '../../../test/redis.ts';
import { MemoryKvStore } from '../src/stores/memory.ts';
import { openStore } from '../src/stores/open.ts';
import { RedisKvStore } from '../src/stores/redis.ts';
import { SqliteKvStore } from '../src/stores/sqlite.ts';
import { KEEP_CURRENT, type KvStore } from '../src/stores/types.ts';

let redis: RedisProcess;
let dir: string;

beforeAll(async () => {
  redis = await startRedis();
  dir = mkdtempSync(join(tmpdir(), 'eng-stores-'));
});
afterAll(async () => {
  await redis?.stop();
});

let counter = 0;
const backends: Array<[string, () => KvStore]> = [
  ['memory', () => new MemoryKvStore()],
  ['sqlite', () => new SqliteKvStore(join(dir, `contract-${++counter}.db`), { table: 'kv' })],
  ['redis', () => new RedisKvStore(redis.url, `test${++counter}:`)],
];

describe.each(backends)('%s store', (_name, make) => {
  it('set returns the previous value, get reads it back, delete returns and removes it', async () => {
    const store = make();
    expect(await store.set('users', 'u1', { name: 'Ada' })).toBeUndefined();
    expect(await store.set('users', 'u1', { name: 'Grace' })).toEqual({ name: 'Ada' });
    expect(await store.get('users', 'u1')).toEqual({ name: 'Grace' });
    expect(await store.get('users', 'nope')).toBeUndefined();
    expect(await store.delete('users', 'u1')).toEqual({ name: 'Grace' });
    expect(await store.delete('users', 'u1')).toBeUndefined();
    expect(await store.get('users', 'u1')).toBeUndefined();
    await store.close();
  });

  it('keeps every JSON type, including null, and never shares objects with the caller', async () => {
    const store = make();
    const values = [null, 0, -1.5, 'text', true, [1, 'a', null], { nested: { deep: [1, { x: 'y' }] } }, 'ünïcødé 🚀'];
    for (const [i, value] of values.entries()) await store.set('types', `k${i}`, value);
    for (const [i, value] of values.entries()) expect(await store.get('types', `k${i}`)).toEqual(value);
    const original = { list: [1] };
    await store.set('types', 'obj', original);
    original.list.push(2);
    const read = (await store.get('types', 'obj')) as { list: number[] };
    read.list.push(3);
    expect(await store.get('types', 'obj')).toEqual({ list: [1] });
    await store.close();
  });

  it('lists sorted by key with offset, limit and prefix; counts; lists scopes', async () => {
    const store = make();
    for (const key of ['b', 'a', 'c', 'ab', 'ä', '😀', 'z']) await store.set('s1', key, key.toUpperCase());
    await store.set('s2', 'x', 1);
    await store.set('other', 'x', 1);
    const keys = (await store.list('s1')).map((e) => e.key);
    expect(keys).toEqual(['a', 'ab', 'b', 'c', 'z', 'ä', '😀']);
    expect(await store.list('s1', { offset: 1, limit: 2 })).toEqual([
      { key: 'ab', value: 'AB' },
      { key: 'b', value: 'B' },
    ]);
    expect((await store.list('s1', { prefix: 'a' })).map((e) => e.key)).toEqual(['a', 'ab']);
    expect((await store.list('s1', { prefix: '😀' })).map((e) => e.key)).toEqual(['😀']);
    expect(await store.count('s1')).toBe(7);
    expect(await store.count('s1', 'a')).toBe(2);
    expect(await store.count('empty')).toBe(0);
    expect(await store.list('empty')).toEqual([]);
    expect(await store.scopes()).toEqual(['other', 's1', 's2']);
    expect(await store.scopes('s')).toEqual(['s1', 's2']);
    // a scope whose last key is deleted disappears from the scope list
    await store.delete('other', 'x');
    expect(await store.scopes()).toEqual(['s1', 's2']);
    await store.close();
  });

  it('update is atomic: 200 concurrent increments of one key lose nothing', async () => {
    const store = make();
    await Promise.all(
      Array.from({ length: 200 }, () => store.update('counters', 'hits', (current) => ((current as number | undefined) ?? 0) + 1)),
    );
    expect(await store.get('counters', 'hits')).toBe(200);
    await store.close();
  });

  it('update reports old and new values; KEEP_CURRENT and a throwing function write nothing', async () => {
    const store = make();
    expect(await store.update('u', 'k', () => ({ n: 1 }))).toEqual({ old: undefined, value: { n: 1 }, written: true });
    expect(await store.update('u', 'k', () => KEEP_CURRENT)).toEqual({ old: { n: 1 }, value: { n: 1 }, written: false });
    await expect(
      store.update('u', 'k', () => {
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect(await store.get('u', 'k')).toEqual({ n: 1 });
    expect(await store.update('u', 'missing', () => KEEP_CURRENT)).toEqual({ old: undefined, value: undefined, written: false });
    expect(await store.scopes()).toEqual(['u']);
    expect(await store.get('u', 'missing')).toBeUndefined();
    await store.close();
  });
});

describe('sqlite store', () => {
  it('persists across reopen, runs in WAL mode and shares one connection between tables of one file', async () => {
    const file = join(dir, 'shared.db');
    const state = new SqliteKvStore(file, { table: 'state_kv' });
    const stream = new SqliteKvStore(file, { table: 'stream_kv' });
    await state.set('s', 'k', { from: 'state' });
    await stream.set('s', 'k', { from: 'stream' });
    expect(await state.get('s', 'k')).toEqual({ from: 'state' });
    await state.close();
    // the other store still works on the shared connection
    expect(await stream.get('s', 'k')).toEqual({ from: 'stream' });
    await stream.close();

    const raw = new Database(file, { readonly: true });
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(raw.prepare('SELECT value FROM state_kv WHERE scope = ? AND key = ?').get('s', 'k')).toEqual({ value: '{"from":"state"}' });
    raw.close();

    const reopened = new SqliteKvStore(file, { table: 'stream_kv' });
    expect(await reopened.get('s', 'k')).toEqual({ from: 'stream' });
    await reopened.close();
  });

  it('group-commits a burst of writes and acknowledges each only after its commit', async () => {
    const file = join(dir, 'burst.db');
    const store = new SqliteKvStore(file, { table: 'kv' });
    await Promise.all(Array.from({ length: 1000 }, (_, i) => store.set('burst', `k${i}`, i)));
    // another connection sees every acknowledged write
    const raw = new Database(file, { readonly: true });
    expect(raw.prepare('SELECT count(*) AS n FROM kv').get()).toEqual({ n: 1000 });
    raw.close();
    await store.close();
  });

  it('refuses a table name that is not an identifier', () => {
    expect(() => new SqliteKvStore(join(dir, 'bad.db'), { table: 'kv; DROP TABLE x' })).toThrow('invalid table name');
  });
});

describe('redis store', () => {
  it('lays data out as a hash per scope plus a set of scopes', async () => {
    const store = new RedisKvStore(redis.url, 'layout:');
    await store.set('users', 'u1', { a: 1 });
    const raw = new Redis(redis.url);
    expect(await raw.hget('layout:h:users', 'u1')).toBe('{"a":1}');
    expect(await raw.smembers('layout:scopes')).toEqual(['users']);
    raw.disconnect();
    await store.close();
  });

  it('update retries when another client changes the key between read and write', async () => {
    const store = new RedisKvStore(redis.url, 'cas:');
    await store.set('c', 'n', 0);
    let calls = 0;
    const result = await store.update('c', 'n', (current) => {
      calls++;
      // the first time, a foreign write lands between our read and our write (queued ahead of
      // the compare-and-set on the same connection, so the order is certain)
      if (calls === 1) void store.connection.hset('cas:h:c', 'n', '100');
      return (current as number) + 1;
    });
    expect(calls).toBe(2);
    expect(result).toEqual({ old: 100, value: 101, written: true });
    expect(await store.get('c', 'n')).toBe(101);
    await store.close();
  });

  it('openStore fails startup clearly when Redis does not answer', async () => {
    await expect(
      openStore({ name: 'redis', config: { redis_url: 'redis://127.0.0.1:1', key_prefix: 'x:' } }, { dataDir: dir, namespace: 'state' }),
    ).rejects.toThrow(/redis at redis:\/\/127\.0\.0\.1:1/);
  }, 15_000);
});

describe('openStore', () => {
  it('puts file_based stores under the data dir by default and honours file_path (file or directory)', async () => {
    const dataDir = join(dir, 'data-default');
    const opened = await openStore(
      { name: 'kv', config: { store_method: 'file_based' } },
      { dataDir, namespace: 'state', defaultFile: 'state.db' },
    );
    expect(opened.description).toBe(`sqlite ${join(dataDir, 'state.db')}`);
    await opened.store.close();
    const explicit = await openStore({ name: 'kv', config: { file_path: join(dir, 'custom.sqlite') } }, { dataDir, namespace: 'state' });
    expect(explicit.description).toBe(`sqlite ${join(dir, 'custom.sqlite')}`);
    await explicit.store.close();
    const inDir = await openStore(
      { name: 'kv', config: { file_path: dataDir } },
      { dataDir: dir, namespace: 'stream', defaultFile: 'streams.db' },
    );
    expect(inDir.description).toBe(`sqlite ${join(dataDir, 'streams.db')}`);
    await inDir.store.close();
    const memory = await openStore({ name: 'kv', config: { store_method: 'in_memory' } }, { dataDir, namespace: 'state' });
    expect(memory.description).toBe('memory');
    expect(memory.redis).toBeUndefined();
  });
});
