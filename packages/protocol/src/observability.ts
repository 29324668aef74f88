import { z } from 'zod';

// spec: engine-protocol §4.3 (functions and record shapes), §5.8/§5.9 (trigger configs), seed §2.6/§2.7.

/** Ids of the observability module's functions. */
export const ObservabilityFunction = {
  TracesList: 'engine::traces::list',
  TracesTree: 'engine::traces::tree',
  TracesSpans: 'engine::traces::spans',
  TracesGroupBy: 'engine::traces::group_by',
  TracesClear: 'engine::traces::clear',
  LogsList: 'engine::logs::list',
  LogsClear: 'engine::logs::clear',
  LogInfo: 'engine::log::info',
  LogWarn: 'engine::log::warn',
  LogError: 'engine::log::error',
  LogDebug: 'engine::log::debug',
  LogTrace: 'engine::log::trace',
  MetricsList: 'engine::metrics::list',
  HealthCheck: 'engine::health::check',
  SamplingRules: 'engine::sampling::rules',
} as const;

export const SpanStatusSchema = z.enum(['ok', 'error', 'unset']);
export type SpanStatus = z.infer<typeof SpanStatusSchema>;

/** Attributes travel as an ARRAY of [key, value] string pairs (§4.3). */
export const AttributePairsSchema = z.array(z.tuple([z.string(), z.string()]));

export const SpanEventSchema = z.object({
  name: z.string(),
  timestamp_unix_nano: z.number(),
  attributes: AttributePairsSchema,
});

export const SpanLinkSchema = z.object({
  trace_id: z.string(),
  span_id: z.string(),
  trace_state: z.string().nullable(),
  attributes: AttributePairsSchema,
});

export const StoredSpanSchema = z.object({
  trace_id: z.string(),
  span_id: z.string(),
  parent_span_id: z.string().nullable(),
  name: z.string(),
  /** OTel span kind in lower case (`server`, `internal`, …); an addition to iii's record. */
  kind: z.string().optional(),
  start_time_unix_nano: z.number(),
  /** 0 while the span is in progress (`pending: true`). */
  end_time_unix_nano: z.number(),
  status: SpanStatusSchema,
  status_description: z.string().optional(),
  attributes: AttributePairsSchema,
  service_name: z.string(),
  events: z.array(SpanEventSchema),
  links: z.array(SpanLinkSchema),
  instrumentation_scope_name: z.string().optional(),
  instrumentation_scope_version: z.string().optional(),
  flags: z.number().optional(),
  trace_state: z.string().optional(),
  pending: z.boolean().optional(),
});
export type StoredSpan = z.infer<typeof StoredSpanSchema>;

/** A row of `engine::traces::list`: the span plus per-trace facts. */
export const TraceListSpanSchema = StoredSpanSchema.extend({
  trace_tags: z.record(z.string(), z.string()).optional(),
  span_count: z.number(),
  error_count: z.number(),
  duration_ms: z.number(),
});
export type TraceListSpan = z.infer<typeof TraceListSpanSchema>;

export type TraceTreeNode = StoredSpan & { children: TraceTreeNode[] };

export const StoredLogSchema = z.object({
  timestamp_unix_nano: z.number(),
  observed_timestamp_unix_nano: z.number(),
  severity_number: z.number(),
  severity_text: z.string(),
  body: z.string(),
  attributes: z.record(z.string(), z.unknown()),
  trace_id: z.string().nullable(),
  span_id: z.string().nullable(),
  resource: z.record(z.string(), z.unknown()),
  service_name: z.string(),
  instrumentation_scope_name: z.string().optional(),
  instrumentation_scope_version: z.string().optional(),
});
export type StoredLog = z.infer<typeof StoredLogSchema>;

// ── inputs ────────────────────────────────────────────────────────────────
// Unknown extra fields are ignored (zod's default strip), as for the introspection functions.

const Ms = z.number().finite().nonnegative();
const Offset = z.number().int().nonnegative();
const Limit = z.number().int().positive();
/** `[[k, v], …]`; a `{k: v}` object is accepted too. Values compare as strings. */
const AttributeFilter = z.union([
  z.array(z.tuple([z.string(), z.union([z.string(), z.number(), z.boolean()])])),
  z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
]);

export const TracesListInput = z.object({
  trace_id: z.string().min(1).optional(),
  trace_ids: z.array(z.string().min(1)).optional(),
  offset: Offset.optional(),
  limit: Limit.optional(),
  service_name: z.string().optional(),
  name: z.string().optional(),
  /** ok | error | unset | pending, any case (the console sends OK / Error / Pending). */
  status: z.string().optional(),
  min_duration_ms: Ms.optional(),
  max_duration_ms: Ms.optional(),
  start_time: Ms.optional(),
  end_time: Ms.optional(),
  sort_by: z.enum(['start_time', 'duration', 'duration_ms', 'service_name', 'name']).optional(),
  sort_order: z.enum(['asc', 'desc']).optional(),
  attributes: AttributeFilter.optional(),
  exclude_attributes: AttributeFilter.optional(),
  include_internal: z.boolean().optional(),
  search_all_spans: z.boolean().optional(),
});
export type TracesListInput = z.infer<typeof TracesListInput>;

export const TraceIdInput = z.object({ trace_id: z.string().min(1) });

export const TracesGroupByInput = z.object({
  attribute: z.string().min(1),
  since_ms: Ms.optional(),
  limit: Limit.optional(),
  include_internal: z.boolean().optional(),
  label_attribute: z.string().min(1).optional(),
  /** Count only the traces `engine::traces::list` lists with these filters (eng only). */
  filter: TracesListInput.omit({ offset: true, limit: true, sort_by: true, sort_order: true }).optional(),
});

export const LogsListInput = z.object({
  start_time: Ms.optional(),
  end_time: Ms.optional(),
  trace_id: z.string().min(1).optional(),
  span_id: z.string().min(1).optional(),
  severity_min: z.number().int().min(0).max(24).optional(),
  /** One level or several (`["WARN","ERROR"]`), case-insensitive exact. */
  severity_text: z.union([z.string().min(1), z.array(z.string().min(1))]).optional(),
  /** Case-insensitive substring of the body. */
  search: z.string().optional(),
  service_name: z.string().optional(),
  offset: Offset.optional(),
  limit: Limit.optional(),
});
export type LogsListInput = z.infer<typeof LogsListInput>;

export const LogWriteInput = z.object({
  message: z.string(),
  trace_id: z.string().nullish(),
  span_id: z.string().nullish(),
  data: z.unknown().optional(),
  service_name: z.string().nullish(),
});

export const MetricsListInput = z.object({
  start_time: Ms.optional(),
  end_time: Ms.optional(),
  metric_name: z.string().optional(),
  /** Seconds per `series` bucket (default 10). */
  aggregate_interval: z.number().int().positive().max(3600).optional(),
});

export const LogTriggerConfig = z.object({
  level: z.enum(['all', 'trace', 'debug', 'info', 'warn', 'error']).default('all'),
});
export const TraceTriggerConfig = z.object({
  service_name: z.string().optional(),
  status: z.string().optional(),
});
