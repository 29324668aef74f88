import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChatStack, collect, failure, startChatStack, transcript, waitFor } from './chat-loop-helpers.ts';

// Modes (ask offers no tool), a message merged into a turn between steps (its function result
// still goes right after the call that made it), and harness::run held open until the answer.

let seq = 0;
const sessionId = () => `s_mode_${process.pid}_${++seq}`;

describe('harness modes, merged messages and harness::run', () => {
  let stack: ChatStack;
  let releaseSlow: (() => void) | undefined;

  beforeAll(async () => {
    stack = await startChatStack();
    stack.client.registerFunction('demo::slow', async () => {
      await new Promise<void>((resolve) => {
        releaseSlow = resolve;
      });
      return { finished: true };
    });
  });

  afterAll(async () => {
    releaseSlow?.();
    await stack?.stop();
  });

  it('ask mode offers no tool and says so in the system prompt; agent and plan offer agent_trigger', async () => {
    for (const mode of ['ask', 'plan', 'agent'] as const) {
      const sid = sessionId();
      const done = await collect<any>(stack.client, 'harness::turn-completed', { session_id: sid });
      stack.fake.turn({ text: `answer in ${mode}` });
      await stack.client.call('harness::send', { session_id: sid, session: {}, model: 'gpt-4o', message: 'hi', options: { mode } });
      await waitFor(() => done.events.length === 1, 15_000);
      done.stop();
      const body = stack.fake.chatRequests().at(-1)?.body;
      expect(body.messages[0].content).toContain(`Mode: ${mode}.`);
      if (mode === 'ask') expect(body.tools).toBeUndefined();
      else expect(body.tools.map((t: any) => t.function.name)).toEqual(['agent_trigger']);
    }
  });

  it('merges a message sent while a function runs, and answers it in the same turn', async () => {
    const sid = sessionId();
    const done = await collect<any>(stack.client, 'harness::turn-completed', { session_id: sid });
    stack.fake.turn({ toolCalls: [{ id: 'call_slow_1', name: 'agent_trigger', arguments: { function: 'demo::slow', payload: {} } }] });
    stack.fake.turn({ text: 'Done, and noted your follow-up.' });
    const first = await stack.client.call<any>('harness::send', {
      session_id: sid,
      session: {},
      model: 'gpt-4o',
      message: 'run the slow job',
    });
    await waitFor(() => releaseSlow !== undefined, 15_000);
    const merged = await stack.client.call<any>('harness::send', { session_id: sid, model: 'gpt-4o', message: 'also, tell me when done' });
    expect(merged).toMatchObject({ turn_id: first.turn_id, accepted: true, merged: true });
    releaseSlow?.();
    await waitFor(() => done.events.length === 1, 15_000);
    expect(done.events[0]).toMatchObject({ turn_id: first.turn_id, status: 'completed', result: 'Done, and noted your follow-up.' });
    // the transcript keeps arrival order; the model gets the result right after its call
    const roles = (await transcript(stack.client, sid)).map((e) => e.message.role);
    expect(roles).toEqual(['user', 'assistant', 'user', 'function_result', 'assistant']);
    const sent = stack.fake
      .chatRequests()
      .at(-1)
      ?.body.messages.filter((m: any) => m.role !== 'system');
    expect(sent.map((m: any) => m.role)).toEqual(['user', 'assistant', 'tool', 'user']);
    expect(sent[3].content).toBe('also, tell me when done');
    done.stop();
  });

  it('harness::run holds the call open and returns the answer', async () => {
    const sid = sessionId();
    stack.fake.turn({ text: 'A complete answer.', delayMs: 10 });
    const result = await stack.client.call<any>(
      'harness::run',
      { session_id: sid, session: {}, model: 'gpt-4o', message: 'hello' },
      { timeoutMs: 30_000 },
    );
    expect(result).toMatchObject({ session_id: sid, accepted: true, status: 'completed', result: 'A complete answer.' });
    expect((await stack.client.call<any>('harness::status', { session_id: sid })).turn_id).toBe(result.turn_id);
  });

  it('names a missing router instead of failing obscurely, and picks up again when it is back', async () => {
    await stack.workers.router?.stop();
    const sid = sessionId();
    const refused = await failure(stack.client.call('harness::send', { session_id: sid, session: {}, model: 'gpt-4o', message: 'hi' }));
    expect(refused.code).toBe('harness/dependency_unavailable');
    expect(refused.message).toMatch(/the model router \(llm-router\) is not running/);
    // a restarted router hears from the providers again (router::ready) and the catalogue refills
    stack.start('router');
    await waitFor(async () => (await stack.client.call<{ models: unknown[] }>('router::models::list', {})).models.length > 0, 20_000, 100);
    stack.fake.turn({ text: 'back online' });
    const result = await stack.client.call<any>(
      'harness::run',
      { session_id: sid, session: {}, model: 'gpt-4o', message: 'hi' },
      { timeoutMs: 30_000 },
    );
    expect(result).toMatchObject({ status: 'completed', result: 'back online' });
  });
});
