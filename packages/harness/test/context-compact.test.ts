import type { EngClient } from '@eng/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineProcess } from '../../../test/harness.ts';
import { failure, startChatEngine, startWorker, testClient, type WorkerProcess, waitFor, waitForFunctions } from './chat-loop-helpers.ts';
import { FakeOpenAI } from './fakes/openai.ts';

// context::compact as a real worker, summarising through the real router and provider against the
// fake OpenAI server.

const SUMMARY =
  '## Goal\nShip it.\n## Constraints\nNone.\n## Progress\nDone.\n## Key Decisions\nNone.\n## Actions Taken\nNone.\n## Next Steps\nNone.\n## Critical Context\nNone.\n## Relevant Files\nNone.';
const text = (role: 'user' | 'assistant', t: string) =>
  role === 'user'
    ? { role, content: [{ type: 'text', text: t }], timestamp: 1 }
    : { role, content: [{ type: 'text', text: t }], stop_reason: 'end', model: 'gpt-4o', provider: 'openai', timestamp: 1 };

const conversation = [
  text('user', 'We need a release checklist.'),
  text('assistant', 'Sure, what is in scope?'),
  text('user', 'The orders service.'),
  {
    role: 'assistant',
    content: [{ type: 'function_call', id: 'c1', function_id: 'orders::list', arguments: { limit: 5 } }],
    stop_reason: 'function_call',
    model: 'gpt-4o',
    provider: 'openai',
    timestamp: 1,
  },
  {
    role: 'function_result',
    function_call_id: 'c1',
    function_id: 'orders::list',
    content: [{ type: 'text', text: '[{"id":"o-77"}]' }],
    is_error: false,
    timestamp: 1,
  },
  text('assistant', 'Found order o-77.'),
  text('user', 'Now write the checklist.'),
  text('assistant', 'Here it is.'),
];

