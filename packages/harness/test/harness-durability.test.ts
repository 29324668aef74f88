import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type ChatStack, collect, startChatStack, transcript, waitFor, waitForFunctions } from './chat-loop-helpers.ts';

// A harness killed with SIGKILL in the middle of a turn, and an engine restarted under the chat
// stack: after the restart no session is left `working`, nothing in the transcript is lost.

describe('harness durability', () => {
  let stack: ChatStack | undefined;

  afterEach(async () => {
    await stack?.stop();
    stack = undefined;
  });

  const statusOf = async (s: ChatStack, sid: string) => (await s.client.call<any>('session::get', { session_id: sid })).meta.status;

  it('fails a turn cleanly after the harness is killed mid-stream and restarted', async () => {
    stack = await startChatStack();
    const s = stack;
    const sid = `s_kill_${process.pid}`;
    const updates = await collect<any>(s.client, 'session::message-updated', { session_id: sid });
    s.fake.turn({ text: 'alpha beta gamma delta epsilon', stallAfter: 3 });
    const answer = await s.client.call<any>('harness::send', { session_id: sid, session: {}, model: 'gpt-4o', message: 'go' });
    await waitFor(() => updates.events.some((e) => e.message.content[0]?.text === 'alpha beta '), 15_000);
    expect(await statusOf(s, sid)).toBe('working');

    await s.workers.harness?.kill();
    const done = await collect<any>(s.client, 'harness::turn-completed', { session_id: sid });
    s.start('harness');
    await waitFor(() => done.events.length === 1, 20_000);
    expect(done.events[0]).toMatchObject({ turn_id: answer.turn_id, status: 'failed', reason: 'interrupted' });
    expect(await statusOf(s, sid)).toBe('error');
    const assistant = (await transcript(s.client, sid))[1].message;
    expect(assistant).toMatchObject({ stop_reason: 'error', error_kind: 'transient', content: [{ type: 'text', text: 'alpha beta ' }] });
    expect(assistant.error_message).toMatch(/interrupted: the harness restarted/);
    expect(await s.client.call('harness::status', { session_id: sid })).toMatchObject({ turn_id: answer.turn_id, status: 'failed' });

    // the session goes on
    s.fake.turn({ text: 'Fresh start.' });
    await s.client.call('harness::send', { session_id: sid, model: 'gpt-4o', message: 'again' });
    await waitFor(() => done.events.length === 2, 15_000);
    expect(done.events[1]).toMatchObject({ status: 'completed', result: 'Fresh start.' });
    expect(await statusOf(s, sid)).toBe('idle');
    updates.stop();
    done.stop();
  });

  it('fails the turn cleanly when the provider worker dies mid-stream', async () => {
    stack = await startChatStack();
    const s = stack;
    const sid = `s_provider_${process.pid}`;
    const updates = await collect<any>(s.client, 'session::message-updated', { session_id: sid });
    const done = await collect<any>(s.client, 'harness::turn-completed', { session_id: sid });
    s.fake.turn({ text: 'first words then silence', stallAfter: 3 });
    await s.client.call('harness::send', { session_id: sid, session: {}, model: 'gpt-4o', message: 'go' });
    await waitFor(() => updates.events.some((e) => e.message.content[0]?.text === 'first words '), 15_000);
    await s.workers['provider-openai']?.kill();
    await waitFor(() => done.events.length === 1, 20_000);
    expect(done.events[0].status).toBe('failed');
    const assistant = (await transcript(s.client, sid))[1].message;
    expect(assistant).toMatchObject({ stop_reason: 'error', content: [{ type: 'text', text: 'first words ' }] });
    expect(assistant.error_message).toMatch(/provider openai failed/);
    expect(await statusOf(s, sid)).toBe('error');
    const providers = await s.client.call<any>('router::provider::list', {});
    expect(providers.providers.find((p: any) => p.id === 'openai').available).toBe(false);
    updates.stop();
    done.stop();
  });

  it('resumes a turn waiting for an approval after a kill, and finishes it once resolved', async () => {
    stack = await startChatStack();
    const s = stack;
    const sid = `s_hold_${process.pid}`;
    const ran: unknown[] = [];
    // a stand-in gate that holds every call (the real approval worker has its own tests)
    s.client.registerFunction('approval::gate', async () => ({ decision: 'hold', pending_timeout_ms: 60_000 }));
    s.client.registerFunction('demo::deploy', async (input) => {
      ran.push(input);
      return { deployed: true };
    });
    s.fake.turn({
      toolCalls: [{ id: 'call_deploy_1', name: 'agent_trigger', arguments: { function: 'demo::deploy', payload: { env: 'prod' } } }],
    });
    s.fake.turn({ text: 'Deployed.' });
    await s.client.call('harness::send', { session_id: sid, session: {}, model: 'gpt-4o', message: 'deploy' });
    await waitFor(async () => (await s.client.call<any>('harness::status', { session_id: sid }))?.status === 'awaiting_functions', 15_000);

    await s.workers.harness?.kill();
    s.start('harness');
    await waitForFunctions(s.client, ['harness::function::resolve']);
    await waitFor(async () => (await s.client.call<any>('harness::status', { session_id: sid }))?.status === 'awaiting_functions', 15_000);
    expect(await statusOf(s, sid)).toBe('working');
    const done = await collect<any>(s.client, 'harness::turn-completed', { session_id: sid });
    await waitFor(
      async () =>
        (await s.client.call<any>('harness::function::resolve', { session_id: sid, function_call_id: 'call_deploy_1', action: 'execute' }))
          .resolved,
      10_000,
    );
    await waitFor(() => done.events.length === 1, 15_000);
    expect(done.events[0]).toMatchObject({ status: 'completed', result: 'Deployed.' });
    expect(ran).toHaveLength(1);
    expect(ran[0]).toMatchObject({ env: 'prod' });
    expect(await statusOf(s, sid)).toBe('idle');
    done.stop();
  });

  it('keeps every transcript through an engine restart with file_based stores', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'eng-chat-durable-'));
    stack = await startChatStack({ stateFile: join(dir, 'state.db'), dataDir: join(dir, 'data') });
    const s = stack;
    const sid = `s_restart_${process.pid}`;
    const done = await collect<any>(s.client, 'harness::turn-completed', { session_id: sid });
    s.fake.turn({ text: 'Stored answer.' });
    await s.client.call('harness::send', { session_id: sid, session: { title: 'durable' }, model: 'gpt-4o', message: 'remember me' });
    await waitFor(() => done.events.length === 1, 15_000);
    done.stop();
    const before = await transcript(s.client, sid);

    await s.engine.restart();
    // every worker reconnects on its own and registers again
    await waitForFunctions(s.client, ['harness::send', 'harness::status', 'router::chat', 'provider::openai::stream'], 30_000);
    // a fresh session store reads what the engine kept, not what a process remembered
    await s.workers.session?.stop();
    s.start('session');
    await waitFor(async () => (await s.client.call<any>('session::get', { session_id: sid }))?.meta?.title === 'durable', 30_000, 200);
    expect(await transcript(s.client, sid)).toEqual(before);
    expect(before.map((e) => e.message.content[0].text)).toEqual(['remember me', 'Stored answer.']);
    expect(await s.client.call('harness::status', { session_id: sid })).toMatchObject({ status: 'completed', result: 'Stored answer.' });

    // and the conversation continues with its history
    await waitFor(async () => (await s.client.call<{ models: unknown[] }>('router::models::list', {})).models.length > 0, 30_000, 200);
    const after = await collect<any>(s.client, 'harness::turn-completed', { session_id: sid });
    s.fake.turn({ text: 'Still here.' });
    await waitFor(async () => {
      await s.client.call('harness::send', { session_id: sid, model: 'gpt-4o', message: 'still there?', idempotency_key: 'after-restart' });
      return true;
    }, 20_000);
    await waitFor(() => after.events.length === 1, 15_000);
    expect(after.events[0]).toMatchObject({ status: 'completed', result: 'Still here.' });
    const sent = s.fake
      .chatRequests()
      .at(-1)
      ?.body.messages.filter((m: any) => m.role !== 'system');
    expect(sent.map((m: any) => m.content)).toEqual(['remember me', 'Stored answer.', 'still there?']);
    after.stop();
  });
});
