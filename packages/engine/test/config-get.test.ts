// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${VAR} as written in a configuration file is the subject of these tests
/**
 * Issue 25 item 10: `engine::config::get` answers the configuration file the engine runs (`eng start
 * -c FILE`, not the ./config.yaml of its working directory): its path and its text as written, with
 * `${VAR}` unexpanded and credentials redacted. The id is the engine's: a worker cannot take it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, type EngClient } from '@eng/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, REPO_ROOT, startEngine, waitFor } from '../../../test/harness.ts';
import { isCredentialKey, redactConfig } from '../src/modules/introspection/running-config.ts';

const CONFIG = `# the other configuration, started with -c
workers:
  - name: eng-worker-manager
    config:
      port: {{BUS_PORT}}
  - name: eng-observability
    config:
      service_name: \${OTHER_SERVICE_NAME:other-service}
      logs_console_output: false
  - name: billing
    command: node
    args: ["-e", "setInterval(() => {}, 1e9)"]
    env:
      OPENAI_API_KEY: \${OPENAI_API_KEY}
      BILLING_TOKEN: tok-literal-0123456789
    config:
      api_key: sk-literal-abcdefghijklmnop
      db_url: postgres://admin:hunter2hunter2@db.internal:5432/bills
      credentials: { user: alice, password: pw-literal-987654321 }
      max_tokens: 4096
`;

let engine: EngineProcess;
let client: EngClient;
beforeAll(async () => {
  engine = await startEngine({
    configYaml: CONFIG,
    env: { OTHER_SERVICE_NAME: 'expanded-service', OPENAI_API_KEY: 'sk-env-secret-000111222' },
  });
  client = connect(engine.busUrl, { name: 'config-get-test', reconnect: { maxRetries: 0 } });
  await client.ready({ timeoutMs: 10_000 });
});
afterAll(async () => {
  await client?.close();
  await engine?.stop();
});

interface RunningConfig {
  path: string | null;
  text: string | null;
  workers: Array<{ name: string; config?: Record<string, unknown>; env?: Record<string, string> }> | null;
}

describe('engine::config::get', () => {
  it('answers the file given with -c, not ./config.yaml, with ${VAR} as written and credentials redacted', async () => {
    const answer = await client.call<RunningConfig>('engine::config::get', {});
    expect(answer.path).toBe(engine.configPath);
    expect(answer.path).not.toBe(join(REPO_ROOT, 'config.yaml'));
    const text = answer.text as string;
    expect(text).toContain('# the other configuration, started with -c');
    expect(text).toContain(`port: ${engine.busPort}`);
    expect(text).toContain('service_name: ${OTHER_SERVICE_NAME:other-service}');
    expect(text).not.toContain('expanded-service');
    expect(text).toContain('OPENAI_API_KEY: ${OPENAI_API_KEY}');
    for (const secret of ['sk-env-secret', 'tok-literal', 'sk-literal', 'hunter2', 'pw-literal']) expect(text).not.toContain(secret);
    expect(text).toContain('BILLING_TOKEN: "[REDACTED]"');
    expect(text).toContain('postgres://db.internal:5432/bills');
    expect(text).toContain('max_tokens: 4096');

    const billing = answer.workers?.find((w) => w.name === 'billing');
    expect(billing?.config).toEqual({
      api_key: '[REDACTED]',
      db_url: 'postgres://db.internal:5432/bills',
      credentials: { user: '[REDACTED]', password: '[REDACTED]' },
      max_tokens: 4096,
    });
    expect(billing?.env).toEqual({ OPENAI_API_KEY: '${OPENAI_API_KEY}', BILLING_TOKEN: '[REDACTED]' });
    // the file itself is untouched
    expect(readFileSync(engine.configPath, 'utf8')).toContain('sk-literal-abcdefghijklmnop');
  });

  it('is the engine’s own: a worker registering the id is refused and the engine keeps answering', async () => {
    const intruder = connect(engine.busUrl, { name: 'intruder', reconnect: { maxRetries: 0 } });
    const rejected: unknown[] = [];
    intruder.on('error', (err) => rejected.push(err));
    await intruder.ready({ timeoutMs: 10_000 });
    intruder.registerFunction('engine::config::get', () => ({ path: '/fake.yaml', text: '', workers: [] }));
    await waitFor(() => rejected.length > 0, 5000);
    const answer = await client.call<RunningConfig>('engine::config::get', {});
    expect(answer.path).toBe(engine.configPath);
    await intruder.close();
  });
});

describe('redactConfig', () => {
  it('names credential keys as the README does, not max_tokens or auth_function', () => {
    for (const key of ['api_key', 'apiKey', 'OPENAI_API_KEY', 'client_secret', 'password', 'auth_token', 'credentials', 'secret'])
      expect(isCredentialKey(key), key).toBe(true);
    for (const key of ['max_tokens', 'auth_function', 'port', 'service_name', 'keys', 'monkey'])
      expect(isCredentialKey(key), key).toBe(false);
  });

  it('redacts line by line when the text is YAML only once substituted (${VAR} in a flow mapping)', () => {
    const out = redactConfig('workers:\n  - name: x\n    config: { port: ${P:1} }\n    env:\n      API_TOKEN: abcdefghijkl\n');
    expect(out.workers).toBeNull();
    expect(out.text).toContain('config: { port: ${P:1} }');
    expect(out.text).toContain('API_TOKEN: [REDACTED]');
    expect(out.text).not.toContain('abcdefghijkl');
  });

  it('hides a default after the variable name', () => {
    const out = redactConfig('workers:\n  - name: x\n    config:\n      password: ${DB_PASSWORD:fallback-secret}\n');
    expect(out.text).toContain('password: ${DB_PASSWORD:[REDACTED]}');
  });
});
