import { EngError } from '@eng/sdk';
import { registerWorker as registerIii } from 'iii-sdk-0.22.1';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import { RawClient } from '../../../test/raw-client.ts';
import { client, closeClients, functionListed } from './helpers.ts';

// eng's `cancelinvocation` (not an iii frame): a caller's AbortSignal ends the engine invocation at
// once, the executing @eng/sdk function sees `ctx.signal` abort, forwarded calls
// (engine::functions::invoke) are cancelled through, only the caller may cancel, and an iii-sdk
// executor ignores the frame and keeps working.

let engine: EngineProcess;
const raws: RawClient[] = [];
beforeAll(async () => {
  engine = await startEngine({
    workersYaml:
      '  - name: eng-observability\n    config: { trace_builtins: true }\n  - name: eng-http\n    config: { port: {{HTTP_PORT}} }\n',
  });
});
afterEach(async () => {
  await closeClients();
  await Promise.all(raws.splice(0).map((r) => r.terminate()));
});
afterAll(async () => {
  await engine?.stop();
});

type Span = { name: string; pending?: boolean; status?: unknown; attributes: [string, unknown][] };

/** A function that waits for its signal and reports what it saw. */
function waiter(seen: Array<{ id: string | undefined; reason: unknown; at: number }>) {
  const executor = client(engine.busUrl, { name: 'cancel-executor' });
  executor.registerFunction('cancel::wait', (_input, ctx) => {
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve('ran to the end'), 20_000);
      ctx.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        seen.push({ id: ctx.invocationId, reason: ctx.signal.reason, at: Date.now() });
        resolve('stopped');
      });
    });
  });
  return executor;
}

async function activeOf(c: { call: <T>(id: string, payload: unknown) => Promise<T> }, name: string): Promise<number | undefined> {
  const { workers } = await c.call<{ workers: Array<{ name: string; active_invocations: number }> }>('engine::workers::list', {});
  return workers.find((w) => w.name === name)?.active_invocations;
}

