import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import { RawClient } from '../../../test/raw-client.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

let engine: EngineProcess;
const clients: RawClient[] = [];
async function worker(): Promise<RawClient & { workerId: string; token: string }> {
  const client = await RawClient.worker(engine.busUrl);
  clients.push(client);
  return client;
}

/** Register `id` on `owner` and wait until the engine lists it (frames on two sockets can race). */
async function register(owner: RawClient, id: string, extra: Record<string, unknown> = {}): Promise<void> {
  owner.send({ type: 'registerfunction', id, ...extra });
  await waitFor(async () => {
    const info = await owner.call('engine::functions::info', { function_id: id });
    return (info.result as { worker_id?: string } | undefined)?.worker_id === (owner as RawClient & { workerId?: string }).workerId;
  });
}

/**
 * Node's inspector on an engine started with `--inspect=127.0.0.1:0` (through NODE_OPTIONS): forces a
 * full garbage collection in the engine process and reads its V8 heap. Debug tooling only; the engine
 * itself exposes no GC hook.
 */
class EngineInspector {
  private seq = 0;
  private readonly waiting = new Map<number, (result: any) => void>();
  private constructor(private readonly socket: WebSocket) {
    socket.on('message', (data) => {
      const message = JSON.parse(data.toString()) as { id?: number; result?: unknown };
      if (message.id !== undefined) this.waiting.get(message.id)?.(message.result);
      if (message.id !== undefined) this.waiting.delete(message.id);
    });
  }

  static async attach(engine: EngineProcess): Promise<EngineInspector> {
    const url = await waitFor(() => /Debugger listening on (ws:\/\/\S+)/.exec(engine.logs())?.[1]);
    const socket = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    return new EngineInspector(socket);
  }

  private send<T = any>(method: string, params: object = {}): Promise<T> {
    const id = ++this.seq;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`inspector: no answer to ${method}`)), 15_000);
      this.waiting.set(id, (result) => {
        clearTimeout(timer);
        resolve(result as T);
      });
      this.socket.send(JSON.stringify({ id, method, params }));
    });
  }

  /** V8 heap in use after forced full collections: the lowest of three samples taken 100 ms apart. */
  async heapUsedAfterGc(): Promise<number> {
    const samples: number[] = [];
    for (let i = 0; i < 3; i++) {
      await this.send('HeapProfiler.collectGarbage');
      samples.push((await this.send<{ usedSize: number }>('Runtime.getHeapUsage')).usedSize);
      await new Promise((r) => setTimeout(r, 100));
    }
    return Math.min(...samples);
  }

  close(): void {
    this.socket.close();
  }
}

beforeAll(async () => {
  engine = await startEngine({
    configYaml: 'workers:\n  - name: eng-worker-manager\n    config:\n      port: {{BUS_PORT}}\n      max_frame_bytes: 1048576\n',
  });
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.terminate()));
  await engine.stop();
});

describe('worker bus: connection', () => {
  it('greets every connection with a fresh worker id and a reattach token', async () => {
    const a = await worker();
    const b = await worker();
    expect(a.workerId).toMatch(UUID);
    expect(a.token).toMatch(UUID);
    expect(a.workerId).not.toBe(b.workerId);
  });

  it('answers app-level ping with pong and WebSocket pings with pongs', async () => {
    const a = await worker();
    a.send({ type: 'ping' });
    expect((await a.next((f) => f.type === 'pong')).type).toBe('pong');
    const pong = new Promise<Buffer>((resolve) => a.socket.once('pong', resolve));
    a.socket.ping(Buffer.from('hb'));
    expect((await pong).toString()).toBe('hb');
  });

  it('serves an explanatory 426 to plain HTTP on the bus port', async () => {
    const res = await fetch(`http://127.0.0.1:${engine.busPort}/`);
    expect(res.status).toBe(426);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('UPGRADE_REQUIRED');
  });
});

