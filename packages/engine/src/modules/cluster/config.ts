import { z } from 'zod';
import { DEFAULT_REDIS_URL } from '../../stores/redis-adapter.ts';

/**
 * `eng-cluster`: this engine is one of several sharing a Redis. Listing the module is what makes
 * an engine a member; every member names the same `redis_url` and `namespace`.
 */
export const ClusterConfig = z
  .object({
    redis_url: z.string().min(1).default(DEFAULT_REDIS_URL),
    /** This engine's id in the cluster (default: host, pid and a random suffix). Unique per member. */
    engine_id: z
      .string()
      .regex(/^[A-Za-z0-9._:-]{1,128}$/, 'letters, digits, ".", "_", ":" and "-" only (at most 128)')
      .optional(),
    /** Prefix of every Redis key and channel: several clusters can share one Redis. */
    namespace: z
      .string()
      .regex(/^[A-Za-z0-9._-]{1,64}$/, 'letters, digits, ".", "_" and "-" only (at most 64)')
      .default('eng'),
    /** How often this engine announces itself and its functions. */
    heartbeat_ms: z.number().int().min(50).max(60_000).default(1000),
    /** A member whose last heartbeat is older than this is gone (a hung process). */
    ttl_ms: z.number().int().min(150).max(600_000).default(5000),
    /** How often the members' Redis connections are checked (a killed engine is gone at the next check). */
    check_ms: z.number().int().min(20).max(10_000).default(250),
    /**
     * The bus URL other engines use to reach this engine's channels (an HTTP request's response
     * written by a worker there); default: this engine's bus URL, 0.0.0.0 replaced by the host name.
     */
    bus_url: z
      .string()
      .regex(/^wss?:\/\//, 'a ws:// or wss:// URL')
      .optional(),
    /** Mount the other engines' HTTP routes here too (a round-robin load balancer in front then works). */
    http_routes: z.boolean().default(true),
  })
  .strict()
  .refine((c) => c.ttl_ms >= 2 * c.heartbeat_ms, { message: 'ttl_ms must be at least twice heartbeat_ms', path: ['ttl_ms'] });
export type ClusterConfig = z.infer<typeof ClusterConfig>;
