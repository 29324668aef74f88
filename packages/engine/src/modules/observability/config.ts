import { z } from 'zod';

// spec: engine-protocol §7.2 (`iii-observability` keys). Every iii key is accepted so an iii
// config.yaml starts unchanged; the few we do not act on are named in README.md.

const Ratio = z.number().min(0).max(1);
const Bytes = z.number().int().positive();

/** What one span or log record may hold (limits.ts); longer values end in `…[truncated N bytes]`. */
export const RecordLimitsConfig = z
  .object({
    /** Longest attribute value (and key, span name, status description) kept, UTF-8 bytes. */
    attribute_value_bytes: Bytes.default(16 * 1024),
    /** Attributes kept per span, per event, per link and per log record. */
    attributes: z.number().int().positive().default(128),
    events: z.number().int().positive().default(128),
    links: z.number().int().positive().default(128),
    /** Everything one record holds; what comes after is cut or dropped (and counted). */
    record_bytes: Bytes.default(1024 * 1024),
    log_body_bytes: Bytes.default(64 * 1024),
  })
  .strict();
const Exporter = z.enum(['memory', 'otlp', 'both']);

export const SamplingRule = z
  .object({
    /** Span name; `*` matches any run of characters. */
    operation: z.string().optional(),
    service: z.string().optional(),
    rate: Ratio,
  })
  .strict();
export type SamplingRule = z.infer<typeof SamplingRule>;

export const ObservabilityConfig = z
  .object({
    enabled: z.boolean().default(true),
    service_name: z.string().min(1).default('eng'),
    service_version: z.string().optional(),
    service_namespace: z.string().optional(),
    /** Where spans go: the in-memory store the query functions read, an OTLP/HTTP endpoint, or both. */
    exporter: Exporter.default('memory'),
    /** OTLP/HTTP base URL (`/v1/traces` and `/v1/logs` are appended), JSON encoding. */
    endpoint: z.string().url().default('http://127.0.0.1:4318'),
    sampling_ratio: Ratio.default(1),
    sampling: z
      .object({
        default: Ratio.optional(),
        parent_based: z.boolean().default(true),
        rules: z.array(SamplingRule).default([]),
        rate_limit: z.object({ max_traces_per_second: z.number().positive() }).strict().optional(),
      })
      .strict()
      .optional(),
    memory_max_spans: z.number().int().positive().default(100_000),
    /** Byte budget of the span store (estimated per span); default 256 MiB, at most 1/4 of the heap limit. */
    memory_max_bytes: Bytes.optional(),
    metrics_enabled: z.boolean().default(true),
    metrics_exporter: z.enum(['memory', 'otlp']).default('memory'),
    metrics_retention_seconds: z.number().int().positive().default(3600),
    metrics_max_count: z.number().int().positive().default(10_000),
    logs_enabled: z.boolean().default(true),
    logs_exporter: Exporter.default('memory'),
    logs_max_count: z.number().int().positive().default(100_000),
    /** Byte budget of the log store; default 128 MiB, at most 1/8 of the heap limit. */
    logs_max_bytes: Bytes.optional(),
    logs_retention_seconds: z.number().int().positive().default(86_400),
    logs_batch_size: z.number().int().positive().default(512),
    logs_flush_interval_ms: z.number().int().positive().default(1000),
    logs_sampling_ratio: Ratio.default(1),
    /** Print worker (SDK) log records on the engine's stderr. */
    logs_console_output: z.boolean().default(true),
    /** Lowest engine log level captured as log records (service `service_name`). */
    level: z.enum(['trace', 'debug', 'info', 'warn', 'error']).default('info'),
    format: z.string().optional(),
    alerts: z.array(z.unknown()).optional(),
    /** Show in-progress engine spans as Pending (§4.3 `pending: true`). */
    live_spans: z.boolean().default(true),
    collapse_spans: z.boolean().optional(),
    /** Give in-process built-ins a `call` span even without an incoming traceparent (III_OTEL_TRACE_BUILTINS). */
    trace_builtins: z.boolean().default(false),
    /** Keep traces and logs in `<dataDir>/observability.db` so they survive a restart. */
    persist: z.boolean().default(false),
    limits: RecordLimitsConfig.prefault({}),
  })
  .strict();
export type ObservabilityConfig = z.infer<typeof ObservabilityConfig>;

export function spanMemoryEnabled(config: ObservabilityConfig): boolean {
  return config.enabled && config.exporter !== 'otlp';
}
export function logMemoryEnabled(config: ObservabilityConfig): boolean {
  return config.enabled && config.logs_enabled && config.logs_exporter !== 'otlp';
}