describe('context::compact', () => {
  let engine: EngineProcess;
  let client: EngClient;
  let fake: FakeOpenAI;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    fake = await new FakeOpenAI().start();
    engine = await startChatEngine();
    client = await testClient(engine);
    workers.push(
      startWorker(engine, 'router', { OPENAI_API_KEY: 'sk-ctx', OPENAI_BASE_URL: fake.baseUrl }),
      startWorker(engine, 'provider-openai'),
      startWorker(engine, 'context'),
    );
    await waitForFunctions(client, ['context::compact']);
    await waitFor(async () => (await client.call<{ models: unknown[] }>('router::models::list', {})).models.length > 0, 20_000, 100);
  });

  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await client?.close();
    await engine?.stop();
    await fake?.stop();
  });

  const compact = (payload: Record<string, unknown>) => client.call<any>('context::compact', payload, { timeoutMs: 60_000 });

  it('summarises everything before the last two user turns with the eight-section template', async () => {
    fake.turn({ text: SUMMARY });
    const result = await compact({ messages: conversation, model: { id: 'gpt-4o', provider: 'openai' } });
    expect(result).toMatchObject({ status: 'ok', summary: SUMMARY, tail_start_index: 2, used_prior_summary: false });
    expect(result.tokens_before).toBeGreaterThan(result.tokens_after - 1000);
    const body = fake.chatRequests().at(-1)?.body;
    const system = body.messages[0].content as string;
    for (const section of [
      'Goal',
      'Constraints',
      'Progress',
      'Key Decisions',
      'Actions Taken',
      'Next Steps',
      'Critical Context',
      'Relevant Files',
    ]) {
      expect(system).toContain(`- ${section}`);
    }
    const prompt = body.messages[1].content as string;
    // the head (the first turn) is summarised; the tail (from "The orders service.") is kept verbatim
    expect(prompt).toContain('USER: We need a release checklist.');
    expect(prompt).not.toContain('The orders service.');
  });

  it('folds a previous summary in and keeps function calls and results in the transcript it sends', async () => {
    fake.turn({ text: SUMMARY });
    const result = await compact({
      messages: conversation,
      model: { id: 'openai::gpt-4o' },
      options: { tail_turns: 1, previous_summary: 'Earlier: agreed on Friday.' },
    });
    expect(result).toMatchObject({ status: 'ok', tail_start_index: 6, used_prior_summary: true });
    const prompt = fake.chatRequests().at(-1)?.body.messages[1].content as string;
    expect(prompt).toContain('<previous-summary>\nEarlier: agreed on Friday.');
    expect(prompt).toContain('[called orders::list with {"limit":5}]');
    expect(prompt).toContain('RESULT of orders::list: [{"id":"o-77"}]');
  });

  it('says empty when there is nothing before the tail, and null tail when everything is summarised', async () => {
    expect(await compact({ messages: [], model: { id: 'gpt-4o' } })).toEqual({ status: 'empty' });
    expect(await compact({ messages: conversation.slice(0, 4), model: { id: 'gpt-4o' } })).toEqual({ status: 'empty' });
    fake.turn({ text: SUMMARY });
    expect(await compact({ messages: conversation, model: { id: 'gpt-4o' }, options: { tail_turns: 0 } })).toMatchObject({
      status: 'ok',
      tail_start_index: null,
    });
  });

  it('answers busy while a compaction holds the same lease, and runs one with another lease', async () => {
    fake.turn({ text: SUMMARY, firstByteDelayMs: 1500 });
    const first = compact({ messages: conversation, model: { id: 'gpt-4o' }, options: { lease_key: 'session-1' } });
    await waitFor(() => fake.openStreams === 1, 10_000);
    expect(await compact({ messages: conversation, model: { id: 'gpt-4o' }, options: { lease_key: 'session-1' } })).toEqual({
      status: 'busy',
    });
    fake.turn({ text: SUMMARY });
    expect((await compact({ messages: conversation, model: { id: 'gpt-4o' }, options: { lease_key: 'session-2' } })).status).toBe('ok');
    expect((await first).status).toBe('ok');
    // released: the same lease works again
    fake.turn({ text: SUMMARY });
    expect((await compact({ messages: conversation, model: { id: 'gpt-4o' }, options: { lease_key: 'session-1' } })).status).toBe('ok');
  });

  it('answers overflow when the kept tail alone cannot fit the window', async () => {
    const huge = [...conversation, text('user', 'x'.repeat(40_000))];
    const result = await compact({
      messages: huge,
      model: { id: 'gpt-4o', limits: { context_window: 8000, max_output_tokens: 1000 } },
      options: { tail_turns: 1 },
    });
    expect(result.status).toBe('overflow');
  });

  it('summarises a head larger than the window in chunks, each folding in the summary so far', async () => {
    const long = Array.from({ length: 6 }, (_, i) => [
      text('user', `Turn ${i}: ${'detail '.repeat(1500)}`),
      text('assistant', `Answer ${i}`),
    ]).flat();
    const before = fake.chatRequests().length;
    fake.fallback = () => fake.reply({ text: SUMMARY });
    try {
      const result = await compact({
        messages: long,
        model: { id: 'gpt-4o', limits: { context_window: 12_000, max_output_tokens: 4000 } },
        options: { tail_turns: 1 },
      });
      expect(result.status).toBe('ok');
      const calls = fake.chatRequests().slice(before);
      expect(calls.length).toBeGreaterThan(1);
      expect(calls[1]?.body.messages[1].content).toContain('<previous-summary>');
    } finally {
      fake.fallback = undefined;
    }
  });

  it('refuses malformed input with the field named, and reports a failed summariser', async () => {
    expect((await failure(compact({ messages: 'nope', model: { id: 'gpt-4o' } }))).message).toMatch(
      /context\/invalid_request: context::compact: messages/,
    );
    expect((await failure(compact({ messages: [] }))).message).toMatch(/model/);
    expect((await failure(compact({ messages: [{ role: 'robot', content: [] }], model: { id: 'gpt-4o' } }))).message).toMatch(
      /messages\.0\.role/,
    );
    fake.error(400, 'bad request from the summariser', 'invalid_request_error');
    const failed = await failure(compact({ messages: conversation, model: { id: 'gpt-4o' } }));
    expect(failed.code).toBe('context/summarize_failed');
    expect(failed.message).toMatch(/bad request from the summariser/);
  });
});
