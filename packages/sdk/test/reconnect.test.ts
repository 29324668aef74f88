import type { EngClient } from '@eng/sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine } from '../../../test/harness.ts';
import { client, closeClients, deferred, functionListed, recordingWebSocket } from './helpers.ts';

// spec: engine-protocol §2.7 (on-open order), §2.9 (reconnect, queued calls), §2.10 (heartbeat)

let engine: EngineProcess;
beforeAll(async () => {
  engine = await startEngine();
});
afterEach(closeClients);
afterAll(async () => {
  await engine?.stop();
});

const fastReconnect = { initialDelayMs: 50, maxDelayMs: 250, jitter: 0 };

function frameTypes(sent: string[]): Array<{ type: string; [key: string]: unknown }> {
  return sent.map((text) => JSON.parse(text) as { type: string });
}

/** Resolves on the next `connected` event after now. */
function nextConnected(c: EngClient): Promise<string> {
  return new Promise((resolve) => {
    const off = c.on('connected', ({ workerId }) => {
      off();
      resolve(workerId);
    });
  });
}

describe('reconnecting', () => {
  it('replays registrations after an engine restart, reattach first, and the function is callable again', async () => {
    const sent: string[] = [];
    const worker = client(engine.busUrl, { reconnect: fastReconnect, WebSocket: recordingWebSocket(sent) });
    worker.registerTriggerType({ id: 'sdk.replay' }, { registerTrigger() {}, unregisterTrigger() {} });
    worker.registerFunction('sdk::survivor', (input: { n: number }) => input.n * 2);
    worker.registerTrigger({ type: 'sdk.replay', function_id: 'sdk::survivor', config: { every: 'restart' } });
    await worker.ready();
    const firstId = worker.workerId as string;
    await functionListed(worker, 'sdk::survivor');

    const events: string[] = [];
    worker.on('disconnected', () => events.push('disconnected'));
    worker.on('reconnecting', () => events.push('reconnecting'));
    const reconnected = nextConnected(worker);
    sent.length = 0;
    await engine.restart();
    const secondId = await reconnected;

    expect(secondId).not.toBe(firstId);
    expect(worker.workerId).toBe(secondId);
    expect(events[0]).toBe('disconnected');
    expect(events).toContain('reconnecting');

    // spec §2.7: reattach, trigger types, functions, triggers, (queued calls), worker registration
    const frames = frameTypes(sent);
    expect(frames.map((f) => f.type).slice(0, 5)).toEqual([
      'reattach',
      'registertriggertype',
      'registerfunction',
      'registertrigger',
      'invokefunction',
    ]);
    expect(frames[0]).toMatchObject({ previous_worker_id: firstId, reattach_token: expect.any(String) });
    expect(frames[4]).toMatchObject({ function_id: 'engine::workers::register', action: { type: 'void' } });

    const caller = client(engine.busUrl);
    await caller.ready();
    await functionListed(caller, 'sdk::survivor');
    expect(await caller.call('sdk::survivor', { n: 21 })).toBe(42);
  });

  it('queues calls made while the engine is down and sends them once it is back', async () => {
    const caller = client(engine.busUrl, { reconnect: fastReconnect });
    await caller.ready();
    const down = deferred();
    caller.on('disconnected', () => down.resolve());
    await engine.stop();
    await down.promise;
    expect(caller.workerId).toBeUndefined();

    // issued while disconnected: queued, not failed, and answered by the restarted engine
    const result = caller.call<{ functions: Array<{ function_id: string }> }>(
      'engine::functions::list',
      { include_internal: true },
      { timeoutMs: 20_000 },
    );
    await engine.restart();
    const { functions } = await result;
    expect(functions.map((f) => f.function_id)).toContain('engine::functions::list');
  });

  it('fails a call already sent when the connection dies, at once and with invocation_stopped, not at its timeout', async () => {
    const slow = client(engine.busUrl, { reconnect: fastReconnect });
    const started = deferred();
    slow.registerFunction('sdk::never-answers', () => {
      started.resolve();
      return new Promise(() => undefined);
    });
    await slow.ready();
    const caller = client(engine.busUrl, { reconnect: fastReconnect });
    await caller.ready();
    await functionListed(caller, 'sdk::never-answers');
    const pending = caller.call('sdk::never-answers', {}, { timeoutMs: 30_000 });
    const outcome = pending.then(
      () => ({ code: 'resolved', at: Date.now() }),
      (err: { code: string; message: string }) => ({ code: err.code, message: err.message, at: Date.now() }),
    );
    await started.promise;
    const killedAt = Date.now();
    await engine.kill();
    const result = await outcome;
    expect(result).toMatchObject({ code: 'invocation_stopped', message: 'the connection to the engine closed before the result arrived' });
    expect(result.at - killedAt).toBeLessThan(5_000);

    // a call made while it is down still waits for the next open and is answered then
    const queued = caller.call<{ functions: unknown[] }>('engine::functions::list', {}, { timeoutMs: 30_000 });
    await engine.restart();
    expect(Array.isArray((await queued).functions)).toBe(true);
  });

  it('replays what was registered during the outage, not what was unregistered, and never sends calls that timed out', async () => {
    const worker = client(engine.busUrl, { reconnect: fastReconnect });
    const gone = worker.registerFunction('sdk::gone', () => 'should not exist');
    await worker.ready();
    const down = deferred();
    worker.on('disconnected', () => down.resolve());
    await engine.stop();
    await down.promise;

    let lateRuns = 0;
    worker.registerFunction('sdk::added-offline', () => {
      lateRuns++;
      return 'added while offline';
    });
    gone.unregister();
    // times out while queued: must not reach the engine after the restart
    await expect(worker.call('sdk::added-offline', {}, { timeoutMs: 100 })).rejects.toMatchObject({ code: 'TIMEOUT' });

    await engine.restart();
    await worker.ready();
    await functionListed(worker, 'sdk::added-offline');
    expect(await worker.call('sdk::added-offline')).toBe('added while offline');
    expect(lateRuns).toBe(1);
    await expect(worker.call('sdk::gone')).rejects.toMatchObject({ code: 'function_not_found' });
  });

  it('drops a connection that has gone silent and reconnects when the engine answers again', async () => {
    const worker = client(engine.busUrl, { heartbeatMs: 100, reconnect: fastReconnect });
    await worker.ready();
    const firstId = worker.workerId;
    const dropped = deferred<number>();
    worker.on('disconnected', ({ code }) => dropped.resolve(code));
    const started = Date.now();
    // a frozen engine keeps its TCP sockets open but answers nothing: only the heartbeat can tell
    engine.process.kill('SIGSTOP');
    try {
      expect(await dropped.promise).toBe(1006);
      expect(Date.now() - started).toBeLessThan(1500);
    } finally {
      engine.process.kill('SIGCONT');
    }
    const back = await nextConnected(worker);
    expect(back).not.toBe(firstId);
  });

  it('does not blame the engine for a stall of its own process: a blocked event loop is no silence', async () => {
    const worker = client(engine.busUrl, { heartbeatMs: 100, reconnect: fastReconnect });
    const drops: number[] = [];
    worker.on('disconnected', ({ code }) => drops.push(code));
    await worker.ready();
    const id = worker.workerId;
    await new Promise((r) => setTimeout(r, 150));
    for (let stall = 0; stall < 3; stall++) {
      // five idle limits of synchronous work: no ping goes out and no pong is read meanwhile
      const until = Date.now() + 1500;
      while (Date.now() < until) {
        // busy
      }
      await new Promise((r) => setTimeout(r, 400));
    }
    expect(drops).toEqual([]);
    expect(worker.workerId).toBe(id);
    expect(await worker.call('engine::health::check', {})).toMatchObject({ status: 'healthy' });
  });

  it('keeps an idle connection open with heartbeats', async () => {
    const worker = client(engine.busUrl, { heartbeatMs: 100, reconnect: fastReconnect });
    const drops: number[] = [];
    worker.on('disconnected', ({ code }) => drops.push(code));
    await worker.ready();
    const id = worker.workerId;
    // 10 heartbeat intervals, more than 3 idle limits: only pongs keep it alive
    await new Promise((r) => setTimeout(r, 1000));
    expect(drops).toEqual([]);
    expect(worker.workerId).toBe(id);
  });

  it('stops reconnecting after close() and fails calls issued afterwards', async () => {
    const worker = client(engine.busUrl, { reconnect: fastReconnect });
    await worker.ready();
    const reconnecting: number[] = [];
    worker.on('reconnecting', ({ attempt }) => reconnecting.push(attempt));
    await worker.close();
    await expect(worker.call('engine::workers::list', {})).rejects.toMatchObject({ code: 'not_connected' });
    await expect(worker.ready()).rejects.toMatchObject({ code: 'not_connected' });
    await new Promise((r) => setTimeout(r, 300));
    expect(reconnecting).toEqual([]);
  });

  it('gives up after maxRetries and rejects ready() and pending calls with not_connected', async () => {
    const worker = client(engine.busUrl, { reconnect: { ...fastReconnect, maxRetries: 2 } });
    await worker.ready();
    const failed = deferred<string>();
    worker.on('error', (error) => failed.resolve(error.code));
    await engine.stop();
    const queued = worker.call('sdk::anything', {}, { timeoutMs: 30_000 });
    expect(await failed.promise).toBe('not_connected');
    await expect(queued).rejects.toMatchObject({ code: 'not_connected' });
    await expect(worker.ready()).rejects.toMatchObject({ code: 'not_connected' });
    await engine.restart();
  });
});
