/**
 * The compatibility checklist of engine-protocol §11, run unchanged against either published
 * iii-sdk version: items 1, 2, 3, 4, 11, 12, 14 and 16 (13 is in reconnect-checks.ts, the
 * @eng/sdk peer in cross-sdk-checks.ts). Version-only items (15, the 0.22.1 `…::info`
 * functions, reattach eviction, 0.11.6 registerService) live in that version's test file.
 */
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../../../test/harness.ts';
import { spawnIiiWorker } from './child-worker.ts';
import { type CompatEnv, ready, type TriggerConfig } from './compat-env.ts';
import { startWireTap } from './wire-tap.ts';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/** Records what a custom trigger type's provider is told (§5.11). */
export function recordingProvider() {
  const registered: TriggerConfig[] = [];
  const unregistered: TriggerConfig[] = [];
  return {
    registered,
    unregistered,
    handler: {
      async registerTrigger(config: TriggerConfig) {
        registered.push(config);
      },
      async unregisterTrigger(config: TriggerConfig) {
        unregistered.push(config);
      },
    },
  };
}

/** Key sets each SDK version's listing types promise (spec §4.1 record shapes). */
const WORKER_KEYS = {
  // WorkerInfo
  '0.11.6': [
    'id',
    'name',
    'runtime',
    'version',
    'os',
    'ip_address',
    'status',
    'connected_at_ms',
    'function_count',
    'functions',
    'active_invocations',
    'isolation',
  ],
  // WorkerSummary
  '0.22.1': [
    'name',
    'description',
    'version',
    'id',
    'runtime',
    'os',
    'status',
    'function_count',
    'connected_at_ms',
    'active_invocations',
    'isolation',
    'ip_address',
  ],
} as const;

