/**
 * The `bridge` adapter of eng-state and eng-stream (spec §4.4, §4.5, §7.2): two front engines keep
 * no data of their own and forward state::* and stream::* to a backend engine. iii-sdk 0.22.1 and
 * 0.11.6 workers on a front see iii's results; state triggers on a front fire for changes made
 * anywhere; stream changes reach the socket subscribers and stream triggers of every front.
 */
import { registerWorker as registerWorker11 } from 'iii-sdk-0.11.6';
import { registerWorker as registerWorker22 } from 'iii-sdk-0.22.1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import { StreamsClient } from './kv-clients.ts';

type Sdk = ReturnType<typeof registerWorker22>;
const SDKS: Array<[string, (url: string, name: string) => Sdk]> = [
  [
    'iii-sdk 0.22.1',
    (url, name) => registerWorker22(url, { workerName: name, otel: { enabled: false }, reconnectionConfig: { maxRetries: 0 } }),
  ],
  [
    'iii-sdk 0.11.6',
    (url, name) =>
      registerWorker11(url, { workerName: name, otel: { enabled: false }, reconnectionConfig: { maxRetries: 0 } }) as unknown as Sdk,
  ],
];

const BACKEND = `  - name: eng-pubsub
  - name: eng-state
    config: { adapter: { name: kv, config: { store_method: in_memory } } }
  - name: eng-stream
    config:
      port: {{STREAMS_PORT}}
      adapter: { name: kv, config: { store_method: in_memory } }
`;

const front = (backendBus: string) => `  - name: eng-state
    config:
      adapter: { name: bridge, config: { bridge_url: ${backendBus}, timeout_ms: 5000 } }
  - name: eng-stream
    config:
      port: {{STREAMS_PORT}}
      adapter: { name: bridge, config: { bridge_url: ${backendBus} } }
`;

async function failure(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (err) {
    return { code: (err as { code: string }).code, message: (err as Error).message };
  }
  throw new Error('expected the call to fail, it succeeded');
}

let backend: EngineProcess;
let frontA: EngineProcess;
let frontB: EngineProcess;

beforeAll(async () => {
  const readyTimeoutMs = 60_000;
  backend = await startEngine({ workersYaml: BACKEND, readyTimeoutMs });
  frontA = await startEngine({ workersYaml: front(backend.busUrl), readyTimeoutMs });
  frontB = await startEngine({ workersYaml: front(backend.busUrl), readyTimeoutMs });
}, 200_000);
afterAll(async () => {
  await Promise.all([frontA?.stop(), frontB?.stop()]);
  await backend?.stop();
});