describe('worker bus: invocation routing', () => {
  it('routes a call to the owning worker, injects _caller_worker_id and reuses the invocation id', async () => {
    const executor = await worker();
    const caller = await worker();
    await register(executor, 'bus::echo', { description: 'echo' });
    await waitFor(async () => (await caller.call('engine::functions::list', {})).result);
    const invocationId = crypto.randomUUID();
    caller.send({
      type: 'invokefunction',
      invocation_id: invocationId,
      function_id: 'bus::echo',
      data: { x: 1, _caller_worker_id: 'spoofed' },
      metadata: { tenant: 't1' },
    });
    const received = await executor.next((f) => f.type === 'invokefunction' && f.function_id === 'bus::echo');
    expect(received.invocation_id).toBe(invocationId);
    expect(received.data).toEqual({ x: 1, _caller_worker_id: caller.workerId });
    expect(received.metadata).toEqual({ tenant: 't1' });
    expect(received.action).toBeUndefined();
    executor.send({ type: 'invocationresult', invocation_id: invocationId, function_id: 'bus::echo', result: { echoed: received.data } });
    const result = await caller.next((f) => f.type === 'invocationresult' && f.invocation_id === invocationId);
    expect(result.result).toEqual({ echoed: { x: 1, _caller_worker_id: caller.workerId } });
  });

  it('answers an unknown function with function_not_found', async () => {
    const caller = await worker();
    const result = await caller.call('bus::nope', {});
    expect(result.error).toEqual({ code: 'function_not_found', message: 'Function bus::nope not found' });
  });

  it('relays handler errors with code, message and stacktrace', async () => {
    const executor = await worker();
    const caller = await worker();
    await register(executor, 'bus::fail');
    const pending = caller.call('bus::fail', {});
    const call = await executor.next((f) => f.type === 'invokefunction' && f.function_id === 'bus::fail');
    executor.send({
      type: 'invocationresult',
      invocation_id: call.invocation_id,
      error: { code: 'invocation_failed', message: 'boom', stacktrace: 'Error: boom\n  at x' },
    });
    expect((await pending).error).toEqual({ code: 'invocation_failed', message: 'boom', stacktrace: 'Error: boom\n  at x' });
  });

  it('void calls get no reply while the handler still runs with an invocation id', async () => {
    const executor = await worker();
    const caller = await worker();
    await register(executor, 'bus::void');
    caller.send({ type: 'invokefunction', function_id: 'bus::void', data: { n: 1 }, action: { type: 'void' } });
    const call = await executor.next((f) => f.type === 'invokefunction' && f.function_id === 'bus::void');
    expect(call.invocation_id).toMatch(UUID);
    executor.send({ type: 'invocationresult', invocation_id: call.invocation_id, result: 'ignored' });
    await new Promise((r) => setTimeout(r, 150));
    expect(caller.frames.filter((f) => f.type === 'invocationresult')).toEqual([]);
  });

  it('treats a missing data field as null instead of dropping the call', async () => {
    const executor = await worker();
    const caller = await worker();
    await register(executor, 'bus::nodata');
    const id = crypto.randomUUID();
    caller.send({ type: 'invokefunction', invocation_id: id, function_id: 'bus::nodata' });
    const call = await executor.next((f) => f.type === 'invokefunction' && f.function_id === 'bus::nodata');
    expect(call.data).toBeNull();
  });

  it('ends calls in flight with invocation_stopped when the executor disconnects, and drops its functions', async () => {
    const executor = await worker();
    const caller = await worker();
    await register(executor, 'bus::slow');
    const pending = caller.call('bus::slow', {});
    await executor.next((f) => f.type === 'invokefunction' && f.function_id === 'bus::slow');
    await executor.terminate();
    expect((await pending).error).toEqual({ code: 'invocation_stopped', message: 'Invocation stopped' });
    const list = await caller.result<{ functions: Array<{ function_id: string }> }>('engine::functions::list');
    expect(list.functions.map((f) => f.function_id)).not.toContain('bus::slow');
  });

  it('gives a function to the last registrant and lets only the owner unregister it', async () => {
    const first = await worker();
    const second = await worker();
    const caller = await worker();
    await register(first, 'bus::owned');
    await register(second, 'bus::owned');
    first.send({ type: 'unregisterfunction', id: 'bus::owned' }); // no longer the owner: ignored
    // a connection's frames are handled in order: its pong proves the unregister was handled
    first.send({ type: 'ping' });
    await first.next((f) => f.type === 'pong', 30_000);
    const pending = caller.call('bus::owned', {});
    const call = await second.next((f) => f.type === 'invokefunction' && f.function_id === 'bus::owned');
    second.send({ type: 'invocationresult', invocation_id: call.invocation_id, result: 'second' });
    expect((await pending).result).toBe('second');
    await first.close(); // the old owner leaving must not remove the new owner's function
    const info = await caller.result('engine::functions::info', { function_id: 'bus::owned' });
    expect(info.worker_id).toBe(second.workerId);
  });

  it('engine::functions::invoke calls a function only while its metadata holds the expected values', async () => {
    const executor = await worker();
    const caller = await worker();
    await register(executor, 'bus::guarded', { metadata: { 'mcp.expose': true, 'mcp.tier': 'gold', nested: { a: [1, 2] } } });
    const expect_ = { metadata: { 'mcp.expose': true, 'mcp.tier': 'gold', nested: { a: [1, 2] } } };

    // matching: the call reaches the executor as the caller's own call (caller id, invocation metadata)
    const pending = caller.call(
      'engine::functions::invoke',
      { function_id: 'bus::guarded', payload: { n: 1 }, expect: expect_ },
      { metadata: { mcp: { session: 's1' } } },
    );
    const call = await executor.next((f) => f.type === 'invokefunction' && f.function_id === 'bus::guarded');
    expect(call.data).toEqual({ n: 1, _caller_worker_id: caller.workerId });
    expect(call.metadata).toEqual({ mcp: { session: 's1' } });
    executor.send({ type: 'invocationresult', invocation_id: call.invocation_id, result: { ok: 'yes' } });
    expect((await pending).result).toEqual({ ok: 'yes' });

    // the function's own failure comes back unchanged
    const failing = caller.call('engine::functions::invoke', { function_id: 'bus::guarded', payload: {}, expect: expect_ });
    const second = await executor.next((f) => f.type === 'invokefunction' && f.function_id === 'bus::guarded');
    executor.send({ type: 'invocationresult', invocation_id: second.invocation_id, error: { code: 'E_SKU', message: 'no such sku' } });
    expect((await failing).error).toMatchObject({ code: 'E_SKU', message: 'no such sku' });

    // a value that no longer holds, a missing key, or a missing function: refused, nothing runs
    const refusals = [
      [
        { function_id: 'bus::guarded', expect: { metadata: { 'mcp.tier': 'silver' } } },
        'PRECONDITION_FAILED',
        /"mcp.tier" is "gold", expected "silver"/,
      ],
      [{ function_id: 'bus::guarded', expect: { metadata: { owner: 'x' } } }, 'PRECONDITION_FAILED', /"owner" is null, expected "x"/],
      [{ function_id: 'bus::guarded', expect: { metadata: { nested: { a: [1] } } } }, 'PRECONDITION_FAILED', /"nested"/],
      [{ function_id: 'bus::nowhere', expect: { metadata: {} } }, 'NOT_FOUND', /^Function bus::nowhere not found$/],
      [{ payload: {} }, 'deserialization_error', /function_id/],
    ] as const;
    for (const [input, code, message] of refusals) {
      const result = await caller.call('engine::functions::invoke', input);
      expect((result.error as { code: string }).code).toBe(code);
      expect((result.error as { message: string }).message).toMatch(message);
    }
    await expect(executor.next((f) => f.type === 'invokefunction', 200)).rejects.toThrow();
  });

  it('answers the enqueue action with enqueue_error when no queue provider is installed', async () => {
    const caller = await worker();
    const executor = await worker();
    await register(executor, 'bus::queued');
    const result = await caller.call('bus::queued', {}, { action: { type: 'enqueue', queue: 'default' } });
    expect((result.error as { code: string }).code).toBe('enqueue_error');
    expect((result.error as { message: string }).message).toMatch(/eng-queue/);
  });
});

