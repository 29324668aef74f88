import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from '../../log.ts';
import { acquireRedis, checkRedis, releaseRedis } from '../../stores/redis.ts';
import type { TickLock } from './scheduler.ts';

// spec: engine-protocol §5.3 adapter `redis` — a distributed lock per tick, so when several
// engines share one Redis only one of them fires each scheduled time.

const LOCK_TTL_MS = 60_000;

export class RedisTickLock implements TickLock {
  private readonly owner = randomUUID();

  private constructor(
    private readonly url: string,
    private readonly redis: Redis,
    private readonly log: Logger,
  ) {}

  static async open(url: string, log: Logger): Promise<RedisTickLock> {
    const redis = acquireRedis(url);
    try {
      await checkRedis(redis, url);
    } catch (err) {
      await releaseRedis(url);
      throw err;
    }
    return new RedisTickLock(url, redis, log);
  }

  async acquire(tick: string): Promise<boolean> {
    try {
      const set = await this.redis.set(`eng:cron:lock:${tick}`, this.owner, 'PX', LOCK_TTL_MS, 'NX');
      return set === 'OK';
    } catch (err) {
      // without the lock we cannot know whether another engine fired: skip rather than double-fire
      this.log.warn(`cron lock unavailable, tick ${tick} skipped`, { error: (err as Error).message });
      return false;
    }
  }

  async close(): Promise<void> {
    await releaseRedis(this.url);
  }
}
