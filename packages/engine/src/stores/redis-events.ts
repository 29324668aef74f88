import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from '../log.ts';
import { redisClient } from './optional-deps.ts';
import { acquireRedis, checkRedis, releaseRedis } from './redis.ts';

/**
 * Fan-out of change events between engines that share one Redis (pub/sub on one channel). Each
 * engine delivers its own events locally and ignores its own messages when they come back, so
 * every event reaches every engine exactly once.
 */
export class RedisEventFanout<T> {
  private readonly origin = randomUUID();
  private readonly publisher: Redis;
  private readonly subscriber: Redis;
  private closed = false;

  private constructor(
    private readonly url: string,
    private readonly channel: string,
    private readonly log: Logger,
  ) {
    this.publisher = acquireRedis(url);
    // a connection in subscriber mode can issue nothing else, so it has its own
    this.subscriber = new (redisClient())(url, { maxRetriesPerRequest: 3 });
    this.subscriber.on('error', () => {
      // reconnects by itself; ioredis re-subscribes after a reconnect
    });
  }

  static async open<T>(url: string, channel: string, log: Logger, onEvent: (event: T) => void): Promise<RedisEventFanout<T>> {
    const fanout = new RedisEventFanout<T>(url, channel, log);
    fanout.subscriber.on('message', (ch: string, text: string) => {
      if (ch !== channel) return;
      try {
        const message = JSON.parse(text) as { origin: string; event: T };
        if (message.origin !== fanout.origin) onEvent(message.event);
      } catch (err) {
        log.warn(`bad message on ${channel}`, { error: (err as Error).message });
      }
    });
    try {
      await checkRedis(fanout.subscriber, url);
      await fanout.subscriber.subscribe(channel);
    } catch (err) {
      await fanout.close();
      throw err;
    }
    return fanout;
  }

  publish(event: T): void {
    if (this.closed) return;
    this.publisher.publish(this.channel, JSON.stringify({ origin: this.origin, event })).catch((err: Error) => {
      this.log.warn(`could not publish to ${this.channel}`, { error: err.message });
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.subscriber.disconnect();
    await releaseRedis(this.url);
  }
}
