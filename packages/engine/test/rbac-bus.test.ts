/**
 * An RBAC worker bus beside the open one (spec §2.13): two eng-worker-manager entries in one
 * config. A trusted iii-sdk worker on the open bus provides the auth function, the middleware and
 * the registration hooks; iii-sdk 0.22.1 and 0.11.6 workers (and raw clients) on the RBAC bus are
 * authenticated, allowed, forbidden, prefixed and hooked; the open bus is unaffected.
 */
import { registerWorker as registerWorker11 } from 'iii-sdk-0.11.6';
import { registerWorker as registerWorker22 } from 'iii-sdk-0.22.1';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import { RawClient } from '../../../test/raw-client.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Sdk = ReturnType<typeof registerWorker22>;
type Connect = (url: string, name: string, headers?: Record<string, string>) => Sdk;
const SDKS: Array<[string, Connect]> = [
  [
    'iii-sdk 0.22.1',
    (url, name, headers) =>
      registerWorker22(url, { workerName: name, headers, otel: { enabled: false }, reconnectionConfig: { maxRetries: 0 } }),
  ],
  [
    'iii-sdk 0.11.6',
    (url, name, headers) =>
      registerWorker11(url, {
        workerName: name,
        headers,
        otel: { enabled: false },
        reconnectionConfig: { maxRetries: 0 },
      }) as unknown as Sdk,
  ],
];

const RBAC_BUS = `  - name: iii-worker-manager#rbac
    config:
      port: {{RBAC_PORT}}
      middleware_function_id: test::rbac::middleware
      rbac:
        auth_function_id: test::rbac::auth
        on_function_registration_function_id: test::rbac::on-function-reg
        on_trigger_registration_function_id: test::rbac::on-trigger-reg
        on_trigger_type_registration_function_id: test::rbac::on-trigger-type-reg
        expose_functions:
          - match("test::ew::public::*")
          - match("engine::functions::list")
          - metadata:
              ew_public: true
`;

async function failure(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (err) {
    return { code: (err as { code: string }).code, message: (err as Error).message };
  }
  throw new Error('expected the call to fail, it succeeded');
}

