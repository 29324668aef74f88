/**
 * The queue's redis adapter (`adapter: {name: redis}`): three engines share one redis-server and act
 * as one queue — enqueue anywhere, run where a worker serves the function, one copy per subscribing
 * function cluster-wide, retries with backoff, a shared DLQ, FIFO groups exclusive across engines,
 * redelivery after an engine dies (lease), and no message lost when one of three is killed -9.
 */
import { afterAll, beforeAll } from 'vitest';
import { type RedisProcess, startRedis } from '../../../test/redis.ts';
import { queueClusterSuite } from './queue-cluster-suite.ts';

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