describe.each(SDKS)('bridged state and streams with %s', (label, sdk) => {
  let viaA: Sdk;
  let onBackend: Sdk;
  const scope = `bridge-scope-${label.replace(/\W/g, '')}`;
  const stream = `bridge-stream-${label.replace(/\W/g, '')}`;

  beforeAll(async () => {
    viaA = sdk(frontA.busUrl, 'front-client');
    onBackend = sdk(backend.busUrl, 'backend-client');
    await viaA.trigger({ function_id: 'engine::functions::list', payload: {} });
    await onBackend.trigger({ function_id: 'engine::functions::list', payload: {} });
  });
  afterAll(async () => {
    await viaA?.shutdown();
    await onBackend?.shutdown();
  });

  it('state::set, get, delete and list answer as iii does, and the data lives in the backend', async () => {
    expect(await viaA.trigger({ function_id: 'state::set', payload: { scope, key: 'item', value: { name: 'Test', value: 42 } } })).toEqual({
      old_value: null,
      new_value: { name: 'Test', value: 42 },
    });
    const overwritten = (await viaA.trigger({
      function_id: 'state::set',
      payload: { scope, key: 'item', value: { value: 2, updated: true } },
    })) as Record<string, unknown>;
    expect(overwritten).toEqual({ old_value: { name: 'Test', value: 42 }, new_value: { value: 2, updated: true } });
    expect(await viaA.trigger({ function_id: 'state::get', payload: { scope, key: 'item' } })).toEqual({ value: 2, updated: true });
    expect(await onBackend.trigger({ function_id: 'state::get', payload: { scope, key: 'item' } })).toEqual({ value: 2, updated: true });
    expect(await viaA.trigger({ function_id: 'state::get', payload: { scope, key: 'missing' } })).toBeUndefined();
    expect(
      await viaA.trigger({
        function_id: 'state::update',
        payload: { scope, key: 'item', ops: [{ type: 'increment', path: 'value', by: 3 }] },
      }),
    ).toEqual({ old_value: { value: 2, updated: true }, new_value: { value: 5, updated: true } });

    const listScope = `${scope}-list`;
    for (const id of ['i3', 'i1', 'i2'])
      await viaA.trigger({ function_id: 'state::set', payload: { scope: listScope, key: id, value: { id } } });
    const listed = (await viaA.trigger({ function_id: 'state::list', payload: { scope: listScope } })) as Array<{ id: string }>;
    expect(listed.map((i) => i.id).sort()).toEqual(['i1', 'i2', 'i3']);
    const { groups } = (await viaA.trigger({ function_id: 'state::list_groups', payload: {} })) as { groups: string[] };
    expect(groups).toEqual(expect.arrayContaining([scope, listScope]));

    await viaA.trigger({ function_id: 'state::delete', payload: { scope, key: 'item' } });
    expect(await viaA.trigger({ function_id: 'state::get', payload: { scope, key: 'item' } })).toBeUndefined();
    expect(await onBackend.trigger({ function_id: 'state::get', payload: { scope, key: 'item' } })).toBeUndefined();
    await expect(viaA.trigger({ function_id: 'state::delete', payload: { scope, key: 'never-there' } })).resolves.toBeUndefined();
    // bad input is refused by the front, naming the field, before anything is sent
    expect(await failure(viaA.trigger({ function_id: 'state::set', payload: { key: 'k', value: 1 } }))).toMatchObject({
      code: 'deserialization_error',
      message: expect.stringContaining('scope is required'),
    });
  });

  it('stream::set, get, delete, list and list_groups answer as iii does, from the backend', async () => {
    const address = { stream_name: stream, group_id: 'g', item_id: 'item' };
    expect(await viaA.trigger({ function_id: 'stream::set', payload: { ...address, data: { value: 1 } } })).toEqual({
      old_value: null,
      new_value: { value: 1 },
    });
    expect(await viaA.trigger({ function_id: 'stream::set', payload: { ...address, data: { value: 2, updated: true } } })).toEqual({
      old_value: { value: 1 },
      new_value: { value: 2, updated: true },
    });
    expect(await viaA.trigger({ function_id: 'stream::get', payload: address })).toEqual({ value: 2, updated: true });
    expect(await onBackend.trigger({ function_id: 'stream::get', payload: address })).toEqual({ value: 2, updated: true });
    expect(await viaA.trigger({ function_id: 'stream::get', payload: { ...address, item_id: 'missing' } })).toBeUndefined();
    for (const id of ['s1', 's2', 's3']) {
      await viaA.trigger({ function_id: 'stream::set', payload: { stream_name: stream, group_id: 'list', item_id: id, data: { id } } });
    }
    const items = (await viaA.trigger({ function_id: 'stream::list', payload: { stream_name: stream, group_id: 'list' } })) as Array<{
      id: string;
    }>;
    expect(items.map((i) => i.id).sort()).toEqual(['s1', 's2', 's3']);
    expect(await viaA.trigger({ function_id: 'stream::list_groups', payload: { stream_name: stream } })).toEqual(['g', 'list']);
    expect(await viaA.trigger({ function_id: 'stream::delete', payload: address })).toEqual({ old_value: { value: 2, updated: true } });
    expect(await viaA.trigger({ function_id: 'stream::get', payload: address })).toBeUndefined();
    expect(await viaA.trigger({ function_id: 'stream::delete', payload: { ...address, item_id: 'never-there' } })).toEqual({
      old_value: null,
    });
  });
});

