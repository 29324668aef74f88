import { describe, expect, it } from 'vitest';
import { FunctionRegistry } from '../src/core/functions.ts';
import { type InvokeOutcome, Invoker } from '../src/core/invoker.ts';
import { WorkerRegistry } from '../src/core/workers.ts';
import { Logger } from '../src/log.ts';

// Engine-side deadlines (HTTP default_timeout, CLI --timeout) share one timer in the invoker
// instead of a timer per call. What a caller relies on: each call times out after its own
// timeout, in any order of timeouts; a call answered in time never times out; a call's result
// after its timeout is dropped; and once nothing is pending no timer is left running.

function setup() {
  const functions = new FunctionRegistry();
  const workers = new WorkerRegistry();
  const sent: Array<{ invocation_id: string }> = [];
  const peer = {
    id: 'worker-1',
    ipAddress: null,
    connectedAtMs: Date.now(),
    send: (frame: object | string) => {
      sent.push(frame as { invocation_id: string });
      return true;
    },
    evict: async () => {},
  };
  workers.add(peer, 'token');
  functions.set({
    id: 'slow::fn',
    description: null,
    requestFormat: null,
    responseFormat: null,
    metadata: null,
    ownerWorkerId: 'worker-1',
    moduleName: null,
    registeredAtMs: Date.now(),
  });
  const invoker = new Invoker(functions, workers, new Logger('test'));
  return { invoker, sent };
}

const activeTimers = () =>
  (process as unknown as { getActiveResourcesInfo(): string[] }).getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

describe('invoker deadlines', () => {
  it('times each call out after its own timeout, whatever the order they were made in', async () => {
    const { invoker } = setup();
    const started = performance.now();
    const ended: Array<[number, number]> = [];
    const call = (timeoutMs: number) =>
      invoker.invoke('slow::fn', {}, { timeoutMs }).then((outcome: InvokeOutcome) => {
        expect(outcome).toEqual({ ok: false, error: { code: 'TIMEOUT', message: `invocation timed out after ${timeoutMs}ms` } });
        ended.push([timeoutMs, performance.now() - started]);
      });
    await Promise.all([call(300), call(100), call(200), call(100)]);
    expect(ended.map(([t]) => t)).toEqual([100, 100, 200, 300]);
    for (const [timeoutMs, elapsed] of ended) {
      expect(elapsed).toBeGreaterThanOrEqual(timeoutMs - 5);
      expect(elapsed).toBeLessThan(timeoutMs + 250);
    }
    expect(invoker.inFlight).toBe(0);
  });

  it('leaves a call answered in time alone and drops its late result', async () => {
    const { invoker, sent } = setup();
    const timersBefore = activeTimers();
    const answered = invoker.invoke('slow::fn', {}, { timeoutMs: 150 });
    const late = invoker.invoke('slow::fn', {}, { timeoutMs: 100 });
    const first = sent[0]?.invocation_id as string;
    const second = sent[1]?.invocation_id as string;
    expect(invoker.complete(first, { ok: true, result: 'in time' }, 'worker-1')).toBe(true);
    expect(await answered).toEqual({ ok: true, result: 'in time' });
    expect((await late).ok).toBe(false);
    // the result that comes after the timeout finds nothing pending
    expect(invoker.complete(second, { ok: true, result: 'too late' }, 'worker-1')).toBe(false);
    await new Promise((r) => setTimeout(r, 200));
    expect(invoker.inFlight).toBe(0);
    // nothing pending: no deadline timer keeps the process alive
    expect(activeTimers()).toBeLessThanOrEqual(timersBefore);
  });

  it('keeps many concurrent deadlines bounded while calls complete in time', async () => {
    const { invoker, sent } = setup();
    const outcomes: Array<Promise<InvokeOutcome>> = [];
    for (let i = 0; i < 5000; i++) {
      outcomes.push(invoker.invoke('slow::fn', { i }, { timeoutMs: 60_000 }));
      // answer all but the last one at once
      if (i < 4999) invoker.complete(sent[i]?.invocation_id as string, { ok: true, result: i }, 'worker-1');
    }
    const results = await Promise.all(outcomes.slice(0, 4999));
    expect(results.every((o, i) => o.ok && o.result === i)).toBe(true);
    expect(invoker.inFlight).toBe(1);
    invoker.stopAll();
    expect((await outcomes[4999])?.ok).toBe(false);
    expect(invoker.inFlight).toBe(0);
  });
});
