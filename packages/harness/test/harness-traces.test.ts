import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChatStack, collect, startChatStack, waitFor } from './chat-loop-helpers.ts';

// Every turn is traced (the turn, each generation, each function call, all carrying
// eng.session.id), and the provider key — pasted through configuration::set — never appears in a
// span, a log record or a worker's output.

const KEY = 'sk-trace-secret-5f1e9c0d7a3b2e4f';

describe('harness traces and secrets', () => {
  let stack: ChatStack;

  beforeAll(async () => {
    // no key in anyone's environment: the only credential is the one set below
    stack = await startChatStack({ key: null });
    await waitFor(
      async () => (await stack.client.call<{ providers: unknown[] }>('router::provider::list', {})).providers.length > 0,
      20_000,
      100,
    );
    stack.fake.apiKey = KEY;
    await stack.client.call('configuration::set', {
      id: 'llm-router',
      value: { providers: { openai: { api_key: KEY, api_url: stack.fake.baseUrl } } },
    });
    await waitFor(async () => (await stack.client.call<{ models: unknown[] }>('router::models::list', {})).models.length > 0, 20_000, 100);
    stack.client.registerFunction('demo::lookup', async () => ({ token: 'not-a-secret' }), { description: 'Look something up' });
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it('traces the turn, its generations and its function calls under the session id', async () => {
    const sid = `s_trace_${process.pid}`;
    const done = await collect<any>(stack.client, 'harness::turn-completed', { session_id: sid });
    stack.fake.turn({ toolCalls: [{ id: 'call_lookup_1', name: 'agent_trigger', arguments: { function: 'demo::lookup', payload: {} } }] });
    stack.fake.turn({ text: 'Looked it up.' });
    const answer = await stack.client.call<any>('harness::send', { session_id: sid, session: {}, model: 'gpt-4o', message: 'look it up' });
    await waitFor(() => done.events.length === 1, 15_000);
    done.stop();

    const spansOf = async () =>
      (
        await stack.client.call<{ spans: any[] }>('engine::traces::list', {
          attributes: [['eng.session.id', sid]],
          include_internal: true,
          search_all_spans: true,
          limit: 500,
        })
      ).spans;
    const names = (spans: any[]) => spans.map((s) => s.name);
    await waitFor(
      async () => {
        const n = names(await spansOf());
        return n.includes('harness turn') && n.filter((x) => x === 'generation').length === 2 && n.includes('function demo::lookup');
      },
      15_000,
      200,
    );
    const spans = await spansOf();
    const attr = (span: any, key: string) => (span.attributes as Array<[string, unknown]>).find(([k]) => k === key)?.[1];
    const turnSpan = spans.find((s) => s.name === 'harness turn');
    expect(attr(turnSpan, 'eng.turn.id')).toBe(answer.turn_id);
    expect(attr(turnSpan, 'eng.turn.status')).toBe('completed');
    const generations = spans.filter((s) => s.name === 'generation');
    expect(generations.every((g) => g.parent_span_id === turnSpan.span_id && g.trace_id === turnSpan.trace_id)).toBe(true);
    expect(generations.map((g) => String(attr(g, 'eng.step'))).sort()).toEqual(['1', '2']);
    const call = spans.find((s) => s.name === 'function demo::lookup');
    expect(call.parent_span_id).toBe(turnSpan.span_id);
    expect(attr(call, 'eng.function_call.id')).toBe('call_lookup_1');
    // the function's own execution is a child of the call span: one trace from send to function
    // spans of other processes arrive with their own batching: wait for them
    const traceOf = async () => (await stack.client.call<{ spans: any[] }>('engine::traces::spans', { trace_id: turnSpan.trace_id })).spans;
    await waitFor(
      async () => {
        const n = (await traceOf()).map((s) => s.name);
        return n.includes('execute demo::lookup') && n.includes('execute provider::openai::stream');
      },
      15_000,
      100,
    );
    const all = await traceOf();
    const executed = all.find((s) => s.name === 'execute demo::lookup');
    expect(executed?.parent_span_id).toBe(call.span_id);
    // the provider's stream ran in the same trace, under the generation
    expect(all.some((s) => s.name === 'execute provider::openai::stream')).toBe(true);
  });

  it('keeps the key out of spans, logs and worker output', async () => {
    // a bad key round trip too: the API's 401 text quotes the key it was given
    stack.fake.error(401, `Incorrect API key provided: ${KEY}.`, 'invalid_request_error', 'invalid_api_key');
    const sid = `s_secret_${process.pid}`;
    const done = await collect<any>(stack.client, 'harness::turn-completed', { session_id: sid });
    await stack.client.call('harness::send', { session_id: sid, session: {}, model: 'gpt-4o', message: 'hi' });
    await waitFor(() => done.events.length === 1, 15_000);
    expect(done.events[0].status).toBe('failed');
    expect(done.events[0].result_error).toContain('[redacted]');
    done.stop();
    await new Promise((r) => setTimeout(r, 500)); // let the workers ship their last spans
    // every span of every trace, events included
    const listed = await stack.client.call<{ spans: Array<{ trace_id: string }> }>('engine::traces::list', {
      include_internal: true,
      search_all_spans: true,
      limit: 10_000,
    });
    const traceIds = [...new Set(listed.spans.map((s) => s.trace_id))];
    const spans = await Promise.all(traceIds.map((trace_id) => stack.client.call('engine::traces::spans', { trace_id })));
    const logs = await stack.client.call('engine::logs::list', { limit: 10_000 });
    expect(JSON.stringify(spans).length).toBeGreaterThan(1000);
    expect(JSON.stringify(spans)).not.toContain(KEY);
    expect(JSON.stringify(logs)).not.toContain(KEY);
    for (const worker of Object.values(stack.workers)) expect(worker?.output()).not.toContain(KEY);
    expect(stack.engine.logs()).not.toContain(KEY);
    // and the configuration entry shows it as set, not its value
    const entry = await stack.client.call<any>('configuration::get', { id: 'llm-router' });
    expect(entry.value.providers.openai.api_key).toEqual({ set: true });
  });
});
