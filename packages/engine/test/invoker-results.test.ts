import { describe, expect, it } from 'vitest';
import { FunctionRegistry } from '../src/core/functions.ts';
import { type InvokeOutcome, Invoker, JsonText, stampCaller } from '../src/core/invoker.ts';
import { WorkerRegistry } from '../src/core/workers.ts';
import { Logger } from '../src/log.ts';

// An in-process function may answer with JSON text (JsonText: state values are stored as JSON).
// A target that writes JSON anyway (the bus reply) gets the text untouched; every other caller
// (HTTP, CLI, other modules) gets the parsed value, as if the handler had returned it.

function invokerWith(handler: (input: unknown) => unknown) {
  const functions = new FunctionRegistry();
  functions.set({
    id: 'mod::fn',
    description: null,
    requestFormat: null,
    responseFormat: null,
    metadata: null,
    ownerWorkerId: null,
    moduleName: 'mod',
    handler,
    registeredAtMs: Date.now(),
  });
  return new Invoker(functions, new WorkerRegistry(), new Logger('test'));
}

const TEXT = '{"old_value":null,"new_value":{"name":"Ada","tags":["a","é"],"n":1.5}}';

describe('in-process results given as JSON text', () => {
  it('reach a promise caller parsed', async () => {
    const invoker = invokerWith(() => new JsonText(TEXT));
    expect(await invoker.invoke('mod::fn', {})).toEqual({ ok: true, result: JSON.parse(TEXT) });
  });

  it('reach a target that takes JSON as the text itself', async () => {
    const invoker = invokerWith(() => new JsonText(TEXT));
    const outcome = await new Promise<InvokeOutcome>((resolve) =>
      invoker.dispatch('mod::fn', {}, { callerWorkerId: 'w1' }, { takesJson: true, settle: resolve }),
    );
    expect(outcome).toEqual({ ok: true, result: undefined, resultJson: TEXT });
  });

  it('leave other results alone', async () => {
    const invoker = invokerWith((input) => ({ echoed: input }));
    const outcome = await new Promise<InvokeOutcome>((resolve) =>
      invoker.dispatch('mod::fn', { a: 1 }, { callerWorkerId: 'w1' }, { takesJson: true, settle: resolve }),
    );
    expect(outcome).toEqual({ ok: true, result: { echoed: { a: 1, _caller_worker_id: 'w1' } } });
  });
});

describe('stampCaller', () => {
  it('stamps a copy unless the payload is owned by the call, and never lets a payload choose a worker', () => {
    const shared = { a: 1, _caller_worker_id: 'spoofed' };
    expect(stampCaller(shared, 'w1')).toEqual({ a: 1, _caller_worker_id: 'w1' });
    expect(shared._caller_worker_id).toBe('spoofed');
    const owned = { a: 1, _caller_worker_id: 'spoofed' };
    expect(stampCaller(owned, 'w1', true)).toBe(owned);
    expect(owned).toEqual({ a: 1, _caller_worker_id: 'w1' });
    expect(stampCaller({ a: 1, _caller_worker_id: 'spoofed' }, undefined, true)).toEqual({ a: 1 });
    expect(stampCaller([1, 2], 'w1', true)).toEqual([1, 2]);
  });
});
