import type { EngClient } from '@eng/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineProcess } from '../../../test/harness.ts';
import { collect, startChatEngine, startWorker, testClient, type WorkerProcess, waitFor } from './chat-loop-helpers.ts';
import { FakeOpenAI } from './fakes/openai.ts';

// Pasting a key: the `llm-router` configuration entry (its `api_key` write-only) set through
// configuration::set fills the catalogue within seconds and fires router::models::changed.

describe('router credentials through the configuration entry', () => {
  let engine: EngineProcess;
  let client: EngClient;
  let fake: FakeOpenAI;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    fake = await new FakeOpenAI().start();
    fake.apiKey = 'sk-config-key-11112222';
    engine = await startChatEngine();
    client = await testClient(engine);
    workers.push(startWorker(engine, 'router'), startWorker(engine, 'provider-openai'));
    await waitFor(
      async () => (await client.call<{ providers: unknown[] }>('router::provider::list', {})).providers.length === 1,
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

  const models = async () => (await client.call<{ models: Array<{ id: string }> }>('router::models::list', {})).models;

  it('registers the entry with a write-only api_key per provider', async () => {
    await waitFor(
      async () => {
        const schema = await client.call<any>('configuration::schema', { id: 'llm-router' });
        return schema.schema.properties.providers.properties.openai;
      },
      10_000,
      100,
    );
    const schema = await client.call<any>('configuration::schema', { id: 'llm-router' });
    expect(schema.schema.properties.providers.properties.openai.properties.api_key).toMatchObject({ type: 'string', writeOnly: true });
    expect(schema.has_secrets).toBe(true);
    expect(await models()).toEqual([]);
    expect((await client.call<any>('router::provider::list', {})).providers[0]).toMatchObject({ id: 'openai', configured: false });
  });

  it('fills the catalogue within seconds of the key being set, and empties it when the key is rejected', async () => {
    const changed = await collect<{ provider: string; count: number }>(client, 'router::models::changed');
    const setAt = Date.now();
    await client.call('configuration::set', {
      id: 'llm-router',
      value: { providers: { openai: { api_key: 'sk-config-key-11112222', api_url: fake.baseUrl } } },
    });
    await waitFor(async () => (await models()).length === 2, 5000, 50);
    expect(Date.now() - setAt).toBeLessThan(5000);
    await waitFor(() => changed.events.some((e) => e.provider === 'openai' && e.count === 2), 5000);
    expect((await client.call<any>('router::provider::list', {})).providers[0]).toMatchObject({
      id: 'openai',
      configured: true,
      available: true,
    });
    // the entry reads back with the secret masked
    expect((await client.call<any>('configuration::get', { id: 'llm-router' })).value.providers.openai).toEqual({
      api_key: { set: true },
      api_url: fake.baseUrl,
    });

    await client.call('configuration::set', {
      id: 'llm-router',
      value: { providers: { openai: { api_key: 'sk-wrong-key-99990000', api_url: fake.baseUrl } } },
    });
    await waitFor(async () => (await models()).length === 0, 5000, 50);
    await waitFor(() => changed.events.some((e) => e.provider === 'openai' && e.count === 0), 5000);
    for (const w of workers) expect(w.output()).not.toMatch(/sk-config-key-11112222|sk-wrong-key-99990000/);
    changed.stop();
  });
});
