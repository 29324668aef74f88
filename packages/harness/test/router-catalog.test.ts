import type { EngClient } from '@eng/sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EngineProcess } from '../../../test/harness.ts';
import {
  collect,
  failure,
  startChatEngine,
  startWorker,
  testClient,
  type WorkerProcess,
  waitFor,
  waitForFunctions,
} from './chat-loop-helpers.ts';
import { FakeAnthropic } from './fakes/anthropic.ts';
import { FakeOpenAI } from './fakes/openai.ts';

// The model router and the two providers as real processes against one engine; the hosted APIs
// are local fakes reached through the same environment variables a user sets.

type Model = {
  id: string;
  provider: string;
  context_window: number;
  max_output_tokens: number;
  supports_vision?: boolean;
  supports_thinking?: boolean;
};
type Provider = { id: string; configured: boolean; available: boolean; supports_model_listing: boolean; credential_env_var?: string };

describe('router catalogue and providers', () => {
  let engine: EngineProcess;
  let client: EngClient;
  let openai: FakeOpenAI;
  let anthropic: FakeAnthropic;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    openai = await new FakeOpenAI().start();
    anthropic = await new FakeAnthropic().start();
    engine = await startChatEngine();
    client = await testClient(engine);
  });

  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
  });

  afterAll(async () => {
    await client?.close();
    await engine?.stop();
    await openai?.stop();
    await anthropic?.stop();
  });

  const providers = async () => (await client.call<{ providers: Provider[] }>('router::provider::list', {})).providers;
  const models = async (filter: Record<string, unknown> = {}) =>
    (await client.call<{ models: Model[] }>('router::models::list', filter)).models;

  it('without any credential lists the providers as not configured, no models, and refuses to chat', async () => {
    workers.push(startWorker(engine, 'router'), startWorker(engine, 'provider-openai'), startWorker(engine, 'provider-anthropic'));
    await waitFor(async () => (await providers()).length === 2, 20_000, 100);
    const list = await providers();
    expect(list.map((p) => [p.id, p.configured, p.available])).toEqual([
      ['anthropic', false, true],
      ['openai', false, true],
    ]);
    expect(list.find((p) => p.id === 'openai')?.credential_env_var).toBe('OPENAI_API_KEY');
    expect(await models()).toEqual([]);
    const refused = await failure(
      client.call('router::complete', { model: 'gpt-4o', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] }),
    );
    expect(refused.code).toBe('router/no_provider_for_model');
    expect(refused.message).toMatch(/OpenAI has no credentials.*OPENAI_API_KEY/);
    expect(openai.chatRequests()).toHaveLength(0);
  });

  it('fills the catalogue from GET /models with the router environment key, and filters it', async () => {
    const changed = await collect<{ provider: string; count: number }>(client, 'router::models::changed');
    workers.push(
      startWorker(engine, 'router', {
        OPENAI_API_KEY: 'sk-test-router-env',
        OPENAI_BASE_URL: openai.baseUrl,
        ANTHROPIC_API_KEY: 'sk-ant-test',
        ANTHROPIC_BASE_URL: anthropic.baseUrl,
      }),
      startWorker(engine, 'provider-openai'),
      startWorker(engine, 'provider-anthropic'),
    );
    openai.apiKey = 'sk-test-router-env';
    anthropic.apiKey = 'sk-ant-test';
    await waitFor(async () => (await models()).length === 4, 20_000, 100);
    const all = await models();
    // embeddings are not chat models; known ids carry the built-in limits
    expect(all.map((m) => `${m.provider}::${m.id}`).sort()).toEqual([
      'anthropic::claude-haiku-4-5-20251001',
      'anthropic::claude-sonnet-4-5-20250929',
      'openai::gpt-4o',
      'openai::gpt-4o-mini',
    ]);
    const gpt4o = all.find((m) => m.id === 'gpt-4o');
    expect(gpt4o).toMatchObject({ context_window: 128_000, max_output_tokens: 16_384, supports_vision: true });
    expect(all.find((m) => m.id.startsWith('claude-sonnet'))).toMatchObject({ context_window: 200_000, supports_thinking: true });
    expect((await models({ provider: 'anthropic' })).every((m) => m.provider === 'anthropic')).toBe(true);
    expect((await models({ capability: 'thinking' })).map((m) => m.provider)).toEqual(['anthropic', 'anthropic']);
    expect(await models({ modality: 'tts' })).toEqual([]);
    expect((await providers()).every((p) => p.configured && p.available)).toBe(true);
    await waitFor(
      () => changed.events.some((e) => e.provider === 'openai' && e.count === 2) && changed.events.some((e) => e.provider === 'anthropic'),
      5000,
    );
    // the key went to the API as a bearer token
    expect(openai.requests.some((r) => r.path === '/v1/models' && r.headers.authorization === 'Bearer sk-test-router-env')).toBe(true);
    expect(anthropic.requests.some((r) => r.path === '/v1/models' && r.headers.authorization === 'Bearer sk-ant-test')).toBe(true);
    changed.stop();
  });

  it('offers the built-in OpenAI catalogue when the server has no GET /models', async () => {
    const saved = openai.models;
    openai.models = undefined;
    openai.apiKey = undefined;
    try {
      workers.push(
        startWorker(engine, 'router'),
        startWorker(engine, 'provider-openai', { OPENAI_API_KEY: 'sk-provider-own-env', OPENAI_BASE_URL: openai.baseUrl }),
      );
      await waitFor(async () => (await models({ provider: 'openai' })).length > 5, 20_000, 100);
      const ids = (await models({ provider: 'openai' })).map((m) => m.id);
      expect(ids).toEqual(expect.arrayContaining(['gpt-4o', 'gpt-4.1', 'o3', 'gpt-5']));
      // the key lives in the provider's environment only: still configured
      expect((await providers()).find((p) => p.id === 'openai')?.configured).toBe(true);
    } finally {
      openai.models = saved;
    }
  });

  it('marks a provider unavailable when its worker leaves, and drops its models from the list', async () => {
    const changes = await collect<{ provider: string; op: string }>(client, 'router::provider::changed');
    const provider = startWorker(engine, 'provider-openai', { OPENAI_API_KEY: 'k', OPENAI_BASE_URL: openai.baseUrl });
    openai.apiKey = undefined;
    workers.push(startWorker(engine, 'router'), provider);
    await waitFor(async () => (await models({ provider: 'openai' })).length === 2, 20_000, 100);
    await provider.kill();
    await waitFor(() => changes.events.some((e) => e.provider === 'openai' && e.op === 'unavailable'), 10_000);
    expect((await providers()).find((p) => p.id === 'openai')?.available).toBe(false);
    expect(await models({ provider: 'openai' })).toEqual([]);
    const refused = await failure(client.call('router::route', { model: 'openai::gpt-4o' }));
    expect(refused.code).toBe('router/provider_unavailable');
    changes.stop();
  });

  it('answers bad input with errors that name the field', async () => {
    workers.push(startWorker(engine, 'router'));
    await waitForFunctions(client, ['router::models::list', 'router::chat']);
    const bad = async (fn: string, payload: unknown) => failure(client.call(fn, payload));
    expect((await bad('router::models::list', { capability: 'telepathy' })).message).toMatch(/capability must be one of tools, vision/);
    expect((await bad('router::models::list', { modality: 3 })).message).toMatch(/modality/);
    expect((await bad('router::complete', { model: 'gpt-4o' })).message).toMatch(/messages/);
    expect((await bad('router::complete', { model: 'gpt-4o', messages: [{ role: 'wizard', content: [] }] })).message).toMatch(
      /messages\.0\.role/,
    );
    expect((await bad('router::chat', { model: 'gpt-4o', messages: [{ role: 'user', content: [] }] })).message).toMatch(/writer_ref/);
    expect((await bad('router::provider::register', { id: 'Bad Id!' })).message).toMatch(/id must be lower-case/);
    expect((await bad('router::route', {})).code).toBe('router/invalid_request');
    // the router is still there
    expect(await client.call('router::models::list', {})).toEqual({ models: [] });
  });
});
