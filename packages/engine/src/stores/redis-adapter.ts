import { z } from 'zod';

export const DEFAULT_REDIS_URL = 'redis://localhost:6379';

/** `adapter: {name: redis, config: {redis_url}}` as the cron and pub/sub modules accept it (spec §7.2). */
export const RedisAdapterSchema = z
  .object({
    name: z.literal('redis'),
    config: z
      .object({ redis_url: z.string().min(1).default(DEFAULT_REDIS_URL) })
      .strict()
      .default({ redis_url: DEFAULT_REDIS_URL }),
  })
  .strict();
