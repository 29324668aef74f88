import type { EngClient } from '@eng/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineProcess } from '../../../test/harness.ts';
import { chatThroughChannel, startChatEngine, startWorker, testClient, type WorkerProcess, waitFor } from './chat-loop-helpers.ts';
import { FakeAnthropic } from './fakes/anthropic.ts';

// provider-anthropic through the router against a fake Messages API (ANTHROPIC_BASE_URL).

const KEY = 'sk-ant-api03-test-key-abcdefghijklmnop';
const SONNET = 'anthropic::claude-sonnet-4-5-20250929';
const user = (text: string) => ({ role: 'user', content: [{ type: 'text', text }] });

describe('provider-anthropic', () => {
  let engine: EngineProcess;
  let client: EngClient;
  let fake: FakeAnthropic;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    fake = await new FakeAnthropic().start();
    fake.apiKey = KEY;
    engine = await startChatEngine();
    client = await testClient(engine);
    workers.push(
      startWorker(engine, 'router', { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: fake.baseUrl }),
      startWorker(engine, 'provider-anthropic'),
    );
    await waitFor(
      async () => (await client.call<{ models: unknown[] }>('router::models::list', { provider: 'anthropic' })).models.length === 2,
      20_000,
      100,
    );
  });

  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await client?.close();
    await engine?.stop();
    await fake?.stop();
  });

  it('streams thinking with its signature, text and tool use, and returns them in order', async () => {
    fake.turn({
      thinking: 'They want the order count.',
      signature: 'sig-abc',
      text: 'Checking the orders.',
      toolUses: [{ id: 'toolu_01', name: 'agent_trigger', input: { function: 'orders::list', payload: {} } }],
      usage: { input_tokens: 40, output_tokens: 22 },
    });
    const { frames, result } = await chatThroughChannel(client, {
      model: SONNET,
      thinking_level: 'low',
      tools: [{ name: 'agent_trigger', description: 'call a function', parameters: { type: 'object', properties: {} } }],
      messages: [user('how many orders?')],
    });
    expect(
      frames
        .filter((f) => f.type === 'thinking_delta')
        .map((f) => f.delta)
        .join(''),
    ).toBe('They want the order count.');
    expect(frames.find((f) => f.type === 'thinking_signature')).toEqual({ type: 'thinking_signature', index: 0, signature: 'sig-abc' });
    expect(frames.filter((f) => f.type === 'text_delta').every((f) => f.index === 1)).toBe(true);
    expect(frames.find((f) => f.type === 'toolcall_end')).toMatchObject({
      index: 2,
      id: 'toolu_01',
      arguments: { function: 'orders::list', payload: {} },
    });
    expect(frames.at(-1)).toMatchObject({
      type: 'done',
      stop_reason: 'function_call',
      native_stop_reason: 'tool_use',
      usage: { input: 40, output: 22 },
    });
    expect(result.content).toEqual([
      { type: 'thinking', text: 'They want the order count.', signature: 'sig-abc' },
      { type: 'text', text: 'Checking the orders.' },
      { type: 'tool_call', id: 'toolu_01', name: 'agent_trigger', arguments: { function: 'orders::list', payload: {} } },
    ]);
    const body = fake.messageRequests().at(-1)?.body;
    // thinking asked for with the model's budget for "low", under max_tokens
    expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect(body.max_tokens).toBeGreaterThan(2048);
    expect(body.tools).toEqual([
      { name: 'agent_trigger', description: 'call a function', input_schema: { type: 'object', properties: {} } },
    ]);
  });

  it('sends signed thinking, tool use and tool results back as alternating turns', async () => {
    fake.turn({ text: 'There are 3 orders.' });
    const { result } = await chatThroughChannel(client, {
      model: SONNET,
      system: 'You are terse.',
      messages: [
        user('how many orders?'),
        {
          role: 'assistant',
          content: [
            { type: 'thinking', text: 'count them', signature: 'sig-abc' },
            { type: 'thinking', text: 'unsigned thoughts are not sent back' },
            { type: 'tool_call', id: 'toolu_01', name: 'agent_trigger', arguments: { function: 'orders::list' } },
          ],
        },
        {
          role: 'tool_result',
          tool_call_id: 'toolu_01',
          tool_name: 'agent_trigger',
          content: [{ type: 'text', text: '[1,2,3]' }],
          is_error: false,
        },
        user('and?'),
      ],
    });
    expect(result.content).toEqual([{ type: 'text', text: 'There are 3 orders.' }]);
    const body = fake.messageRequests().at(-1)?.body;
    expect(body.system).toBe('You are terse.');
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'how many orders?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'count them', signature: 'sig-abc' },
          { type: 'tool_use', id: 'toolu_01', name: 'agent_trigger', input: { function: 'orders::list' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_01', content: [{ type: 'text', text: '[1,2,3]' }] },
          { type: 'text', text: 'and?' },
        ],
      },
    ]);
  });

  it('turns an error event in the middle of the stream into a transient error, keeping what came before', async () => {
    // message_start, text block start, ping, first delta, then `error`
    fake.turn({ text: 'Partial answer that gets cut', errorAfter: 4 });
    const before = fake.messageRequests().length;
    const { frames, result } = await chatThroughChannel(client, { model: SONNET, messages: [user('hi')] });
    // an error after the stream started is not retried: its text already reached the caller
    expect(fake.messageRequests().length).toBe(before + 1);
    expect(result.content).toEqual([{ type: 'text', text: 'Partial ' }]);
    expect(result).toMatchObject({ ok: false, stop_reason: 'error' });
    expect(result.error.message).toMatch(/Overloaded/);
    expect(frames.at(-1)).toMatchObject({ type: 'error' });
  });

  it('reports a bad key as auth_expired and the key never shows', async () => {
    const saved = fake.apiKey;
    fake.apiKey = 'another-key';
    try {
      const { result } = await chatThroughChannel(client, { model: SONNET, messages: [user('hi')] });
      expect(result).toMatchObject({ ok: false, error: { kind: 'auth_expired' } });
      expect(result.error.message).toMatch(/401 invalid x-api-key/);
      expect(JSON.stringify(result)).not.toContain(KEY);
    } finally {
      fake.apiKey = saved;
    }
    for (const w of workers) expect(w.output()).not.toContain(KEY);
  });

  it('a bare claude id routes to anthropic by prefix', async () => {
    expect(await client.call('router::route', { model: 'claude-sonnet-4-5-20250929' })).toEqual({
      provider: 'anthropic',
      model: 'claude-sonnet-4-5-20250929',
      key: 'anthropic::claude-sonnet-4-5-20250929',
    });
  });
});
