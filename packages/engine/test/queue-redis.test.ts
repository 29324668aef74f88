/**
 * The queue's redis adapter (`adapter: {name: redis}`): three engines share one redis-server and act
 * as one queue — enqueue anywhere, run where a worker serves the function, one copy per subscribing
 * function cluster-wide, retries with backoff, a shared DLQ, FIFO groups exclusive across engines,
 * redelivery after an engine dies (lease), and no message lost when one of three is killed -9.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startEngine } from '../../../test/harness.ts';
import { type RedisProcess, startRedis } from '../../../test/redis.ts';
import { queueClusterSuite, queueYaml } from './queue-cluster-suite.ts';

let redis: RedisProcess;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

queueClusterSuite({
  adapter: 'redis',
  adapterYaml: () => `{ name: redis, config: { redis_url: "${redis.url}", lease_ms: 1500 } }`,
});

describe('redis adapter config', () => {
  it('refuses to start when the redis it names cannot be reached, or with a misspelt key, and says which', async () => {
    const closed = await freePort();
    const unreachable = await startEngine({
      workersYaml: queueYaml(`{ name: redis, config: { redis_url: "redis://127.0.0.1:${closed}" } }`),
    }).then(
      () => null,
      (err: Error) => err.message,
    );
    expect(unreachable).toContain(`redis at redis://127.0.0.1:${closed}`);
    const misspelt = await startEngine({ workersYaml: queueYaml(`{ name: redis, config: { redis_uri: "${redis.url}" } }`) }).then(
      () => null,
      (err: Error) => err.message,
    );
    expect(misspelt).toContain('redis_uri');
  });
});
