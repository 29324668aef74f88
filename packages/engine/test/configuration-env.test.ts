// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${VAR} placeholders are the subject of these tests
/**
 * Issue 24 item 10: `${VAR}` in configuration values against a real engine. A readable field set
 * to "${PATH}" reads back as written (it used to read back the engine's environment); only a
 * secret field that declares `"x-eng-env"` expands, only for `configuration::reveal`, and only the
 * variables it names when it names some.
 */
import { connect, type EngClient } from '@eng/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';

const ENV_SECRET = 'env-held-secret-51c0ffee';
const OTHER = 'another-env-value-9d1e';

const SCHEMA = {
  type: 'object',
  properties: {
    label: { type: 'string' },
    // declared, but readable: never expands
    readable_env: { type: 'string', 'x-eng-env': true },
    tags: { type: 'array', items: { type: 'string' } },
    // a secret that may name any variable
    api_key: { type: 'string', writeOnly: true, 'x-eng-env': true },
    // a secret that may name only ENG_TEST_ALLOWED
    token: { type: 'string', format: 'password', 'x-eng-env': ['ENG_TEST_ALLOWED'] },
    // a secret that declares nothing: kept as written
    plain_secret: { type: 'string', writeOnly: true },
  },
};

let engine: EngineProcess;
let client: EngClient;
const call = <T = any>(fn: string, payload: unknown) => client.call<T>(fn, payload);

beforeAll(async () => {
  engine = await startEngine({ env: { ENG_TEST_SECRET_VAR: ENV_SECRET, ENG_TEST_ALLOWED: OTHER } });
  client = connect(engine.busUrl, { name: 'configuration-env-test', tracing: false });
  await client.ready({ timeoutMs: 10_000 });
  await call('configuration::register', { id: 'env-entry', schema: SCHEMA, defaults: {} });
});
afterAll(async () => {
  await client?.close();
  await engine?.stop();
});

describe('${VAR} in configuration values', () => {
  it('a readable field set at runtime reads back as written, never the environment', async () => {
    expect(process.env.PATH).toBeTruthy();
    const value = {
      label: '${PATH}',
      readable_env: '${ENG_TEST_SECRET_VAR}',
      tags: ['${PATH:fallback}', 'x ${ENG_TEST_ALLOWED} y'],
    };
    const saved = await call('configuration::set', { id: 'env-entry', value });
    expect(saved.new_value).toEqual(value);
    expect((await call('configuration::get', { id: 'env-entry' })).value).toEqual(value);
    expect((await call('configuration::get', { id: 'env-entry', raw: true })).value).toEqual(value);
    // reveal (the worker's own view) does not expand readable fields either
    expect((await call('configuration::reveal', { id: 'env-entry' })).value).toEqual(value);
    const text = JSON.stringify(await call('configuration::get', { id: 'env-entry' }));
    expect(text).not.toContain(process.env.PATH as string);
    expect(text).not.toContain(ENV_SECRET);
  });

  it('a secret declaring x-eng-env expands for reveal only; get shows {"set": true}', async () => {
    await call('configuration::set', {
      id: 'env-entry',
      value: {
        label: 'ok',
        api_key: '${ENG_TEST_SECRET_VAR}',
        token: '${ENG_TEST_ALLOWED}:${ENG_TEST_SECRET_VAR}',
        plain_secret: '${ENG_TEST_SECRET_VAR}',
      },
    });
    const read = await call('configuration::get', { id: 'env-entry' });
    expect(read.value).toEqual({ label: 'ok', api_key: { set: true }, token: { set: true }, plain_secret: { set: true } });
    expect(JSON.stringify(read)).not.toContain(ENV_SECRET);

    const revealed = (await call('configuration::reveal', { id: 'env-entry' })).value;
    expect(revealed.api_key).toBe(ENV_SECRET);
    // only the named variable: the other placeholder stays as written
    expect(revealed.token).toBe(`${OTHER}:\${ENG_TEST_SECRET_VAR}`);
    expect(revealed.plain_secret).toBe('${ENG_TEST_SECRET_VAR}');
    expect((await call('configuration::reveal', { id: 'env-entry', raw: true })).value.api_key).toBe('${ENG_TEST_SECRET_VAR}');
  });

  it('an unset variable takes its default, else the empty string', async () => {
    await call('configuration::set', { id: 'env-entry', value: { api_key: 'k-${ENG_TEST_UNSET_VAR:dflt}-${ENG_TEST_UNSET_VAR}-end' } });
    expect((await call('configuration::reveal', { id: 'env-entry' })).value.api_key).toBe('k-dflt--end');
  });

  it('configuration trigger events carry values as written, never expanded', async () => {
    const events: any[] = [];
    client.registerFunction('test::env::on-change', (e: any) => {
      events.push(e);
      return {};
    });
    const trigger = client.registerTrigger({
      type: 'configuration',
      function_id: 'test::env::on-change',
      config: { configuration_id: 'env-entry' },
    });
    await call('engine::functions::list', {});
    await waitFor(async () => {
      const listed = await call('engine::registered-triggers::list', {});
      return JSON.stringify(listed).includes('test::env::on-change');
    }, 5000);
    await call('configuration::set', { id: 'env-entry', value: { label: '${PATH}', api_key: '${ENG_TEST_SECRET_VAR}' } });
    await waitFor(() => events.length > 0, 5000);
    // the secrets the set omitted are kept, shown as markers
    expect(events[0].new_value).toEqual({ label: '${PATH}', api_key: { set: true }, token: { set: true }, plain_secret: { set: true } });
    expect(JSON.stringify(events[0])).not.toContain(process.env.PATH as string);
    trigger.unregister();
  });
});
