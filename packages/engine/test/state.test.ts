/**
 * eng-state against real engine processes: the §11 item 7 checklist with both SDKs, every update
 * op and its errors, bad input to every function, limits, persistence and the Redis adapter.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import { type RedisProcess, startRedis } from '../../../test/redis.ts';
import { engSdk, failure, type KvClient, SDKS } from './kv-clients.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const stateYaml = (config: string) => `  - name: eng-state\n    config:\n${config.replace(/^/gm, '      ')}\n`;
const IN_MEMORY = stateYaml('adapter: { name: kv, config: { store_method: in_memory } }\nmax_value_bytes: 4096');

describe.each(SDKS)('state with %s (spec §11 item 7)', (_name, sdk) => {
  let engine: EngineProcess;
  let a: KvClient;
  let b: KvClient;

  beforeAll(async () => {
    engine = await startEngine({ workersYaml: IN_MEMORY });
    a = await sdk(engine.busUrl, 'state-a');
    b = await sdk(engine.busUrl, 'state-b');
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await engine?.stop();
  });

  it('set, get, list, list_groups, update and delete with the iii result shapes', async () => {
    expect(await a.call('state::set', { scope: 'users', key: 'u1', value: { name: 'Ada', visits: 1 } })).toEqual({
      old_value: null,
      new_value: { name: 'Ada', visits: 1 },
    });
    expect(await a.call('state::set', { scope: 'users', key: 'u2', data: { name: 'Grace' } })).toEqual({
      old_value: null,
      new_value: { name: 'Grace' },
    });
    expect(await b.call('state::get', { scope: 'users', key: 'u1' })).toEqual({ name: 'Ada', visits: 1 });
    expect(await b.call('state::get', { scope: 'users', key: 'missing' })).toBeUndefined();
    expect(await b.call('state::list', { scope: 'users' })).toEqual([{ name: 'Ada', visits: 1 }, { name: 'Grace' }]);
    await a.call('state::set', { scope: 'audit', key: 'x', value: 1 });
    expect(await b.call('state::list_groups', {})).toEqual({ groups: ['audit', 'users'] });

    const updated = await a.call('state::update', {
      scope: 'users',
      key: 'u1',
      ops: [
        { type: 'set', path: 'name', value: 'Ada L.' },
        { type: 'increment', path: 'visits', by: 2 },
        { type: 'append', path: 'tags', value: 'admin' },
        { type: 'merge', path: ['profile'], value: { lang: 'en' } },
      ],
    });
    expect(updated).toEqual({
      old_value: { name: 'Ada', visits: 1 },
      new_value: { name: 'Ada L.', visits: 3, tags: 'admin', profile: { lang: 'en' } },
    });
    expect(updated).not.toHaveProperty('errors');

    // state::delete returns the previous value itself, not {old_value} (spec §4.4)
    expect(await a.call('state::delete', { scope: 'users', key: 'u1' })).toEqual(updated.new_value);
    expect(await a.call('state::get', { scope: 'users', key: 'u1' })).toBeUndefined();
    expect(await a.call('state::delete', { scope: 'users', key: 'u1' })).toBeUndefined();
    expect(await a.call('state::set', { scope: 'users', key: 'u2', value: null })).toEqual({
      old_value: { name: 'Grace' },
      new_value: null,
    });
  });

  it('fires a {scope,key} state trigger with created/updated/deleted payloads and the binding metadata', async () => {
    const events: Array<{ input: any; metadata: unknown }> = [];
    b.register('kv::on-user', (input, metadata) => {
      events.push({ input, metadata });
    });
    const binding = b.bind('state', 'kv::on-user', { scope: 'people', key: 'p1' }, { tenant: 't1' });
    await b.sync();

    await a.call('state::set', { scope: 'people', key: 'p1', value: { v: 1 } });
    await a.call('state::set', { scope: 'people', key: 'p2', value: { v: 1 } }); // other key: no event
    await a.call('state::set', { scope: 'other', key: 'p1', value: { v: 1 } }); // other scope: no event
    await a.call('state::set', { scope: 'people', key: 'p1', value: { v: 2 } });
    await a.call('state::update', { scope: 'people', key: 'p1', ops: [{ type: 'increment', path: 'v', by: 1 }] });
    await a.call('state::delete', { scope: 'people', key: 'p1' });
    await waitFor(() => events.length >= 4);
    await sleep(100);
    const base = { type: 'state', scope: 'people', key: 'p1' };
    expect(events.map((e) => e.input)).toEqual([
      { ...base, event_type: 'state:created', old_value: null, new_value: { v: 1 } },
      { ...base, event_type: 'state:updated', old_value: { v: 1 }, new_value: { v: 2 } },
      { ...base, event_type: 'state:updated', old_value: { v: 2 }, new_value: { v: 3 } },
      { ...base, event_type: 'state:deleted', old_value: { v: 3 }, new_value: null },
    ]);
    expect(events.every((e) => JSON.stringify(e.metadata) === JSON.stringify({ tenant: 't1' }))).toBe(true);

    binding.unregister();
    await b.sync();
    await a.call('state::set', { scope: 'people', key: 'p1', value: { v: 9 } });
    await sleep(150);
    expect(events).toHaveLength(4);
  });

  it('filters by scope only, matches everything without filters, and honours condition_function_id', async () => {
    const byScope: any[] = [];
    const all: any[] = [];
    const conditional: any[] = [];
    b.register('kv::by-scope', (input) => {
      byScope.push(input);
    });
    b.register('kv::all', (input) => {
      all.push(input);
    });
    b.register('kv::conditional', (input) => {
      conditional.push(input);
    });
    // only a literal false skips; no result proceeds; a failing condition skips (spec §5.1)
    b.register('kv::cond', (input) => {
      if (input.key === 'boom') throw new Error('condition exploded');
      if (input.key === 'skip') return false;
      if (input.key === 'silent') return undefined;
      return true;
    });
    const bindings = [
      b.bind('state', 'kv::by-scope', { scope: 'filtered' }),
      b.bind('state', 'kv::all', {}),
      b.bind('state', 'kv::conditional', { scope: 'cond', condition_function_id: 'kv::cond' }),
    ];
    await b.sync();
    await a.call('state::set', { scope: 'filtered', key: 'k1', value: 1 });
    await a.call('state::set', { scope: 'unfiltered', key: 'k2', value: 2 });
    for (const key of ['pass', 'skip', 'silent', 'boom']) await a.call('state::set', { scope: 'cond', key, value: key });
    await waitFor(() => all.length >= 6 && conditional.length >= 2);
    await sleep(150);
    expect(byScope.map((e) => e.key)).toEqual(['k1']);
    expect(all.map((e) => `${e.scope}/${e.key}`)).toEqual([
      'filtered/k1',
      'unfiltered/k2',
      'cond/pass',
      'cond/skip',
      'cond/silent',
      'cond/boom',
    ]);
    expect(conditional.map((e) => e.key)).toEqual(['pass', 'silent']);
    for (const binding of bindings) binding.unregister();
  });
});

describe('state::update ops and their errors', () => {
  let engine: EngineProcess;
  let client: KvClient;
  let n = 0;
  beforeAll(async () => {
    engine = await startEngine({ workersYaml: IN_MEMORY });
    client = await engSdk(engine.busUrl, 'ops');
  });
  afterAll(async () => {
    await client?.close();
    await engine?.stop();
  });

  const deep = (levels: number): unknown => (levels === 0 ? 1 : { d: deep(levels - 1) });
  const manyKeys = Object.fromEntries(Array.from({ length: 1025 }, (_, i) => [`k${i}`, i]));
  const cases: Array<{ name: string; start?: unknown; ops: unknown[]; value: unknown; errors?: string[] }> = [
    { name: 'set a field', start: { a: 1 }, ops: [{ type: 'set', path: 'b', value: 2 }], value: { a: 1, b: 2 } },
    { name: 'set "" replaces the root', start: { a: 1 }, ops: [{ type: 'set', path: '', value: [1, 2] }], value: [1, 2] },
    {
      name: 'set a field of a non-object',
      start: 5,
      ops: [{ type: 'set', path: 'a', value: 1 }],
      value: 5,
      errors: ['set.target_not_object'],
    },
    { name: 'merge at the root', start: { a: 1, b: 1 }, ops: [{ type: 'merge', value: { b: 2, c: 3 } }], value: { a: 1, b: 2, c: 3 } },
    {
      name: 'merge at a nested path creates and replaces intermediates',
      start: { a: 'scalar' },
      ops: [{ type: 'merge', path: ['a', 'b.c'], value: { x: 1 } }],
      value: { a: { 'b.c': { x: 1 } } },
    },
    {
      name: 'merge a non-object',
      start: { a: 1 },
      ops: [{ type: 'merge', value: [1] }],
      value: { a: 1 },
      errors: ['merge.value.not_an_object'],
    },
    {
      name: 'merge a path deeper than 32',
      start: {},
      ops: [{ type: 'merge', path: Array.from({ length: 33 }, () => 'p'), value: { a: 1 } }],
      value: {},
      errors: ['merge.path.too_deep'],
    },
    {
      name: 'merge a segment over 256 bytes',
      start: {},
      ops: [{ type: 'merge', path: ['é'.repeat(129)], value: {} }],
      value: {},
      errors: ['merge.path.segment_too_long'],
    },
    {
      name: 'merge an empty segment',
      start: {},
      ops: [{ type: 'merge', path: ['a', ''], value: {} }],
      value: {},
      errors: ['merge.path.empty_segment'],
    },
    {
      name: 'merge a value deeper than 16',
      start: {},
      ops: [{ type: 'merge', value: { x: deep(16) } }],
      value: {},
      errors: ['merge.value.too_deep'],
    },
    {
      name: 'merge over 1024 keys',
      start: {},
      ops: [{ type: 'merge', value: manyKeys }],
      value: {},
      errors: ['merge.value.too_many_keys'],
    },
    { name: 'increment a field', start: { n: 1 }, ops: [{ type: 'increment', path: 'n', by: 41 }], value: { n: 42 } },
    { name: 'increment a missing field starts from 0', start: {}, ops: [{ type: 'increment', path: 'n', by: 5 }], value: { n: 5 } },
    { name: 'decrement a missing field', start: {}, ops: [{ type: 'decrement', path: 'n', by: 5 }], value: { n: -5 } },
    { name: 'increment the root of a missing key', ops: [{ type: 'increment', path: '', by: 7 }], value: 7 },
    { name: 'decrement a float field', start: { n: 1.5 }, ops: [{ type: 'decrement', path: 'n', by: 1 }], value: { n: 0.5 } },
    {
      name: 'increment a string',
      start: { n: 'x' },
      ops: [{ type: 'increment', path: 'n', by: 1 }],
      value: { n: 'x' },
      errors: ['increment.not_number'],
    },
    {
      name: 'increment null',
      start: { n: null },
      ops: [{ type: 'increment', path: 'n', by: 1 }],
      value: { n: null },
      errors: ['increment.not_number'],
    },
    {
      name: 'decrement in a non-object',
      start: [1],
      ops: [{ type: 'decrement', path: 'n', by: 1 }],
      value: [1],
      errors: ['decrement.target_not_object'],
    },
    {
      name: 'increment past the exact integer range',
      start: { n: Number.MAX_SAFE_INTEGER },
      ops: [{ type: 'increment', path: 'n', by: 1 }],
      value: { n: Number.MAX_SAFE_INTEGER },
      errors: ['increment.overflow'],
    },
    { name: 'append to an array', start: { l: [1] }, ops: [{ type: 'append', path: 'l', value: { x: 2 } }], value: { l: [1, { x: 2 }] } },
    { name: 'append to a string', start: { s: 'ab' }, ops: [{ type: 'append', path: 's', value: 'cd' }], value: { s: 'abcd' } },
    { name: 'append a string to a missing field', start: {}, ops: [{ type: 'append', path: 's', value: 'a' }], value: { s: 'a' } },
    { name: 'append a number to a missing field', start: {}, ops: [{ type: 'append', path: 'l', value: 1 }], value: { l: [1] } },
    { name: 'append to a null field', start: { l: null }, ops: [{ type: 'append', path: 'l', value: 'a' }], value: { l: 'a' } },
    { name: 'append at a nested path', start: {}, ops: [{ type: 'append', path: ['a', 'b'], value: 's' }], value: { a: { b: ['s'] } } },
    { name: 'append to the root of a missing key', ops: [{ type: 'append', value: 'hello' }], value: 'hello' },
    {
      name: 'append to an object',
      start: { o: {} },
      ops: [{ type: 'append', path: 'o', value: 1 }],
      value: { o: {} },
      errors: ['append.type_mismatch'],
    },
    {
      name: 'append a number to a string',
      start: { s: 'a' },
      ops: [{ type: 'append', path: 's', value: 1 }],
      value: { s: 'a' },
      errors: ['append.type_mismatch'],
    },
    {
      name: 'append by path into a non-object',
      start: 'text',
      ops: [{ type: 'append', path: 'x', value: 1 }],
      value: 'text',
      errors: ['append.target_not_object'],
    },
    { name: 'remove a field', start: { a: 1, b: 2 }, ops: [{ type: 'remove', path: 'a' }], value: { b: 2 } },
    { name: 'remove the root', start: { a: 1 }, ops: [{ type: 'remove', path: '' }], value: null },
    { name: 'remove from a non-object', start: 3, ops: [{ type: 'remove', path: 'a' }], value: 3, errors: ['remove.target_not_object'] },
    {
      name: 'a failing op is skipped, the others apply in order',
      start: { n: 1, s: 'x' },
      ops: [
        { type: 'increment', path: 's', by: 1 },
        { type: 'increment', path: 'n', by: 1 },
        { type: 'merge', path: 'constructor', value: { a: 1 } },
        { type: 'set', path: 'done', value: true },
      ],
      value: { n: 2, s: 'x', done: true },
      errors: ['increment.not_number', 'merge.path.proto_polluted'],
    },
  ];

  it.each(cases)('$name', async ({ start, ops, value, errors }) => {
    const key = `k${++n}`;
    if (start !== undefined) await client.call('state::set', { scope: 'ops', key, value: start });
    const result = await client.call('state::update', { scope: 'ops', key, ops });
    expect(result.new_value).toEqual(value);
    expect(result.old_value).toEqual(start ?? null);
    expect((result.errors ?? []).map((e: { code: string }) => e.code)).toEqual(errors ?? []);
    for (const error of result.errors ?? []) {
      expect(typeof error.message).toBe('string');
      expect(ops[error.op_index]).toBeDefined();
    }
    expect(await client.call('state::get', { scope: 'ops', key })).toEqual(
      start === undefined && errors?.length === ops.length ? undefined : value,
    );
  });

  it('reports op_index of each failing op', async () => {
    const result = await client.call('state::update', {
      scope: 'ops',
      key: 'indexes',
      ops: [
        { type: 'set', path: 'a', value: 1 },
        { type: 'merge', path: ['__proto__'], value: { polluted: true } },
        { type: 'set', path: 'prototype', value: 1 },
      ],
    });
    expect(result.errors.map((e: any) => [e.op_index, e.code])).toEqual([
      [1, 'merge.path.proto_polluted'],
      [2, 'set.path.proto_polluted'],
    ]);
    expect(result.new_value).toEqual({ a: 1 });
  });

  it('rejects prototype-pollution keys in merge paths and values, and stores nothing for a new key', async () => {
    const attempts = [
      [{ type: 'merge', path: ['__proto__'], value: { polluted: true } }],
      [{ type: 'merge', path: ['a', 'constructor', 'prototype'], value: { polluted: true } }],
      [{ type: 'merge', value: JSON.parse('{"__proto__": {"polluted": true}}') }],
      [{ type: 'merge', value: { constructor: { prototype: { polluted: true } } } }],
      [{ type: 'append', path: ['__proto__', 'x'], value: 1 }],
      [{ type: 'increment', path: '__proto__', by: 1 }],
      [{ type: 'remove', path: 'constructor' }],
    ];
    const codes: string[] = [];
    for (const [i, ops] of attempts.entries()) {
      const result = await client.call('state::update', { scope: 'proto', key: `p${i}`, ops });
      codes.push(result.errors[0].code);
      expect(result.new_value).toBeNull();
      expect(await client.call('state::get', { scope: 'proto', key: `p${i}` })).toBeUndefined();
    }
    expect(codes).toEqual([
      'merge.path.proto_polluted',
      'merge.path.proto_polluted',
      'merge.value.proto_polluted',
      'merge.value.proto_polluted',
      'append.path.proto_polluted',
      'increment.path.proto_polluted',
      'remove.path.proto_polluted',
    ]);
    expect((await client.call('state::list_groups', {})).groups).not.toContain('proto');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('fails the whole call on an op that does not decode, and writes nothing', async () => {
    await client.call('state::set', { scope: 'decode', key: 'k', value: { n: 1 } });
    const bad: Array<[unknown, RegExp]> = [
      [[{ type: 'increment', path: 'n', by: 1.5 }], /ops\.0\.by: by must be an integer/],
      [[{ type: 'increment', path: 'n', by: '1' }], /ops\.0\.by/],
      [[{ type: 'increment', path: 'n' }], /ops\.0\.by/],
      [
        [
          { type: 'set', path: 'a', value: 1 },
          { type: 'explode', path: 'n' },
        ],
        /ops\.1.*type must be one of set, merge/,
      ],
      [[{ type: 'set', value: 1 }], /ops\.0\.path/],
      [[{ type: 'merge', path: 5, value: {} }], /ops\.0\.path/],
      ['not-an-array', /ops: ops must be an array/],
      [undefined, /ops: ops is required/],
    ];
    for (const [ops, message] of bad) {
      const error = await failure(client.call('state::update', { scope: 'decode', key: 'k', ops }));
      expect(error.code).toBe('deserialization_error');
      expect(error.message).toMatch(message);
    }
    expect(await client.call('state::get', { scope: 'decode', key: 'k' })).toEqual({ n: 1 });
  });
});

describe('state functions refuse bad input', () => {
  let engine: EngineProcess;
  let client: KvClient;
  beforeAll(async () => {
    engine = await startEngine({ workersYaml: IN_MEMORY });
    client = await engSdk(engine.busUrl, 'bad-input');
  });
  afterAll(async () => {
    await client?.close();
    await engine?.stop();
  });

  const cases: Array<[string, unknown, RegExp]> = [
    ['state::set', { key: 'k', value: 1 }, /scope: scope is required/],
    ['state::set', { scope: 5, key: 'k', value: 1 }, /scope: scope must be a string/],
    ['state::set', { scope: 's', key: '', value: 1 }, /key: key must not be empty/],
    ['state::set', { scope: 's', key: ['k'], value: 1 }, /key: key must be a string/],
    ['state::set', { scope: 's', key: 'k' }, /value: value is required \(data is accepted as an alias\)/],
    ['state::set', 'just a string', /expected object/i],
    ['state::get', { scope: 's' }, /key: key is required/],
    ['state::get', { scope: null, key: 'k' }, /scope: scope must be a string/],
    ['state::delete', { scope: 's', key: 42 }, /key: key must be a string/],
    ['state::delete', {}, /scope: scope is required; key: key is required/],
    ['state::update', { scope: 's', ops: [] }, /key: key is required/],
    ['state::update', { scope: 's', key: 'k', ops: { type: 'set' } }, /ops: ops must be an array/],
    ['state::list', {}, /scope: scope is required/],
    ['state::list', { scope: 's', with_keys: 'yes' }, /with_keys: with_keys must be a boolean/],
    ['state::list', { scope: 's', offset: -1 }, /offset/],
    ['state::list', { scope: 's', limit: 0 }, /limit/],
    ['state::list', { scope: 's', limit: 1.5 }, /limit/],
    ['state::list', { scope: 's', prefix: 3 }, /prefix: prefix must be a string/],
    ['state::list_groups', [], /expected object/i],
  ];

  it.each(cases)('%s %j → deserialization_error', async (fn, payload, message) => {
    const error = await failure(client.call(fn, payload));
    expect(error.code).toBe('deserialization_error');
    expect(error.message).toMatch(message);
    expect(error.message).toContain(fn);
    expect(await client.call('state::list_groups', {})).toEqual({ groups: [] });
  });

  it('refuses a value over max_value_bytes with VALUE_TOO_LARGE, on set and on update, and keeps the old value', async () => {
    const error = await failure(client.call('state::set', { scope: 'big', key: 'k', value: 'x'.repeat(5000) }));
    expect(error.code).toBe('VALUE_TOO_LARGE');
    expect(error.message).toMatch(/over the limit of 4096/);
    expect(await client.call('state::get', { scope: 'big', key: 'k' })).toBeUndefined();
    await client.call('state::set', { scope: 'big', key: 'k', value: 'x'.repeat(4000) });
    const grown = await failure(
      client.call('state::update', { scope: 'big', key: 'k', ops: [{ type: 'append', value: 'y'.repeat(200) }] }),
    );
    expect(grown.code).toBe('VALUE_TOO_LARGE');
    expect(await client.call('state::get', { scope: 'big', key: 'k' })).toBe('x'.repeat(4000));
    await client.call('state::delete', { scope: 'big', key: 'k' });
  });

  it('lists keys with offset, limit, prefix and total for the console (with_keys)', async () => {
    for (const key of ['order:3', 'order:1', 'user:1', 'order:2']) await client.call('state::set', { scope: 'paged', key, value: { key } });
    expect(await client.call('state::list', { scope: 'paged', with_keys: true, prefix: 'order:', offset: 1, limit: 1 })).toEqual({
      items: [{ key: 'order:2', value: { key: 'order:2' } }],
      total: 3,
    });
    const all = await client.call('state::list', { scope: 'paged', with_keys: true });
    expect(all.total).toBe(4);
    expect(all.items.map((i: { key: string }) => i.key)).toEqual(['order:1', 'order:2', 'order:3', 'user:1']);
    expect(await client.call('state::list', { scope: 'nothing-here', with_keys: true })).toEqual({ items: [], total: 0 });
    expect(await client.call('state::list', { scope: 'nothing-here' })).toEqual([]);
    for (const key of ['order:3', 'order:1', 'user:1', 'order:2']) await client.call('state::delete', { scope: 'paged', key });
  });

  it('refuses a state trigger whose config has the wrong types', async () => {
    client.register('kv::noop', () => undefined);
    await client.sync();
    const error = await failure(
      client.call('engine::register_trigger', { trigger_type: 'state', function_id: 'kv::noop', config: { scope: 5, key: ['k'] } }),
    );
    expect(error.code).toBe('trigger_registration_failed');
    expect(error.message).toContain('invalid state trigger config: scope: scope must be a string; key: key must be a string');
  });

  it('refuses an unknown adapter at startup, naming the key', async () => {
    await expect(startEngine({ workersYaml: stateYaml('adapter: { name: etcd, config: { url: http://x } }') })).rejects.toThrow(
      /eng-state.*adapter/s,
    );
    // the bridge adapter needs the other engine's bus URL
    await expect(startEngine({ workersYaml: stateYaml('adapter: { name: bridge, config: {} }') })).rejects.toThrow(
      /bridge_url is required/,
    );
  });
});

describe('file_based state', () => {
  let engine: EngineProcess;
  afterAll(async () => {
    await engine?.stop();
  });

  it('keeps state across a restart in <dataDir>/state.db, and fires no triggers when triggers_enabled is false', async () => {
    engine = await startEngine({ workersYaml: stateYaml('triggers_enabled: false') });
    let client = await engSdk(engine.busUrl, 'persist');
    const fired: unknown[] = [];
    client.register('kv::never', (input) => {
      fired.push(input);
    });
    client.bind('state', 'kv::never', {});
    await client.sync();
    await client.call('state::set', { scope: 'persist', key: 'k1', value: { kept: true } });
    await client.call('state::update', { scope: 'persist', key: 'k2', ops: [{ type: 'increment', path: 'n', by: 3 }] });
    await sleep(150);
    expect(fired).toEqual([]);
    await client.close();
    expect(engine.logs()).toContain(`state store: sqlite ${engine.dataDir}/state.db`);

    await engine.restart();
    client = await engSdk(engine.busUrl, 'persist-2');
    expect(await client.call('state::get', { scope: 'persist', key: 'k1' })).toEqual({ kept: true });
    expect(await client.call('state::list', { scope: 'persist', with_keys: true })).toEqual({
      items: [
        { key: 'k1', value: { kept: true } },
        { key: 'k2', value: { n: 3 } },
      ],
      total: 2,
    });
    await client.close();
  });
});

describe('redis state shared by two engines', () => {
  let redis: RedisProcess;
  let one: EngineProcess;
  let two: EngineProcess;
  let a: KvClient;
  let b: KvClient;

  beforeAll(async () => {
    redis = await startRedis();
    const yaml = stateYaml(`adapter: { name: redis, config: { redis_url: "${redis.url}" } }`);
    one = await startEngine({ workersYaml: yaml });
    two = await startEngine({ workersYaml: yaml });
    a = await engSdk(one.busUrl, 'redis-a');
    b = await SDKS[0]![1](two.busUrl, 'redis-b');
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await one?.stop();
    await two?.stop();
    await redis?.stop();
  });

  it('each engine sees what the other wrote', async () => {
    expect(one.logs()).toContain(`state store: redis ${redis.url}`);
    expect(await a.call('state::set', { scope: 'shared', key: 'k', value: { from: 'one' } })).toEqual({
      old_value: null,
      new_value: { from: 'one' },
    });
    expect(await b.call('state::get', { scope: 'shared', key: 'k' })).toEqual({ from: 'one' });
    expect(await b.call('state::set', { scope: 'shared', key: 'k', value: { from: 'two' } })).toEqual({
      old_value: { from: 'one' },
      new_value: { from: 'two' },
    });
    expect(await a.call('state::list_groups', {})).toEqual({ groups: ['shared'] });
    expect(await a.call('state::list', { scope: 'shared', with_keys: true })).toEqual({
      items: [{ key: 'k', value: { from: 'two' } }],
      total: 1,
    });
    expect(await a.call('state::delete', { scope: 'shared', key: 'k' })).toEqual({ from: 'two' });
    expect(await b.call('state::get', { scope: 'shared', key: 'k' })).toBeUndefined();
  });

  it('concurrent updates from both engines lose nothing', async () => {
    const bump = (client: KvClient) =>
      client.call('state::update', { scope: 'race', key: 'n', ops: [{ type: 'increment', path: 'hits', by: 1 }] });
    await Promise.all([...Array.from({ length: 100 }, () => bump(a)), ...Array.from({ length: 100 }, () => bump(b))]);
    expect(await a.call('state::get', { scope: 'race', key: 'n' })).toEqual({ hits: 200 });
  });

  it('a state trigger bound on one engine fires for writes made through the other', async () => {
    const events: any[] = [];
    b.register('kv::remote', (input) => {
      events.push(input);
    });
    b.bind('state', 'kv::remote', { scope: 'cross' });
    await b.sync();
    await a.call('state::set', { scope: 'cross', key: 'x', value: 1 });
    await a.call('state::delete', { scope: 'cross', key: 'x' });
    await waitFor(() => events.length >= 2);
    await sleep(100);
    expect(events).toEqual([
      { type: 'state', event_type: 'state:created', scope: 'cross', key: 'x', old_value: null, new_value: 1 },
      { type: 'state', event_type: 'state:deleted', scope: 'cross', key: 'x', old_value: 1, new_value: null },
    ]);
  });
});