describe('worker bus: bad input', () => {
  it('drops malformed and unknown frames, logs them with the worker id, and keeps the connection', async () => {
    const bad = await worker();
    const bystander = await worker();
    bad.send('{not json');
    bad.send('[]');
    bad.send('   ');
    bad.send({ type: 'warp_drive', id: 1 });
    bad.send({ type: 'registerfunction', id: 42 });
    bad.send({ type: 'invokefunction', invocation_id: 'not-a-uuid', function_id: 'engine::functions::list', data: {} });
    bad.send({ type: 'invocationresult', invocation_id: 'zzz' });
    bad.socket.send(Buffer.from('XXXX binary junk'));
    const ok = await bad.call('engine::functions::list', {});
    expect(ok.result).toBeDefined();
    expect(bad.isOpen).toBe(true);
    expect((await bystander.call('engine::functions::list', {})).result).toBeDefined();
    await waitFor(() => engine.logs().includes(`dropped frame from worker ${bad.workerId}: unknown message type "warp_drive"`));
    expect(engine.logs()).toContain(`dropped frame from worker ${bad.workerId}: json decode error`);
    expect(engine.logs()).toMatch(/invalid "registerfunction" frame: id:/);
    expect(engine.logs()).toMatch(/invalid "invokefunction" frame: invocation_id:/);
  });

  it('closes only the connection that sends a frame over the size limit, with a reason', async () => {
    const big = await worker();
    const bystander = await worker();
    big.send({ type: 'registerfunction', id: 'bus::big', description: 'x'.repeat(2 * 1024 * 1024) });
    await big.waitClosed();
    expect(big.closeInfo?.code).toBe(1009);
    expect(big.closeInfo?.reason).toMatch(/max payload size exceeded/i);
    expect((await bystander.call('engine::functions::list', {})).result).toBeDefined();
    const list = await bystander.result<{ functions: Array<{ function_id: string }> }>('engine::functions::list');
    expect(list.functions.map((f) => f.function_id)).not.toContain('bus::big');
  });

  it('survives 1,000 connect/disconnect cycles that leave bindings, channels and calls behind: registries and heap back to baseline', async () => {
    // A dedicated engine: Node's inspector (enabled through NODE_OPTIONS, no engine code involved) lets
    // the test force a full GC inside the engine and read its V8 heap. The observability stores are
    // bounded by design (memory_max_spans, logs_max_count); small bounds fill them during the warm-up
    // so that what they hold is part of the baseline.
    const churnEngine = await startEngine({
      configYaml:
        'workers:\n  - name: eng-worker-manager\n    config:\n      port: {{BUS_PORT}}\n' +
        '  - name: eng-observability\n    config:\n      memory_max_spans: 100\n      logs_max_count: 100\n',
      env: { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --inspect=127.0.0.1:0`.trim() },
    });
    const url = churnEngine.busUrl;
    const stable: RawClient[] = [];
    let inspector: EngineInspector | undefined;
    try {
      inspector = await EngineInspector.attach(churnEngine);
      const observer = await RawClient.worker(url);
      const provider = await RawClient.worker(url);
      const sink = await RawClient.worker(url);
      stable.push(observer, provider, sink);
      sink.registerWorker('churn-sink');
      provider.send({ type: 'registertriggertype', id: 'churn.hook', description: 'bindings made by churning workers' });
      sink.send({ type: 'registerfunction', id: 'churn::sink' });
      // frames on one socket are handled in order: these answers mean the registrations above are in
      await provider.result('engine::functions::list');
      await sink.result('engine::functions::list');

      const delivered = new Set<string>();
      const lateAnswers: string[] = [];
      const openEnd = (ref: { channel_id: string; access_key: string; direction: string }) =>
        new Promise<WebSocket>((resolve, reject) => {
          const ws = new WebSocket(`${url}/ws/channels/${ref.channel_id}?key=${ref.access_key}&dir=${ref.direction}`);
          ws.once('open', () => resolve(ws));
          ws.once('error', reject);
        });

      /**
       * One churning worker: it registers itself, a function, a binding delivered to the provider and a
       * binding parked on an unknown type, relays a frame through a channel whose two ends stay open,
       * calls the sink (which answers after it is gone, or never), and has an inbound call in flight
       * when it leaves (half of them close cleanly, half drop the socket).
       */
      const churn = async (n: number, whileAlive?: () => Promise<void>) => {
        const c = await RawClient.worker(url);
        const fn = `churn::f${n}`;
        c.registerWorker(`churn-${n}`);
        c.send({ type: 'registerfunction', id: fn });
        const bindingId = crypto.randomUUID();
        c.send({ type: 'registertrigger', id: bindingId, trigger_type: 'churn.hook', function_id: fn, config: { n } });
        c.send({ type: 'registertrigger', id: crypto.randomUUID(), trigger_type: 'churn.parked', function_id: fn, config: { n } });
        const refs = await c.result('engine::channels::create', { buffer_size: 4 });
        const [writer, reader] = await Promise.all([openEnd(refs.writer), openEnd(refs.reader)]);
        const relayed = new Promise((resolve) => reader.once('message', resolve));
        writer.send(Buffer.alloc(1024, n % 256));
        await relayed;
        writer.send('still in the channel when its ends go away');

        const binding = await provider.next((f) => f.type === 'registertrigger' && f.id === bindingId);
        delivered.add(bindingId);
        provider.send({ type: 'triggerregistrationresult', id: bindingId, trigger_type: 'churn.hook', function_id: binding.function_id });
        c.send({ type: 'invokefunction', invocation_id: crypto.randomUUID(), function_id: 'churn::sink', data: { n } });
        const outbound = await sink.next((f) => f.type === 'invokefunction' && (f.data as { n?: number })?.n === n);
        lateAnswers.push(outbound.invocation_id as string);
        const inbound = observer.call(fn, { n });
        await c.next((f) => f.type === 'invokefunction' && f.function_id === fn);
        await whileAlive?.();

        if (n % 2) {
          c.socket.terminate();
          writer.terminate();
          reader.terminate();
        } else {
          c.socket.close();
          writer.close();
          reader.close();
        }
        // §2.8: the caller of a function on the departed worker is told at once
        expect((await inbound).error).toEqual({ code: 'invocation_stopped', message: 'Invocation stopped' });
        await c.waitClosed();
      };

      const cycle = async (from: number, count: number, batch = 25) => {
        for (let i = 0; i < count; i += batch) {
          await Promise.all(Array.from({ length: Math.min(batch, count - i) }, (_, j) => churn(from + i + j)));
          // every caller of the batch is gone (each inbound call above was stopped): half of their calls
          // are answered late, half never; the engine must drop the late results and release every call
          for (const [k, id] of lateAnswers.splice(0).entries()) {
            if (k % 2 === 0) sink.send({ type: 'invocationresult', invocation_id: id, function_id: 'churn::sink', result: 'late' });
          }
        }
      };

      const registries = async () => {
        const workers = await observer.result<{ workers: Array<{ name: string; active_invocations: number }> }>('engine::workers::list');
        const functions = await observer.result<{ functions: Array<{ function_id: string }> }>('engine::functions::list', {
          include_internal: true,
        });
        const triggers = await observer.result<{ registered_triggers: Array<{ function_id: string }> }>(
          'engine::registered-triggers::list',
          { include_internal: true },
        );
        return {
          workers: workers.workers.length,
          functions: functions.functions.length,
          registeredTriggers: triggers.registered_triggers.length,
          churnLeftovers: [
            ...workers.workers.filter((w) => w.name.startsWith('churn-') && w.name !== 'churn-sink').map((w) => w.name),
            ...functions.functions.filter((f) => f.function_id.startsWith('churn::f')).map((f) => f.function_id),
            ...triggers.registered_triggers.filter((t) => t.function_id.startsWith('churn::f')).map((t) => t.function_id),
          ],
          sinkActive: workers.workers.find((w) => w.name === 'churn-sink')?.active_invocations,
        };
      };

      // one witness: everything a churning worker leaves behind is really in the registries while it lives
      await churn(0, async () => {
        const live = await registries();
        expect(live.churnLeftovers.sort()).toEqual(['churn-0', 'churn::f0', 'churn::f0', 'churn::f0']);
        const bindings = await observer.result<{ registered_triggers: Array<{ trigger_type: string; status: string }> }>(
          'engine::registered-triggers::list',
          { function_id: 'churn::f0' },
        );
        expect(bindings.registered_triggers.map((t) => `${t.trigger_type}:${t.status}`).sort()).toEqual([
          'churn.hook:active',
          'churn.parked:inactive',
        ]);
        expect(live.sinkActive).toBe(1);
      });
      await cycle(1, 299); // warm up allocators, JIT and the bounded stores before taking the baseline

      const settled = async () =>
        waitFor(async () => {
          const now = await registries();
          return now.churnLeftovers.length === 0 && now.sinkActive === 0 ? now : undefined;
        }, 10_000);
      const baseline = await settled();
      const baselineHeap = await inspector.heapUsedAfterGc();

      await cycle(1000, 1000);

      const after = await settled();
      expect(after).toEqual(baseline);
      // the provider heard about the end of every binding it was given
      await waitFor(() => {
        const unbound = new Set(provider.frames.filter((f) => f.type === 'unregistertrigger').map((f) => f.id as string));
        return [...delivered].every((id) => unbound.has(id));
      }, 10_000);
      expect(delivered.size).toBe(1300);
      const heapGrowth = (await inspector.heapUsedAfterGc()) - baselineHeap;
      // about 1 MiB of JIT code and noise on a quiet run; a leak of 4 KiB per connection would exceed this
      expect(heapGrowth, `engine heap grew by ${(heapGrowth / 1048576).toFixed(2)} MiB`).toBeLessThan(4 * 1024 * 1024);
      // the stable workers were never disturbed
      expect(observer.isOpen && provider.isOpen && sink.isOpen).toBe(true);
    } finally {
      inspector?.close();
      await Promise.all(stable.map((c) => c.terminate()));
      await churnEngine.stop();
    }
  }, 120_000);
});

describe('worker bus: reattach', () => {
  it('evicts the previous connection when the token matches, and ignores a wrong token', async () => {
    const old = await worker();
    old.send({ type: 'registerfunction', id: 'bus::reattach' });
    const impostor = await worker();
    impostor.send({ type: 'reattach', previous_worker_id: old.workerId, reattach_token: crypto.randomUUID() });
    await new Promise((r) => setTimeout(r, 100));
    expect(old.isOpen).toBe(true);
    const fresh = await worker();
    fresh.send({ type: 'reattach', previous_worker_id: old.workerId, reattach_token: old.token });
    await old.waitClosed();
    expect(old.closeInfo?.code).toBe(4000);
    // the engine cleans up when its side of the socket closes, which may trail the client's by a moment
    await waitFor(async () => {
      const list = await fresh.result<{ functions: Array<{ function_id: string }> }>('engine::functions::list');
      return !list.functions.some((f) => f.function_id === 'bus::reattach');
    });
  });
});

describe('custom trigger types', () => {
  it('delivers bindings to the provider, reports refusals to the owner, and unbinds', async () => {
    const provider = await worker();
    const consumer = await worker();
    provider.send({ type: 'registertriggertype', id: 'tt.webhook', description: 'test hook' });
    await register(consumer, 'bus::on_hook');
    consumer.send({
      type: 'registertrigger',
      message_type: 'registertrigger',
      id: 'b1',
      trigger_type: 'tt.webhook',
      function_id: 'bus::on_hook',
      config: { path: '/x' },
      metadata: { m: 1 },
    });
    const delivered = await provider.next((f) => f.type === 'registertrigger' && f.id === 'b1');
    expect(delivered).toMatchObject({
      trigger_type: 'tt.webhook',
      function_id: 'bus::on_hook',
      config: { path: '/x' },
      metadata: { m: 1 },
    });
    provider.send({ type: 'triggerregistrationresult', id: 'b1', trigger_type: 'tt.webhook', function_id: 'bus::on_hook' });

    consumer.send({ type: 'registertrigger', id: 'b2', trigger_type: 'tt.webhook', function_id: 'bus::on_hook', config: { bad: true } });
    await provider.next((f) => f.type === 'registertrigger' && f.id === 'b2');
    provider.send({
      type: 'triggerregistrationresult',
      id: 'b2',
      trigger_type: 'tt.webhook',
      function_id: 'bus::on_hook',
      error: { code: 'trigger_registration_failed', message: 'bad config' },
    });
    const refusal = await consumer.next((f) => f.type === 'triggerregistrationresult' && f.id === 'b2');
    expect(refusal.error).toEqual({ code: 'trigger_registration_failed', message: 'bad config' });
    const listed = await consumer.result<{ registered_triggers: Array<{ id: string; status: string; error?: string }> }>(
      'engine::registered-triggers::list',
      { trigger_type: 'tt.webhook' },
    );
    expect(listed.registered_triggers.find((t) => t.id === 'b1')?.status).toBe('active');
    expect(listed.registered_triggers.find((t) => t.id === 'b2')).toMatchObject({
      status: 'error',
      error: 'trigger_registration_failed: bad config',
    });

    consumer.send({ type: 'unregistertrigger', message_type: 'unregistertrigger', id: 'b1', trigger_type: 'tt.webhook' });
    expect(await provider.next((f) => f.type === 'unregistertrigger' && f.id === 'b1')).toMatchObject({ trigger_type: 'tt.webhook' });
  });

  it('parks bindings of unknown types and delivers them when a provider appears; re-parks when it leaves', async () => {
    const consumer = await worker();
    consumer.send({ type: 'registerfunction', id: 'bus::later' });
    consumer.send({ type: 'registertrigger', id: 'p1', trigger_type: 'tt.later', function_id: 'bus::later', config: { a: 1 } });
    let listed = await waitFor(async () => {
      const list = await consumer.result('engine::registered-triggers::list', { trigger_type: 'tt.later' });
      return list.registered_triggers.length ? list : undefined;
    }, 30_000);
    expect(listed.registered_triggers[0]).toMatchObject({ id: 'p1', status: 'inactive' });
    expect(consumer.frames.find((f) => f.type === 'triggerregistrationresult')).toBeUndefined();

    const provider = await worker();
    provider.send({ type: 'registertriggertype', id: 'tt.later' });
    expect(await provider.next((f) => f.type === 'registertrigger' && f.id === 'p1')).toMatchObject({ config: { a: 1 } });
    await provider.terminate();
    await waitFor(async () => {
      listed = await consumer.result('engine::registered-triggers::list', { trigger_type: 'tt.later' });
      return listed.registered_triggers[0]?.status === 'inactive';
    });
    const next = await worker();
    next.send({ type: 'registertriggertype', id: 'tt.later' });
    expect(await next.next((f) => f.type === 'registertrigger' && f.id === 'p1')).toMatchObject({ function_id: 'bus::later' });
  });

  it('removes the bindings of a worker that disconnects and tells the provider', async () => {
    const provider = await worker();
    const consumer = await worker();
    provider.send({ type: 'registertriggertype', id: 'tt.gone' });
    provider.send({ type: 'ping' }); // its pong proves the trigger type is registered
    await provider.next((f) => f.type === 'pong', 30_000);
    consumer.send({ type: 'registertrigger', id: 'g1', trigger_type: 'tt.gone', function_id: 'x::y', config: {} });
    await provider.next((f) => f.type === 'registertrigger' && f.id === 'g1');
    await consumer.terminate();
    expect(await provider.next((f) => f.type === 'unregistertrigger' && f.id === 'g1')).toBeTruthy();
  });

  it('binds ownerless triggers through engine::register_trigger, waiting for the provider ack', async () => {
    const provider = await worker();
    const caller = await worker();
    provider.send({ type: 'registertriggertype', id: 'tt.owned' });
    provider.send({ type: 'ping' }); // its pong proves the trigger type is registered
    await provider.next((f) => f.type === 'pong', 30_000);
    const pending = caller.call('engine::register_trigger', { trigger_type: 'tt.owned', function_id: 'x::z', config: { k: 'v' } });
    const delivered = await provider.next((f) => f.type === 'registertrigger' && f.trigger_type === 'tt.owned');
    provider.send({ type: 'triggerregistrationresult', id: delivered.id, error: { code: 'trigger_registration_failed', message: 'nope' } });
    expect((await pending).error).toEqual({ code: 'trigger_registration_failed', message: 'nope' });

    const ok = caller.call('engine::register_trigger', { trigger_type: 'tt.owned', function_id: 'x::z', config: {} });
    const second = await provider.next((f) => f.type === 'registertrigger' && f.trigger_type === 'tt.owned');
    provider.send({ type: 'triggerregistrationresult', id: second.id });
    const { result } = await ok;
    expect((result as { id: string }).id).toBe(second.id);
    await caller.close(); // ownerless: survives the caller
    const other = await worker();
    const info = await other.result('engine::registered-triggers::info', { id: second.id });
    expect(info).toMatchObject({ trigger_type: 'tt.owned', function_id: 'x::z', worker_id: null });
    expect((await other.result('engine::unregister_trigger', { id: second.id })).removed).toBe(true);
    expect(await provider.next((f) => f.type === 'unregistertrigger' && f.id === second.id)).toBeTruthy();
  });
});

describe('introspection', () => {
  it('round-trips function metadata verbatim and filters internal functions', async () => {
    const w = await worker();
    w.send({
      type: 'registerfunction',
      id: 'intro::exposed',
      description: 'An exposed function',
      request_format: { type: 'object', properties: { a: { type: 'number' } } },
      metadata: { 'mcp.expose': true, 'mcp.tier': 'ops', nested: { deep: [1, 2] } },
    });
    // frames of one connection are handled in order: the list call below sees the registration
    const { functions } = await w.result<{ functions: any[] }>('engine::functions::list');
    const fn = functions.find((f) => f.function_id === 'intro::exposed');
    expect(fn).toMatchObject({
      description: 'An exposed function',
      metadata: { 'mcp.expose': true, 'mcp.tier': 'ops', nested: { deep: [1, 2] } },
      request_format: { type: 'object', properties: { a: { type: 'number' } } },
      worker_id: w.workerId,
    });
    expect(functions.some((f) => f.function_id.startsWith('engine::'))).toBe(false);
    const all = await w.result<{ functions: any[] }>('engine::functions::list', { include_internal: true });
    expect(all.functions.some((f) => f.function_id === 'engine::functions::list')).toBe(true);
    const searched = await w.result<{ functions: any[] }>('engine::functions::list', { search: 'exposed' });
    expect(searched.functions[0].function_id).toBe('intro::exposed');
    const info = await w.result('engine::functions::info', { function_ids: ['intro::exposed', 'intro::missing'] });
    expect(info.functions[0].request_schema).toEqual({ type: 'object', properties: { a: { type: 'number' } } });
    expect(info.functions[1]).toEqual({ function_id: 'intro::missing', error: 'not_found' });
  });

  it('lists a worker only after it registers with a pid, with its functions and runtime', async () => {
    const w = await worker();
    w.send({ type: 'registerfunction', id: 'intro::w1' });
    let list = await w.result<{ workers: any[]; timestamp: number }>('engine::workers::list');
    expect(list.workers.some((x) => x.id === w.workerId)).toBe(false);
    w.registerWorker('intro-worker', 4242);
    list = await waitFor(async () => {
      const l = await w.result<{ workers: any[]; timestamp: number }>('engine::workers::list');
      return l.workers.some((x) => x.id === w.workerId) ? l : null;
    });
    const record = list.workers.find((x) => x.id === w.workerId);
    expect(record).toMatchObject({
      name: 'intro-worker',
      runtime: 'node',
      pid: 4242,
      status: 'connected',
      functions: ['intro::w1'],
      function_count: 1,
    });
    expect(typeof list.timestamp).toBe('number');
    expect(list.workers.some((x) => x.runtime === 'engine' && x.name === 'eng-engine-functions')).toBe(true);
    const info = await w.result('engine::workers::info', { name: 'intro-worker' });
    expect(info.functions.map((f: any) => f.function_id)).toEqual(['intro::w1']);
  });

  it('rejects malformed introspection input with deserialization_error naming the field', async () => {
    const w = await worker();
    const result = await w.call('engine::functions::list', { include_internal: 'yes' });
    expect(result.error).toMatchObject({ code: 'deserialization_error' });
    expect((result.error as { message: string }).message).toMatch(/include_internal/);
    const missing = await w.call('engine::functions::info', {});
    expect((missing.error as { code: string }).code).toBe('deserialization_error');
  });

  it('fires engine::workers-available and engine::functions-available on changes', async () => {
    const watcher = await worker();
    watcher.send({ type: 'registerfunction', id: 'watch::workers' });
    watcher.send({ type: 'registerfunction', id: 'watch::functions' });
    watcher.send({
      type: 'registertrigger',
      id: 'w-av',
      trigger_type: 'engine::workers-available',
      function_id: 'watch::workers',
      config: {},
    });
    watcher.send({
      type: 'registertrigger',
      id: 'f-av',
      trigger_type: 'engine::functions-available',
      function_id: 'watch::functions',
      config: {},
    });
    // both bindings are active (their module holds them) before the newcomer connects
    await waitFor(async () => {
      const { registered_triggers } = await watcher.result('engine::registered-triggers::list', {});
      return ['w-av', 'f-av'].every((id) => registered_triggers.some((t: any) => t.id === id && t.status === 'active'));
    }, 30_000);
    watcher.frames.length = 0;
    const newcomer = await worker();
    const connected = await watcher.next(
      (f) => f.type === 'invokefunction' && f.function_id === 'watch::workers' && (f.data as any).worker_id === newcomer.workerId,
    );
    expect((connected.data as any).event).toBe('worker_connected');
    newcomer.send({ type: 'registerfunction', id: 'watch::new_fn' });
    const changed = await watcher.next(
      (f) =>
        f.type === 'invokefunction' &&
        f.function_id === 'watch::functions' &&
        (f.data as any).functions.some((x: any) => x.function_id === 'watch::new_fn'),
    );
    expect((changed.data as any).event).toBe('functions_changed');

    // the same id re-registered with other metadata is a change (an MCP client must learn that a
    // tool lost its exposure); replaying identical registrations is not
    newcomer.send({ type: 'registerfunction', id: 'watch::new_fn', metadata: { 'mcp.expose': true } });
    const remeta = await watcher.next(
      (f) =>
        f.type === 'invokefunction' &&
        f.function_id === 'watch::functions' &&
        (f.data as any).functions.some((x: any) => x.function_id === 'watch::new_fn' && x.metadata?.['mcp.expose'] === true),
    );
    expect((remeta.data as any).event).toBe('functions_changed');
    watcher.frames.length = 0;
    newcomer.send({ type: 'registerfunction', id: 'watch::new_fn', metadata: { 'mcp.expose': true } });
    await new Promise((r) => setTimeout(r, 400));
    expect(watcher.frames.filter((f) => f.type === 'invokefunction' && f.function_id === 'watch::functions')).toEqual([]);
  });

  it('hides bindings of internal functions unless include_internal is set', async () => {
    const ui = await worker();
    await register(ui, 'eng.ui::tab1::workers', { metadata: { internal: true } });
    ui.send({
      type: 'registertrigger',
      id: 'ui-bind',
      trigger_type: 'engine::workers-available',
      function_id: 'eng.ui::tab1::workers',
      config: {},
    });
    await waitFor(async () =>
      (await ui.result('engine::registered-triggers::list', { include_internal: true })).registered_triggers.some(
        (t: any) => t.id === 'ui-bind',
      ),
    );
    const visible = await ui.result('engine::registered-triggers::list', {});
    expect(visible.registered_triggers.some((t: any) => t.id === 'ui-bind')).toBe(false);
    const fns = await ui.result('engine::functions::list', {});
    expect(fns.functions.some((f: any) => f.function_id === 'eng.ui::tab1::workers')).toBe(false);
  });

  it('lists trigger types and their instance counts', async () => {
    const provider = await worker();
    provider.send({ type: 'registertriggertype', id: 'tt.count', description: 'counted' });
    provider.send({ type: 'registertrigger', id: 'c1', trigger_type: 'tt.count', function_id: 'a::b', config: {} });
    await provider.next((f) => f.type === 'registertrigger' && f.id === 'c1');
    const { triggers } = await provider.result<{ triggers: any[] }>('engine::triggers::list');
    expect(triggers.find((t) => t.id === 'tt.count')).toMatchObject({ description: 'counted', instance_count: 1 });
    const legacy = await provider.result<{ trigger_types: any[] }>('engine::trigger-types::list');
    expect(legacy.trigger_types.some((t) => t.id === 'tt.count')).toBe(true);
    const internal = await provider.result<{ triggers: any[] }>('engine::triggers::list', { include_internal: true });
    expect(internal.triggers.some((t) => t.id === 'engine::functions-available')).toBe(true);
  });
});

describe('channels', () => {
  it('relays text and binary frames from writer to reader, then closes the reader', async () => {
    const w = await worker();
    const { writer, reader } = await w.result('engine::channels::create', { buffer_size: 4 });
    expect(writer).toMatchObject({ direction: 'write', channel_id: reader.channel_id, access_key: reader.access_key });
    const base = `${engine.busUrl}/ws/channels/${writer.channel_id}?key=${writer.access_key}`;
    const ws = new WebSocket(`${base}&dir=write`);
    await new Promise((r) => ws.once('open', r));
    for (let i = 0; i < 10; i++) ws.send(Buffer.alloc(1000, i)); // more than the buffer: the writer is paused, not dropped
    ws.send('done');
    ws.close();
    const rs = new WebSocket(`${base}&dir=read`);
    const frames: Array<Buffer | string> = [];
    rs.on('message', (data, isBinary) => frames.push(isBinary ? (data as Buffer) : data.toString()));
    await new Promise((r) => rs.once('close', r));
    expect(frames.length).toBe(11);
    expect((frames[3] as Buffer)[0]).toBe(3);
    expect(frames[10]).toBe('done');
  });

  it('tells the reader with 1011 when the writer dies mid-stream, after delivering what it sent', async () => {
    const w = await worker();
    const { writer } = await w.result('engine::channels::create', {});
    const base = `${engine.busUrl}/ws/channels/${writer.channel_id}?key=${writer.access_key}`;
    const rs = new WebSocket(`${base}&dir=read`);
    const frames: string[] = [];
    rs.on('message', (data) => frames.push(data.toString()));
    const closed = new Promise<number>((r) => rs.once('close', (code) => r(code)));
    await new Promise((r) => rs.once('open', r));
    const ws = new WebSocket(`${base}&dir=write`);
    await new Promise((r) => ws.once('open', r));
    ws.send('part 1');
    await waitFor(() => frames.length === 1, 30_000); // the engine has relayed it
    ws.terminate(); // no close frame: the writer crashed
    expect(await closed).toBe(1011);
    expect(frames).toEqual(['part 1']);
  });

  it('streams 20 MiB to a slow reader without losing or reordering a byte', async () => {
    const w = await worker();
    const { writer } = await w.result('engine::channels::create', { buffer_size: 8 });
    const base = `${engine.busUrl}/ws/channels/${writer.channel_id}?key=${writer.access_key}`;
    const ws = new WebSocket(`${base}&dir=write`);
    await new Promise((r) => ws.once('open', r));
    const chunk = 64 * 1024;
    const total = 20 * 1024 * 1024;
    const sent = Buffer.alloc(total);
    for (let i = 0; i < total; i++) sent[i] = (i * 31 + (i >> 16)) & 0xff;
    (async () => {
      for (let offset = 0; offset < total; offset += chunk) {
        ws.send(sent.subarray(offset, offset + chunk));
        while (ws.bufferedAmount > 1024 * 1024) await new Promise((r) => setTimeout(r, 2));
      }
      ws.close(1000);
    })();
    const rs = new WebSocket(`${base}&dir=read`);
    const parts: Buffer[] = [];
    rs.on('message', (data) => {
      parts.push(data as Buffer);
      if (parts.length % 32 === 0) {
        rs.pause(); // a slow reader: stop reading for a moment
        setTimeout(() => rs.resume(), 20);
      }
    });
    const code = await new Promise<number>((r) => rs.once('close', (c) => r(c)));
    expect(code).toBe(1000);
    expect(Buffer.concat(parts).equals(sent)).toBe(true);
  }, 60_000);

  it('refuses unknown channels and wrong keys with 404, and a second taker of one end', async () => {
    const w = await worker();
    const { reader } = await w.result('engine::channels::create', {});
    const status = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`${engine.busUrl}/ws/channels/${reader.channel_id}?key=wrong&dir=read`);
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('error', () => undefined);
    });
    expect(status).toBe(404);
    const url = `${engine.busUrl}/ws/channels/${reader.channel_id}?key=${reader.access_key}&dir=read`;
    const first = new WebSocket(url);
    await new Promise((r) => first.once('open', r));
    const second = new WebSocket(url);
    const code = await new Promise<number>((r) => second.once('close', (c) => r(c)));
    expect(code).toBe(1008);
    first.close();
  });
});
