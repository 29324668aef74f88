import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import { RawClient } from '../../../test/raw-client.ts';

// engine::functions::invoke (the re-check and the call in one step, eng-mcp's every tools/call):
// the inner call is the caller's own. Its outcome is the guarded call's outcome, its deadline
// holds, its trace hangs under the guarded call's span, and a caller that leaves ends both.

let engine: EngineProcess;
const clients: RawClient[] = [];
async function worker(): Promise<RawClient & { workerId: string }> {
  const client = await RawClient.worker(engine.busUrl);
  clients.push(client);
  return client;
}

type Span = {
  span_id: string;
  parent_span_id?: string | null;
  name: string;
  status?: unknown;
  pending?: boolean;
  attributes: [string, unknown][];
};

beforeAll(async () => {
  engine = await startEngine({
    workersYaml: `  - name: eng-observability
    config: { trace_builtins: true }
  - name: eng-state
    config: { adapter: { name: kv, config: { store_method: in_memory } } }
`,
  });
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.terminate()));
  await engine.stop();
});

const GUARD = { metadata: { 'mcp.expose': true } };
let executor: RawClient & { workerId: string };

/** The guarded call's engine span in `traceId` (trace_builtins gives in-process built-ins one), once it ended. */
async function guardedSpan(caller: RawClient, traceId: string): Promise<Span> {
  return waitFor(async () => {
    const { spans } = await caller.result<{ spans: Span[] }>('engine::traces::spans', { trace_id: traceId, include_internal: true });
    return spans.find((s) => s.name === 'call engine::functions::invoke' && !s.pending);
  });
}
const attribute = (span: Span, key: string) => span.attributes.find(([k]) => k === key)?.[1];
let traces = 0;
const newTrace = () => {
  const traceId = (++traces).toString(16).padStart(32, 'c');
  return { traceId, traceparent: `00-${traceId}-${'b2'.repeat(8)}-01` };
};

beforeAll(async () => {
  executor = await worker();
  for (const id of ['guard::echo', 'guard::slow']) executor.send({ type: 'registerfunction', id, metadata: { 'mcp.expose': true } });
  await waitFor(async () => {
    const { functions } = await executor.result<{ functions: { function_id: string }[] }>('engine::functions::list', {});
    return functions.filter((f) => f.function_id.startsWith('guard::')).length === 2;
  });
});

