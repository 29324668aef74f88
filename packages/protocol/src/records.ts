import { z } from 'zod';

// spec: engine-protocol §4.1 and §9 — superset records that satisfy iii-sdk 0.11.6 and 0.22.1 readers.

const JsonObject = z.record(z.string(), z.unknown());

/** A registered function: FunctionInfo (0.11.6) ∪ FunctionSummary (0.22.1). Unset fields are null. */
export const FunctionRecordSchema = z.object({
  function_id: z.string(),
  worker_name: z.string(),
  worker_id: z.string().nullable(),
  description: z.string().nullable(),
  request_format: z.unknown().nullable(),
  response_format: z.unknown().nullable(),
  metadata: JsonObject.nullable(),
  /** `internal` for engine built-ins, `user` for worker functions, `http` for HTTP-invoked ones. */
  kind: z.enum(['internal', 'user', 'http']),
  /** HTTP-invoked functions only (spec §3.4): where the engine sends calls, the URL redacted. */
  invocation: z.object({ url: z.string(), method: z.string(), timeout_ms: z.number().nullable() }).optional(),
});
export type FunctionRecord = z.infer<typeof FunctionRecordSchema>;

export const RegisteredTriggerRefSchema = z.object({
  id: z.string(),
  trigger_type: z.string(),
  config: z.unknown(),
});

/** FunctionDetail (0.22.1) plus the 0.11.6 names of the schemas. */
export const FunctionDetailSchema = FunctionRecordSchema.extend({
  request_schema: z.unknown().optional(),
  response_schema: z.unknown().optional(),
  registered_triggers: z.array(RegisteredTriggerRefSchema),
});
export type FunctionDetail = z.infer<typeof FunctionDetailSchema>;

export const WorkerMetricsSchema = z.object({
  memory_heap_used: z.number().optional(),
  memory_heap_total: z.number().optional(),
  memory_rss: z.number().optional(),
  memory_external: z.number().optional(),
  cpu_user_micros: z.number().optional(),
  cpu_system_micros: z.number().optional(),
  cpu_percent: z.number().optional(),
  event_loop_lag_ms: z.number().optional(),
  uptime_seconds: z.number().optional(),
  timestamp_ms: z.number(),
  runtime: z.string(),
});
export type WorkerMetrics = z.infer<typeof WorkerMetricsSchema>;

export const WorkerStatusSchema = z.enum(['connected', 'available', 'busy', 'disconnected']);

/** WorkerInfo (0.11.6) ∪ WorkerSummary (0.22.1). */
export const WorkerRecordSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  runtime: z.string().nullable(),
  version: z.string().nullable(),
  os: z.string().nullable(),
  ip_address: z.string().nullable(),
  internal: z.boolean(),
  status: WorkerStatusSchema,
  connected_at_ms: z.number(),
  function_count: z.number(),
  functions: z.array(z.string()),
  active_invocations: z.number(),
  latest_metrics: WorkerMetricsSchema.nullable(),
  pid: z.number().nullable(),
  isolation: z.string().nullable(),
});
export type WorkerRecord = z.infer<typeof WorkerRecordSchema>;

/** Console-facing status of a binding: bound to a live provider, parked, or refused by its provider. */
export const TriggerStatusSchema = z.enum(['active', 'inactive', 'error']);
export type TriggerStatus = z.infer<typeof TriggerStatusSchema>;

/** A trigger instance: TriggerInfo (0.11.6) ∪ RegisteredTriggerSummary (0.22.1). */
export const TriggerRecordSchema = z.object({
  id: z.string(),
  trigger_type: z.string(),
  function_id: z.string(),
  worker_name: z.string(),
  worker_id: z.string().nullable(),
  config: z.unknown(),
  config_summary: z.string(),
  metadata: JsonObject.optional(),
  status: TriggerStatusSchema,
  error: z.string().optional(),
});
export type TriggerRecord = z.infer<typeof TriggerRecordSchema>;

/** A trigger type: TriggerTypeInfo (0.11.6) ∪ the 0.22.1 listing entry and detail. */
export const TriggerTypeRecordSchema = z.object({
  id: z.string(),
  worker_name: z.string(),
  description: z.string().nullable(),
  trigger_request_format: z.unknown().optional(),
  call_request_format: z.unknown().optional(),
  configuration_schema: z.unknown().optional(),
  request_schema: z.unknown().optional(),
  instance_count: z.number(),
});
export type TriggerTypeRecord = z.infer<typeof TriggerTypeRecordSchema>;

/** Channel end reference passed inside payloads (§2.11). */
export const ChannelRefSchema = z.object({
  channel_id: z.string(),
  access_key: z.string(),
  direction: z.enum(['read', 'write']),
});
export type ChannelRef = z.infer<typeof ChannelRefSchema>;

export function isChannelRef(value: unknown): value is ChannelRef {
  if (value === null || typeof value !== 'object') return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.channel_id === 'string' &&
    typeof v.access_key === 'string' &&
    (v.direction === 'read' || v.direction === 'write') &&
    Object.keys(v).length === 3
  );
}