describe('bridged triggers and stream events', () => {
  let a: Sdk;
  let b: Sdk;
  let direct: Sdk;

  beforeAll(async () => {
    a = SDKS[0]?.[1](frontA.busUrl, 'trigger-a') as Sdk;
    b = SDKS[0]?.[1](frontB.busUrl, 'trigger-b') as Sdk;
    direct = SDKS[0]?.[1](backend.busUrl, 'direct') as Sdk;
    for (const c of [a, b, direct]) await c.trigger({ function_id: 'engine::functions::list', payload: {} });
  });
  afterAll(async () => {
    for (const c of [a, b, direct]) await c?.shutdown();
  });

  it("fires a front's state triggers for changes made through it, through another front and on the backend", async () => {
    const seen: Array<Record<string, unknown>> = [];
    a.registerFunction('bridge::on-state', async (event: Record<string, unknown>) => {
      seen.push(event);
      return null;
    });
    const binding = a.registerTrigger({ type: 'state', function_id: 'bridge::on-state', config: { scope: 'watched' } });
    await a.trigger({ function_id: 'engine::functions::list', payload: {} });
    await a.trigger({ function_id: 'state::set', payload: { scope: 'watched', key: 'k1', value: 1 } });
    await b.trigger({ function_id: 'state::set', payload: { scope: 'watched', key: 'k1', value: 2 } });
    await direct.trigger({ function_id: 'state::delete', payload: { scope: 'watched', key: 'k1' } });
    await a.trigger({ function_id: 'state::set', payload: { scope: 'other', key: 'k1', value: 'filtered out' } });
    await waitFor(() => seen.length >= 3);
    expect(seen.map(({ event_type, key, old_value, new_value }) => ({ event_type, key, old_value, new_value }))).toEqual([
      { event_type: 'state:created', key: 'k1', old_value: null, new_value: 1 },
      { event_type: 'state:updated', key: 'k1', old_value: 1, new_value: 2 },
      { event_type: 'state:deleted', key: 'k1', old_value: 2, new_value: null },
    ]);
    await new Promise((r) => setTimeout(r, 200));
    expect(seen).toHaveLength(3);
    binding.unregister();
  });

  it("delivers stream changes to every front's subscribers and stream triggers", async () => {
    const socketB = await StreamsClient.connect(frontB.addresses.streams?.url as string);
    const fired: Array<Record<string, any>> = [];
    a.registerFunction('bridge::on-stream', async (message: Record<string, any>) => {
      fired.push(message);
      return null;
    });
    const binding = a.registerTrigger({ type: 'stream', function_id: 'bridge::on-stream', config: { stream_name: 'chat' } });
    try {
      await a.trigger({
        function_id: 'stream::set',
        payload: { stream_name: 'chat', group_id: 'room', item_id: 'seed', data: { text: 'hi' } },
      });
      socketB.join('sub-1', 'chat', 'room');
      const sync = await socketB.next('sync');
      expect(sync.event.data).toEqual([{ text: 'hi' }]);

      await a.trigger({
        function_id: 'stream::set',
        payload: { stream_name: 'chat', group_id: 'room', item_id: 'm1', data: { text: 'from A' } },
      });
      const created = await socketB.next('create', (f) => f.id === 'm1');
      expect(created).toMatchObject({ streamName: 'chat', groupId: 'room', id: 'm1', event: { type: 'create', data: { text: 'from A' } } });
      expect(created).not.toHaveProperty('eng_origin');

      await b.trigger({
        function_id: 'stream::update',
        payload: { stream_name: 'chat', group_id: 'room', item_id: 'm1', ops: [{ type: 'set', path: 'text', value: 'edited on B' }] },
      });
      await socketB.next('update', (f) => f.id === 'm1');
      // B's change reaches A through the backend's topic, asynchronously
      await waitFor(() => fired.some((m) => m.event.type === 'update'));
      await a.trigger({
        function_id: 'stream::send',
        payload: { stream_name: 'chat', group_id: 'room', type: 'typing', data: { who: 'ada' } },
      });
      expect((await socketB.next('event')).event).toEqual({ type: 'event', event: { type: 'typing', data: { who: 'ada' } } });

      // A's trigger saw its own changes once and B's change once
      await waitFor(() => fired.length >= 4);
      await new Promise((r) => setTimeout(r, 200));
      expect(fired.map((m) => [m.id ?? null, m.event.type])).toEqual([
        ['seed', 'create'],
        ['m1', 'create'],
        ['m1', 'update'],
        [null, 'event'],
      ]);
      expect(fired[2]?.event.data).toEqual({ text: 'edited on B' });
    } finally {
      binding.unregister();
      socketB.close();
    }
  });

  it('fails fast with BRIDGE_UNAVAILABLE naming the URL while the backend is down, and recovers when it is back', async () => {
    await backend.stop();
    await waitFor(
      async () =>
        (await failure(a.trigger({ function_id: 'state::get', payload: { scope: 's', key: 'k' } }))).code === 'BRIDGE_UNAVAILABLE',
      5000,
    );
    const down = await failure(a.trigger({ function_id: 'stream::get', payload: { stream_name: 'x', group_id: 'g', item_id: 'i' } }));
    expect(down.code).toBe('BRIDGE_UNAVAILABLE');
    expect(down.message).toContain(backend.busUrl);
    expect(frontA.logs()).toContain(`bridge to ${backend.busUrl} lost; reconnecting`);
    await backend.restart();
    await waitFor(
      async () => {
        try {
          return (await a.trigger({ function_id: 'state::set', payload: { scope: 'after', key: 'k', value: 'back' } })) !== undefined;
        } catch {
          return false;
        }
      },
      30_000,
      200,
    );
    const fresh = SDKS[0]?.[1](backend.busUrl, 'direct-again') as Sdk;
    try {
      expect(await fresh.trigger({ function_id: 'state::get', payload: { scope: 'after', key: 'k' } })).toBe('back');
    } finally {
      await fresh.shutdown();
    }
  }, 120_000);
});

