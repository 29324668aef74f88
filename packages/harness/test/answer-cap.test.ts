import { readFileSync } from 'node:fs';
import type { ChannelWriter, EngClient } from '@eng/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine } from '../../../test/harness.ts';
import {
  chatEngineYaml,
  chatThroughChannel,
  collect,
  failure,
  type Role,
  startWorker,
  testClient,
  transcript,
  type WorkerProcess,
  waitFor,
  waitForFunctions,
} from './chat-loop-helpers.ts';
import { FakeOpenAI } from './fakes/openai.ts';

// Issue 24 item 4: a huge streamed answer must not take the chat down. The engine's frame limit
// is scaled down (64 MiB → 1 MiB) so a 1–2 MB answer plays the attacker's 80 MB one; the cap is set
// to 256 KiB through the llm-router configuration entry, as an operator would.

const KiB = 1024;
const MiB = 1024 * KiB;
const FRAME_LIMIT = MiB;
const CAP = 256 * KiB;
const KEY = 'sk-answer-cap-0123456789';
const CAP_MESSAGE = `the answer exceeded max_answer_bytes (${CAP} bytes)`;

const user = (text: string) => ({ role: 'user', content: [{ type: 'text', text }] });
let seq = 0;
const sessionId = () => `s_cap_${process.pid}_${++seq}`;

/** A result with its text blocks as lengths: a failed assertion must not print megabytes. */
const brief = (result: any) => ({
  ...result,
  content: result.content?.map((b: any) => (typeof b.text === 'string' ? { type: b.type, length: b.text.length } : b)),
});

/** Resident memory of a process in MiB (Linux). */
function rssMiB(pid: number | undefined): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
}

