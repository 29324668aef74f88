import { statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { MemoryKvStore } from './memory.ts';
import { checkRedis, RedisKvStore } from './redis.ts';
import { SqliteKvStore } from './sqlite.ts';
import type { KvStore, StoreAdapterConfig } from './types.ts';

/**
 * `adapter:` as written in config.yaml (spec §7.2). `save_interval_ms` and `channel_size` are
 * accepted for iii compatibility and ignored: every write is committed before it is acknowledged.
 */
export const StoreAdapterSchema = z.discriminatedUnion('name', [
  z
    .object({
      name: z.literal('kv'),
      config: z
        .object({
          store_method: z.enum(['in_memory', 'file_based']).default('file_based'),
          file_path: z.string().min(1).optional(),
          synchronous: z.enum(['full', 'normal']).default('full'),
          save_interval_ms: z.number().int().min(0).optional(),
          channel_size: z.number().int().min(0).optional(),
        })
        .strict()
        .default({ store_method: 'file_based', synchronous: 'full' }),
    })
    .strict(),
  z.object({ name: z.literal('memory'), config: z.object({}).strict().optional() }).strict(),
  z
    .object({
      name: z.literal('redis'),
      config: z.object({ redis_url: z.string().min(1), key_prefix: z.string().default('eng:') }).strict(),
    })
    .strict(),
]);
export type StoreAdapterInput = z.infer<typeof StoreAdapterSchema>;

export interface OpenStoreOptions {
  /** Engine data directory: default home of file-based stores. */
  dataDir: string;
  /** `state`, `stream`: names the default file, the SQLite table and the Redis key space. */
  namespace: string;
  /** File name under `dataDir` when `file_path` is not set; default `<namespace>.db`. */
  defaultFile?: string;
}

export interface OpenedStore {
  store: KvStore;
  /** For logs: `sqlite /path/state.db`, `memory`, `redis redis://…`. */
  description: string;
  /** Set for the redis adapter: where cross-engine events are fanned out. */
  redis?: { url: string; channel: string };
}

/** Build the store an adapter config names. Redis is checked with a PING so a bad URL fails startup. */
export async function openStore(adapter: StoreAdapterInput | StoreAdapterConfig, options: OpenStoreOptions): Promise<OpenedStore> {
  const table = `${options.namespace.replace(/[^A-Za-z0-9_]/g, '_')}_kv`;
  if (adapter.name === 'memory' || (adapter.name === 'kv' && adapter.config?.store_method === 'in_memory')) {
    return { store: new MemoryKvStore(), description: 'memory' };
  }
  if (adapter.name === 'kv') {
    const file = resolveFile(adapter.config?.file_path, options);
    const store = new SqliteKvStore(file, { table, synchronous: adapter.config?.synchronous ?? 'full' });
    return { store, description: `sqlite ${file}` };
  }
  const prefix = `${adapter.config.key_prefix ?? 'eng:'}${options.namespace}:`;
  const store = new RedisKvStore(adapter.config.redis_url, prefix);
  try {
    await checkRedis(store.connection, adapter.config.redis_url);
  } catch (err) {
    await store.close();
    throw err;
  }
  return {
    store,
    description: `redis ${adapter.config.redis_url}`,
    redis: { url: adapter.config.redis_url, channel: `${prefix}events` },
  };
}

/** `file_path` relative to the working directory; a directory gets the default file name inside it. */
function resolveFile(filePath: string | undefined, options: OpenStoreOptions): string {
  const fileName = options.defaultFile ?? `${options.namespace}.db`;
  if (!filePath) return join(options.dataDir, fileName);
  const absolute = resolve(filePath);
  try {
    if (statSync(absolute).isDirectory()) return join(absolute, fileName);
  } catch {
    // does not exist yet: it is the file
  }
  return absolute;
}
