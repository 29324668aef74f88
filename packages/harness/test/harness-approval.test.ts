import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChatStack, collect, startChatStack, transcript, waitFor } from './chat-loop-helpers.ts';

// A model's function call held by the real approval gate (manual mode: no rule allows it): the
// pending trigger fires, the turn waits in awaiting_functions, and approval::resolve decides —
// allow runs the function, deny gives the model the reason.

let seq = 0;
const sessionId = () => `s_appr_${process.pid}_${++seq}`;

describe('harness and the approval gate', () => {
  let stack: ChatStack;
  const deployed: unknown[] = [];

  beforeAll(async () => {
    stack = await startChatStack({ roles: ['session', 'approval', 'router', 'provider-openai', 'context', 'harness'] });
    await waitFor(
      async () => {
        const listed = await stack.client.call<{ functions: Array<{ function_id: string }> }>('engine::functions::list', {
          include_internal: true,
        });
        return listed.functions.some((f) => f.function_id === 'approval::gate');
      },
      20_000,
      100,
    );
    stack.client.registerFunction('demo::deploy', async (input: any) => {
      deployed.push(input.env);
      return { deployed: input.env };
    });
  });

  afterAll(async () => {
    await stack?.stop();
  });

  async function heldTurn(sid: string, callId: string) {
    const pending = await collect<any>(stack.client, 'approval::pending-created', {});
    stack.fake.turn({
      text: 'Deploying now.',
      toolCalls: [{ id: callId, name: 'agent_trigger', arguments: { function: 'demo::deploy', payload: { env: sid } } }],
    });
    const answer = await stack.client.call<any>('harness::send', {
      session_id: sid,
      session: {},
      model: 'gpt-4o',
      message: 'deploy please',
    });
    await waitFor(() => pending.events.some((e) => e.function_call_id === callId), 15_000);
    pending.stop();
    return { answer, event: pending.events.find((e) => e.function_call_id === callId) };
  }

  it('holds the call, then runs it once a person allows it, and the turn finishes', async () => {
    const sid = sessionId();
    const done = await collect<any>(stack.client, 'harness::turn-completed', { session_id: sid });
    const { answer, event } = await heldTurn(sid, 'call_dep_allow');
    expect(event).toMatchObject({ session_id: sid, turn_id: answer.turn_id, function_id: 'demo::deploy', status: 'pending' });
    // the gate announces the held call before the harness has its answer: the status follows shortly
    let status: any;
    await waitFor(async () => {
      status = await stack.client.call<any>('harness::status', { session_id: sid });
      return status?.status === 'awaiting_functions';
    }, 15_000).catch(() => undefined); // the expectation below says what the status was
    expect(status).toMatchObject({
      status: 'awaiting_functions',
      pending_function_calls: [{ function_call_id: 'call_dep_allow', function_id: 'demo::deploy', state: 'held' }],
    });
    expect((await stack.client.call<any>('approval::list-pending', { session_id: sid })).pending).toHaveLength(1);
    expect(deployed).not.toContain(sid);
    // the UI shows the held call as part of the streamed assistant entry
    const assistant = (await transcript(stack.client, sid))[1].message;
    expect(assistant.content.at(-1)).toEqual({
      type: 'function_call',
      id: 'call_dep_allow',
      function_id: 'demo::deploy',
      arguments: { env: sid },
    });

    stack.fake.turn({ text: 'Deployed to staging.' });
    expect(
      await stack.client.call('approval::resolve', { session_id: sid, function_call_id: 'call_dep_allow', decision: 'allow' }),
    ).toMatchObject({ resolved: true, turn_resumed: true });
    await waitFor(() => done.events.length === 1, 15_000);
    expect(done.events[0]).toMatchObject({ status: 'completed', result: 'Deployed to staging.' });
    expect(deployed).toContain(sid);
    const result = (await transcript(stack.client, sid)).find((e) => e.message?.role === 'function_result').message;
    expect(result).toMatchObject({ function_id: 'demo::deploy', is_error: false });
    expect(
      await stack.client.call('approval::resolve', { session_id: sid, function_call_id: 'call_dep_allow', decision: 'allow' }),
    ).toMatchObject({ resolved: false });
    done.stop();
  });

  it('gives the model the reason when a person denies the call, and the function never runs', async () => {
    const sid = sessionId();
    const done = await collect<any>(stack.client, 'harness::turn-completed', { session_id: sid });
    await heldTurn(sid, 'call_dep_deny');
    stack.fake.turn({ text: 'Understood, not deploying.' });
    await stack.client.call('approval::resolve', {
      session_id: sid,
      function_call_id: 'call_dep_deny',
      decision: 'deny',
      reason: 'freeze until Monday',
    });
    await waitFor(() => done.events.length === 1, 15_000);
    expect(done.events[0]).toMatchObject({ status: 'completed', result: 'Understood, not deploying.' });
    expect(deployed).not.toContain(sid);
    const result = (await transcript(stack.client, sid)).find((e) => e.message?.role === 'function_result').message;
    expect(result.is_error).toBe(true);
    expect(result.content[0].text).toContain('freeze until Monday');
    const tool = stack.fake
      .chatRequests()
      .at(-1)
      ?.body.messages.find((m: any) => m.role === 'tool');
    expect(tool.content).toContain('freeze until Monday');
    done.stop();
  });

  it('stopping a turn that waits for approval cancels it and settles the held call as aborted', async () => {
    const sid = sessionId();
    const done = await collect<any>(stack.client, 'harness::turn-completed', { session_id: sid });
    const resolved = await collect<any>(stack.client, 'approval::pending-resolved', {});
    await heldTurn(sid, 'call_dep_stop');
    expect(await stack.client.call('harness::stop', { session_id: sid })).toEqual({ stopping: true });
    await waitFor(() => done.events.length === 1, 15_000);
    expect(done.events[0].status).toBe('cancelled');
    await waitFor(() => resolved.events.some((e) => e.function_call_id === 'call_dep_stop'), 15_000);
    expect(resolved.events.find((e) => e.function_call_id === 'call_dep_stop').outcome).toBe('aborted');
    expect((await stack.client.call<any>('session::get', { session_id: sid })).meta.status).toBe('idle');
    expect(deployed).not.toContain(sid);
    done.stop();
    resolved.stop();
  });
});
