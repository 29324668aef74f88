import type { EngClient } from '@eng/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineProcess } from '../../../test/harness.ts';
import { failure, startChatEngine, startWorker, testClient, type WorkerProcess, waitFor } from './chat-loop-helpers.ts';
import { FakeAnthropic } from './fakes/anthropic.ts';

// A stored provider key (issue 25 item 4): an empty or blank `api_key` is refused by
// configuration::set with an error naming the field, and a key removed ({"set": false}, the
// console's "Remove key") is really gone: the provider reads as unconfigured, its models leave the
// catalogue, a generation no longer uses it, and no answer ever carries it.

const KEY = 'sk-ant-remove-me-0123456789';

describe('llm-router api_key: refused when empty, removable', () => {
  let engine: EngineProcess;
  let client: EngClient;
  let fake: FakeAnthropic;
  const workers: WorkerProcess[] = [];
  const answers: string[] = [];

  beforeAll(async () => {
    fake = await new FakeAnthropic().start();
    fake.apiKey = KEY;
    engine = await startChatEngine();
    client = await testClient(engine);
    workers.push(startWorker(engine, 'router'), startWorker(engine, 'provider-anthropic'));
    await waitFor(async () => {
      const schema = await client.call<any>('configuration::schema', { id: 'llm-router' }).catch(() => null);
      return Boolean(schema?.schema.properties.providers.properties.anthropic);
    }, 20_000);
  });

  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await client?.close();
    await engine?.stop();
    await fake?.stop();
  });

  /** Every answer is kept: none may carry the key. */
  const call = async <T = any>(fn: string, payload: unknown): Promise<T> => {
    const answer = await client.call<T>(fn, payload);
    answers.push(JSON.stringify(answer));
    return answer;
  };
  const anthropic = async () => (await call<any>('router::provider::list', {})).providers.find((p: any) => p.id === 'anthropic');
  const models = async () => (await call<{ models: unknown[] }>('router::models::list', { provider: 'anthropic' })).models;

  it('refuses an empty or blank api_key, naming the field, and keeps what was stored', async () => {
    await call('configuration::set', { id: 'llm-router', value: { providers: { anthropic: { api_url: fake.baseUrl } } } });
    for (const blank of ['', '   ', '\t\n']) {
      const err = await failure(
        client.call('configuration::set', {
          id: 'llm-router',
          value: { providers: { anthropic: { api_key: blank, api_url: fake.baseUrl } } },
        }),
      );
      expect(err.code).toBe('SCHEMA_INVALID');
      expect(err.message).toContain('providers.anthropic.api_key: must not be empty or only spaces');
      expect(err.message).not.toContain('pattern');
    }
    expect((await call<any>('configuration::get', { id: 'llm-router' })).value.providers.anthropic).toEqual({ api_url: fake.baseUrl });
    expect(await anthropic()).toMatchObject({ configured: false });
  });

  it('a removed key is gone: unconfigured, no models, no generation with it, in no answer', async () => {
    await call('configuration::set', { id: 'llm-router', value: { providers: { anthropic: { api_key: KEY, api_url: fake.baseUrl } } } });
    await waitFor(async () => (await models()).length === 2, 10_000);
    expect(await anthropic()).toMatchObject({ configured: true });

    // what the console's "Remove key" writes: the slice it read, the key as {"set": false}
    const stored = await call<any>('configuration::get', { id: 'llm-router' });
    expect(stored.value.providers.anthropic.api_key).toEqual({ set: true });
    const removed = await call<any>('configuration::set', {
      id: 'llm-router',
      value: { ...stored.value, providers: { anthropic: { ...stored.value.providers.anthropic, api_key: { set: false } } } },
    });
    expect(removed.new_value.providers.anthropic).toEqual({ api_url: fake.baseUrl });

    await waitFor(async () => (await models()).length === 0, 10_000);
    expect(await anthropic()).toMatchObject({ configured: false });
    expect((await call<any>('configuration::get', { id: 'llm-router' })).value.providers.anthropic).toEqual({ api_url: fake.baseUrl });
    // the value the router itself reads back has no key either
    const revealed = await client.call<any>('configuration::reveal', { id: 'llm-router' });
    expect(revealed.value.providers.anthropic.api_key).toBeUndefined();
    // a generation is refused for want of a credential instead of using the old key
    const requests = fake.messageRequests().length;
    const refused = await failure(client.call('router::route', { model: 'claude-sonnet-4-5-20250929', provider: 'anthropic' }));
    expect(refused.message).toContain('no credentials');
    expect(fake.messageRequests().length).toBe(requests);

    for (const answer of answers) expect(answer).not.toContain(KEY);
    for (const w of workers) expect(w.output()).not.toContain(KEY);
  });
});
