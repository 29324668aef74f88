/**
 * The queue's rabbitmq adapter (`adapter: {name: rabbitmq}`): the same cluster semantics as the
 * redis adapter, where AMQP allows (see the queue README), with three engines on one real
 * rabbitmq-server: enqueue anywhere, run where a worker serves the function, one copy per
 * subscribing function, retries with backoff (delay queues), a shared DLQ, FIFO across engines,
 * redelivery when an engine dies, and nothing lost when one of three is killed -9.
 */
import { afterAll, beforeAll } from 'vitest';
import { queueClusterSuite } from './queue-cluster-suite.ts';
import { type RabbitProcess, startRabbit } from './queue-rabbitmq-server.ts';

let rabbit: RabbitProcess;
beforeAll(async () => {
  rabbit = await startRabbit();
}, 120_000);
afterAll(async () => {
  await rabbit?.stop();
});

queueClusterSuite({
  adapter: 'rabbitmq',
  adapterYaml: () => `{ name: rabbitmq, config: { amqp_url: "${rabbit.url}" } }`,
});