describe.each(SDKS)('RBAC bus with %s', (_label, connect) => {
  let engine: EngineProcess;
  let rbacUrl: string;
  let trusted: Sdk;
  const authCalls: Array<Record<string, any>> = [];
  const middlewareCalls: Array<Record<string, any>> = [];
  const hookCalls: Record<string, Array<Record<string, any>>> = { fn: [], trigger: [], type: [] };

  beforeAll(async () => {
    engine = await startEngine({ workersYaml: RBAC_BUS, readyTimeoutMs: 60_000 });
    rbacUrl = `ws://127.0.0.1:${engine.ports.RBAC}`;
    trusted = connect(engine.busUrl, 'trusted');
    trusted.registerFunction('test::rbac::auth', async (input: any) => {
      authCalls.push(input);
      const token = input.headers?.['x-test-token'];
      if (!token)
        return {
          allowed_functions: [],
          forbidden_functions: [],
          allow_trigger_type_registration: false,
          context: { role: 'anonymous', user_id: 'anonymous' },
        };
      if (token === 'valid-token') {
        return {
          allowed_functions: ['test::ew::valid-token-echo'],
          forbidden_functions: [],
          allow_trigger_type_registration: true,
          context: { role: 'admin', user_id: 'user-1' },
        };
      }
      if (token === 'restricted-token') {
        return { allowed_functions: [], forbidden_functions: ['test::ew::public::*'], context: { role: 'restricted', user_id: 'user-2' } };
      }
      if (token === 'tenant-token') {
        return {
          allowed_functions: [],
          function_registration_prefix: 'tenant-a',
          allowed_trigger_types: ['test-rbac-trigger'],
          context: { user_id: 'user-3' },
        };
      }
      if (token === 'no-functions') return { allow_function_registration: false, context: { user_id: 'user-4' } };
      throw new Error('invalid token');
    });
    trusted.registerFunction('test::rbac::middleware', async (input: any) => {
      middlewareCalls.push(input);
      const payload = { ...input.payload, _intercepted: true, _caller: input.context.user_id };
      return trusted.trigger({ function_id: input.function_id, payload });
    });
    trusted.registerFunction('test::rbac::on-function-reg', async (input: any) => {
      hookCalls.fn?.push(input);
      if (input.function_id.startsWith('renamed::')) return { function_id: input.function_id.replace('renamed::', 'mapped::') };
      return !input.function_id.startsWith('denied::');
    });
    trusted.registerFunction('test::rbac::on-trigger-type-reg', async (input: any) => {
      hookCalls.type?.push(input);
      return !input.trigger_type_id.startsWith('denied-tt::');
    });
    trusted.registerFunction('test::rbac::on-trigger-reg', async (input: any) => {
      hookCalls.trigger?.push(input);
      return !input.function_id.startsWith('denied-trig::');
    });
    trusted.registerTriggerType(
      { id: 'test-rbac-trigger', description: 'RBAC test trigger' },
      { async registerTrigger() {}, async unregisterTrigger() {} },
    );
    trusted.registerFunction('test::ew::public::echo', async (data: any) => ({ echoed: data }));
    trusted.registerFunction('test::ew::valid-token-echo', async (data: any) => ({ echoed: data, valid_token: true }));
    trusted.registerFunction('test::ew::meta-public', async (data: any) => ({ meta_echoed: data }), { metadata: { ew_public: true } });
    trusted.registerFunction('test::ew::private', async () => ({ private: true }));
    await trusted.trigger({ function_id: 'engine::functions::list', payload: {} });
  }, 90_000);

  afterAll(async () => {
    await trusted?.shutdown();
    await engine?.stop();
  });

  beforeEach(() => {
    authCalls.length = 0;
    middlewareCalls.length = 0;
    for (const list of Object.values(hookCalls)) list.length = 0;
  });

  async function withClient<T>(headers: Record<string, string> | undefined, run: (client: Sdk) => Promise<T>, url = rbacUrl): Promise<T> {
    const client = connect(url, 'rbac-client', headers);
    try {
      return await run(client);
    } finally {
      await client.shutdown();
    }
  }

  it('announces both buses and keeps the open one as the engine address', () => {
    expect(engine.addresses.bus?.port).toBe(engine.busPort);
    const buses = engine.addresses.buses as unknown as Array<{ port: number; rbac: boolean; middleware_function_id: string | null }>;
    expect(buses.map((b) => [b.port, b.rbac])).toEqual([
      [engine.busPort, false],
      [engine.ports.RBAC, true],
    ]);
    expect(buses[1]?.middleware_function_id).toBe('test::rbac::middleware');
  });

  it('authenticates once per connection with headers, query and address; a granted function goes through the middleware', async () => {
    const result = await withClient({ 'x-test-token': 'valid-token' }, (client) =>
      client.trigger({ function_id: 'test::ew::valid-token-echo', payload: { msg: 'hello' } }),
    );
    expect(result.valid_token).toBe(true);
    expect(result.echoed).toMatchObject({ msg: 'hello', _intercepted: true, _caller: 'user-1' });
    expect(authCalls).toHaveLength(1);
    expect(authCalls[0]?.headers['x-test-token']).toBe('valid-token');
    expect(authCalls[0]?.ip_address).toMatch(/127\.0\.0\.1/);
    expect(middlewareCalls).toHaveLength(1);
    expect(middlewareCalls[0]).toMatchObject({
      function_id: 'test::ew::valid-token-echo',
      payload: { msg: 'hello' },
      context: { role: 'admin', user_id: 'user-1' },
    });

    const raw = await RawClient.connect(`${rbacUrl}/?tenant=acme&tag=a&tag=b`, { headers: { 'x-test-token': 'valid-token' } });
    try {
      await raw.next((f) => f.type === 'workerregistered');
      expect(authCalls.at(-1)?.query_params).toEqual({ tenant: ['acme'], tag: ['a', 'b'] });
    } finally {
      await raw.close();
    }
  });

  it('allows functions exposed by match() and by metadata, and forbids the rest with the FORBIDDEN message', async () => {
    await withClient(undefined, async (client) => {
      expect(await client.trigger({ function_id: 'test::ew::public::echo', payload: { a: 1 } })).toMatchObject({
        echoed: { a: 1, _caller: 'anonymous' },
      });
      expect(await client.trigger({ function_id: 'test::ew::meta-public', payload: { b: 2 } })).toMatchObject({ meta_echoed: { b: 2 } });
      const denied = await failure(client.trigger({ function_id: 'test::ew::private', payload: {} }));
      expect(denied.code).toBe('FORBIDDEN');
      expect(denied.message).toContain("function 'test::ew::private' not allowed (add to rbac.expose_functions)");
      // a grant of another session is not this one's
      expect((await failure(client.trigger({ function_id: 'test::ew::valid-token-echo', payload: {} }))).code).toBe('FORBIDDEN');
      // the listing shows what this connection may call, and engine built-ins skip the middleware
      const before = middlewareCalls.length;
      const { functions } = (await client.trigger({ function_id: 'engine::functions::list', payload: {} })) as {
        functions: Array<{ function_id: string }>;
      };
      const ids = functions.map((f) => f.function_id);
      expect(ids).toEqual(expect.arrayContaining(['test::ew::public::echo', 'test::ew::meta-public']));
      expect(ids).not.toContain('test::ew::private');
      expect(ids).not.toContain('test::rbac::auth');
      expect(middlewareCalls.length).toBe(before);
      // the infrastructure functions stay callable
      expect(await client.trigger({ function_id: 'engine::channels::create', payload: {} })).toHaveProperty('reader');
    });
    expect(middlewareCalls.map((c) => c.function_id)).toEqual(['test::ew::public::echo', 'test::ew::meta-public']);
  });

  it('forbidden_functions of the auth result win over expose_functions', async () => {
    await withClient({ 'x-test-token': 'restricted-token' }, async (client) => {
      const denied = await failure(client.trigger({ function_id: 'test::ew::public::echo', payload: {} }));
      expect(denied.code).toBe('FORBIDDEN');
      expect(denied.message).toContain('forbidden for this connection by the auth function');
      expect(await client.trigger({ function_id: 'test::ew::meta-public', payload: {} })).toHaveProperty('meta_echoed');
    });
  });

  it('refuses a connection the auth function rejects: an AUTH_ERROR frame, then a close, and no worker id', async () => {
    const raw = await RawClient.connect(rbacUrl, { headers: { 'x-test-token': 'stolen' } });
    await raw.waitClosed();
    expect(raw.closeInfo?.code).toBe(1008);
    expect(raw.frames.map((f) => f.type)).toEqual(['error']);
    expect(raw.frames[0]?.error).toMatchObject({ code: 'AUTH_ERROR', message: expect.stringContaining('invalid token') });
    expect(engine.logs()).toContain('refused: auth function test::rbac::auth failed');
    // the telemetry socket of an RBAC bus goes through the same step
    const otel = await RawClient.connect(`${rbacUrl}/otel`, { headers: { 'x-test-token': 'stolen' } });
    await otel.waitClosed();
    expect(otel.closeInfo?.code).toBe(1008);
  });

  it('runs the registration hooks and denies what they deny', async () => {
    await withClient({ 'x-test-token': 'valid-token' }, async (client) => {
      client.registerTriggerType(
        { id: 'denied-tt::test', description: 'Should be denied' },
        { async registerTrigger() {}, async unregisterTrigger() {} },
      );
      client.registerTrigger({ type: 'test-rbac-trigger', function_id: 'denied-trig::my-fn', config: { key: 'value' } });
      client.registerFunction('denied::blocked-fn', async () => ({ should: 'not reach' }));
      client.registerFunction('allowed::fn', async () => ({ reached: true }));
      await waitFor(() => hookCalls.fn?.length === 2 && hookCalls.type?.length === 1 && hookCalls.trigger?.length === 1);
      expect(hookCalls.type?.[0]).toMatchObject({
        trigger_type_id: 'denied-tt::test',
        description: 'Should be denied',
        context: { user_id: 'user-1' },
      });
      expect(hookCalls.trigger?.[0]).toMatchObject({
        trigger_type: 'test-rbac-trigger',
        function_id: 'denied-trig::my-fn',
        config: { key: 'value' },
        context: { user_id: 'user-1' },
      });
      expect(hookCalls.fn?.map((c) => c.function_id).sort()).toEqual(['allowed::fn', 'denied::blocked-fn']);
      // the allowed registration completes after its hook answered
      const ids = await waitFor(async () => {
        const { functions } = (await trusted.trigger({ function_id: 'engine::functions::list', payload: {} })) as {
          functions: Array<{ function_id: string }>;
        };
        const listed = functions.map((f) => f.function_id);
        return listed.includes('allowed::fn') ? listed : null;
      }, 30_000);
      expect(ids).toContain('allowed::fn');
      expect(ids).not.toContain('denied::blocked-fn');
      const { triggers } = (await trusted.trigger({ function_id: 'engine::triggers::list', payload: { include_internal: true } })) as {
        triggers: Array<{ id: string }>;
      };
      expect(triggers.map((t) => t.id)).not.toContain('denied-tt::test');
      expect((await failure(client.trigger({ function_id: 'denied::blocked-fn', payload: {} }))).code).toMatch(
        /FORBIDDEN|function_not_found/,
      );
      // the open bus reaches what the RBAC worker registered
      expect(await trusted.trigger({ function_id: 'allowed::fn', payload: {} })).toEqual({ reached: true });
    });
  });

  it('tells a raw worker why: registrationrejected and triggerregistrationresult with FORBIDDEN', async () => {
    const raw = await RawClient.connect(rbacUrl);
    try {
      await raw.next((f) => f.type === 'workerregistered');
      raw.send({ type: 'registertriggertype', id: 'anon-type', description: 'x' });
      const typeRefusal = await raw.next((f) => f.type === 'registrationrejected');
      expect(typeRefusal).toMatchObject({
        code: 'FORBIDDEN',
        trigger_type: 'anon-type',
        message: expect.stringContaining('allow_trigger_type_registration'),
      });
      // the hook is not asked when the auth result already says no
      expect(hookCalls.type).toHaveLength(0);
      raw.send({
        type: 'registertrigger',
        id: 'bind-private',
        trigger_type: 'test-rbac-trigger',
        function_id: 'test::ew::private',
        config: {},
      });
      const bindRefusal = await raw.next((f) => f.type === 'triggerregistrationresult');
      expect(bindRefusal).toMatchObject({
        id: 'bind-private',
        error: { code: 'FORBIDDEN', message: expect.stringContaining("function 'test::ew::private' not allowed") },
      });
      raw.send({ type: 'registerfunction', id: 'denied::raw' });
      expect(await raw.next((f) => f.type === 'registrationrejected')).toMatchObject({
        code: 'FORBIDDEN',
        function_id: 'denied::raw',
        message: expect.stringContaining('test::rbac::on-function-reg'),
      });
      // a worker may bind a trigger to its own function
      raw.send({ type: 'registerfunction', id: 'anon::own' });
      raw.send({ type: 'registertrigger', id: 'bind-own', trigger_type: 'test-rbac-trigger', function_id: 'anon::own', config: {} });
      await waitFor(async () => {
        const { registered_triggers } = (await trusted.trigger({ function_id: 'engine::registered-triggers::list', payload: {} })) as {
          registered_triggers: Array<{ id: string; function_id: string }>;
        };
        return registered_triggers.some((t) => t.id === 'bind-own' && t.function_id === 'anon::own');
      });
      expect(raw.frames.filter((f) => f.type === 'triggerregistrationresult')).toEqual([]);
    } finally {
      await raw.close();
    }
    const noFunctions = await RawClient.connect(rbacUrl, { headers: { 'x-test-token': 'no-functions' } });
    try {
      noFunctions.send({ type: 'registerfunction', id: 'nope::fn' });
      expect(await noFunctions.next((f) => f.type === 'registrationrejected')).toMatchObject({
        message: expect.stringContaining('allow_function_registration: false'),
      });
    } finally {
      await noFunctions.close();
    }
  });

  it('registers under function_registration_prefix and calls the worker back by its own name', async () => {
    const calls: unknown[] = [];
    await withClient({ 'x-test-token': 'tenant-token' }, async (client) => {
      client.registerFunction('orders::list', async (input: any) => {
        calls.push(input);
        return { orders: [1, 2], for: input.who };
      });
      client.registerFunction('renamed::thing', async () => 'mapped ok');
      await waitFor(async () => {
        const { functions } = (await trusted.trigger({ function_id: 'engine::functions::list', payload: {} })) as {
          functions: Array<{ function_id: string }>;
        };
        const ids = functions.map((f) => f.function_id);
        return ids.includes('tenant-a::orders::list') && ids.includes('tenant-a::mapped::thing');
      });
      const { functions } = (await trusted.trigger({ function_id: 'engine::functions::list', payload: {} })) as {
        functions: Array<{ function_id: string }>;
      };
      expect(functions.map((f) => f.function_id)).not.toContain('orders::list');
      // another worker calls the prefixed id; the handler registered as orders::list answers
      expect(await trusted.trigger({ function_id: 'tenant-a::orders::list', payload: { who: 'open' } })).toEqual({
        orders: [1, 2],
        for: 'open',
      });
      expect(await trusted.trigger({ function_id: 'tenant-a::mapped::thing', payload: {} })).toBe('mapped ok');
      // the worker reaches its own function by the name it registered
      expect(await client.trigger({ function_id: 'orders::list', payload: { who: 'self' } })).toMatchObject({ for: 'self' });
      // allowed_trigger_types: only test-rbac-trigger may be bound
      const raw = await RawClient.connect(rbacUrl, { headers: { 'x-test-token': 'tenant-token' } });
      try {
        raw.send({
          type: 'registertrigger',
          id: 'cron-bind',
          trigger_type: 'cron',
          function_id: 'x',
          config: { expression: '* * * * * *' },
        });
        expect(await raw.next((f) => f.type === 'triggerregistrationresult')).toMatchObject({
          error: { code: 'FORBIDDEN', message: expect.stringContaining("trigger type 'cron' not allowed") },
        });
      } finally {
        await raw.close();
      }
    });
    expect(calls).toHaveLength(2);
    // the worker left: its prefixed functions went with it
    await waitFor(async () => {
      const { functions } = (await trusted.trigger({ function_id: 'engine::functions::list', payload: {} })) as {
        functions: Array<{ function_id: string }>;
      };
      return !functions.some((f) => f.function_id.startsWith('tenant-a::'));
    });
  });

  it('leaves the open bus as it was: no auth, no middleware, every function callable', async () => {
    await withClient(
      undefined,
      async (client) => {
        expect(await client.trigger({ function_id: 'test::ew::private', payload: {} })).toEqual({ private: true });
        expect(await client.trigger({ function_id: 'test::ew::public::echo', payload: { x: 1 } })).toMatchObject({ echoed: { x: 1 } });
      },
      engine.busUrl,
    );
    expect(authCalls).toHaveLength(0);
    expect(middlewareCalls).toHaveLength(0);
  });
});
