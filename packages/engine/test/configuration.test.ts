/**
 * eng-configuration (iii 0.22.1's mandatory configuration worker, engine-protocol §4.8) against a
 * real engine: register/get/set/list/schema/ensure, JSON Schema validation errors naming the
 * field, write-only secrets (never read back, kept on a partial set, absent from logs and traces),
 * the configuration trigger type, and persistence across a restart with the file_based store.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type EngClient } from '@eng/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';

const SECRET = 'sk-live-7f3a9c1e5b2d4680aaaa';
const SECRET2 = 'hunter2-correct-horse-battery';

const ROUTER_SCHEMA = {
  type: 'object',
  required: ['default_provider'],
  additionalProperties: false,
  properties: {
    default_provider: { type: 'string', enum: ['openai', 'anthropic'] },
    providers: {
      type: 'object',
      additionalProperties: { $ref: '#/definitions/provider' },
    },
    settings: {
      type: 'object',
      properties: { retry_max: { type: 'integer', minimum: 0, default: 2 }, stream_timeout_ms: { type: 'integer', default: 300000 } },
    },
    proxy_password: { type: 'string', format: 'password' },
  },
  definitions: {
    provider: {
      type: 'object',
      properties: {
        api_key: { type: 'string', writeOnly: true },
        api_url: { type: 'string', format: 'uri' },
        max_tokens: { type: 'integer', minimum: 1 },
      },
    },
  },
};

let engine: EngineProcess;
let client: EngClient;
const call = <T = any>(fn: string, payload: unknown) => client.call<T>(fn, payload);
async function failure(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (err) {
    return err as { code: string; message: string };
  }
  throw new Error('expected the call to fail');
}

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'eng-configuration-'));
  engine = await startEngine({
    dataDir: join(dir, 'data'),
    env: { ENG_LOG_LEVEL: 'debug' },
    workersYaml: `  - name: eng-state\n    config:\n      adapter: { name: kv, config: { store_method: file_based, file_path: ${join(dir, 'state.db')} } }\n`,
  });
  // tracing on with payloads: the SDK records what its handlers receive, which must never hold a secret
  client = connect(engine.busUrl, { name: 'configuration-test', tracing: { payloads: true } });
  await client.ready({ timeoutMs: 10_000 });
});
afterAll(async () => {
  await client?.close();
  await engine?.stop();
});

describe('configuration::* functions', () => {
  it('registers an entry, fills schema defaults, reads, lists and describes it', async () => {
    const entry = await call('configuration::register', {
      id: 'llm-router',
      name: 'Model router',
      description: 'providers and credentials',
      schema: ROUTER_SCHEMA,
      defaults: { default_provider: 'openai', settings: {} },
      metadata: { owner: 'router' },
    });
    expect(entry).toEqual({
      id: 'llm-router',
      name: 'Model router',
      description: 'providers and credentials',
      schema: ROUTER_SCHEMA,
      value: { default_provider: 'openai', settings: { retry_max: 2, stream_timeout_ms: 300000 } },
      metadata: { owner: 'router' },
    });
    expect(await call('configuration::get', { id: 'llm-router' })).toEqual({ id: 'llm-router', value: entry.value });
    // a second registration with other defaults keeps the stored value
    await call('configuration::register', {
      id: 'llm-router',
      name: 'Model router',
      schema: ROUTER_SCHEMA,
      defaults: { default_provider: 'anthropic' },
    });
    expect((await call('configuration::get', { id: 'llm-router' })).value.default_provider).toBe('openai');
    await call('configuration::register', { id: 'aaa-first', schema: { type: 'object' } });

    const { configurations } = await call('configuration::list', {});
    const ids = configurations.map((c: { id: string }) => c.id);
    expect(ids).toEqual([...ids].sort());
    expect(ids).toEqual(expect.arrayContaining(['aaa-first', 'llm-router']));
    expect(configurations.find((c: { id: string }) => c.id === 'llm-router')).not.toHaveProperty('value');
    expect(await call('configuration::schema', { id: 'llm-router' })).toEqual({
      id: 'llm-router',
      name: 'Model router',
      description: 'providers and credentials',
      schema: ROUTER_SCHEMA,
      metadata: { owner: 'router' },
      has_secrets: true,
    });
  });

  it('validates set against the schema and names the offending field', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ default_provider: 'google' }, /default_provider: must be one of "openai", "anthropic"/],
      [{}, /default_provider: is required/],
      [{ default_provider: 'openai', colour: 'red' }, /colour: is not an allowed field/],
      [{ default_provider: 'openai', providers: { openai: { max_tokens: 'many' } } }, /providers\.openai\.max_tokens: must be integer/],
      [
        { default_provider: 'openai', providers: { openai: { api_url: 'not a url' } } },
        /providers\.openai\.api_url: must match format "uri"/,
      ],
      [{ default_provider: 'openai', settings: { retry_max: -1 } }, /settings\.retry_max: must be >= 0/],
    ];
    for (const [value, pattern] of cases) {
      const err = await failure(call('configuration::set', { id: 'llm-router', value }));
      expect(err.code, JSON.stringify(value)).toBe('SCHEMA_INVALID');
      expect(err.message).toMatch(pattern);
    }
    expect((await call('configuration::get', { id: 'llm-router' })).value.default_provider).toBe('openai');

    expect(await failure(call('configuration::set', { id: 'nope', value: {} }))).toMatchObject({ code: 'NOT_REGISTERED' });
    expect(await failure(call('configuration::get', { id: 'nope' }))).toMatchObject({ code: 'NOT_FOUND' });
    expect(await failure(call('configuration::schema', { id: 'nope' }))).toMatchObject({ code: 'NOT_FOUND' });
    expect(await failure(call('configuration::register', { id: 'Bad Id!', schema: {} }))).toMatchObject({ code: 'INVALID_ID' });
    expect((await failure(call('configuration::register', { id: 'x' }))).message).toMatch(/schema is required/);
    expect((await failure(call('configuration::register', { id: 'x', schema: { type: 'nonsense' } }))).message).toMatch(
      /not a valid JSON Schema/,
    );
    expect((await failure(call('configuration::set', { id: 'llm-router' }))).message).toMatch(/value is required/);
    expect((await failure(call('configuration::get', {}))).message).toMatch(/id is required/);
    expect(
      (await failure(call('configuration::register', { id: 'y', schema: { type: 'object', required: ['a'] }, defaults: {} }))).message,
    ).toMatch(/defaults do not match the schema: a: is required/);
  });

  it('ensure seeds only once; initial_value replaces', async () => {
    const schema = { type: 'object', properties: { n: { type: 'integer' } } };
    expect((await call('configuration::ensure', { id: 'seeded', schema, initial_value: { n: 1 } })).value).toEqual({ n: 1 });
    expect((await call('configuration::ensure', { id: 'seeded', schema, initial_value: { n: 2 } })).value).toEqual({ n: 1 });
    expect((await call('configuration::register', { id: 'seeded', schema, initial_value: { n: 3 } })).value).toEqual({ n: 3 });
    expect(await call('configuration::set', { id: 'seeded', value: { n: 4 } })).toEqual({ old_value: { n: 3 }, new_value: { n: 4 } });
  });
});

describe('secrets', () => {
  it('are never read back, only whether they are set, at any depth', async () => {
    await call('configuration::set', {
      id: 'llm-router',
      value: { default_provider: 'openai', providers: { openai: { api_key: SECRET, max_tokens: 100 } }, proxy_password: SECRET2 },
    });
    const { value } = await call('configuration::get', { id: 'llm-router' });
    expect(value).toEqual({
      default_provider: 'openai',
      providers: { openai: { api_key: { set: true }, max_tokens: 100 } },
      proxy_password: { set: true },
    });
    expect(JSON.stringify(await call('configuration::get', { id: 'llm-router', raw: true }))).not.toContain(SECRET);
    expect(JSON.stringify(await call('configuration::list', {}))).not.toContain(SECRET);
    // kept beside the state module's data but out of reach of state::*
    expect(await call('state::list_groups', {})).toEqual({ groups: [] });
    // the worker that uses the key reads it with configuration::reveal
    expect((await call('configuration::reveal', { id: 'llm-router' })).value.providers.openai.api_key).toBe(SECRET);
  });

  it('a set that omits a secret (or sends the marker back) keeps it; {"set": false} removes it', async () => {
    const { value } = await call('configuration::get', { id: 'llm-router' });
    // a form saves what it read, changing one field: the markers go back as they came
    const saved = await call('configuration::set', { id: 'llm-router', value: { ...value, default_provider: 'anthropic' } });
    expect(saved.new_value.providers.openai.api_key).toEqual({ set: true });
    expect(JSON.stringify(saved)).not.toContain(SECRET);
    let revealed = (await call('configuration::reveal', { id: 'llm-router' })).value;
    expect(revealed).toMatchObject({ default_provider: 'anthropic', providers: { openai: { api_key: SECRET } }, proxy_password: SECRET2 });

    // omitted entirely
    await call('configuration::set', { id: 'llm-router', value: { default_provider: 'openai', providers: { openai: { max_tokens: 7 } } } });
    revealed = (await call('configuration::reveal', { id: 'llm-router' })).value;
    expect(revealed.providers.openai).toEqual({ api_key: SECRET, max_tokens: 7 });
    expect(revealed.proxy_password).toBe(SECRET2);

    await call('configuration::set', {
      id: 'llm-router',
      value: { default_provider: 'openai', proxy_password: { set: false }, providers: { openai: {} } },
    });
    revealed = (await call('configuration::reveal', { id: 'llm-router' })).value;
    expect(revealed).not.toHaveProperty('proxy_password');
    expect(revealed.providers.openai.api_key).toBe(SECRET);
  });
});

describe('the configuration trigger type', () => {
  it('fires on every change with the new value (secrets redacted), filtered by id and event type', async () => {
    const all: any[] = [];
    const onlyUpdates: any[] = [];
    client.registerFunction('test::config::all', (e: any) => {
      all.push(e);
      return {};
    });
    client.registerFunction('test::config::updates', (e: any) => {
      onlyUpdates.push(e);
      return {};
    });
    const t1 = client.registerTrigger({ type: 'configuration', function_id: 'test::config::all', config: { configuration_id: 'hot' } });
    const t2 = client.registerTrigger({
      type: 'configuration',
      function_id: 'test::config::updates',
      config: { id: 'hot', event_types: ['configuration:updated'] },
    });
    await call('engine::functions::list', {});
    const schema = { type: 'object', properties: { level: { type: 'string' }, signing_material: { type: 'string', writeOnly: true } } };
    await call('configuration::register', { id: 'hot', schema, defaults: { level: 'info' } });
    await call('configuration::set', { id: 'hot', value: { level: 'debug', signing_material: SECRET } });
    await call('configuration::set', { id: 'other-id-not-hot', value: {} }).catch(() => undefined);
    await call('configuration::delete', { id: 'hot' });
    await waitFor(() => all.length === 3 && onlyUpdates.length === 1, 5000);
    const strip = ({ _caller_worker_id, ...rest }: any) => rest;
    expect(all.map(strip)).toEqual([
      {
        type: 'configuration',
        event_type: 'configuration:registered',
        id: 'hot',
        name: 'hot',
        description: '',
        schema,
        old_value: null,
        new_value: { level: 'info' },
      },
      {
        type: 'configuration',
        event_type: 'configuration:updated',
        id: 'hot',
        name: 'hot',
        description: '',
        schema,
        old_value: { level: 'info' },
        new_value: { level: 'debug', signing_material: { set: true } },
      },
      {
        type: 'configuration',
        event_type: 'configuration:deleted',
        id: 'hot',
        name: 'hot',
        description: '',
        schema,
        old_value: { level: 'debug', signing_material: { set: true } },
        new_value: null,
      },
    ]);
    expect(strip(onlyUpdates[0])).toEqual(strip(all[1]));
    t1.unregister();
    t2.unregister();

    // a malformed binding is refused naming the key
    const errors: string[] = [];
    const off = client.on('error', (e) => errors.push(e.message));
    const bad = client.registerTrigger({
      type: 'configuration',
      function_id: 'test::config::all',
      config: { event_types: ['configuration:exploded'] },
    });
    await waitFor(() => errors.length > 0, 5000);
    off();
    bad.unregister();
    expect(errors[0]).toMatch(/event_types\.0: event_types must hold/);
  });
});

describe('secrets in logs and traces', () => {
  it('never appear in the engine log, its traces or its log store', async () => {
    await client.call('configuration::set', {
      id: 'llm-router',
      value: { default_provider: 'openai', providers: { openai: { api_key: SECRET } }, proxy_password: SECRET2 },
    });
    // a bad set quoting nothing of the value
    const err = await failure(call('configuration::set', { id: 'llm-router', value: { default_provider: 'x', proxy_password: SECRET2 } }));
    expect(err.message).not.toContain(SECRET2);
    // the SDK ships spans every 100 ms: what it ships within a few intervals is searched for the secrets below
    await new Promise((r) => setTimeout(r, 600));
    // the calls above were traced; the SDK's handler spans may still be on their way on a loaded machine
    const spans = await waitFor(async () => {
      const listed = await call('engine::traces::list', { include_internal: true, limit: 1000 });
      const traceIds = new Set<string>((listed.traces ?? listed.spans).map((t: { trace_id: string }) => t.trace_id));
      const all = await Promise.all([...traceIds].map((trace_id) => call('engine::traces::spans', { trace_id })));
      const text = JSON.stringify(all);
      return ['configuration::set', 'eng.invocation.input', 'signing_material'].every((s) => text.includes(s)) ? all : null;
    }, 30_000);
    // the calls above were traced: configuration::set spans and the SDK's handler spans with payloads
    expect(JSON.stringify(spans)).toContain('configuration::set');
    expect(JSON.stringify(spans)).toContain('eng.invocation.input');
    // the handler of the trigger test received the redacted event (its field name is none the SDK masks itself)
    expect(JSON.stringify(spans)).toContain('signing_material');
    const logs = await call('engine::logs::list', { limit: 1000 });
    for (const text of [JSON.stringify(spans), JSON.stringify(logs), engine.logs()]) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(SECRET2);
    }
  });
});

describe('persistence', () => {
  it('keeps entries, values and secrets across an engine restart (file_based)', async () => {
    const before = await call('configuration::get', { id: 'llm-router' });
    await client.close();
    await engine.restart();
    client = connect(engine.busUrl, { name: 'configuration-test-2', tracing: false });
    await client.ready({ timeoutMs: 10_000 });
    expect(await call('configuration::get', { id: 'llm-router' })).toEqual(before);
    expect((await call('configuration::reveal', { id: 'llm-router' })).value.providers.openai.api_key).toBe(SECRET);
    // the schema is stored too: set validates before anyone registers again
    expect((await failure(call('configuration::set', { id: 'llm-router', value: { default_provider: 'nope' } }))).code).toBe(
      'SCHEMA_INVALID',
    );
    expect(engine.logs()).not.toContain(SECRET);
  });
});