describe('cancelling a call', () => {
  it("aborts the executing function's signal, ends the engine invocation and rejects the caller", async () => {
    const seen: Array<{ id: string | undefined; reason: unknown; at: number }> = [];
    waiter(seen);
    const caller = client(engine.busUrl, { name: 'cancel-caller' });
    await functionListed(caller, 'cancel::wait');
    const abort = new AbortController();
    const call = caller.trigger({ function_id: 'cancel::wait', payload: {}, signal: abort.signal });
    await waitFor(async () => (await activeOf(caller, 'cancel-executor')) === 1);
    const t0 = Date.now();
    abort.abort('the user pressed stop');
    const err = (await call.catch((e) => e)) as EngError;
    expect(err).toBeInstanceOf(EngError);
    expect(err.code).toBe('invocation_cancelled');
    await waitFor(() => seen.length === 1);
    expect(seen[0]?.at).toBeGreaterThanOrEqual(t0);
    const reason = seen[0]?.reason as EngError;
    expect(reason.code).toBe('invocation_cancelled');
    expect(reason.message).toContain('the user pressed stop');
    // the engine no longer counts the call against its executor
    await waitFor(async () => (await activeOf(caller, 'cancel-executor')) === 0);
    // the worker still serves calls
    const again = new AbortController();
    const second = caller.trigger({ function_id: 'cancel::wait', payload: {}, signal: again.signal });
    await waitFor(async () => (await activeOf(caller, 'cancel-executor')) === 1);
    again.abort();
    expect(((await second.catch((e) => e)) as EngError).code).toBe('invocation_cancelled');
    await waitFor(() => seen.length === 2);
  });

  it('cancels the call a guarded invoke became, and its engine span ends cancelled', async () => {
    const seen: Array<{ id: string | undefined; reason: unknown; at: number }> = [];
    waiter(seen);
    const caller = client(engine.busUrl, { name: 'cancel-caller' });
    await functionListed(caller, 'cancel::wait');
    const abort = new AbortController();
    const traceId = 'ca'.repeat(16);
    const call = caller.trigger({
      function_id: 'engine::functions::invoke',
      payload: { function_id: 'cancel::wait', payload: {} },
      signal: abort.signal,
      traceparent: `00-${traceId}-${'b3'.repeat(8)}-01`,
    });
    await waitFor(async () => (await activeOf(caller, 'cancel-executor')) === 1);
    abort.abort();
    expect(((await call.catch((e) => e)) as EngError).code).toBe('invocation_cancelled');
    await waitFor(() => seen.length === 1);
    const span = await waitFor(async () => {
      const { spans } = await caller.call<{ spans: Span[] }>('engine::traces::spans', { trace_id: traceId, include_internal: true });
      return spans.find((s) => s.name === 'call engine::functions::invoke' && !s.pending);
    });
    expect(JSON.stringify(span)).toContain('invocation_cancelled');
    await waitFor(async () => (await activeOf(caller, 'cancel-executor')) === 0);
  });

  it('cannot be done by a worker that did not make the call, even knowing the invocation id', async () => {
    const seen: Array<{ id: string | undefined; reason: unknown; at: number }> = [];
    const ids: string[] = [];
    const executor = client(engine.busUrl, { name: 'cancel-executor' });
    executor.registerFunction('cancel::wait_id', (_input, ctx) => {
      ids.push(ctx.invocationId as string);
      return new Promise((resolve) => {
        const timer = setTimeout(() => resolve('ran to the end'), 1500);
        ctx.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          seen.push({ id: ctx.invocationId, reason: ctx.signal.reason, at: Date.now() });
          resolve('stopped');
        });
      });
    });
    const caller = client(engine.busUrl, { name: 'cancel-caller' });
    await functionListed(caller, 'cancel::wait_id');
    const call = caller.trigger({ function_id: 'cancel::wait_id', payload: {} });
    await waitFor(() => ids.length === 1);
    const intruder = await RawClient.worker(engine.busUrl);
    raws.push(intruder);
    intruder.send({ type: 'cancelinvocation', invocation_id: ids[0], reason: 'hostile' });
    // a malformed cancel is dropped, the connection stays up
    intruder.send({ type: 'cancelinvocation', invocation_id: 'not-a-uuid' });
    expect(await call).toBe('ran to the end');
    expect(seen).toEqual([]);
    expect(intruder.isOpen).toBe(true);
  });

  it("an HTTP client that hangs up before its answer cancels the handler's call", async () => {
    const seen: Array<{ id: string | undefined; reason: unknown; at: number }> = [];
    const executor = waiter(seen);
    executor.registerTrigger({ type: 'http', function_id: 'cancel::wait', config: { api_path: 'cancel/wait', http_method: 'GET' } });
    const caller = client(engine.busUrl, { name: 'cancel-caller' });
    await functionListed(caller, 'cancel::wait');
    const url = `http://127.0.0.1:${engine.ports.HTTP}/cancel/wait`;
    await waitFor(async () => {
      // the route is up once a request reaches the handler; that request is given up at once
      const abort = new AbortController();
      const request = fetch(url, { signal: abort.signal }).catch(() => undefined);
      const reached = await waitFor(async () => (await activeOf(caller, 'cancel-executor')) === 1, 1000).catch(() => false);
      if (!reached) {
        abort.abort();
        await request;
        return false;
      }
      const t0 = Date.now();
      abort.abort();
      await request;
      // the handler's signal aborts, naming why, and the engine no longer counts the call
      await waitFor(() => seen.length === 1, 5000);
      expect((seen[0]?.at ?? Number.POSITIVE_INFINITY) - t0).toBeLessThan(3000);
      expect(String((seen[0]?.reason as Error)?.message ?? seen[0]?.reason)).toContain('HTTP client closed the connection');
      await waitFor(async () => (await activeOf(caller, 'cancel-executor')) === 0, 5000);
      return true;
    }, 10_000);
  });

  it('an abort before the call is sent never reaches the engine', async () => {
    const caller = client(engine.busUrl, { name: 'cancel-caller' });
    const abort = new AbortController();
    abort.abort();
    const err = (await caller
      .trigger({ function_id: 'engine::workers::list', payload: {}, signal: abort.signal })
      .catch((e) => e)) as EngError;
    expect(err.code).toBe('invocation_cancelled');
  });

  it('an iii-sdk executor ignores the cancel: its function runs on and it keeps serving', async () => {
    const iii = registerIii(engine.busUrl, { workerName: 'iii-executor', otel: { enabled: false }, reconnectionConfig: { maxRetries: 0 } });
    const finished: string[] = [];
    iii.registerFunction('cancel::iii_slow', async (input: { tag: string }) => {
      await new Promise((r) => setTimeout(r, 400));
      finished.push(input.tag);
      return { tag: input.tag };
    });
    try {
      const caller = client(engine.busUrl, { name: 'cancel-caller' });
      await functionListed(caller, 'cancel::iii_slow');
      const abort = new AbortController();
      const call = caller.trigger({ function_id: 'cancel::iii_slow', payload: { tag: 'first' }, signal: abort.signal });
      await waitFor(async () => (await activeOf(caller, 'iii-executor')) === 1);
      abort.abort();
      expect(((await call.catch((e) => e)) as EngError).code).toBe('invocation_cancelled');
      // the engine ended the call; the iii function did not hear of it and finished
      expect(await activeOf(caller, 'iii-executor')).toBe(0);
      await waitFor(() => finished.includes('first'));
      expect(await caller.call('cancel::iii_slow', { tag: 'second' })).toEqual({ tag: 'second' });
    } finally {
      await iii.shutdown();
    }
  });
});
