import type { EngClient } from '@eng/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineProcess } from '../../../test/harness.ts';
import { chatThroughChannel, startChatEngine, startWorker, testClient, type WorkerProcess, waitFor } from './chat-loop-helpers.ts';
import { FakeOpenAI, malformedOpenAIStream } from './fakes/openai.ts';

// provider-openai through the router, against a fake OpenAI-compatible server reached with
// OPENAI_BASE_URL, as a local llama.cpp/Ollama server would be.

const KEY = 'sk-openai-test-0123456789abcdef';
const user = (text: string) => ({ role: 'user', content: [{ type: 'text', text }] });

describe('provider-openai', () => {
  let engine: EngineProcess;
  let client: EngClient;
  let fake: FakeOpenAI;
  let router: WorkerProcess;
  let provider: WorkerProcess;

  beforeAll(async () => {
    fake = await new FakeOpenAI().start();
    fake.apiKey = KEY;
    engine = await startChatEngine();
    client = await testClient(engine);
    router = startWorker(engine, 'router', { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: fake.baseUrl });
    provider = startWorker(engine, 'provider-openai');
    await waitFor(
      async () => (await client.call<{ models: unknown[] }>('router::models::list', { provider: 'openai' })).models.length === 2,
      20_000,
      100,
    );
  });

  afterAll(async () => {
    await router?.stop();
    await provider?.stop();
    await client?.close();
    await engine?.stop();
    await fake?.stop();
  });

  it('streams text deltas into the channel and returns the content with usage', async () => {
    fake.turn({ text: 'Hello there, how can I help?', usage: { prompt_tokens: 9, completion_tokens: 7 } });
    const { frames, result } = await chatThroughChannel(client, { model: 'openai::gpt-4o', system: 'Be brief.', messages: [user('hi')] });
    expect(frames[0]).toEqual({ type: 'start', provider: 'openai', model: 'gpt-4o' });
    const text = frames
      .filter((f) => f.type === 'text_delta')
      .map((f) => f.delta)
      .join('');
    expect(text).toBe('Hello there, how can I help?');
    expect(frames.at(-1)).toMatchObject({ type: 'done', stop_reason: 'end', native_stop_reason: 'stop', usage: { input: 9, output: 7 } });
    expect(result).toMatchObject({
      ok: true,
      provider: 'openai',
      model: 'gpt-4o',
      stop_reason: 'end',
      content: [{ type: 'text', text: 'Hello there, how can I help?' }],
    });
    const body = fake.chatRequests().at(-1)?.body;
    expect(body.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'hi' },
    ]);
    expect(body.stream).toBe(true);
    expect(body.stream_options).toEqual({ include_usage: true });
    // a local server gets max_tokens (only api.openai.com wants max_completion_tokens)
    expect(body.max_tokens).toBe(16_384);
  });

  it('streams tool calls and sends earlier calls and results back in the API shape', async () => {
    fake.turn({
      text: 'Let me check. ',
      toolCalls: [{ id: 'call_1', name: 'agent_trigger', arguments: { function: 'orders::list', payload: { limit: 2 } } }],
    });
    const tools = [
      {
        name: 'agent_trigger',
        description: 'call a function',
        parameters: { type: 'object', properties: { function: { type: 'string' } } },
      },
    ];
    const { frames, result } = await chatThroughChannel(client, {
      model: 'gpt-4o',
      tools,
      messages: [
        user('earlier'),
        {
          role: 'assistant',
          content: [{ type: 'tool_call', id: 'call_0', name: 'agent_trigger', arguments: { function: 'a::b', payload: {} } }],
        },
        {
          role: 'tool_result',
          tool_call_id: 'call_0',
          tool_name: 'agent_trigger',
          content: [{ type: 'text', text: '{"ok":true}' }],
          is_error: false,
        },
        user('list two orders'),
      ],
    });
    expect(frames.find((f) => f.type === 'toolcall_start')).toEqual({
      type: 'toolcall_start',
      index: 1,
      id: 'call_1',
      name: 'agent_trigger',
    });
    expect(frames.find((f) => f.type === 'toolcall_end')).toMatchObject({
      index: 1,
      arguments: { function: 'orders::list', payload: { limit: 2 } },
    });
    expect(result.stop_reason).toBe('function_call');
    expect(result.content).toEqual([
      { type: 'text', text: 'Let me check. ' },
      { type: 'tool_call', id: 'call_1', name: 'agent_trigger', arguments: { function: 'orders::list', payload: { limit: 2 } } },
    ]);
    const body = fake.chatRequests().at(-1)?.body;
    expect(body.tools).toEqual([{ type: 'function', function: tools[0] }]);
    expect(body.messages[1]).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'agent_trigger', arguments: '{"function":"a::b","payload":{}}' } }],
    });
    expect(body.messages[2]).toEqual({ role: 'tool', tool_call_id: 'call_0', content: '{"ok":true}' });
  });

  it('maps reasoning_content of compatible servers to thinking', async () => {
    fake.turn({ reasoning: 'The user greets me.', text: 'Hi!' });
    const { frames, result } = await chatThroughChannel(client, { model: 'gpt-4o', messages: [user('hello')] });
    expect(
      frames
        .filter((f) => f.type === 'thinking_delta')
        .map((f) => f.delta)
        .join(''),
    ).toBe('The user greets me.');
    expect(result.content).toEqual([
      { type: 'thinking', text: 'The user greets me.' },
      { type: 'text', text: 'Hi!' },
    ]);
  });

  it('reports a rejected key as auth_expired without the key in the message', async () => {
    // the client does not retry a 401
    fake.error(401, `Incorrect API key provided: ${KEY}.`, 'invalid_request_error', 'invalid_api_key');
    const { frames, result } = await chatThroughChannel(client, { model: 'gpt-4o', messages: [user('hi')] });
    expect(result).toMatchObject({ ok: false, stop_reason: 'error', error: { kind: 'auth_expired' } });
    expect(result.error.message).toMatch(/^401 Incorrect API key provided/);
    expect(JSON.stringify([frames, result])).not.toContain(KEY);
    expect(frames.at(-1)).toMatchObject({ type: 'error', error_kind: 'auth_expired' });
  });

  it('retries a 500 and succeeds; reports rate limiting once the retries are spent', async () => {
    fake.error(500, 'The server had an error while processing your request.', 'server_error', null, { 'retry-after-ms': '10' });
    fake.turn({ text: 'Recovered.' });
    const ok = await chatThroughChannel(client, { model: 'gpt-4o', messages: [user('hi')] });
    expect(ok.result).toMatchObject({ ok: true, content: [{ type: 'text', text: 'Recovered.' }] });

    for (let i = 0; i < 3; i++)
      fake.error(429, 'Rate limit reached for gpt-4o.', 'requests', 'rate_limit_exceeded', { 'retry-after-ms': '10' });
    const limited = await chatThroughChannel(client, { model: 'gpt-4o', messages: [user('hi')] });
    expect(limited.result).toMatchObject({ ok: false, error: { kind: 'rate_limited' } });
    expect(limited.result.error.message).toMatch(/429 Rate limit reached/);
  });

  it('turns malformed stream data into an error result, keeps the partial text, and stays up', async () => {
    fake.enqueue(malformedOpenAIStream());
    const { result } = await chatThroughChannel(client, { model: 'gpt-4o', messages: [user('hi')] });
    expect(result.ok).toBe(false);
    expect(result.stop_reason).toBe('error');
    expect(result.error.message.length).toBeGreaterThan(0);
    expect(result.content).toEqual([{ type: 'text', text: 'Partial ' }]);
    fake.turn({ text: 'Still here.' });
    const after = await chatThroughChannel(client, { model: 'gpt-4o', messages: [user('again')] });
    expect(after.result.content).toEqual([{ type: 'text', text: 'Still here.' }]);
    expect(provider.child.exitCode).toBeNull();
    expect(router.child.exitCode).toBeNull();
  });

  it('aborts a stalled stream through router::abort and closes the upstream request', async () => {
    fake.turn({ text: 'one two three four five six seven', stallAfter: 3 });
    const abandonedBefore = fake.abandonedStreams;
    let streamed = '';
    const chat = chatThroughChannel(
      client,
      { model: 'gpt-4o', request_id: 'req-abort-1', messages: [user('talk')] },
      {
        onFrame: (f) => {
          if (f.type === 'text_delta') streamed += f.delta;
        },
      },
    );
    // the fake holds the stream after two words: abort once both reached the caller
    await waitFor(() => streamed === 'one two ', 10_000);
    expect(await client.call('router::abort', { request_id: 'req-abort-1' })).toEqual({ aborted: true });
    const { frames, result } = await chat;
    expect(result).toMatchObject({ ok: false, stop_reason: 'aborted' });
    expect(result.content[0]?.text).toBe('one two ');
    expect(frames.at(-1)).toMatchObject({ type: 'error', stop_reason: 'aborted' });
    await waitFor(() => fake.abandonedStreams === abandonedBefore + 1, 5000);
    expect(await client.call('router::abort', { request_id: 'req-abort-1' })).toEqual({ aborted: false });
  });

  it('never writes the key to its output', () => {
    expect(router.output()).not.toContain(KEY);
    expect(provider.output()).not.toContain(KEY);
  });
});
