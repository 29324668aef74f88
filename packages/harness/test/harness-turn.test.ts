import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChatStack, collect, failure, startChatStack, transcript, waitFor } from './chat-loop-helpers.ts';
import { malformedOpenAIStream } from './fakes/openai.ts';

// The turn loop end to end: engine, session store, router, provider, context manager and harness
// as real processes; the model is the fake OpenAI server; a UI's view is the session triggers.

let seq = 0;
const sessionId = () => `s_turn_${process.pid}_${++seq}`;

describe('harness turns', () => {
  let stack: ChatStack;

  beforeAll(async () => {
    stack = await startChatStack();
    stack.client.registerFunction('demo::add', async (input: any) => ({ sum: Number(input.a) + Number(input.b) }), {
      description: 'Add two numbers',
    });
  });

  afterAll(async () => {
    await stack?.stop();
  });

  const send = (payload: Record<string, unknown>) => stack.client.call<any>('harness::send', { model: 'gpt-4o', session: {}, ...payload });
  const completed = (sid: string) => collect<any>(stack.client, 'harness::turn-completed', { session_id: sid });

  it('streams the answer into the assistant entry with rising revisions and completes the turn', async () => {
    const sid = sessionId();
    const updates = await collect<any>(stack.client, 'session::message-updated', { session_id: sid });
    const started = await collect<any>(stack.client, 'harness::turn-started', { session_id: sid });
    const done = await completed(sid);
    stack.fake.turn({ text: 'The quick brown fox jumps over the lazy dog again and again.', delayMs: 15 });
    const answer = await send({ session_id: sid, message: 'Tell me about foxes.' });
    expect(answer).toMatchObject({ session_id: sid, accepted: true });
    expect(answer.turn_id).toMatch(/^t_/);
    await waitFor(() => done.events.length === 1, 15_000);
    expect(done.events[0]).toMatchObject({
      session_id: sid,
      turn_id: answer.turn_id,
      status: 'completed',
      result: 'The quick brown fox jumps over the lazy dog again and again.',
    });
    expect(started.events[0]).toMatchObject({ session_id: sid, turn_id: answer.turn_id });

    // the UI's view: updates of one entry, revisions strictly rising, text only growing, ending with stop_reason
    const mine = updates.events.filter((e) => e.entry_id === `e_${answer.turn_id}_1`);
    expect(mine.length).toBeGreaterThan(2);
    const revisions = mine.map((e) => e.revision);
    expect([...revisions].sort((a, b) => a - b)).toEqual(revisions);
    expect(new Set(revisions).size).toBe(revisions.length);
    const texts = mine.map((e) => e.message.content.map((b: any) => b.text ?? '').join(''));
    for (let i = 1; i < texts.length; i++) expect(texts[i]?.startsWith(texts[i - 1] as string)).toBe(true);
    const last = mine.at(-1);
    expect(last.message).toMatchObject({
      role: 'assistant',
      stop_reason: 'end',
      model: 'gpt-4o',
      provider: 'openai',
      usage: { input: 12 },
    });

    const entries = await transcript(stack.client, sid);
    expect(entries.map((e) => e.message?.role)).toEqual(['user', 'assistant']);
    expect(entries[0].message.content).toEqual([{ type: 'text', text: 'Tell me about foxes.' }]);
    const meta = await stack.client.call<any>('session::get', { session_id: sid });
    expect(meta.meta.status).toBe('idle');
    expect(await stack.client.call('harness::status', { session_id: sid })).toMatchObject({
      turn_id: answer.turn_id,
      status: 'completed',
      step: 1,
    });
    for (const c of [updates, started, done]) c.stop();
  });

  it('runs a function call through agent_trigger and gives the model its result', async () => {
    const sid = sessionId();
    const done = await completed(sid);
    stack.fake.turn({
      toolCalls: [{ id: 'call_add_1', name: 'agent_trigger', arguments: { function: 'demo::add', payload: { a: 2, b: 3 } } }],
    });
    stack.fake.turn({ text: 'The sum is 5.' });
    const answer = await send({ session_id: sid, message: 'What is 2+3?', options: { mode: 'agent' } });
    await waitFor(() => done.events.length === 1, 15_000);
    expect(done.events[0]).toMatchObject({ status: 'completed', result: 'The sum is 5.' });
    const entries = await transcript(stack.client, sid);
    expect(entries.map((e) => e.message?.role)).toEqual(['user', 'assistant', 'function_result', 'assistant']);
    expect(entries[1].message.content).toEqual([
      { type: 'function_call', id: 'call_add_1', function_id: 'demo::add', arguments: { a: 2, b: 3 } },
    ]);
    expect(entries[1].message.stop_reason).toBe('function_call');
    expect(entries[2].message).toMatchObject({
      function_call_id: 'call_add_1',
      function_id: 'demo::add',
      is_error: false,
      content: [{ type: 'text', text: '{"sum":5}' }],
    });
    // the second request carried the call and its result back in the API's shape
    const second = stack.fake.chatRequests().at(-1)?.body;
    expect(second.messages.at(-2).tool_calls[0].function).toEqual({
      name: 'agent_trigger',
      arguments: '{"function":"demo::add","payload":{"a":2,"b":3}}',
    });
    expect(second.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_add_1', content: '{"sum":5}' });
    expect(second.tools[0].function.name).toBe('agent_trigger');
    expect(second.messages[0].content).toContain('demo::add: Add two numbers');
    expect(await stack.client.call('harness::status', { session_id: sid })).toMatchObject({
      turn_id: answer.turn_id,
      status: 'completed',
      step: 2,
    });
    done.stop();
  });

  it('never lets a model call approval::* or configuration::*, nor what the request denies', async () => {
    const sid = sessionId();
    const calls: string[] = [];
    const probes = ['approval::probe', 'configuration::probe', 'demo::secret'].map((id) =>
      stack.client.registerFunction(id, async () => {
        calls.push(id);
        return { ran: true };
      }),
    );
    const done = await completed(sid);
    stack.fake.turn({
      toolCalls: [
        { id: 'call_p1', name: 'agent_trigger', arguments: { function: 'approval::probe', payload: {} } },
        { id: 'call_p2', name: 'agent_trigger', arguments: { function: 'configuration::probe', payload: {} } },
        { id: 'call_p3', name: 'agent_trigger', arguments: { function: 'demo::secret', payload: {} } },
        { id: 'call_p4', name: 'agent_trigger', arguments: { payload: {} } },
      ],
    });
    stack.fake.turn({ text: 'I cannot do that.' });
    await send({ session_id: sid, message: 'escalate', options: { functions: { allow: ['*'], deny: ['demo::secret'] } } });
    await waitFor(() => done.events.length === 1, 15_000);
    expect(calls).toEqual([]);
    const results = (await transcript(stack.client, sid)).filter((e) => e.message?.role === 'function_result').map((e) => e.message);
    expect(results.map((r) => r.is_error)).toEqual([true, true, true, true]);
    expect(results[0].content[0].text).toMatch(/Denied: approval::probe is not callable/);
    expect(results[2].content[0].text).toMatch(/Denied: demo::secret/);
    expect(results[3].content[0].text).toMatch(/names no function/);
    // the model saw why
    const toolMessages = stack.fake
      .chatRequests()
      .at(-1)
      ?.body.messages.filter((m: any) => m.role === 'tool');
    expect(toolMessages.map((m: any) => m.content)).toEqual(results.map((r) => `Error: ${r.content[0].text}`));
    for (const p of probes) p.unregister();
    done.stop();
  });

  it('stops mid-stream: the partial message ends aborted and the turn is cancelled', async () => {
    const sid = sessionId();
    const done = await completed(sid);
    const updates = await collect<any>(stack.client, 'session::message-updated', { session_id: sid });
    stack.fake.turn({ text: 'one two three four five six seven eight', stallAfter: 4 });
    const answer = await send({ session_id: sid, message: 'count' });
    await waitFor(() => updates.events.some((e) => e.message.content[0]?.text === 'one two three '), 15_000);
    expect(await stack.client.call('harness::stop', { session_id: sid, turn_id: 'not-this-turn' })).toEqual({ stopping: false });
    expect(await stack.client.call('harness::stop', { session_id: sid })).toEqual({ stopping: true });
    await waitFor(() => done.events.length === 1, 15_000);
    expect(done.events[0]).toMatchObject({ turn_id: answer.turn_id, status: 'cancelled' });
    const assistant = (await transcript(stack.client, sid))[1].message;
    expect(assistant).toMatchObject({ stop_reason: 'aborted', content: [{ type: 'text', text: 'one two three ' }] });
    expect((await stack.client.call<any>('session::get', { session_id: sid })).meta.status).toBe('idle');
    expect(await stack.client.call('harness::stop', { session_id: sid })).toEqual({ stopping: false });
    await waitFor(() => stack.fake.openStreams === 0, 5000);
    done.stop();
    updates.stop();
  });

  it('answers a resend with the same idempotency key as a duplicate, under a deterministic entry id', async () => {
    const sid = sessionId();
    const done = await completed(sid);
    stack.fake.turn({ text: 'Once.' });
    const first = await send({ session_id: sid, message: 'hello', idempotency_key: 'msg:1/a' });
    const again = await send({ session_id: sid, message: 'hello', idempotency_key: 'msg:1/a' });
    expect(again).toEqual({ session_id: sid, turn_id: first.turn_id, accepted: true, deduplicated: true });
    await waitFor(() => done.events.length === 1, 15_000);
    const third = await send({ session_id: sid, message: 'hello', idempotency_key: 'msg:1/a' });
    expect(third.deduplicated).toBe(true);
    const entries = await transcript(stack.client, sid);
    expect(entries.filter((e) => e.message?.role === 'user').map((e) => e.entry_id)).toEqual(['e_idem_msg_1_a']);
    done.stop();
  });

  it('queues a message sent while a step streams and answers it in the same turn', async () => {
    const sid = sessionId();
    const done = await completed(sid);
    const queuedEvents = await collect<any>(stack.client, 'harness::message-queued', { session_id: sid });
    stack.fake.turn({ text: 'first answer with a few words', delayMs: 60 });
    stack.fake.turn({ text: 'second answer' });
    const first = await send({ session_id: sid, message: 'first question' });
    await waitFor(() => stack.fake.openStreams === 1, 10_000);
    const second = await send({ session_id: sid, message: 'second question', idempotency_key: 'q2' });
    expect(second).toMatchObject({ turn_id: first.turn_id, accepted: true, queued: true });
    const status = await stack.client.call<any>('harness::status', { session_id: sid });
    expect(status.queued.map((q: any) => q.entry_id)).toEqual(['e_idem_q2']);
    await waitFor(() => done.events.length === 1, 15_000);
    expect(done.events[0]).toMatchObject({ turn_id: first.turn_id, status: 'completed', result: 'second answer' });
    expect(queuedEvents.events[0]).toMatchObject({ session_id: sid, turn_id: first.turn_id, entry_id: 'e_idem_q2' });
    const roles = (await transcript(stack.client, sid)).map((e) => `${e.message.role}:${e.message.content[0]?.text}`);
    expect(roles).toEqual([
      'user:first question',
      'assistant:first answer with a few words',
      'user:second question',
      'assistant:second answer',
    ]);
    const last = stack.fake.chatRequests().at(-1)?.body.messages;
    expect(last.at(-1)).toEqual({ role: 'user', content: 'second question' });
    done.stop();
    queuedEvents.stop();
  });

  it('a message queued behind a turn the user stops is answered by a new turn, not left unanswered', async () => {
    const sid = sessionId();
    const done = await completed(sid);
    const started = await collect<any>(stack.client, 'harness::turn-started', { session_id: sid });
    const updates = await collect<any>(stack.client, 'session::message-updated', { session_id: sid });
    stack.fake.turn({ text: 'alpha beta gamma delta epsilon zeta', stallAfter: 3 });
    stack.fake.turn({ text: 'the answer to the queued one' });
    const first = await send({ session_id: sid, message: 'long question' });
    await waitFor(() => updates.events.some((e) => String(e.message.content[0]?.text ?? '').startsWith('alpha')), 15_000);
    const queued = await send({ session_id: sid, message: 'queued question' });
    expect(queued).toMatchObject({ turn_id: first.turn_id, queued: true });
    expect(await stack.client.call('harness::stop', { session_id: sid })).toEqual({ stopping: true });
    await waitFor(() => done.events.length === 2, 15_000);
    expect(done.events[0]).toMatchObject({ turn_id: first.turn_id, status: 'cancelled' });
    expect(done.events[1]).toMatchObject({ status: 'completed', result: 'the answer to the queued one' });
    expect(done.events[1].turn_id).not.toBe(first.turn_id);
    expect(started.events.map((e) => e.turn_id)).toEqual([first.turn_id, done.events[1].turn_id]);
    const entries = await transcript(stack.client, sid);
    expect(entries.map((e) => `${e.message.role}:${e.message.stop_reason ?? ''}:${e.message.content[0]?.text}`)).toEqual([
      'user::long question',
      expect.stringMatching(/^assistant:aborted:alpha/),
      'user::queued question',
      'assistant:end:the answer to the queued one',
    ]);
    const status = await stack.client.call<any>('harness::status', { session_id: sid });
    expect(status).toMatchObject({ turn_id: done.events[1].turn_id, status: 'completed' });
    expect((await stack.client.call<any>('session::get', { session_id: sid })).meta.status).toBe('idle');
    done.stop();
    started.stop();
    updates.stop();
  });

  it('goes on with a model without vision after an image: the image is named in the request, not sent', async () => {
    const sid = sessionId();
    const done = await completed(sid);
    const pixel = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    stack.fake.turn({ text: 'A red pixel.' });
    await send({
      session_id: sid,
      message: {
        role: 'user',
        content: [
          { type: 'text', text: 'what is this?' },
          { type: 'image', mime: 'image/png', data: pixel },
        ],
      },
    });
    await waitFor(() => done.events.length === 1, 15_000);
    const seen = JSON.stringify(stack.fake.chatRequests().at(-1)?.body.messages);
    expect(seen).toContain(pixel);
    stack.fake.turn({ text: 'Still a pixel.' });
    await send({ session_id: sid, model: 'local-small', message: 'and now?' });
    await waitFor(() => done.events.length === 2, 15_000);
    expect(done.events[1]).toMatchObject({ status: 'completed', result: 'Still a pixel.' });
    const request = stack.fake.chatRequests().at(-1)?.body;
    expect(request.model).toBe('local-small');
    expect(JSON.stringify(request.messages)).not.toContain(pixel);
    expect(JSON.stringify(request.messages)).toContain('an image (image/png) was attached here; openai::local-small cannot see images');
    done.stop();
  });

  it('fails a turn cleanly when the provider stream is malformed, and keeps working', async () => {
    const sid = sessionId();
    const done = await completed(sid);
    stack.fake.enqueue(malformedOpenAIStream());
    await send({ session_id: sid, message: 'break' });
    await waitFor(() => done.events.length === 1, 15_000);
    expect(done.events[0].status).toBe('failed');
    expect(done.events[0].result_error.length).toBeGreaterThan(0);
    const assistant = (await transcript(stack.client, sid))[1].message;
    expect(assistant).toMatchObject({ stop_reason: 'error', content: [{ type: 'text', text: 'Partial ' }] });
    expect(assistant.error_message.length).toBeGreaterThan(0);
    expect((await stack.client.call<any>('session::get', { session_id: sid })).meta.status).toBe('error');
    stack.fake.turn({ text: 'Back.' });
    await send({ session_id: sid, message: 'again' });
    await waitFor(() => done.events.length === 2, 15_000);
    expect(done.events[1]).toMatchObject({ status: 'completed', result: 'Back.' });
    done.stop();
  });

  it('refuses bad input with errors that name the problem, and nothing is stored', async () => {
    const bad = (payload: unknown) => failure(stack.client.call('harness::send', payload));
    expect((await bad({ session_id: 's', message: 'hi' })).message).toMatch(
      /harness\/invalid_request: harness::send: model: model is required/,
    );
    expect((await bad({ session_id: 's', model: 'gpt-4o', message: 42 })).message).toMatch(/message must be a string or/);
    expect((await bad({ model: 'gpt-4o', message: 'hi' })).message).toMatch(/session_id is required/);
    expect((await bad({ session_id: 's', model: 'gpt-4o', message: 'hi', options: { mode: 'yolo' } })).message).toMatch(
      /options\.mode must be plan, ask or agent/,
    );
    expect((await bad({ session_id: 's', model: 'gpt-4o', message: { role: 'assistant', content: [] } })).message).toMatch(/message/);
    const unknown = await bad({ session_id: 'no-such-session', model: 'gpt-4o', message: 'hi' });
    expect(unknown.code).toBe('harness/session_not_found');
    expect(await stack.client.call('session::get', { session_id: 'no-such-session' })).toBeNull();
    const noProvider = await bad({ session_id: sessionId(), session: {}, model: 'claude-sonnet-4-5', message: 'hi' });
    expect(noProvider.code).toBe('router/no_provider_for_model');
    expect(await stack.client.call('harness::status', { session_id: 'never-seen' })).toBeNull();
    expect((await failure(stack.client.call('harness::status', {}))).message).toMatch(/session_id is required/);
    expect(await stack.client.call('harness::stop', { session_id: 'never-seen' })).toEqual({ stopping: false });
    expect(
      await stack.client.call('harness::function::resolve', { session_id: 'never-seen', function_call_id: 'c', action: 'execute' }),
    ).toEqual({ resolved: false });
    expect(stack.workers.harness?.child.exitCode).toBeNull();
  });
});
