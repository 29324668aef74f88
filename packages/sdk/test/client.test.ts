import { EngError, ErrorCode, TriggerAction } from '@eng/sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, freePort, startEngine, waitFor } from '../../../test/harness.ts';
import { client, closeClients, deferred, functionListed, sleep } from './helpers.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

let engine: EngineProcess;
beforeAll(async () => {
  engine = await startEngine({ workersYaml: '  - name: eng-queue\n    config:\n      adapter: { name: memory }\n' });
});
afterEach(closeClients);
afterAll(async () => {
  await engine?.stop();
});

interface WorkerListing {
  workers: Array<{
    id: string;
    name: string;
    runtime: string | null;
    version: string | null;
    pid: number | null;
    description: string | null;
  }>;
}

describe('connecting', () => {
  it('becomes ready with the worker id the engine assigned, and is listed with its pid', async () => {
    const worker = client(engine.busUrl, { name: 'sdk-test-worker', description: 'lists itself' });
    expect(worker.workerId).toBeUndefined();
    await worker.ready({ timeoutMs: 5000 });
    expect(worker.workerId).toMatch(UUID);

    const listing = await waitFor(async () => {
      const { workers } = await worker.call<WorkerListing>('engine::workers::list', {});
      return workers.find((w) => w.id === worker.workerId && w.pid !== null);
    });
    expect(listing).toMatchObject({
      name: 'sdk-test-worker',
      description: 'lists itself',
      runtime: 'node',
      version: '0.1.0',
      pid: process.pid,
    });
  });

  it('emits connected with the worker id', async () => {
    const worker = client(engine.busUrl);
    const connected = deferred<string>();
    worker.on('connected', ({ workerId }) => connected.resolve(workerId));
    await worker.ready();
    expect(await connected.promise).toBe(worker.workerId);
  });

  it('rejects ready() with not_connected when no engine listens and reconnecting is off', async () => {
    const port = await freePort();
    const worker = client(`ws://127.0.0.1:${port}`, { reconnect: { maxRetries: 0 } });
    const error = await worker.ready({ timeoutMs: 5000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EngError);
    expect((error as EngError).code).toBe(ErrorCode.NotConnected);
    // calls on a client that gave up fail at once instead of waiting for their timeout
    await expect(worker.call('anything')).rejects.toMatchObject({ code: 'not_connected' });
  });

  it('rejects ready() on its timeout while the engine is unreachable, then close() fails queued calls', async () => {
    const port = await freePort();
    const worker = client(`ws://127.0.0.1:${port}`, { reconnect: { initialDelayMs: 50, maxDelayMs: 100 } });
    await expect(worker.ready({ timeoutMs: 300 })).rejects.toMatchObject({ code: 'not_connected' });
    const queued = worker.call('t::never', {}, { timeoutMs: 60_000 });
    await worker.close();
    await expect(queued).rejects.toMatchObject({ code: 'not_connected' });
  });
});

describe('calling functions', () => {
  it('round-trips a payload between two workers, with the caller id injected', async () => {
    const executor = client(engine.busUrl);
    const caller = client(engine.busUrl);
    let seenCaller: string | undefined;
    executor.registerFunction('sdk::echo', (input, ctx) => {
      seenCaller = ctx.callerWorkerId;
      return input;
    });
    await Promise.all([executor.ready(), caller.ready()]);
    await functionListed(caller, 'sdk::echo');

    const result = await caller.trigger({ function_id: 'sdk::echo', payload: { x: 1, nested: { list: [1, 'two'] } } });
    expect(result).toEqual({ x: 1, nested: { list: [1, 'two'] }, _caller_worker_id: caller.workerId });
    expect(seenCaller).toBe(caller.workerId);
    expect(await caller.call('sdk::echo', 'plain string')).toBe('plain string');
  });

  it('rejects with invocation_failed, the message and the stack when the handler throws', async () => {
    const executor = client(engine.busUrl);
    executor.registerFunction('sdk::boom', () => {
      throw new Error('kaboom: bad input');
    });
    executor.registerFunction('sdk::boom-async', async () => Promise.reject(new Error('async kaboom')));
    await executor.ready();
    await functionListed(executor, 'sdk::boom-async');

    const error = (await executor.call('sdk::boom', {}).catch((e: unknown) => e)) as EngError;
    expect(error).toBeInstanceOf(EngError);
    expect(error.code).toBe('invocation_failed');
    expect(error.message).toBe('kaboom: bad input');
    expect(error.stacktrace).toContain('client.test.ts');
    await expect(executor.call('sdk::boom-async')).rejects.toMatchObject({ code: 'invocation_failed', message: 'async kaboom' });
  });

  it('keeps the code of an EngError thrown by a handler', async () => {
    const executor = client(engine.busUrl);
    executor.registerFunction('sdk::not-found', () => {
      throw new EngError('NOT_FOUND', 'order 42 does not exist');
    });
    await executor.ready();
    await functionListed(executor, 'sdk::not-found');
    await expect(executor.call('sdk::not-found')).rejects.toMatchObject({ code: 'NOT_FOUND', message: 'order 42 does not exist' });
  });

  it('rejects with function_not_found for an unknown function', async () => {
    const caller = client(engine.busUrl);
    await caller.ready();
    await expect(caller.call('sdk::does-not-exist', {})).rejects.toMatchObject({
      code: 'function_not_found',
      message: 'Function sdk::does-not-exist not found',
    });
  });

  it('rejects with TIMEOUT when the result does not arrive within timeoutMs', async () => {
    const executor = client(engine.busUrl);
    executor.registerFunction('sdk::slow', () => sleep(1500).then(() => 'late'));
    await executor.ready();
    await functionListed(executor, 'sdk::slow');
    const started = Date.now();
    const error = (await executor.trigger({ function_id: 'sdk::slow', payload: {}, timeoutMs: 200 }).catch((e: unknown) => e)) as EngError;
    expect(error).toBeInstanceOf(EngError);
    expect(error.code).toBe('TIMEOUT');
    expect(error.message).toBe('invocation timed out after 200ms');
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('fires void calls without waiting, and the handler still runs', async () => {
    const executor = client(engine.busUrl);
    const ran = deferred<unknown>();
    executor.registerFunction('sdk::fire', async (input) => {
      await sleep(300);
      ran.resolve(input);
      return 'ignored';
    });
    await executor.ready();
    await functionListed(executor, 'sdk::fire');
    const started = Date.now();
    const result = await executor.trigger({ function_id: 'sdk::fire', payload: { n: 7 }, action: TriggerAction.Void() });
    expect(result).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(250);
    expect(await ran.promise).toMatchObject({ n: 7 });
  });

  it('enqueues: resolves a message receipt at once, and the function runs later through the queue', async () => {
    const executor = client(engine.busUrl);
    const ran = deferred<unknown>();
    executor.registerFunction('sdk::queued', (input) => {
      ran.resolve(input);
      return null;
    });
    await executor.ready();
    await functionListed(executor, 'sdk::queued');
    const receipt = await executor.trigger({
      function_id: 'sdk::queued',
      payload: { job: 3 },
      action: TriggerAction.Enqueue({ queue: 'default' }),
    });
    expect(receipt).toEqual({ messageReceiptId: expect.stringMatching(UUID) });
    expect(await ran.promise).toMatchObject({ job: 3 });
  });

  it('passes trigger({metadata}) to the handler as ctx.metadata', async () => {
    const executor = client(engine.busUrl);
    const caller = client(engine.busUrl);
    const seen = deferred<{ metadata: unknown; functionId: string; invocationId: string | undefined }>();
    executor.registerFunction('sdk::meta', (_input, ctx) => {
      seen.resolve({ metadata: ctx.metadata, functionId: ctx.functionId, invocationId: ctx.invocationId });
      return null;
    });
    await Promise.all([executor.ready(), caller.ready()]);
    await functionListed(caller, 'sdk::meta');
    await caller.trigger({ function_id: 'sdk::meta', payload: {}, metadata: { tenant: 't1', tags: ['a'] } });
    const ctx = await seen.promise;
    expect(ctx.metadata).toEqual({ tenant: 't1', tags: ['a'] });
    expect(ctx.functionId).toBe('sdk::meta');
    expect(ctx.invocationId).toMatch(UUID);
  });

  it('sends an absent payload as null and resolves an absent result as undefined', async () => {
    const executor = client(engine.busUrl);
    let seen: unknown = 'not called';
    executor.registerFunction('sdk::nothing', (input) => {
      seen = input;
      return undefined;
    });
    await executor.ready();
    await functionListed(executor, 'sdk::nothing');
    expect(await executor.call('sdk::nothing')).toBeUndefined();
    expect(seen).toBeNull();
  });

  it('rejects a payload that cannot be serialised without sending it', async () => {
    const caller = client(engine.busUrl);
    await caller.ready();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    await expect(caller.call('sdk::echo', cyclic)).rejects.toMatchObject({ code: 'serialization_error' });
  });

  it('refuses to register the same function id twice on one client, and allows it again after unregister', async () => {
    const worker = client(engine.busUrl);
    const ref = worker.registerFunction('sdk::once', () => 1);
    expect(() => worker.registerFunction('sdk::once', () => 2)).toThrow(/already registered/);
    await worker.ready();
    await functionListed(worker, 'sdk::once');
    ref.unregister();
    await functionListed(worker, 'sdk::once', false);
    worker.registerFunction('sdk::once', () => 2);
    await functionListed(worker, 'sdk::once');
    expect(await worker.call('sdk::once')).toBe(2);
  });

  it('survives listeners and handlers that throw', async () => {
    const worker = client(engine.busUrl);
    worker.on('connected', () => {
      throw new Error('listener bug');
    });
    worker.registerFunction('sdk::throws-string', () => {
      throw 'a string, not an Error';
    });
    await worker.ready();
    await functionListed(worker, 'sdk::throws-string');
    await expect(worker.call('sdk::throws-string')).rejects.toMatchObject({ code: 'invocation_failed', message: 'a string, not an Error' });
  });
});
