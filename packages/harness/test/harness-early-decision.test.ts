import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChatStack, collect, startChatStack, transcript } from './chat-loop-helpers.ts';

// A held call decided before the gate's `hold` answer has reached the turn: the gate stores the
// record (a person or a bot sees it at once) and answers; a decision that arrives in between must
// be applied when the answer comes, not lost (the turn then waited for ever; the hostile-model
// fuzz test caught it on a loaded machine). A stand-in gate makes the moment certain: it decides
// the call itself, then answers `hold`.

let seq = 0;
const sessionId = () => `s_early_${process.pid}_${++seq}`;

describe('a decision that overtakes the gate', () => {
  let stack: ChatStack;
  const ran: unknown[] = [];
  const resolutions: unknown[] = [];

  beforeAll(async () => {
    stack = await startChatStack();
    stack.client.registerFunction('demo::deploy', async (input: any) => {
      ran.push(input.env);
      return { deployed: input.env };
    });
    stack.client.registerFunction('approval::gate', async (input: any) => {
      const deny = (input.call.arguments?.env ?? input.call.arguments?.payload?.env) === 'prod';
      const resolved = await stack.client.call('harness::function::resolve', {
        session_id: input.session_id,
        turn_id: input.turn_id,
        function_call_id: input.call.id,
        ...(deny
          ? { action: 'deliver', is_error: true, content: [{ type: 'text', text: 'demo::deploy was not run: denied by a person' }] }
          : { action: 'execute' }),
      });
      resolutions.push(resolved);
      // the person also pressed Stop before the gate answered: nothing may run after that
      if ((input.call.arguments?.env ?? input.call.arguments?.payload?.env) === 'stop')
        await stack.client.call('harness::stop', { session_id: input.session_id });
      return { decision: 'hold', pending_timeout_ms: 60_000 };
    });
  });

  afterAll(async () => {
    await stack?.stop();
  });

  async function turnWith(env: string) {
    const sid = sessionId();
    const done = await collect<any>(stack.client, 'harness::turn-completed', { session_id: sid });
    stack.fake.turn({
      toolCalls: [{ id: `call_early_${seq}`, name: 'agent_trigger', arguments: { function: 'demo::deploy', payload: { env } } }],
    });
    stack.fake.turn({ text: 'Finished.' });
    await stack.client.call('harness::send', { session_id: sid, session: {}, model: 'gpt-4o', message: `deploy ${env}` });
    const deadline = Date.now() + 20_000;
    while (done.events.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    done.stop();
    return { sid, completed: done.events[0] };
  }

  it('an allow that arrives first runs the call once and the turn finishes', async () => {
    const { sid, completed } = await turnWith('staging');
    expect(completed).toMatchObject({ status: 'completed', result: 'Finished.' });
    expect(resolutions.at(-1)).toMatchObject({ resolved: true });
    expect(ran).toEqual(['staging']);
    const result = (await transcript(stack.client, sid)).map((e) => e.message).find((m) => m?.role === 'function_result');
    expect(result).toMatchObject({ is_error: false });
  });

  it('a deny that arrives first gives the model its reason, and the function never runs', async () => {
    const before = ran.length;
    const { sid, completed } = await turnWith('prod');
    expect(completed).toMatchObject({ status: 'completed' });
    expect(ran.length).toBe(before);
    const result = (await transcript(stack.client, sid)).map((e) => e.message).find((m) => m?.role === 'function_result');
    expect(result).toMatchObject({ is_error: true });
    expect(JSON.stringify(result?.content)).toContain('denied by a person');
  });

  it('an allow that arrives first runs nothing when the turn was stopped before the gate answered', async () => {
    const before = ran.length;
    const { completed } = await turnWith('stop');
    expect(completed).toMatchObject({ status: 'cancelled' });
    expect(ran.length).toBe(before);
  });
});
