/**
 * eng-configuration on the Redis adapter: with eng-state on Redis the entries live in that Redis
 * (beside state, unreachable through state::*), so a restarted engine, or a second engine on the
 * same Redis after it, reads them back, secrets included.
 */
import { connect, type EngClient } from '@eng/sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type EngineProcess, startEngine } from '../../../test/harness.ts';
import { type RedisProcess, startRedis } from '../../../test/redis.ts';

let redis: RedisProcess;
let engine: EngineProcess | undefined;
let client: EngClient | undefined;

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await client?.close();
  await engine?.stop();
  await redis?.stop();
});

const yaml = () => `  - name: eng-state\n    config:\n      adapter: { name: redis, config: { redis_url: ${redis.url} } }\n`;

it('keeps entries and secrets in Redis across an engine restart, out of reach of state::*', async () => {
  engine = await startEngine({ workersYaml: yaml() });
  client = connect(engine.busUrl, { name: 'configuration-redis', tracing: false });
  await client.ready({ timeoutMs: 10_000 });
  const schema = { type: 'object', properties: { url: { type: 'string' }, password: { type: 'string', format: 'password' } } };
  await client.call('configuration::register', { id: 'mailer', schema, defaults: { url: 'smtp://x' } });
  await client.call('configuration::set', { id: 'mailer', value: { url: 'smtp://y', password: 'p4ss-in-redis' } });
  expect(JSON.stringify(await client.call('state::list_groups', {}))).not.toContain('mailer');

  await client.close();
  await engine.stop();
  engine = await startEngine({ workersYaml: yaml() });
  client = connect(engine.busUrl, { name: 'configuration-redis-2', tracing: false });
  await client.ready({ timeoutMs: 10_000 });
  expect(await client.call('configuration::get', { id: 'mailer' })).toEqual({
    id: 'mailer',
    value: { url: 'smtp://y', password: { set: true } },
  });
  expect(await client.call('configuration::reveal', { id: 'mailer' })).toEqual({
    id: 'mailer',
    value: { url: 'smtp://y', password: 'p4ss-in-redis' },
  });
});
