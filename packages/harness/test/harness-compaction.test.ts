import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChatStack, collect, startChatStack, transcript, waitFor } from './chat-loop-helpers.ts';

// Compaction with the harness: the console's /compact flow (context::compact, then the custom
// `compaction` entry) and the harness compacting on its own before a step that would overflow.
// The transcript stays whole; later turns send the summary and the kept tail only.

const SUMMARY =
  '## Goal\nPlan the launch.\n## Constraints\nNone.\n## Progress\nDrafted.\n## Key Decisions\nFriday.\n## Actions Taken\nNone.\n## Next Steps\nShip.\n## Critical Context\nNone.\n## Relevant Files\nNone.';
const isSummariser = (body: any) =>
  typeof body?.messages?.[0]?.content === 'string' && body.messages[0].content.startsWith('You compact a conversation');

describe('harness and compaction', () => {
  let stack: ChatStack;

  beforeAll(async () => {
    stack = await startChatStack();
  });

  afterAll(async () => {
    await stack?.stop();
  });

  async function turn(sid: string, message: string, answer: string, model = 'gpt-4o') {
    const done = await collect<any>(stack.client, 'harness::turn-completed', { session_id: sid });
    stack.fake.turn({ text: answer });
    await stack.client.call('harness::send', { session_id: sid, session: {}, model, message });
    await waitFor(() => done.events.length === 1, 15_000);
    done.stop();
    return done.events[0];
  }

  it('anchors later turns on a /compact summary and leaves the transcript untouched', async () => {
    const sid = `s_manual_${process.pid}`;
    await turn(sid, 'first question', 'first answer');
    await turn(sid, 'second question', 'second answer');
    await turn(sid, 'third question', 'third answer');
    const before = await transcript(stack.client, sid);

    // what the console does for /compact
    expect((await stack.client.call<any>('harness::status', { session_id: sid })).status).toBe('completed');
    stack.fake.turn({ text: SUMMARY });
    const result = await stack.client.call<any>(
      'context::compact',
      { messages: before.map((e) => e.message), model: { id: 'gpt-4o', provider: 'openai' }, options: { lease_key: sid } },
      { timeoutMs: 60_000 },
    );
    expect(result).toMatchObject({ status: 'ok', summary: SUMMARY, tail_start_index: 2 });
    const tailEntry = before[result.tail_start_index].entry_id;
    await stack.client.call('session::append', {
      session_id: sid,
      custom: {
        custom_type: 'compaction',
        data: { summary: result.summary, tail_start_entry_id: tailEntry, tokens_before: result.tokens_before, timestamp: Date.now() },
      },
    });

    await turn(sid, 'fourth question', 'fourth answer');
    const sent = stack.fake.chatRequests().at(-1)?.body.messages;
    expect(sent[1].content).toContain('<conversation-summary>');
    expect(sent[1].content).toContain('Plan the launch.');
    expect(sent.slice(2).map((m: any) => m.content)).toEqual([
      'second question',
      'second answer',
      'third question',
      'third answer',
      'fourth question',
    ]);
    // nothing was removed from the transcript: the summary is an extra custom entry
    const after = await transcript(stack.client, sid);
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after[before.length].custom).toMatchObject({
      custom_type: 'compaction',
      data: { summary: SUMMARY, tail_start_entry_id: tailEntry },
    });
  });

  it('compacts on its own before a step that would overflow the window, storing the compaction entry', async () => {
    const sid = `s_auto_${process.pid}`;
    await stack.client.call('session::ensure', { session_id: sid });
    // history far beyond local-small's 32k-token window (the fake lists it; unknown ids get 32768 tokens)
    const big = (label: string) => `${label}: ${'lorem ipsum dolor sit amet '.repeat(2300)}`;
    await stack.client.call('session::append', {
      session_id: sid,
      message: { role: 'user', content: [{ type: 'text', text: big('old question') }] },
    });
    await stack.client.call('session::append', {
      session_id: sid,
      message: {
        role: 'assistant',
        content: [{ type: 'text', text: big('old answer') }],
        stop_reason: 'end',
        model: 'local-small',
        provider: 'openai',
      },
    });
    await stack.client.call('session::append', {
      session_id: sid,
      message: { role: 'user', content: [{ type: 'text', text: 'recent question' }] },
    });
    await stack.client.call('session::append', {
      session_id: sid,
      message: {
        role: 'assistant',
        content: [{ type: 'text', text: 'recent answer' }],
        stop_reason: 'end',
        model: 'local-small',
        provider: 'openai',
      },
    });
    const requestsBefore = stack.fake.chatRequests().length;
    stack.fake.fallback = (request) => stack.fake.reply({ text: isSummariser(request.body) ? SUMMARY : 'fits now' });
    try {
      const done = await collect<any>(stack.client, 'harness::turn-completed', { session_id: sid });
      await stack.client.call('harness::send', { session_id: sid, model: 'local-small', message: 'new question' });
      await waitFor(() => done.events.length === 1, 30_000);
      expect(done.events[0]).toMatchObject({ status: 'completed', result: 'fits now' });
      done.stop();
    } finally {
      stack.fake.fallback = undefined;
    }
    const requests = stack.fake.chatRequests().slice(requestsBefore);
    expect(requests.map((r) => isSummariser(r.body))).toEqual([true, false]);
    const generation = requests[1]?.body.messages;
    expect(generation[1].content).toContain('Plan the launch.');
    expect(generation.slice(2).map((m: any) => m.content)).toEqual(['recent question', 'recent answer', 'new question']);
    expect(JSON.stringify(generation).length).toBeLessThan(20_000);

    const entries = await transcript(stack.client, sid);
    const compaction = entries.find((e) => e.custom?.custom_type === 'compaction');
    expect(compaction?.custom.data).toMatchObject({ summary: SUMMARY, tail_start_entry_id: entries[2].entry_id });
    expect(compaction?.custom.data.tokens_before).toBeGreaterThan(30_000);
    expect(compaction?.origin).toMatchObject({ automatic: true });
    expect(entries.filter((e) => e.message).length).toBe(6);
  });
});
