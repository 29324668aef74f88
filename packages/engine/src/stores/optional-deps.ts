import { createRequire } from 'node:module';

// Client packages only some configurations use, loaded on first use: an engine on the default
// modules never loads the Redis, RabbitMQ or JSON Schema libraries. Loading ioredis, amqplib and
// ajv with its formats was about a fifth of the CPU of every engine start (0.65 s to "ready" on
// this 2-core machine); the test suite alone starts a few hundred engines.

const load = createRequire(import.meta.url);

let ioredis: typeof import('ioredis') | undefined;
let amqplib: typeof import('amqplib') | undefined;
let ajv: { Ajv: typeof import('ajv').Ajv; formats: unknown } | undefined;

/** ioredis's client class. */
export function redisClient(): typeof import('ioredis').Redis {
  ioredis ??= load('ioredis') as typeof import('ioredis');
  return ioredis.Redis;
}

/** amqplib's promise API. */
export function amqp(): typeof import('amqplib') {
  amqplib ??= load('amqplib') as typeof import('amqplib');
  return amqplib;
}

/** ajv's class and the ajv-formats module (its plugin is the module or its `default`). */
export function ajvModules(): { Ajv: typeof import('ajv').Ajv; formats: unknown } {
  ajv ??= { Ajv: (load('ajv') as typeof import('ajv')).Ajv, formats: load('ajv-formats') };
  return ajv;
}