export function runChecklist(env: CompatEnv): void {
  const { sdk } = env;
  const v = sdk.version;
  const list = async <T = any>(functionId: string, payload: unknown = {}): Promise<T> => env.call<T>(functionId, payload);
  const functionIds = async () =>
    (await list<{ functions: Array<{ function_id: string }> }>('engine::functions::list')).functions.map((f) => f.function_id);

  describe(`iii-sdk ${v} §11.1 connect`, () => {
    it('is greeted with workerregistered (worker id + reattach token) and listed with runtime node, its pid, version and name', async () => {
      const tap = await startWireTap(env.engine.busUrl);
      try {
        const child = await spawnIiiWorker({ version: v, url: tap.url, prefix: 'hello', name: `hello-${v}` });
        const connection = tap.connections[0]!;
        // spec §2.3.1 / §9 row 1: the first frame, with the token even for 0.11.6 (it ignores it)
        expect(connection.received[0]).toEqual({
          type: 'workerregistered',
          worker_id: child.workerId,
          reattach_token: expect.stringMatching(UUID),
        });
        expect(child.workerId).toMatch(UUID);
        // §4.2: the SDK's engine::workers::register (void) makes it visible
        const listed = await waitFor(async () => {
          const { workers } = await list<{ workers: any[] }>('engine::workers::list');
          return workers.find((w) => w.id === child.workerId && w.pid !== null);
        });
        expect(listed).toMatchObject({
          name: `hello-${v}`,
          runtime: 'node',
          version: v,
          pid: child.pid,
          status: 'connected',
          ip_address: '127.0.0.1',
          function_count: 2,
          functions: ['hello::echo', 'hello::hang'],
        });
        expect(listed.pid).not.toBe(process.pid);
        const registration = connection.sent.find((f) => f.function_id === 'engine::workers::register');
        expect(registration).toMatchObject({
          type: 'invokefunction',
          action: { type: 'void' },
          data: { runtime: 'node', version: v, pid: child.pid },
        });
        // the SDK's OpenTelemetry socket (on by default in the child) was accepted and stayed open:
        // one connection, no reconnect loop (§2.12)
        expect(tap.others.filter((o) => o.path === '/otel')).toEqual([expect.objectContaining({ open: true })]);
        await child.kill();
        await waitFor(async () => {
          const { workers } = await list<{ workers: any[] }>('engine::workers::list');
          return !workers.some((w) => w.id === child.workerId);
        });
      } finally {
        await tap.close();
      }
    });

    it('lists the in-process workers under the names they registered', async () => {
      const { workers } = await list<{ workers: any[] }>('engine::workers::list');
      expect(workers.find((w) => w.id === env.aId)).toMatchObject({ name: `compat-a-${v}`, runtime: 'node', version: v, pid: process.pid });
      expect(workers.find((w) => w.id === env.bId)).toMatchObject({ name: `compat-b-${v}`, runtime: 'node', version: v, pid: process.pid });
    });
  });

  describe(`iii-sdk ${v} §11.2 function round trip`, () => {
    it('calls a function on another worker both ways; object payloads arrive with _caller_worker_id', async () => {
      const seen: unknown[] = [];
      env.a.registerFunction('rt::echo-a', async (input) => {
        seen.push(input);
        return { echoed: input };
      });
      env.b.registerFunction('rt::echo-b', async (input) => input);
      await Promise.all([ready(env.a), ready(env.b)]);

      const payload = { x: 1, nested: { list: [1, 'two', null, { deep: true }] }, text: 'héllo ✓' };
      // §2.3.9: we keep the injection iii does; handlers see the caller's worker id
      expect(await env.b.trigger({ function_id: 'rt::echo-a', payload })).toEqual({ echoed: { ...payload, _caller_worker_id: env.bId } });
      expect(seen).toEqual([{ ...payload, _caller_worker_id: env.bId }]);
      expect(await env.a.trigger({ function_id: 'rt::echo-b', payload: { y: 2 } })).toEqual({ y: 2, _caller_worker_id: env.aId });
    });

    it('does not let a caller spoof _caller_worker_id and leaves non-object payloads untouched', async () => {
      env.b.registerFunction('rt::identity', async (input) => input);
      await ready(env.b);
      const call = (payload: unknown) => env.a.trigger({ function_id: 'rt::identity', payload });
      expect(await call({ _caller_worker_id: 'spoofed' })).toEqual({ _caller_worker_id: env.aId });
      expect(await call([1, 2, 3])).toEqual([1, 2, 3]);
      expect(await call('plain text')).toBe('plain text');
      expect(await call(42)).toBe(42);
      expect(await call(null)).toBeNull();
    });

    it('delivers a call made without a payload (the SDK omits `data`) as null instead of timing out', async () => {
      const seen: unknown[] = [];
      env.b.registerFunction('rt::no-payload', async (input) => {
        seen.push(input);
        return 'ran';
      });
      await ready(env.b);
      expect(await env.a.trigger({ function_id: 'rt::no-payload', payload: undefined, timeoutMs: 3000 })).toBe('ran');
      expect(seen).toEqual([null]);
    });

    it('resolves undefined when the handler returns nothing', async () => {
      env.b.registerFunction('rt::nothing', async () => undefined);
      await ready(env.b);
      expect(await env.a.trigger({ function_id: 'rt::nothing', payload: {} })).toBeUndefined();
    });
  });

  describe(`iii-sdk ${v} §11.3 errors`, () => {
    it('rejects with invocation_failed and the message when the handler throws', async () => {
      env.a.registerFunction('err::boom', async () => {
        throw new Error('sku ABC-1 is out of stock');
      });
      await ready(env.a);
      const err = await env.b.trigger({ function_id: 'err::boom', payload: { sku: 'ABC-1' } }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(sdk.ErrorClass);
      expect(err).toMatchObject({
        code: 'invocation_failed',
        message: 'invocation_failed: sku ABC-1 is out of stock',
        function_id: 'err::boom',
      });
      expect((err as { stacktrace?: string }).stacktrace).toContain('sku ABC-1 is out of stock');
    });

    it('rejects with function_not_found for an unknown function id', async () => {
      const err = await env.b.trigger({ function_id: 'err::nobody-home', payload: {} }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(sdk.ErrorClass);
      expect(err).toMatchObject({ code: 'function_not_found', message: 'function_not_found: Function err::nobody-home not found' });
    });

    it('rejects with TIMEOUT after timeoutMs on a slow handler, and the late result harms nothing', async () => {
      let finished = false;
      env.a.registerFunction('err::slow', async () => {
        await sleep(800);
        finished = true;
        return 'late';
      });
      await ready(env.a);
      const started = Date.now();
      const err = await env.b.trigger({ function_id: 'err::slow', payload: {}, timeoutMs: 100 }).catch((e: unknown) => e);
      const elapsed = Date.now() - started;
      expect(err).toMatchObject({ code: 'TIMEOUT', message: 'TIMEOUT: invocation timed out after 100ms' });
      expect(elapsed).toBeGreaterThanOrEqual(95);
      expect(elapsed).toBeLessThan(700);
      await waitFor(() => finished, 3000);
      // the engine relayed the late result to B, whose SDK dropped it; B keeps working
      expect(await env.b.trigger({ function_id: 'err::slow', payload: {} })).toBe('late');
    });
  });

  describe(`iii-sdk ${v} §11.4 void`, () => {
    it('resolves undefined at once while the handler still runs', async () => {
      let release!: (input: unknown) => void;
      const ran = new Promise<unknown>((r) => {
        release = r;
      });
      env.a.registerFunction('void::record', async (input) => {
        await sleep(300);
        release(input);
        return { ignored: true };
      });
      await ready(env.a);
      const started = Date.now();
      expect(await env.b.trigger({ function_id: 'void::record', payload: { n: 1 }, action: sdk.voidAction() })).toBeUndefined();
      expect(Date.now() - started).toBeLessThan(250);
      expect(await ran).toEqual({ n: 1, _caller_worker_id: env.bId });
      // the discarded result did not confuse anything: B still gets answers
      expect(await env.b.trigger({ function_id: 'rt::echo-a', payload: { after: 'void' } })).toEqual({
        echoed: { after: 'void', _caller_worker_id: env.bId },
      });
    });
  });

  describe(`iii-sdk ${v} §11.11 custom trigger type`, () => {
    it('hands a binding to the provider, which fires the consumer through trigger(); unbinding reaches the engine', async () => {
      const provider = recordingProvider();
      env.a.registerTriggerType({ id: 'compat.tick', description: 'Fires when the provider says so' }, provider.handler);
      const fired: unknown[] = [];
      env.b.registerFunction('tick::on-tick', async (input) => {
        fired.push(input);
        return null;
      });
      await ready(env.a);
      const trigger = env.b.registerTrigger({ type: 'compat.tick', function_id: 'tick::on-tick', config: { every: 'second', n: 3 } });

      const binding = await waitFor(() => provider.registered[0]);
      expect(binding).toEqual({ id: expect.stringMatching(UUID), function_id: 'tick::on-tick', config: { every: 'second', n: 3 } });
      const { registered_triggers } = await list<{ registered_triggers: any[] }>('engine::registered-triggers::list', {
        trigger_type: 'compat.tick',
      });
      expect(registered_triggers).toMatchObject([{ id: binding.id, function_id: 'tick::on-tick', status: 'active' }]);

      // §5.11 step 3: the provider fires with an ordinary (void) invocation
      await env.a.trigger({ function_id: binding.function_id, payload: { tick: 1 }, action: sdk.voidAction() });
      await waitFor(() => fired.length === 1);
      expect(fired[0]).toEqual({ tick: 1, _caller_worker_id: env.aId });

      trigger.unregister();
      await waitFor(async () => {
        const after = await list<{ registered_triggers: any[] }>('engine::registered-triggers::list', { trigger_type: 'compat.tick' });
        return after.registered_triggers.length === 0;
      });
      if (v === '0.22.1') {
        // §2.3.8: the engine tells the provider; 0.22.1 calls unregisterTrigger (function_id is empty on this frame)
        await waitFor(() => provider.unregistered.length === 1);
        expect(provider.unregistered[0]).toMatchObject({ id: binding.id, function_id: '' });
      }
    });

    it('parks a binding whose type has no provider yet and delivers it when the provider registers the type', async () => {
      env.b.registerFunction('tick::early', async () => null);
      env.b.registerTrigger({ type: 'compat.late', function_id: 'tick::early', config: { when: 'later' } });
      await ready(env.b);
      const parked = await list<{ registered_triggers: any[] }>('engine::registered-triggers::list', { trigger_type: 'compat.late' });
      expect(parked.registered_triggers).toMatchObject([{ function_id: 'tick::early', status: 'inactive' }]);

      const provider = recordingProvider();
      env.a.registerTriggerType({ id: 'compat.late', description: 'Registered after its first binding' }, provider.handler);
      const delivered = await waitFor(() => provider.registered[0]);
      expect(delivered).toMatchObject({ id: parked.registered_triggers[0].id, function_id: 'tick::early', config: { when: 'later' } });
    });
  });

  describe(`iii-sdk ${v} unregistertriggertype`, () => {
    it('removes a type its provider unregisters and parks the type’s bindings until a provider returns', async () => {
      const provider = recordingProvider();
      const type = env.a.registerTriggerType({ id: 'compat.leaving', description: 'About to be unregistered' }, provider.handler) as {
        unregister(): void;
      };
      env.b.registerFunction('tick::leaving', async () => null);
      env.b.registerTrigger({ type: 'compat.leaving', function_id: 'tick::leaving', config: {} });
      const binding = await waitFor(() => provider.registered[0]);
      // both SDKs send unregistertriggertype; iii drops it, we act on it (spec §9 row 16)
      type.unregister();
      await ready(env.a);
      const { trigger_types } = await list<{ trigger_types: any[] }>('engine::trigger-types::list');
      expect(trigger_types.some((t) => t.id === 'compat.leaving')).toBe(false);
      const { registered_triggers } = await list<{ registered_triggers: any[] }>('engine::registered-triggers::list', {
        trigger_type: 'compat.leaving',
      });
      expect(registered_triggers).toMatchObject([{ id: binding.id, status: 'inactive' }]);
      const next = recordingProvider();
      env.a.registerTriggerType({ id: 'compat.leaving', description: 'Back again' }, next.handler);
      expect(await waitFor(() => next.registered[0])).toMatchObject({ id: binding.id, function_id: 'tick::leaving' });
    });
  });

  describe(`iii-sdk ${v} §11.12 disconnect`, () => {
    it('a SIGKILLed executor: the caller gets invocation_stopped, its functions and trigger bindings go away', async () => {
      const provider = recordingProvider();
      env.a.registerTriggerType({ id: 'compat.doom', description: 'Bound by a worker about to die' }, provider.handler);
      await ready(env.a);
      const child = await spawnIiiWorker({
        version: v,
        url: env.engine.busUrl,
        prefix: 'doomed',
        bind: [{ type: 'compat.doom', function_id: 'doomed::echo', config: { k: 1 } }],
      });
      const binding = await waitFor(() => provider.registered.find((r) => r.function_id === 'doomed::echo'));
      expect(await functionIds()).toEqual(expect.arrayContaining(['doomed::echo', 'doomed::hang']));

      const pending = env.b.trigger({ function_id: 'doomed::hang', payload: { n: 1 } }).catch((e: unknown) => e);
      await child.next((e) => e.event === 'invoked' && e.function_id === 'doomed::hang');
      await child.kill('SIGKILL');

      const err = await pending;
      expect(err).toBeInstanceOf(sdk.ErrorClass);
      expect(err).toMatchObject({ code: 'invocation_stopped', message: 'invocation_stopped: Invocation stopped' });
      // §2.8: cleanup is done by the time the caller hears about it
      expect((await functionIds()).filter((id) => id.startsWith('doomed::'))).toEqual([]);
      const { registered_triggers } = await list<{ registered_triggers: any[] }>('engine::registered-triggers::list', {
        trigger_type: 'compat.doom',
      });
      expect(registered_triggers).toEqual([]);
      const { workers } = await list<{ workers: any[] }>('engine::workers::list');
      expect(workers.some((w) => w.id === child.workerId)).toBe(false);
      if (v === '0.22.1') {
        await waitFor(() => provider.unregistered.some((u) => u.id === binding.id));
      }
      const gone = await env.b.trigger({ function_id: 'doomed::echo', payload: {} }).catch((e: unknown) => e);
      expect(gone).toMatchObject({ code: 'function_not_found' });
    });
  });

  describe(`iii-sdk ${v} §11.14 channels`, () => {
    it('streams bytes intact from a writer to a reader ref passed in a payload', async () => {
      env.b.registerFunction('chan::consume', async (input) => {
        const bytes = await input.reader.readAll();
        return { length: bytes.length, sha256: sha256(bytes), label: input.label };
      });
      await ready(env.b);
      const channel = await sdk.createChannel(env.a);
      expect(channel.readerRef).toEqual({
        channel_id: channel.writerRef.channel_id,
        access_key: channel.writerRef.access_key,
        direction: 'read',
      });
      // 300 KB: several 64 KiB frames, more than one buffer's worth
      const data = randomBytes(300_000);
      const consumed = env.a.trigger({ function_id: 'chan::consume', payload: { reader: channel.readerRef, label: 'blob' } });
      channel.writer.stream.write(data.subarray(0, 100_000));
      channel.writer.stream.end(data.subarray(100_000));
      expect(await consumed).toEqual({ length: data.length, sha256: sha256(data), label: 'blob' });
    });

    it('lets the other worker write: a writer ref in a payload streams back to our reader', async () => {
      env.b.registerFunction('chan::produce', async (input) => {
        const chunk = Buffer.alloc(70_000, 7);
        for (let i = 0; i < input.chunks; i++) input.writer.stream.write(chunk);
        input.writer.stream.end();
        return { wrote: input.chunks * chunk.length };
      });
      await ready(env.b);
      const channel = await sdk.createChannel(env.a);
      const [received, answer] = await Promise.all([
        channel.reader.readAll(),
        env.a.trigger({ function_id: 'chan::produce', payload: { writer: channel.writerRef, chunks: 3 } }),
      ]);
      expect(answer).toEqual({ wrote: 210_000 });
      expect(received.equals(Buffer.alloc(210_000, 7))).toBe(true);
    });
  });

  describe(`iii-sdk ${v} §11.16 introspection shapes`, () => {
    const requestFormat = { type: 'object', properties: { sku: { type: 'string' } }, required: ['sku'] };
    const responseFormat = { type: 'object', properties: { id: { type: 'string' } } };

    it('engine::functions::list returns the fields this SDK reads, with metadata["mcp.expose"] intact', async () => {
      env.a.registerFunction('intro::create-order', async () => ({ id: 'o1' }), {
        description: 'Create an order',
        request_format: requestFormat,
        response_format: responseFormat,
        metadata: { 'mcp.expose': true, owner: 'team-a' },
      });
      env.a.registerFunction('intro::bare', async () => null);
      await ready(env.a);
      const { functions } = await list<{ functions: any[] }>('engine::functions::list');
      const created = functions.find((f) => f.function_id === 'intro::create-order');
      const bare = functions.find((f) => f.function_id === 'intro::bare');
      // the flat dotted key survives (§3.2); the mcp worker filters on it
      expect(created.metadata).toEqual({ 'mcp.expose': true, owner: 'team-a' });
      expect(created.metadata['mcp.expose']).toBe(true);
      expect(created.description).toBe('Create an order');
      if (v === '0.11.6') {
        // FunctionInfo: every key present, null when unset (§4.1)
        expect(created).toMatchObject({ request_format: requestFormat, response_format: responseFormat });
        expect(bare).toMatchObject({
          function_id: 'intro::bare',
          description: null,
          request_format: null,
          response_format: null,
          metadata: null,
        });
      } else {
        // FunctionSummary: worker_name from the owner's registered name
        expect(created.worker_name).toBe(`compat-a-${v}`);
        expect(bare).toMatchObject({ function_id: 'intro::bare', worker_name: `compat-a-${v}` });
      }
      // sorted by id, engine::* hidden unless asked for
      const ids = functions.map((f) => f.function_id);
      expect(ids).toEqual([...ids].sort());
      expect(ids.some((id) => id.startsWith('engine::'))).toBe(false);
      const all = await list<{ functions: any[] }>('engine::functions::list', { include_internal: true });
      expect(all.functions.map((f) => f.function_id)).toContain('engine::functions::list');
    });

    it('engine::workers::list returns the fields of this SDK’s worker record', async () => {
      const { workers } = await list<{ workers: any[] }>('engine::workers::list');
      const a = workers.find((w) => w.id === env.aId);
      expect(Object.keys(a)).toEqual(expect.arrayContaining([...WORKER_KEYS[v]]));
      expect(a).toMatchObject({ status: 'connected', runtime: 'node', os: expect.any(String), connected_at_ms: expect.any(Number) });
      expect(a.functions).toEqual(expect.arrayContaining(['intro::bare', 'intro::create-order']));
      expect(a.function_count).toBe(a.functions.length);
      if (v === '0.22.1') expect(a.description).toBe('worker A of the compat suite');
      // in-process modules are listed as workers too (§4.1)
      expect(workers.find((w) => w.name === 'eng-engine-functions')).toMatchObject({
        runtime: 'engine',
        status: 'available',
        isolation: 'in-process',
      });
    });

    it(`engine::triggers::list answers a ${v} caller with trigger ${v === '0.11.6' ? 'instances' : 'types'}`, async () => {
      const provider = recordingProvider();
      env.a.registerTriggerType({ id: 'compat.intro', description: 'Introspection trigger type' }, provider.handler);
      env.b.registerFunction('intro::bound', async () => null);
      env.b.registerTrigger({ type: 'compat.intro', function_id: 'intro::bound', config: { path: '/x' } });
      await ready(env.b);
      const binding = await waitFor(() => provider.registered[0]);
      const { triggers } = await list<{ triggers: any[] }>('engine::triggers::list');
      if (v === '0.11.6') {
        // TriggerInfo instances (0.11.6 EngineFunctions.LIST_TRIGGERS)
        expect(triggers.find((t) => t.id === binding.id)).toMatchObject({
          trigger_type: 'compat.intro',
          function_id: 'intro::bound',
          config: { path: '/x' },
        });
      } else {
        // trigger TYPES (0.22.1 EngineFunctions.LIST_TRIGGERS), engine::* hidden
        expect(triggers.find((t) => t.id === 'compat.intro')).toMatchObject({
          worker_name: `compat-a-${v}`,
          description: 'Introspection trigger type',
        });
        expect(triggers.some((t) => t.id === binding.id)).toBe(false);
        expect(triggers.some((t) => String(t.id).startsWith('engine::'))).toBe(false);
      }
    });

    it('engine::trigger-types::list returns TriggerTypeInfo records', async () => {
      const { trigger_types } = await list<{ trigger_types: any[] }>('engine::trigger-types::list');
      expect(trigger_types.find((t) => t.id === 'compat.intro')).toMatchObject({
        id: 'compat.intro',
        description: 'Introspection trigger type',
      });
      expect(trigger_types.some((t) => String(t.id).startsWith('engine::'))).toBe(false);
    });
  });
}
