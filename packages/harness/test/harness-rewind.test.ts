import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChatStack, collect, failure, startChatStack, transcript, waitFor } from './chat-loop-helpers.ts';

// Retry / Regenerate (harness::regenerate) and Edit-and-resend (harness::edit), end to end: the
// superseded answer and message leave the session's active path, and what the model is sent next
// (asserted on what the fake OpenAI server received) no longer carries them.

let seq = 0;
const sessionId = () => `s_rewind_${process.pid}_${++seq}`;

/** What the model received in the latest generation request, as text (system prompt left out). */
function lastContext(stack: ChatStack): string {
  const body = stack.fake.chatRequests().at(-1)?.body;
  return JSON.stringify((body?.messages ?? []).filter((m: { role: string }) => m.role !== 'system'));
}

const texts = (entries: any[]) =>
  entries.map((e) => {
    const m = e.message;
    if (!m) return `custom:${e.custom?.custom_type}`;
    if (m.role === 'function_result') return `result:${m.function_call_id}`;
    const text = m.content.map((b: any) => (b.type === 'text' ? b.text : b.type === 'function_call' ? `call:${b.id}` : '')).join('');
    return `${m.role}:${text}${m.stop_reason === 'error' ? ' [error]' : ''}`;
  });

describe('harness::regenerate and harness::edit', () => {
  let stack: ChatStack;

  beforeAll(async () => {
    stack = await startChatStack();
    stack.client.registerFunction('rewind::add', async (input: any) => ({ sum: Number(input.a) + Number(input.b) }), {
      description: 'Add two numbers',
    });
  });

  afterAll(async () => {
    await stack?.stop();
  });

  const call = <T = any>(fn: string, payload: Record<string, unknown>) => stack.client.call<T>(fn, { model: 'gpt-4o', ...payload });

  /** Send and wait until that turn has ended. */
  async function turn(fn: 'harness::send' | 'harness::regenerate' | 'harness::edit', payload: Record<string, unknown>) {
    const done = await collect<any>(stack.client, 'harness::turn-completed', { session_id: payload.session_id });
    const answer = await call(fn, fn === 'harness::send' ? { session: {}, ...payload } : payload);
    await waitFor(() => done.events.some((e) => e.turn_id === answer.turn_id), 20_000);
    done.stop();
    return { answer, completed: done.events.find((e) => e.turn_id === answer.turn_id) };
  }

  it('Regenerate: a new answer replaces the last one, its calls and results; the model is not sent what it replaces', async () => {
    const sid = sessionId();
    stack.fake.turn({ text: 'Paris.' });
    await turn('harness::send', { session_id: sid, message: 'Capital of France?' });
    stack.fake.turn({
      toolCalls: [{ id: 'call_rw_1', name: 'agent_trigger', arguments: { function: 'rewind::add', payload: { a: 2, b: 3 } } }],
    });
    stack.fake.turn({ text: 'OLD ANSWER: five.' });
    await turn('harness::send', { session_id: sid, message: 'What is 2+3?', options: { mode: 'agent' } });
    const before = await transcript(stack.client, sid);
    expect(texts(before)).toEqual([
      'user:Capital of France?',
      'assistant:Paris.',
      'user:What is 2+3?',
      'assistant:call:call_rw_1',
      'result:call_rw_1',
      'assistant:OLD ANSWER: five.',
    ]);

    stack.fake.turn({ text: 'NEW ANSWER: 5.' });
    const { answer, completed } = await turn('harness::regenerate', { session_id: sid });
    expect(answer).toMatchObject({ session_id: sid, accepted: true, user_entry_id: before[2].entry_id });
    expect(answer.superseded).toEqual(before.slice(3).map((e) => e.entry_id));
    expect(completed).toMatchObject({ status: 'completed', result: 'NEW ANSWER: 5.' });

    // the model was sent the conversation up to the question, without the old answer or its call
    const context = lastContext(stack);
    expect(context).toContain('What is 2+3?');
    expect(context).toContain('Paris.');
    expect(context).not.toContain('OLD ANSWER');
    expect(context).not.toContain('call_rw_1');
    expect(context).not.toContain('"sum"');

    const after = await transcript(stack.client, sid);
    expect(texts(after)).toEqual(['user:Capital of France?', 'assistant:Paris.', 'user:What is 2+3?', 'assistant:NEW ANSWER: 5.']);
    expect(after[3].parent_id).toBe(before[2].entry_id);
    // nothing was deleted: the replaced answer is on a branch of its own
    const old = await stack.client.call<any>('session::messages', { session_id: sid, from_entry_id: before[5].entry_id });
    expect(texts(old.messages).at(-1)).toBe('assistant:OLD ANSWER: five.');
    expect(await stack.client.call('harness::status', { session_id: sid })).toMatchObject({ turn_id: answer.turn_id, status: 'completed' });
  });

  it('Retry after a failed turn: the failed answer leaves the path and the retried one follows the question', async () => {
    const sid = sessionId();
    stack.fake.error(400, 'The model is temporarily confused.', 'invalid_request_error');
    const failed = await turn('harness::send', { session_id: sid, message: 'Say hello.' });
    expect(failed.completed).toMatchObject({ status: 'failed' });
    const before = await transcript(stack.client, sid);
    expect(texts(before)).toEqual(['user:Say hello.', 'assistant: [error]']);
    expect((await stack.client.call<any>('session::get', { session_id: sid })).meta.status).toBe('error');

    stack.fake.turn({ text: 'Hello!' });
    const requestsBefore = stack.fake.chatRequests().length;
    const { answer, completed } = await turn('harness::regenerate', { session_id: sid, entry_id: before[0].entry_id });
    expect(completed).toMatchObject({ status: 'completed', result: 'Hello!' });
    expect(answer.superseded).toEqual([before[1].entry_id]);
    expect(stack.fake.chatRequests().length).toBe(requestsBefore + 1);
    expect(texts(await transcript(stack.client, sid))).toEqual(['user:Say hello.', 'assistant:Hello!']);
    expect((await stack.client.call<any>('session::get', { session_id: sid })).meta.status).toBe('idle');
  });

  it('Edit: the last user message is replaced and answered; the model never sees the old message or its answer', async () => {
    const sid = sessionId();
    stack.fake.turn({ text: 'Blue.' });
    await turn('harness::send', { session_id: sid, message: 'Colour of the sky?' });
    stack.fake.turn({ text: 'OLD: it is 12.' });
    await turn('harness::send', { session_id: sid, message: 'OLD QUESTION: what is 3*4 plus a typo' });
    const before = await transcript(stack.client, sid);

    stack.fake.turn({ text: 'It is 7.' });
    const { answer } = await turn('harness::edit', {
      session_id: sid,
      entry_id: before[2].entry_id,
      message: 'What is 3+4?',
      idempotency_key: `edit-${sid}`,
    });
    expect(answer.user_entry_id).toBe(`e_idem_edit-${sid}`);
    expect(answer.superseded).toEqual([before[2].entry_id, before[3].entry_id]);
    const context = lastContext(stack);
    expect(context).toContain('What is 3+4?');
    expect(context).toContain('Colour of the sky?');
    expect(context).not.toContain('OLD');
    const after = await transcript(stack.client, sid);
    expect(texts(after)).toEqual(['user:Colour of the sky?', 'assistant:Blue.', 'user:What is 3+4?', 'assistant:It is 7.']);
    expect(after[2]).toMatchObject({ parent_id: before[1].entry_id, origin: { edited: before[2].entry_id } });

    // a replayed edit (same idempotency key) starts nothing new
    const replay = await call('harness::edit', {
      session_id: sid,
      entry_id: after[2].entry_id,
      message: 'What is 3+4?',
      idempotency_key: `edit-${sid}`,
    });
    expect(replay).toMatchObject({ turn_id: answer.turn_id, deduplicated: true });
    expect(texts(await transcript(stack.client, sid))).toHaveLength(4);
  });

  it('Edit of the first message: the conversation starts again from the new one', async () => {
    const sid = sessionId();
    stack.fake.turn({ text: 'OLD REPLY' });
    await turn('harness::send', { session_id: sid, message: 'OLD FIRST' });
    const [first] = await transcript(stack.client, sid);
    stack.fake.turn({ text: 'New reply.' });
    await turn('harness::edit', {
      session_id: sid,
      entry_id: first.entry_id,
      message: { role: 'user', content: [{ type: 'text', text: 'New first.' }] },
    });
    expect(lastContext(stack)).not.toContain('OLD');
    const after = await transcript(stack.client, sid);
    expect(texts(after)).toEqual(['user:New first.', 'assistant:New reply.']);
    expect(after[0].parent_id).toBeNull();
  });

  it('refused while a turn runs, for an older message, and with nothing to answer; nothing changes', async () => {
    const sid = sessionId();
    stack.fake.turn({ text: 'First answer.' });
    await turn('harness::send', { session_id: sid, message: 'One' });
    stack.fake.turn({ text: 'Second answer.' });
    await turn('harness::send', { session_id: sid, message: 'Two' });
    const before = await transcript(stack.client, sid);

    // an older user message: answering it again would drop the later exchange
    const older = await failure(call('harness::edit', { session_id: sid, entry_id: before[0].entry_id, message: 'One again' }));
    expect(older.code).toBe('harness/not_last_user_message');
    expect(older.message).toContain(before[2].entry_id);
    expect((await failure(call('harness::regenerate', { session_id: sid, entry_id: 'e_unknown' }))).code).toBe(
      'harness/not_last_user_message',
    );

    // a turn streaming: both are refused, with what to do
    const done = await collect<any>(stack.client, 'harness::turn-completed', { session_id: sid });
    stack.fake.turn({ text: 'A slow answer that stalls', stallAfter: 3 });
    await call('harness::send', { session_id: sid, message: 'Three' });
    await waitFor(async () => (await stack.client.call<any>('session::get', { session_id: sid })).meta.status === 'working', 10_000);
    const busy = await failure(call('harness::regenerate', { session_id: sid }));
    expect(busy.code).toBe('harness/turn_active');
    expect(busy.message).toContain('harness::stop');
    const third = (await transcript(stack.client, sid))[4];
    expect((await failure(call('harness::edit', { session_id: sid, entry_id: third.entry_id, message: 'x' }))).code).toBe(
      'harness/turn_active',
    );
    // the session store refuses to switch branch under a running turn too
    expect((await failure(stack.client.call('session::set-active-leaf', { session_id: sid, entry_id: before[1].entry_id }))).code).toBe(
      'session/turn_active',
    );
    await stack.client.call('harness::stop', { session_id: sid });
    await waitFor(() => done.events.length === 1, 15_000);
    done.stop();
    expect(texts(await transcript(stack.client, sid)).slice(0, 4)).toEqual(texts(before));

    // a session without a user message
    const empty = sessionId();
    await stack.client.call('session::ensure', { session_id: empty });
    expect((await failure(call('harness::regenerate', { session_id: empty }))).code).toBe('harness/nothing_to_answer');
    expect((await failure(call('harness::regenerate', { session_id: `${empty}_missing` }))).code).toBe('harness/session_not_found');
  });
});