describe('eng-bridge (iii-bridge): expose and forward', () => {
  let edge: EngineProcess;
  let edgeWorker: Sdk;
  let hq: Sdk;

  beforeAll(async () => {
    edge = await startEngine({
      readyTimeoutMs: 60_000,
      workersYaml: `  - name: iii-bridge
    config:
      url: ${backend.busUrl}
      service_id: edge-bridge
      expose:
        - { local_function: "edge::hello", remote_function: "edge::remote-hello" }
      forward:
        - { local_function: "hq::state::get", remote_function: "state::get", timeout_ms: 2000 }
`,
    });
    edgeWorker = SDKS[0]?.[1](edge.busUrl, 'edge-worker') as Sdk;
    edgeWorker.registerFunction('edge::hello', async (input: { name: string }) => ({ hi: input.name, from: 'edge' }));
    await edgeWorker.trigger({ function_id: 'engine::functions::list', payload: {} });
    hq = SDKS[1]?.[1](backend.busUrl, 'hq-worker') as Sdk;
    await hq.trigger({ function_id: 'engine::functions::list', payload: {} });
  }, 120_000);
  afterAll(async () => {
    await edgeWorker?.shutdown();
    await hq?.shutdown();
    await edge?.stop();
  });

  it('exposes a local function on the other engine, under the configured name', async () => {
    await waitFor(async () => {
      const { functions } = (await hq.trigger({ function_id: 'engine::functions::list', payload: {} })) as {
        functions: Array<{ function_id: string; worker_name: string }>;
      };
      return functions.find((f) => f.function_id === 'edge::remote-hello')?.worker_name === 'edge-bridge';
    }, 10_000);
    expect(await hq.trigger({ function_id: 'edge::remote-hello', payload: { name: 'hq' } })).toEqual({ hi: 'hq', from: 'edge' });
  });

  it('forwards a local id to the other engine, and bridge.invoke / bridge.invoke_async reach anything there', async () => {
    await hq.trigger({ function_id: 'state::set', payload: { scope: 'hq', key: 'k', value: { v: 1 } } });
    expect(await edgeWorker.trigger({ function_id: 'hq::state::get', payload: { scope: 'hq', key: 'k' } })).toEqual({ v: 1 });
    expect(
      await edgeWorker.trigger({ function_id: 'bridge.invoke', payload: { function_id: 'state::get', data: { scope: 'hq', key: 'k' } } }),
    ).toEqual({ v: 1 });
    expect(
      await edgeWorker.trigger({
        function_id: 'bridge.invoke_async',
        payload: { function_id: 'state::set', data: { scope: 'hq', key: 'k2', value: 'async' } },
      }),
    ).toBeNull();
    await waitFor(async () => (await hq.trigger({ function_id: 'state::get', payload: { scope: 'hq', key: 'k2' } })) === 'async');
    expect(await failure(edgeWorker.trigger({ function_id: 'bridge.invoke', payload: {} }))).toMatchObject({
      code: 'deserialization_error',
      message: expect.stringContaining('function_id is required'),
    });
  });

  it('refuses to start a forward whose local id another module serves', async () => {
    await expect(
      startEngine({
        readyTimeoutMs: 60_000,
        workersYaml: `  - name: eng-state
  - name: eng-bridge
    config:
      url: ${backend.busUrl}
      forward: [{ local_function: "state::get", remote_function: "state::get" }]
`,
      }),
    ).rejects.toThrow(/forward local_function state::get is already served by eng-state/);
  }, 90_000);
});

describe('a bridge pointed at its own engine', () => {
  it('refuses to call itself and says why, instead of looping', async () => {
    const loop = await startEngine({
      readyTimeoutMs: 60_000,
      workersYaml: `  - name: eng-state
    config:
      adapter: { name: bridge, config: { bridge_url: "ws://127.0.0.1:{{BUS_PORT}}", connect_timeout_ms: 0 } }
`,
    });
    const client = SDKS[0]?.[1](loop.busUrl, 'loop-client') as Sdk;
    try {
      await waitFor(() => loop.logs().includes("is this engine's own bus"), 10_000);
      const error = await failure(client.trigger({ function_id: 'state::get', payload: { scope: 's', key: 'k' } }));
      expect(error.code).toBe('BRIDGE_UNAVAILABLE');
      expect(error.message).toContain("this engine's own bus");
    } finally {
      await client.shutdown();
      await loop.stop();
    }
  }, 90_000);
});