describe('the byte cap on one answer', () => {
  let engine: EngineProcess;
  let client: EngClient;
  let fake: FakeOpenAI;
  const workers: Partial<Record<Role, WorkerProcess>> = {};
  const roles: Role[] = ['session', 'router', 'provider-openai', 'context', 'harness'];

  beforeAll(async () => {
    fake = await new FakeOpenAI().start();
    fake.models = ['gpt-4o', 'gpt-4o-mini'];
    engine = await startEngine({
      configYaml: `workers:\n  - name: eng-worker-manager\n    config:\n      port: {{BUS_PORT}}\n      max_frame_bytes: ${FRAME_LIMIT}\n${chatEngineYaml()}`,
    });
    client = await testClient(engine);
    for (const role of roles) {
      workers[role] = startWorker(engine, role, role === 'router' ? { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: fake.baseUrl } : {});
    }
    // generous: five workers start at once on a shared two-core machine
    await waitForFunctions(client, ['session::append', 'router::chat', 'harness::send'], 40_000);
    await waitFor(async () => (await models()).length > 0, 15_000, 100);
  });

  afterAll(async () => {
    await Promise.all(Object.values(workers).map((w) => w?.stop()));
    await client?.close();
    await engine?.stop();
    await fake?.stop();
  });

  const models = async () => (await client.call<{ models: Array<{ id: string; provider: string }> }>('router::models::list', {})).models;
  const openai = async () =>
    (await client.call<{ providers: Array<{ id: string; available: boolean }> }>('router::provider::list', {})).providers.find(
      (p) => p.id === 'openai',
    );
  const send = (payload: Record<string, unknown>) => client.call<any>('harness::send', { model: 'gpt-4o', session: {}, ...payload });
  const alive = (role: Role) => workers[role]?.child.exitCode === null && workers[role]?.child.signalCode === null;

  it('streams a large answer under the cap in bounded frames', async () => {
    // no delay: the whole answer arrives in one burst, which the provider used to coalesce into one frame
    fake.turn({ bulkText: { bytes: 900_000 } });
    const { frames, result } = await chatThroughChannel(client, { model: 'openai::gpt-4o', messages: [user('long')] });
    expect(brief(result)).toMatchObject({ ok: true, stop_reason: 'end', content: [{ type: 'text', length: 900_000 }] });
    const streamed = frames.filter((f) => f.type === 'text_delta').map((f) => f.delta);
    expect(streamed.join('').length).toBe(900_000);
    const largest = Math.max(...frames.map((f) => JSON.stringify(f).length));
    expect(largest).toBeLessThanOrEqual(64 * KiB + 256);
    expect(frames.at(-1)).toMatchObject({ type: 'done', stop_reason: 'end' });
  });

  it('lists the provider as available again within seconds after its connection to the engine dropped', async () => {
    const workerIds = async () =>
      (await client.call<{ workers: Array<{ id: string }> }>('engine::workers::list', { search: 'provider-openai' })).workers.map(
        (w) => w.id,
      );
    const before = await workerIds();
    expect(before).toHaveLength(1);
    // under the default cap (4 MiB) but over the engine's frame limit: the provider's result frame
    // closes its connection (1009), as the attacker's 80 MB answer did; the provider reconnects
    fake.turn({ bulkText: { bytes: 1_500_000 } });
    const { result } = await chatThroughChannel(client, { model: 'gpt-4o', messages: [user('huge')] });
    const failedAt = Date.now();
    expect(brief(result)).toMatchObject({ ok: false, stop_reason: 'error' });
    // the same process on a new connection
    await waitFor(async () => {
      const ids = await workerIds();
      return ids.length === 1 && ids[0] !== before[0];
    }, 15_000);
    await waitFor(async () => (await openai())?.available === true && (await models()).some((m) => m.provider === 'openai'), 10_000, 50);
    console.log(`provider-openai listed as available again ${Date.now() - failedAt} ms after the failed call`);
    expect(alive('provider-openai')).toBe(true);
    fake.turn({ text: 'Back again.' });
    const after = await chatThroughChannel(client, { model: 'gpt-4o', messages: [user('hi')] });
    expect(after.result).toMatchObject({ ok: true, content: [{ type: 'text', text: 'Back again.' }] });
  });

  it('refuses a max_answer_bytes that is not a sensible size, naming the field', async () => {
    for (const bad of [0, 100, 1.5, 64 * MiB, '1MB']) {
      const err = await failure(client.call('configuration::set', { id: 'llm-router', value: { settings: { max_answer_bytes: bad } } }));
      expect(err.message).toMatch(/max_answer_bytes/);
    }
  });

  it('ends a turn whose answer exceeds max_answer_bytes with a clear error; the provider stays available and the next turns work', async () => {
    await client.call('configuration::set', { id: 'llm-router', value: { settings: { max_answer_bytes: CAP } } });
    // the router reads the entry on its change event: probe until the cap is in force
    await waitFor(
      async () => {
        fake.turn({ bulkText: { bytes: CAP + 40 * KiB } });
        const probe = await client.call<any>('router::complete', { model: 'gpt-4o', messages: [user('probe')] });
        return probe.error?.message === CAP_MESSAGE;
      },
      10_000,
      200,
    );

    const memory = () =>
      Object.fromEntries((['provider-openai', 'router', 'harness', 'session'] as Role[]).map((r) => [r, rssMiB(workers[r]?.child.pid)]));
    const rssBefore = memory();
    const sid = sessionId();
    const done = await collect<any>(client, 'harness::turn-completed', { session_id: sid });
    const abandoned = fake.abandonedStreams;
    fake.turn({ bulkText: { bytes: 2 * MiB }, delayMs: 1 });
    await send({ session_id: sid, message: 'Write me two megabytes.' });
    await waitFor(() => done.events.length === 1, 20_000);
    expect(done.events[0]).toMatchObject({ status: 'failed', result_error: CAP_MESSAGE });
    const assistant = (await transcript(client, sid))[1].message;
    expect(assistant).toMatchObject({ stop_reason: 'error', error_kind: 'permanent', error_message: CAP_MESSAGE });
    const kept = assistant.content[0].text.length;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThanOrEqual(CAP);
    // the provider stopped reading: the fake saw its client leave before the end of the answer
    await waitFor(() => fake.abandonedStreams === abandoned + 1, 5000);

    const rssAfter = memory();
    console.log(`resident MiB before ${JSON.stringify(rssBefore)}, after ${JSON.stringify(rssAfter)}`);
    for (const role of roles) expect(alive(role)).toBe(true);
    for (const [role, mib] of Object.entries(rssAfter)) expect(mib - (rssBefore[role] ?? 0)).toBeLessThan(100);
    // one turn's failure leaves the provider available
    expect(await openai()).toMatchObject({ available: true });
    expect((await models()).some((m) => m.provider === 'openai')).toBe(true);

    fake.turn({ text: 'A short answer.' });
    await send({ session_id: sid, message: 'Shorter, please.' });
    await waitFor(() => done.events.length === 2, 15_000);
    expect(done.events[1]).toMatchObject({ status: 'completed', result: 'A short answer.' });
    done.stop();

    const other = sessionId();
    const otherDone = await collect<any>(client, 'harness::turn-completed', { session_id: other });
    fake.turn({ text: 'Hello from another session.' });
    await send({ session_id: other, message: 'hi' });
    await waitFor(() => otherDone.events.length === 1, 15_000);
    expect(otherDone.events[0]).toMatchObject({ status: 'completed', result: 'Hello from another session.' });
    otherDone.stop();
  });

  it('stops reading one endless upstream event at the cap instead of buffering it', async () => {
    // a single 2 MiB SSE line: the client would hold it whole before parsing a delta
    const started = Date.now();
    fake.turn({ bulkText: { bytes: 2 * MiB, chunkChars: 2 * MiB } });
    const { frames, result } = await chatThroughChannel(client, { model: 'gpt-4o', messages: [user('one line')] });
    expect(brief(result)).toMatchObject({
      ok: false,
      stop_reason: 'error',
      error: { kind: 'permanent', message: `${CAP_MESSAGE}: one upstream line was longer than ${CAP + 64 * KiB} bytes` },
    });
    expect(frames.at(-1)).toMatchObject({ type: 'error', error_kind: 'permanent' });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(await openai()).toMatchObject({ available: true });
  });

  describe('a provider that ignores the cap', () => {
    let aborted = 0;
    let resultText = '';

    beforeAll(async () => {
      // a third-party provider worker on the bus: it streams on past max_answer_bytes
      client.registerFunction('provider::rogue::stream', async (input: any) => {
        const writer = input.writer as ChannelWriter | undefined;
        if (writer) {
          try {
            await writer.sendMessage(JSON.stringify({ type: 'start', provider: 'rogue', model: 'rogue-1' }));
            // one 200 KiB delta, then a flood
            await writer.sendMessage(JSON.stringify({ type: 'text_delta', index: 0, delta: 'y'.repeat(200 * KiB) }));
            for (let i = 0; i < 64; i++)
              await writer.sendMessage(JSON.stringify({ type: 'text_delta', index: 0, delta: 'z'.repeat(32 * KiB) }));
            await writer.sendMessage(JSON.stringify({ type: 'done', stop_reason: 'end' }));
            await writer.end();
          } catch {
            // the router closed our channel
          }
        }
        return { ok: true, provider: 'rogue', model: 'rogue-1', content: [{ type: 'text', text: resultText }], stop_reason: 'end' };
      });
      client.registerFunction('provider::rogue::abort', async () => {
        aborted++;
        return { aborted: true };
      });
      await client.call('router::provider::register', { id: 'rogue', display_name: 'Rogue', env_credentials: true });
      await client.call('router::models::reconcile', {
        provider: 'rogue',
        models: [{ id: 'rogue-1', context_window: 8192, max_output_tokens: 1024 }],
      });
    });

    it('is cut off by the harness reading its stream at the cap, and the turn ends with the same error', async () => {
      resultText = 'small';
      const sid = sessionId();
      const done = await collect<any>(client, 'harness::turn-completed', { session_id: sid });
      await send({ session_id: sid, model: 'rogue::rogue-1', message: 'flood' });
      await waitFor(() => done.events.length === 1, 20_000);
      done.stop();
      expect(done.events[0]).toMatchObject({ status: 'failed', result_error: CAP_MESSAGE });
      const assistant = (await transcript(client, sid))[1].message;
      expect(assistant).toMatchObject({ stop_reason: 'error', error_kind: 'permanent', error_message: CAP_MESSAGE });
      // what was read before the cut is kept, and no more than the cap allows
      const kept = assistant.content[0].text.length;
      expect(kept).toBeGreaterThanOrEqual(200 * KiB);
      expect(kept).toBeLessThanOrEqual(CAP + 64 * KiB);
      // the provider was told to stop, and stays available
      await waitFor(() => aborted === 1, 5000);
      expect(await client.call<any>('router::provider::list', {})).toMatchObject({
        providers: expect.arrayContaining([expect.objectContaining({ id: 'rogue', available: true })]),
      });
    });

    it('never hands on a result over the cap', async () => {
      resultText = 'w'.repeat(CAP + 100 * KiB);
      const result = await client.call<any>('router::complete', { model: 'rogue::rogue-1', messages: [user('big result')] });
      expect(brief(result)).toMatchObject({
        ok: false,
        stop_reason: 'error',
        content: [],
        error: { kind: 'permanent', message: CAP_MESSAGE },
      });
    });
  });

  it('follows the real connection across an engine restart: a provider gone meanwhile is unavailable, a new one is available', async () => {
    // the provider dies while the engine is down: no disconnect event ever reaches the router
    await engine.kill();
    await workers['provider-openai']?.kill();
    await engine.restart();
    const restartedAt = Date.now();
    await waitFor(async () => (await openai())?.available === false, 15_000, 100);
    console.log(`the vanished provider was listed as unavailable ${Date.now() - restartedAt} ms after the engine restart`);
    expect(await models()).toEqual([]);

    workers['provider-openai'] = startWorker(engine, 'provider-openai');
    await waitFor(async () => (await openai())?.available === true && (await models()).length > 0, 15_000, 100);
    fake.turn({ text: 'After the restart.' });
    const { result } = await chatThroughChannel(client, { model: 'gpt-4o', messages: [user('hi')] });
    expect(result).toMatchObject({ ok: true, content: [{ type: 'text', text: 'After the restart.' }] });
  });
});
