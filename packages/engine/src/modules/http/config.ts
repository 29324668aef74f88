import { z } from 'zod';
import { MaxConnectionsSchema } from '../../bus/socket-limits.ts';
import { HTTP_METHODS, type HttpMethod } from './router.ts';

// spec: engine-protocol §6.1 (config keys of iii-http), plus `body_limit_bytes` (ours: iii has no
// limit, we answer 413 instead of buffering without bound).

export const HttpModuleConfig = z
  .object({
    host: z.string().min(1).default('127.0.0.1'),
    port: z.number().int().min(0).max(65535).default(3111),
    /** ms for the whole request (middleware, condition, handler) until the response starts. */
    default_timeout: z.number().int().positive().default(30_000),
    /** Requests served at once; the rest wait their turn. */
    concurrency_request_limit: z.number().int().positive().default(1024),
    cors: z
      .object({
        allowed_origins: z.array(z.string()).default([]),
        allowed_methods: z.array(z.string()).default([]),
      })
      .strict()
      .optional(),
    middleware: z
      .array(
        z
          .object({
            function_id: z.string().min(1),
            phase: z.literal('preHandler').default('preHandler'),
            priority: z.number().int().default(0),
          })
          .strict(),
      )
      .default([]),
    body_limit_bytes: z
      .number()
      .int()
      .positive()
      .default(10 * 1024 * 1024),
    /** Open connections at most (default 4096, at most 1/4 of the open-file limit); more are closed at once. */
    max_connections: MaxConnectionsSchema,
    /** A request head must be complete this many ms after the connection opened (a kept-alive one: after its first byte), else the socket is closed. */
    headers_timeout_ms: z.number().int().positive().default(10_000),
    /** An idle keep-alive connection is closed after this many ms (above the usual 60 s of proxies in front). */
    keep_alive_timeout_ms: z.number().int().positive().default(65_000),
  })
  .strict();
export type HttpModuleConfig = z.infer<typeof HttpModuleConfig>;

const methodSchema = z
  .string()
  .transform((m) => m.toUpperCase())
  .refine((m): m is HttpMethod => (HTTP_METHODS as readonly string[]).includes(m), {
    message: `must be one of ${HTTP_METHODS.join(', ')}`,
  });

/** Config of an `http` trigger binding (§5.2). Unknown keys are ignored, as in iii. */
export const HttpTriggerConfig = z.object({
  api_path: z.string({ error: 'api_path is required for http triggers' }).min(1, 'api_path is required for http triggers'),
  http_method: methodSchema.optional(),
  condition_function_id: z.string().min(1).nullish(),
  middleware_function_ids: z.array(z.string().min(1)).nullish(),
});
export type HttpTriggerConfig = z.infer<typeof HttpTriggerConfig>;

/** JSON Schemas shown by `engine::triggers::list` for the `http` type. */
export const HTTP_TRIGGER_REQUEST_FORMAT = {
  type: 'object',
  required: ['api_path'],
  properties: {
    api_path: { type: 'string', description: 'route path; `:name` segments are parameters' },
    http_method: { type: 'string', enum: [...HTTP_METHODS], default: 'GET' },
    condition_function_id: { type: 'string' },
    middleware_function_ids: { type: 'array', items: { type: 'string' } },
  },
};

export const HTTP_CALL_REQUEST_FORMAT = {
  type: 'object',
  properties: {
    query_params: { type: 'object', additionalProperties: { type: 'string' } },
    path_params: { type: 'object', additionalProperties: { type: 'string' } },
    headers: { type: 'object', additionalProperties: { type: 'string' } },
    path: { type: 'string' },
    method: { type: 'string' },
    body: {},
    trigger: { type: 'object' },
    request_body: { type: 'object', description: 'channel reader ref with the raw body' },
    response: { type: 'object', description: 'channel writer ref for streaming responses' },
  },
};
