import type { Redis } from 'ioredis';
import { compareKeys, decode, encode } from './memory.ts';
import { redisClient } from './optional-deps.ts';
import { KEEP_CURRENT, type KvEntry, type KvStore, type ListOptions, type UpdateResult } from './types.ts';

// Each script touches one scope's hash (KEYS[1]) and the set of scopes (KEYS[2]) atomically.
const SET_SCRIPT = `
local old = redis.call('HGET', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('SADD', KEYS[2], ARGV[3])
return old`;

const DELETE_SCRIPT = `
local old = redis.call('HGET', KEYS[1], ARGV[1])
if old then
  redis.call('HDEL', KEYS[1], ARGV[1])
  if redis.call('HLEN', KEYS[1]) == 0 then redis.call('SREM', KEYS[2], ARGV[2]) end
end
return old`;

/** Compare-and-set: write ARGV[4] only if the field still holds what the caller read. */
const CAS_SCRIPT = `
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if ARGV[2] == '0' then
  if cur then return 0 end
elseif cur ~= ARGV[3] then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[4])
redis.call('SADD', KEYS[2], ARGV[5])
return 1`;

const MAX_UPDATE_ATTEMPTS = 100;

interface ScriptedRedis extends Redis {
  engKvSet(hash: string, scopes: string, key: string, value: string, scope: string): Promise<string | null>;
  engKvDelete(hash: string, scopes: string, key: string, scope: string): Promise<string | null>;
  engKvCas(
    hash: string,
    scopes: string,
    key: string,
    expectExists: '0' | '1',
    expected: string,
    next: string,
    scope: string,
  ): Promise<number>;
}

interface SharedConnection {
  redis: ScriptedRedis;
  refs: number;
}

const connections = new Map<string, SharedConnection>();

/** One command connection per Redis URL, shared by every store and publisher in the process. */
export function acquireRedis(url: string): ScriptedRedis {
  let shared = connections.get(url);
  if (!shared) {
    const Redis = redisClient();
    const redis = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 3 }) as ScriptedRedis;
    redis.on('error', () => {
      // ioredis reconnects by itself; failed commands reject with the reason
    });
    redis.defineCommand('engKvSet', { numberOfKeys: 2, lua: SET_SCRIPT });
    redis.defineCommand('engKvDelete', { numberOfKeys: 2, lua: DELETE_SCRIPT });
    redis.defineCommand('engKvCas', { numberOfKeys: 2, lua: CAS_SCRIPT });
    shared = { redis, refs: 0 };
    connections.set(url, shared);
  }
  shared.refs++;
  return shared.redis;
}

export async function releaseRedis(url: string): Promise<void> {
  const shared = connections.get(url);
  if (!shared) return;
  shared.refs--;
  if (shared.refs > 0) return;
  connections.delete(url);
  await shared.redis.quit().catch(() => shared.redis.disconnect());
}

/** Resolve once the server answers PING, or throw a readable error after `timeoutMs`. */
export async function checkRedis(redis: Redis, url: string, timeoutMs = 5000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`redis at ${url} did not answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([redis.ping(), timeout]);
  } catch (err) {
    const message = (err as Error).message;
    throw new Error(message.startsWith('redis at') ? message : `could not reach redis at ${url}: ${message}`);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `adapter: redis`: a hash per scope (`<prefix>h:<scope>`, field = key, value = JSON text) plus
 * a set of scopes (`<prefix>scopes`). Set and delete are Lua scripts; update is an optimistic
 * compare-and-set loop, so two engines sharing one Redis never lose each other's writes.
 */
export class RedisKvStore implements KvStore {
  private readonly redis: ScriptedRedis;
  private readonly scopesKey: string;
  private closed = false;

  constructor(
    private readonly url: string,
    private readonly prefix: string,
  ) {
    this.redis = acquireRedis(url);
    this.scopesKey = `${prefix}scopes`;
  }

  get connection(): Redis {
    return this.redis;
  }

  private hash(scope: string): string {
    return `${this.prefix}h:${scope}`;
  }

  async get(scope: string, key: string): Promise<unknown | undefined> {
    return decode(await this.redis.hget(this.hash(scope), key));
  }

  async getText(scope: string, key: string): Promise<string | undefined> {
    return (await this.redis.hget(this.hash(scope), key)) ?? undefined;
  }

  async setText(scope: string, key: string, text: string): Promise<string | undefined> {
    return (await this.redis.engKvSet(this.hash(scope), this.scopesKey, key, text, scope)) ?? undefined;
  }

  async set(scope: string, key: string, value: unknown): Promise<unknown | undefined> {
    return decode(await this.redis.engKvSet(this.hash(scope), this.scopesKey, key, encode(value), scope));
  }

  async delete(scope: string, key: string): Promise<unknown | undefined> {
    return decode(await this.redis.engKvDelete(this.hash(scope), this.scopesKey, key, scope));
  }

  async update(scope: string, key: string, fn: (current: unknown | undefined) => unknown): Promise<UpdateResult> {
    const hash = this.hash(scope);
    for (let attempt = 0; attempt < MAX_UPDATE_ATTEMPTS; attempt++) {
      const oldText = await this.redis.hget(hash, key);
      const old = decode(oldText);
      const next = fn(decode(oldText));
      if (next === KEEP_CURRENT) return { old, value: old, written: false };
      const text = encode(next);
      const ok = await this.redis.engKvCas(hash, this.scopesKey, key, oldText === null ? '0' : '1', oldText ?? '', text, scope);
      if (ok === 1) return { old, value: JSON.parse(text), written: true };
      // another writer got in between: back off a little (jittered) and retry on the fresh value
      await new Promise((r) => setTimeout(r, Math.random() * Math.min(50, 2 ** attempt)));
    }
    throw new Error(`update of ${scope}/${key} gave up after ${MAX_UPDATE_ATTEMPTS} conflicting writes`);
  }

  async list(scope: string, options: ListOptions = {}): Promise<KvEntry[]> {
    const hash = this.hash(scope);
    const keys = await this.matchingKeys(hash, options.prefix);
    const offset = options.offset ?? 0;
    const page = options.limit === undefined ? keys.slice(offset) : keys.slice(offset, offset + options.limit);
    if (page.length === 0) return [];
    const values = await this.redis.hmget(hash, ...page);
    const entries: KvEntry[] = [];
    page.forEach((key, i) => {
      const text = values[i];
      // a key deleted between HKEYS and HMGET is simply left out
      if (text !== null && text !== undefined) entries.push({ key, value: JSON.parse(text) });
    });
    return entries;
  }

  async count(scope: string, prefix?: string): Promise<number> {
    const hash = this.hash(scope);
    if (!prefix) return this.redis.hlen(hash);
    return (await this.matchingKeys(hash, prefix)).length;
  }

  async scopes(prefix?: string): Promise<string[]> {
    const members = await this.redis.smembers(this.scopesKey);
    return members.filter((s) => !prefix || s.startsWith(prefix)).sort(compareKeys);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await releaseRedis(this.url);
  }

  private async matchingKeys(hash: string, prefix: string | undefined): Promise<string[]> {
    const keys = await this.redis.hkeys(hash);
    return (prefix ? keys.filter((k) => k.startsWith(prefix)) : keys).sort(compareKeys);
  }
}
