/**
 * eng-stream against real engine processes: the §11 item 8 checklist with both SDKs, the streams
 * WebSocket (join → sync → changes, join/leave triggers, auth), custom backends, bad input, and
 * two engines sharing one Redis.
 */
import { createStream } from 'iii-sdk-0.22.1/helpers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import { RawClient } from '../../../test/raw-client.ts';
import { type RedisProcess, startRedis } from '../../../test/redis.ts';
import { engSdk, failure, iiiSdk, type KvClient, SDKS, StreamsClient } from './kv-clients.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const streamYaml = (config: string) =>
  `  - name: eng-stream\n    config:\n      port: {{STREAMS_PORT}}\n${config.replace(/^/gm, '      ')}\n`;
const IN_MEMORY = streamYaml('adapter: { name: kv, config: { store_method: in_memory } }');

const streamsUrl = (engine: EngineProcess) => engine.addresses.streams?.url as string;

describe.each(SDKS)('stream with %s (spec §11 item 8)', (_name, sdk) => {
  let engine: EngineProcess;
  let a: KvClient;
  let b: KvClient;

  beforeAll(async () => {
    engine = await startEngine({ workersYaml: IN_MEMORY });
    a = await sdk(engine.busUrl, 'stream-a');
    b = await sdk(engine.busUrl, 'stream-b');
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await engine?.stop();
  });

  it('set, get, list, list_groups, update, delete and list_all with the iii result shapes', async () => {
    const at = (item_id: string, group_id = 'room-1') => ({ stream_name: 'chat', group_id, item_id });
    expect(await a.call('stream::set', { ...at('m1'), data: { text: 'hi' } })).toEqual({ old_value: null, new_value: { text: 'hi' } });
    expect(await a.call('stream::set', { ...at('m2'), data: { text: 'yo' } })).toEqual({ old_value: null, new_value: { text: 'yo' } });
    expect(await a.call('stream::set', { ...at('m1', 'room-2'), data: { text: 'other room' } })).toMatchObject({ old_value: null });
    expect(await b.call('stream::get', at('m1'))).toEqual({ text: 'hi' });
    expect(await b.call('stream::get', at('nope'))).toBeUndefined();
    expect(await b.call('stream::list', { stream_name: 'chat', group_id: 'room-1' })).toEqual([{ text: 'hi' }, { text: 'yo' }]);
    // a bare array, unlike state::list_groups (spec §4.5, §12)
    expect(await b.call('stream::list_groups', { stream_name: 'chat' })).toEqual(['room-1', 'room-2']);
    expect(await b.call('stream::list_groups', { stream_name: 'ch' })).toEqual([]);
    const updated = await a.call('stream::update', {
      ...at('m1'),
      ops: [
        { type: 'set', path: 'text', value: 'hello' },
        { type: 'increment', path: 'edits', by: 1 },
        { type: 'merge', path: ['__proto__'], value: { x: 1 } },
      ],
    });
    expect(updated.old_value).toEqual({ text: 'hi' });
    expect(updated.new_value).toEqual({ text: 'hello', edits: 1 });
    expect(updated.errors.map((e: { code: string }) => e.code)).toEqual(['merge.path.proto_polluted']);
    // stream::delete wraps the old value, unlike state::delete
    expect(await a.call('stream::delete', at('m2'))).toEqual({ old_value: { text: 'yo' } });
    expect(await a.call('stream::delete', at('m2'))).toEqual({ old_value: null });
    await a.call('stream::set', { stream_name: 'presence', group_id: 'lobby', item_id: 'u1', data: true });
    expect(await b.call('stream::list_all', {})).toEqual({
      stream: [
        { id: 'chat', groups: ['room-1', 'room-2'] },
        { id: 'presence', groups: ['lobby'] },
      ],
      count: 2,
    });
    expect(await a.call('stream::send', { stream_name: 'chat', group_id: 'room-1', type: 'typing', data: { who: 'ada' } })).toBeNull();
  });

  it('fires stream triggers with the camelCase wrapper for create, update, delete and custom events', async () => {
    const group: Array<{ input: any; metadata: unknown }> = [];
    const item: any[] = [];
    b.register('st::group', (input, metadata) => {
      group.push({ input, metadata });
    });
    b.register('st::item', (input) => {
      item.push(input);
    });
    const bindings = [
      b.bind('stream', 'st::group', { stream_name: 'orders', group_id: 'g1' }, { tenant: 't1' }),
      b.bind('stream', 'st::item', { stream_name: 'orders', group_id: 'g1', item_id: 'o2' }),
    ];
    await b.sync();
    const at = (item_id: string, group_id = 'g1') => ({ stream_name: 'orders', group_id, item_id });
    await a.call('stream::set', { ...at('o1'), data: { n: 1 } });
    await a.call('stream::set', { ...at('o1', 'g2'), data: { n: 1 } }); // other group: ignored
    await a.call('stream::update', { ...at('o1'), ops: [{ type: 'increment', path: 'n', by: 1 }] });
    await a.call('stream::delete', at('o1'));
    await a.call('stream::send', { stream_name: 'orders', group_id: 'g1', type: 'ping', data: { at: 1 } });
    await a.call('stream::set', { ...at('o2'), data: 'two' });
    await waitFor(() => group.length >= 5 && item.length >= 1);
    await sleep(100);
    const wrapper = (id: string | undefined, event: unknown) => ({
      type: 'stream',
      timestamp: expect.any(Number),
      streamName: 'orders',
      groupId: 'g1',
      ...(id ? { id } : {}),
      event,
    });
    expect(group.map((g) => g.input)).toEqual([
      wrapper('o1', { type: 'create', data: { n: 1 } }),
      wrapper('o1', { type: 'update', data: { n: 2 } }),
      wrapper('o1', { type: 'delete', data: { n: 2 } }),
      wrapper(undefined, { type: 'event', event: { type: 'ping', data: { at: 1 } } }),
      wrapper('o2', { type: 'create', data: 'two' }),
    ]);
    expect(group[0]?.input).not.toHaveProperty('_caller_worker_id');
    expect(group.every((g) => JSON.stringify(g.metadata) === '{"tenant":"t1"}')).toBe(true);
    expect(item).toEqual([wrapper('o2', { type: 'create', data: 'two' })]);
    for (const binding of bindings) binding.unregister();
  });

  it('serves a raw WebSocket client on the streams port: join → sync, then create/update/delete/event', async () => {
    const url = streamsUrl(engine);
    expect(url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
    await a.call('stream::set', { stream_name: 'live', group_id: 'g', item_id: 'seed', data: { seeded: true } });
    const ws = await StreamsClient.connect(url);
    ws.join('sub-group', 'live', 'g');
    const sync = await ws.next('sync');
    expect(sync).toEqual({
      type: 'stream',
      timestamp: expect.any(Number),
      streamName: 'live',
      groupId: 'g',
      event: { type: 'sync', data: [{ seeded: true }] },
    });
    ws.join('sub-item', 'live', 'g', 'i1');
    expect((await ws.next('sync', (f) => f.id === 'i1')).event).toEqual({ type: 'sync', data: null });

    await a.call('stream::set', { stream_name: 'live', group_id: 'g', item_id: 'i1', data: { v: 1 } });
    await a.call('stream::update', { stream_name: 'live', group_id: 'g', item_id: 'i1', ops: [{ type: 'set', path: 'v', value: 2 }] });
    await a.call('stream::set', { stream_name: 'live', group_id: 'g', item_id: 'i2', data: { v: 'other item' } });
    await a.call('stream::delete', { stream_name: 'live', group_id: 'g', item_id: 'i1' });
    await a.call('stream::send', { stream_name: 'live', group_id: 'g', id: 'i1', type: 'poke', data: 1 });
    await a.call('stream::send', { stream_name: 'live', group_id: 'g', type: 'broadcast', data: 2 });
    await a.call('stream::set', { stream_name: 'live', group_id: 'elsewhere', item_id: 'i1', data: 'not delivered' });
    await a.call('stream::send', { stream_name: 'live', group_id: 'g', type: 'last', data: 3 });
    // every subscription's messages in order: the group one sees all, the item one only i1 (spec §6.2)
    await ws.next('event', (f) => (f.event as any).event.type === 'last');
    await sleep(50);
    const seen = ws.pending.map((f: any) => `${f.id ?? '-'} ${f.event.type} ${JSON.stringify(f.event.data ?? f.event.event)}`);
    expect(seen).toEqual([
      'i1 create {"v":1}',
      'i1 create {"v":1}',
      'i1 update {"v":2}',
      'i1 update {"v":2}',
      'i2 create {"v":"other item"}',
      'i1 delete {"v":2}',
      'i1 delete {"v":2}',
      'i1 event {"type":"poke","data":1}',
      'i1 event {"type":"poke","data":1}',
      '- event {"type":"broadcast","data":2}',
    ]);
    ws.close();
  });
});

describe('streams socket: join/leave triggers, authorisation and bad frames', () => {
  let engine: EngineProcess;
  let client: KvClient;
  const joins: any[] = [];
  const leaves: any[] = [];

  beforeAll(async () => {
    engine = await startEngine({ workersYaml: `${IN_MEMORY}      auth_function: auth::streams\n` });
    client = await engSdk(engine.busUrl, 'gatekeeper');
    client.register('auth::streams', (input) => {
      if (input.query_params.token?.[0] === 'crash') throw new Error('auth backend down');
      return { context: { user: input.query_params.user?.[0] ?? null, header: input.headers['x-team'] ?? null, path: input.path } };
    });
    client.register('gate::join', (input) => {
      joins.push(input);
      if (input.stream_name === 'secret') return { unauthorized: true };
      if (input.stream_name === 'flaky') throw new Error('join handler failed');
      return { welcome: true };
    });
    client.register('gate::leave', (input) => {
      leaves.push(input);
    });
    client.bind('stream:join', 'gate::join', {});
    client.bind('stream:leave', 'gate::leave', { stream_name: 'ignored-filter' });
    await client.sync();
  });
  afterAll(async () => {
    await client?.close();
    await engine?.stop();
  });

  it('passes the auth_function context to join and leave triggers, which fire for every subscription', async () => {
    joins.length = 0;
    leaves.length = 0;
    const ws = await StreamsClient.connect(`${streamsUrl(engine)}/?user=ada&user=x`, { 'x-team': 'blue' });
    ws.join('s1', 'room', 'g1');
    ws.join('s2', 'room', 'g1', 'item-7');
    await ws.next('sync');
    await ws.next('sync');
    const context = { user: 'ada', header: 'blue', path: '/' };
    expect(joins).toEqual([
      { subscription_id: 's1', stream_name: 'room', group_id: 'g1', context },
      { subscription_id: 's2', stream_name: 'room', group_id: 'g1', id: 'item-7', context },
    ]);
    ws.leave('s1', 'room', 'g1');
    await waitFor(() => leaves.length === 1);
    expect(leaves[0]).toEqual({ subscription_id: 's1', stream_name: 'room', group_id: 'g1', context });
    // closing the socket leaves what is still joined
    ws.close();
    await waitFor(() => leaves.length === 2);
    expect(leaves[1]).toEqual({ subscription_id: 's2', stream_name: 'room', group_id: 'g1', id: 'item-7', context });
    // a left subscription receives nothing more
  });

  it('refuses a join when a join trigger answers {unauthorized: true} or fails, and delivers nothing to it', async () => {
    const ws = await StreamsClient.connect(streamsUrl(engine));
    ws.join('s-secret', 'secret', 'g');
    expect(await ws.next('unauthorized')).toEqual({
      type: 'stream',
      timestamp: expect.any(Number),
      streamName: 'secret',
      groupId: 'g',
      event: { type: 'unauthorized' },
    });
    ws.join('s-flaky', 'flaky', 'g');
    expect((await ws.next('unauthorized')).streamName).toBe('flaky');
    await client.call('stream::set', { stream_name: 'secret', group_id: 'g', item_id: 'x', data: 'classified' });
    ws.join('s-open', 'open', 'g');
    await ws.next('sync');
    await sleep(100);
    expect(ws.pending).toEqual([]);
    ws.close();
  });

  it('proceeds without context when the auth_function fails', async () => {
    joins.length = 0;
    const ws = await StreamsClient.connect(`${streamsUrl(engine)}/?token=crash`);
    ws.join('s', 'room', 'g');
    await ws.next('sync');
    expect(joins).toEqual([{ subscription_id: 's', stream_name: 'room', group_id: 'g' }]);
    ws.close();
  });

  it('drops malformed frames and keeps the connection', async () => {
    const ws = await StreamsClient.connect(streamsUrl(engine));
    ws.raw.send('not json');
    ws.raw.send({ type: 'join', data: { subscriptionId: 's', streamName: 'room' } }); // no groupId
    ws.raw.send({ type: 'subscribe', data: {} });
    ws.join('ok', 'room', 'g');
    const sync = await ws.next('sync');
    expect(sync.groupId).toBe('g');
    await sleep(50);
    expect(ws.pending).toEqual([]);
    expect(engine.logs()).toMatch(/streams socket: dropped a malformed message/);
    ws.close();
  });

  it('serves only the root path', async () => {
    await expect(RawClient.connect(`${streamsUrl(engine)}/stream/room/g`)).rejects.toThrow(/404/);
  });
});

describe('custom stream backends (stream::<op>(<name>) functions)', () => {
  let engine: EngineProcess;
  let backend: KvClient;
  let caller: KvClient;
  const items = new Map<string, unknown>();

  beforeAll(async () => {
    engine = await startEngine({ workersYaml: IN_MEMORY });
    backend = await iiiSdk(engine.busUrl, 'custom-backend');
    const k = (i: { group_id: string; item_id: string }) => `${i.group_id}/${i.item_id}`;
    createStream(backend.raw as never, 'ext', {
      get: async (input) => items.get(k(input)) ?? null,
      set: async (input) => {
        const old_value = items.get(k(input));
        items.set(k(input), input.data);
        return { old_value, new_value: input.data };
      },
      delete: async (input) => {
        const old_value = items.get(k(input));
        items.delete(k(input));
        return { old_value };
      },
      list: async (input) => [...items].filter(([key]) => key.startsWith(`${input.group_id}/`)).map(([, v]) => v),
      listGroups: async () => [...new Set([...items.keys()].map((key) => key.split('/')[0] as string))],
      update: async () => null,
    });
    await backend.sync();
    caller = await engSdk(engine.busUrl, 'custom-caller');
  });
  afterAll(async () => {
    await caller?.close();
    await backend?.close();
    await engine?.stop();
  });

  it('forwards every operation to the worker and still tells subscribers about the changes', async () => {
    const ws = await StreamsClient.connect(streamsUrl(engine));
    ws.join('sub', 'ext', 'g');
    expect((await ws.next('sync')).event.data).toEqual([]);
    const at = { stream_name: 'ext', group_id: 'g', item_id: 'a' };
    expect(await caller.call('stream::set', { ...at, data: { n: 1 } })).toEqual({ old_value: null, new_value: { n: 1 } });
    expect(items.get('g/a')).toEqual({ n: 1 });
    expect(await caller.call('stream::get', at)).toEqual({ n: 1 });
    expect(await caller.call('stream::list', { stream_name: 'ext', group_id: 'g' })).toEqual([{ n: 1 }]);
    expect(await caller.call('stream::list_groups', { stream_name: 'ext' })).toEqual(['g']);
    // createStream registers no update: the engine applies the ops over the backend's get and set
    expect(await caller.call('stream::update', { ...at, ops: [{ type: 'increment', path: 'n', by: 4 }] })).toEqual({
      old_value: { n: 1 },
      new_value: { n: 5 },
    });
    expect(items.get('g/a')).toEqual({ n: 5 });
    expect(await caller.call('stream::delete', at)).toEqual({ old_value: { n: 5 } });
    expect(items.has('g/a')).toBe(false);
    expect((await ws.next('create')).event.data).toEqual({ n: 1 });
    expect((await ws.next('update')).event.data).toEqual({ n: 5 });
    expect((await ws.next('delete')).event.data).toEqual({ n: 5 });
    // the built-in store was never touched
    expect(await caller.call('stream::list_all', {})).toEqual({ stream: [], count: 0 });
    ws.close();
  });
});

describe('stream functions refuse bad input', () => {
  let engine: EngineProcess;
  let client: KvClient;
  beforeAll(async () => {
    engine = await startEngine({ workersYaml: streamYaml('max_value_bytes: 1024') });
    client = await engSdk(engine.busUrl, 'stream-bad-input');
  });
  afterAll(async () => {
    await client?.close();
    await engine?.stop();
  });

  const item = { stream_name: 's', group_id: 'g', item_id: 'i' };
  const cases: Array<[string, unknown, RegExp]> = [
    ['stream::set', { group_id: 'g', item_id: 'i', data: 1 }, /stream_name: stream_name is required/],
    ['stream::set', { ...item }, /data: data is required/],
    ['stream::set', { ...item, item_id: 7, data: 1 }, /item_id: item_id must be a string/],
    ['stream::get', { stream_name: 's', group_id: 'g' }, /item_id: item_id is required/],
    ['stream::get', { ...item, group_id: '' }, /group_id: group_id must not be empty/],
    ['stream::delete', { ...item, stream_name: {} }, /stream_name: stream_name must be a string/],
    ['stream::list', { stream_name: 's' }, /group_id: group_id is required/],
    ['stream::list_groups', {}, /stream_name: stream_name is required/],
    ['stream::update', { ...item, ops: [{ type: 'increment', path: 'n', by: 0.5 }] }, /ops\.0\.by/],
    ['stream::update', { ...item }, /ops: ops is required/],
    ['stream::send', { stream_name: 's', group_id: 'g', data: 1 }, /type: type is required/],
    ['stream::send', { stream_name: 's', group_id: 'g', type: 'x', id: 5 }, /id: id must be a string/],
    ['stream::list_all', 'everything', /expected object/i],
  ];

  it.each(cases)('%s %j → deserialization_error', async (fn, payload, message) => {
    const error = await failure(client.call(fn, payload));
    expect(error.code).toBe('deserialization_error');
    expect(error.message).toMatch(message);
    expect(error.message).toContain(fn);
    expect(await client.call('stream::list_all', {})).toEqual({ stream: [], count: 0 });
  });

  it('refuses items over max_value_bytes and keeps them in <dataDir>/streams.db by default', async () => {
    const error = await failure(client.call('stream::set', { ...item, data: 'x'.repeat(2000) }));
    expect(error.code).toBe('VALUE_TOO_LARGE');
    expect(await client.call('stream::get', item)).toBeUndefined();
    expect(engine.logs()).toContain(`stream store: sqlite ${engine.dataDir}/streams.db`);
  });

  it('refuses a stream trigger without stream_name', async () => {
    client.register('st::noop', () => undefined);
    await client.sync();
    const error = await failure(
      client.call('engine::register_trigger', { trigger_type: 'stream', function_id: 'st::noop', config: { group_id: 'g' } }),
    );
    expect(error.code).toBe('trigger_registration_failed');
    expect(error.message).toContain('invalid stream trigger config: stream_name: stream_name is required');
  });
});

describe('redis streams shared by two engines', () => {
  let redis: RedisProcess;
  let one: EngineProcess;
  let two: EngineProcess;
  let a: KvClient;
  let b: KvClient;

  beforeAll(async () => {
    redis = await startRedis();
    const yaml = streamYaml(`adapter: { name: redis, config: { redis_url: "${redis.url}" } }`);
    one = await startEngine({ workersYaml: yaml });
    two = await startEngine({ workersYaml: yaml });
    a = await engSdk(one.busUrl, 'redis-stream-a');
    b = await iiiSdk(two.busUrl, 'redis-stream-b');
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await one?.stop();
    await two?.stop();
    await redis?.stop();
  });

  it('delivers changes made through one engine to sockets and triggers of the other', async () => {
    const triggered: any[] = [];
    b.register('st::remote', (input) => {
      triggered.push(input);
    });
    b.bind('stream', 'st::remote', { stream_name: 'shared' });
    await b.sync();
    const ws = await StreamsClient.connect(streamsUrl(two));
    ws.join('sub', 'shared', 'g');
    expect((await ws.next('sync')).event.data).toEqual([]);

    await a.call('stream::set', { stream_name: 'shared', group_id: 'g', item_id: 'x', data: { from: 'one' } });
    expect((await ws.next('create')).event.data).toEqual({ from: 'one' });
    await a.call('stream::send', { stream_name: 'shared', group_id: 'g', type: 'hello', data: 1 });
    expect((await ws.next('event')).event.event).toEqual({ type: 'hello', data: 1 });
    await waitFor(() => triggered.length >= 2);
    expect(triggered.map((t) => t.event.type)).toEqual(['create', 'event']);

    // and the data itself is shared
    expect(await b.call('stream::get', { stream_name: 'shared', group_id: 'g', item_id: 'x' })).toEqual({ from: 'one' });
    expect(await b.call('stream::list_all', {})).toEqual({ stream: [{ id: 'shared', groups: ['g'] }], count: 1 });
    // a change made on the same engine is delivered once, not echoed back through Redis
    await b.call('stream::set', { stream_name: 'shared', group_id: 'g', item_id: 'y', data: 2 });
    await ws.next('create', (f) => f.id === 'y');
    await sleep(150);
    expect(ws.pending).toEqual([]);
    ws.close();
  });
});