describe('engine::functions::invoke', () => {
  it("answers with the inner call's result, in the caller's trace, under its own span", async () => {
    const caller = await worker();
    const { traceId, traceparent } = newTrace();
    const pending = caller.call(
      'engine::functions::invoke',
      // a payload may not choose its caller: the engine writes the real one
      { function_id: 'guard::echo', payload: { n: 1, _caller_worker_id: executor.workerId }, expect: GUARD, unknown_key: 'ignored' },
      { traceparent, metadata: { mcp: { session: 's1' } } },
    );
    const inner = await executor.next((f) => f.type === 'invokefunction' && f.function_id === 'guard::echo');
    expect(inner.data).toEqual({ n: 1, _caller_worker_id: caller.workerId });
    expect(inner.metadata).toEqual({ mcp: { session: 's1' } });
    executor.send({ type: 'invocationresult', invocation_id: inner.invocation_id, result: { ok: 1, list: [1, 'two', null] } });
    const answer = await pending;
    expect(answer.result).toEqual({ ok: 1, list: [1, 'two', null] });
    expect(answer.error).toBeUndefined();

    const span = await guardedSpan(caller, traceId);
    expect(span.parent_span_id).toBe('b2'.repeat(8));
    expect(span.status).toBe('ok');
    expect(attribute(span, 'eng.invocation.id')).toBe(answer.invocation_id);
    // the executor runs under the guarded call's span
    expect(inner.traceparent).toBe(`00-${traceId}-${span.span_id}-01`);
  });

  it("answers with the inner call's error as the function gave it, and its deadline holds", async () => {
    const caller = await worker();
    const failed = newTrace();
    const failing = caller.call(
      'engine::functions::invoke',
      { function_id: 'guard::echo', payload: {}, expect: GUARD },
      { traceparent: failed.traceparent },
    );
    const inner = await executor.next((f) => f.type === 'invokefunction' && f.function_id === 'guard::echo');
    executor.send({
      type: 'invocationresult',
      invocation_id: inner.invocation_id,
      error: { code: 'E_SKU', message: 'no such sku', stacktrace: 'at sku (shop.ts:1)' },
    });
    expect((await failing).error).toEqual({ code: 'E_SKU', message: 'no such sku', stacktrace: 'at sku (shop.ts:1)' });
    expect((await guardedSpan(caller, failed.traceId)).status).toBe('error');

    // guard::slow never answers: timeout_ms ends the inner call, and with it the guarded one
    const slow = newTrace();
    const started = Date.now();
    const timedOut = await caller.call(
      'engine::functions::invoke',
      { function_id: 'guard::slow', payload: {}, expect: GUARD, timeout_ms: 300 },
      { traceparent: slow.traceparent },
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(timedOut.error).toMatchObject({ code: 'TIMEOUT', message: 'invocation timed out after 300ms' });
    expect((await guardedSpan(caller, slow.traceId)).status).toBe('error');
  });

  it('ends the guarded call when its caller leaves while the inner call runs', async () => {
    const caller = await worker();
    const { traceId, traceparent } = newTrace();
    void caller
      .call('engine::functions::invoke', { function_id: 'guard::slow', payload: {}, expect: GUARD }, { traceparent })
      .catch(() => undefined);
    await executor.next((f) => f.type === 'invokefunction' && f.function_id === 'guard::slow');
    // the guarded call is in flight: its span is pending until the caller goes
    await caller.terminate();
    const span = await guardedSpan(executor, traceId);
    expect(span.status).toBe('error');
    expect(JSON.stringify(span)).toMatch(/Invocation abandoned: the caller disconnected/);

    // a guarded call of a guarded call: both end
    const nestedCaller = await worker();
    const nested = newTrace();
    void nestedCaller
      .call(
        'engine::functions::invoke',
        { function_id: 'engine::functions::invoke', payload: { function_id: 'guard::slow', payload: {}, expect: GUARD } },
        { traceparent: nested.traceparent },
      )
      .catch(() => undefined);
    await executor.next(
      (f) => f.type === 'invokefunction' && f.function_id === 'guard::slow' && String(f.traceparent).includes(nested.traceId),
    );
    await nestedCaller.terminate();
    const both = await waitFor(async () => {
      const { spans } = await executor.result<{ spans: Span[] }>('engine::traces::spans', {
        trace_id: nested.traceId,
        include_internal: true,
      });
      const ended = spans.filter((s) => s.name === 'call engine::functions::invoke' && !s.pending);
      return ended.length === 2 ? ended : undefined;
    });
    for (const s of both) expect(JSON.stringify(s)).toMatch(/Invocation abandoned: the caller disconnected/);
  });

  it('forwards to in-process functions too: state::set and state::get through the guard', async () => {
    const caller = await worker();
    const set = await caller.call('engine::functions::invoke', {
      function_id: 'state::set',
      payload: { scope: 'guarded', key: 'k', value: { deep: { list: [1, 2, 3] }, text: 'é"\n' } },
      expect: {},
    });
    expect(set.error).toBeUndefined();
    const got = await caller.call('engine::functions::invoke', { function_id: 'state::get', payload: { scope: 'guarded', key: 'k' } });
    expect(got.result).toEqual({ deep: { list: [1, 2, 3] }, text: 'é"\n' });

    // guarded calls nested as deep as a frame may go: each forwards to the next, the answer comes back whole
    let input: Record<string, unknown> = { function_id: 'state::get', payload: { scope: 'guarded', key: 'k' } };
    for (let depth = 0; depth < 120; depth++) input = { function_id: 'engine::functions::invoke', payload: input };
    const deep = await caller.call('engine::functions::invoke', input);
    expect(deep.result).toEqual({ deep: { list: [1, 2, 3] }, text: 'é"\n' });
    // deeper than a frame may hold: refused with a reason, and the engine keeps serving
    for (let depth = 0; depth < 20; depth++) input = { function_id: 'engine::functions::invoke', payload: input };
    const refused = await caller.call('engine::functions::invoke', input);
    expect(refused.error).toMatchObject({ code: 'JSON_TOO_DEEP' });
    expect(
      (await caller.call('engine::functions::invoke', { function_id: 'state::get', payload: { scope: 'guarded', key: 'k' } })).result,
    ).toBeDefined();
  });

  it('refuses malformed input with deserialization_error naming the field, before anything runs', async () => {
    const caller = await worker();
    const cases: Array<[unknown, RegExp]> = [
      [{ payload: {} }, /function_id/],
      [{ function_id: '' }, /function_id/],
      [{ function_id: 7 }, /function_id/],
      [{ function_id: 'guard::echo', timeout_ms: 0 }, /timeout_ms/],
      [{ function_id: 'guard::echo', timeout_ms: 1.5 }, /timeout_ms/],
      [{ function_id: 'guard::echo', timeout_ms: '5' }, /timeout_ms/],
      [{ function_id: 'guard::echo', timeout_ms: null }, /timeout_ms/],
      [{ function_id: 'guard::echo', expect: null }, /expect/],
      [{ function_id: 'guard::echo', expect: [] }, /expect/],
      [{ function_id: 'guard::echo', expect: { metadata: [] } }, /metadata/],
      [{ function_id: 'guard::echo', expect: { metadata: 'x' } }, /metadata/],
      ['guard::echo', /object/i],
      [[], /object/i],
    ];
    for (const [input, message] of cases) {
      const answer = await caller.call('engine::functions::invoke', input);
      expect(answer.error, JSON.stringify(input)).toMatchObject({ code: 'deserialization_error' });
      expect((answer.error as { message: string }).message, JSON.stringify(input)).toMatch(message);
    }
    await expect(executor.next((f) => f.type === 'invokefunction' && f.function_id === 'guard::echo', 300)).rejects.toThrow();
  });
});
