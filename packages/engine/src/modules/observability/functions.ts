import {
  describeZodError,
  EngError,
  ErrorCode,
  LogsListInput,
  LogWriteInput,
  MetricsListInput,
  ObservabilityFunction,
  type StoredLog,
  TraceIdInput,
  TracesGroupByInput,
  TracesListInput,
} from '@eng/protocol';
import { z } from 'zod';
import type { ModuleContext } from '../../core/module.ts';
import type { Collector } from './collector.ts';
import type { ObservabilityConfig } from './config.ts';
import type { EngineMetrics } from './engine-metrics.ts';
import { severityNumberOf } from './otlp-decode.ts';
import { listAlerts, listRollups, RollupsListInput } from './rollups.ts';
import { normaliseId, parseTraceparent } from './trace-context.ts';
import { groupTraces, traceSpans, traceTree } from './trace-detail.ts';
import { listTraces } from './trace-query.ts';
import type { Sampler } from './tracer.ts';
import type { WorkerMetricsStore } from './worker-metrics.ts';

// spec: engine-protocol §4.3 — the observability functions, served in-process.

export interface FunctionDeps {
  config: ObservabilityConfig;
  collector: Collector;
  metrics: EngineMetrics;
  workerMetrics: WorkerMetricsStore | null;
  sampler: Sampler;
  /** OTLP exporter figures (`exporter`/`logs_exporter` otlp|both), for health::check. */
  exporters(): {
    endpoint?: string;
    spans?: { sent: number; dropped: number; failures: number };
    logs?: { sent: number; dropped: number; failures: number };
  };
  onClearSpans(): void;
  onClearLogs(): void;
}

function parse<T>(schema: z.ZodType<T>, input: unknown): T {
  const parsed = schema.safeParse(input ?? {});
  if (!parsed.success) throw new EngError(ErrorCode.DeserializationError, describeZodError(parsed.error));
  return parsed.data;
}

const schemaOf = (schema: z.ZodType) => () => z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });

const LOG_LEVELS = [
  [ObservabilityFunction.LogInfo, 'INFO'],
  [ObservabilityFunction.LogWarn, 'WARN'],
  [ObservabilityFunction.LogError, 'ERROR'],
  [ObservabilityFunction.LogDebug, 'DEBUG'],
  [ObservabilityFunction.LogTrace, 'TRACE'],
] as const;

export function registerObservabilityFunctions(ctx: ModuleContext<unknown>, deps: FunctionDeps): void {
  const { config, collector } = deps;
  const spans = () => {
    // spec §4.3: the trace functions need the memory exporter
    if (!collector.spans) {
      throw new EngError(
        ErrorCode.MemoryExporterNotEnabled,
        'traces are not kept in memory: set `exporter: memory` or `both` (and `enabled: true`) in the eng-observability config',
      );
    }
    return collector.spans;
  };

  ctx.registerFunction(
    {
      id: ObservabilityFunction.TracesList,
      description: 'List traces (root spans by default) with filters, sorting and pagination',
      request_format: schemaOf(TracesListInput),
    },
    (input) => listTraces(spans(), parse(TracesListInput, input)),
  );
  ctx.registerFunction(
    { id: ObservabilityFunction.TracesTree, description: 'One trace as a tree of spans', request_format: schemaOf(TraceIdInput) },
    (input) => traceTree(spans(), parse(TraceIdInput, input).trace_id),
  );
  ctx.registerFunction(
    {
      id: ObservabilityFunction.TracesSpans,
      description: 'One trace as a flat list of spans by start time',
      request_format: schemaOf(TraceIdInput),
    },
    (input) => ({ spans: traceSpans(spans(), parse(TraceIdInput, input).trace_id) }),
  );
  ctx.registerFunction(
    {
      id: ObservabilityFunction.TracesGroupBy,
      description: 'Group traces by the value of an attribute (session, function, message, …)',
      request_format: schemaOf(TracesGroupByInput),
    },
    (input) => {
      const query = parse(TracesGroupByInput, input);
      // the traces the filtered listing shows, whatever its page: groups count those only
      const only = query.filter
        ? new Set(listTraces(spans(), { ...query.filter, limit: Number.MAX_SAFE_INTEGER }).spans.map((s) => s.trace_id))
        : undefined;
      return groupTraces(spans(), query, only);
    },
  );
  ctx.registerFunction({ id: ObservabilityFunction.TracesClear, description: 'Delete every stored span' }, () => {
    spans().clear();
    deps.onClearSpans();
    return { success: true };
  });

  ctx.registerFunction(
    { id: ObservabilityFunction.LogsList, description: 'List log records, newest first', request_format: schemaOf(LogsListInput) },
    (input) => {
      const query = parse(LogsListInput, input);
      const result = collector.logs ? collector.logs.list(query) : { logs: [], total: 0 };
      return { ...result, query, timestamp: Date.now() };
    },
  );
  ctx.registerFunction({ id: ObservabilityFunction.LogsClear, description: 'Delete every stored log record' }, () => {
    collector.logs?.clear();
    deps.onClearLogs();
    return { success: true, message: collector.logs ? undefined : 'logs are not enabled' };
  });

  for (const [id, level] of LOG_LEVELS) {
    ctx.registerFunction({ id, description: `Store a ${level} log record`, request_format: schemaOf(LogWriteInput) }, (input, info) => {
      const data = parse(LogWriteInput, input);
      let traceId = data.trace_id ? normaliseId(data.trace_id, 16) : null;
      let spanId = data.span_id ? normaliseId(data.span_id, 8) : null;
      if (data.trace_id && !traceId) throw new EngError(ErrorCode.DeserializationError, 'trace_id: expected 32 hex characters');
      if (data.span_id && !spanId) throw new EngError(ErrorCode.DeserializationError, 'span_id: expected 16 hex characters');
      // a handler logging within a traced call: the call's own context joins the log to its span
      if (!traceId && info.traceparent) {
        const context = parseTraceparent(info.traceparent);
        if (context) {
          traceId = context.traceId;
          spanId = context.spanId;
        }
      }
      if (!config.enabled || !config.logs_enabled) return undefined;
      const now = Date.now() * 1e6;
      const service = data.service_name ?? ctx.core.workers.nameOf(info.callerWorkerId) ?? config.service_name;
      const attributes: Record<string, unknown> = {};
      if (data.data !== undefined) attributes['log.data'] = data.data;
      const log: StoredLog = {
        timestamp_unix_nano: now,
        observed_timestamp_unix_nano: now,
        severity_number: severityNumberOf(level),
        severity_text: level,
        body: data.message,
        attributes,
        trace_id: traceId,
        span_id: spanId,
        resource: { 'service.name': service },
        service_name: service,
      };
      collector.addLog(log);
      return undefined;
    });
  }

  ctx.registerFunction(
    {
      id: ObservabilityFunction.MetricsList,
      description: 'Engine invocation and worker metrics, latency percentiles, a 15-minute series, SDK metrics',
      request_format: schemaOf(MetricsListInput),
    },
    (input) => {
      const query = parse(MetricsListInput, input);
      const interval = query.aggregate_interval ?? 10;
      return {
        engine_metrics: deps.metrics.snapshot(ctx.core.workers.size),
        sdk_metrics: deps.workerMetrics?.list(query) ?? [],
        series: deps.metrics.series(interval),
        aggregate_interval: interval,
        query,
        timestamp: Date.now(),
      };
    },
  );

  // iii 0.22.1's names (its console's Metrics page calls both): see rollups.ts
  ctx.registerFunction(
    {
      id: 'engine::rollups::list',
      description: 'SDK metric rollups per name over 1-minute, 5-minute or 1-hour buckets (level 0, 1, 2), computed on the fly',
      request_format: schemaOf(RollupsListInput),
    },
    (input) => listRollups(deps.workerMetrics?.list({}) ?? [], parse(RollupsListInput, input)),
  );
  ctx.registerFunction({ id: 'engine::alerts::list', description: 'Metric alert rules and their state (eng configures none)' }, () =>
    listAlerts(),
  );

  ctx.registerFunction({ id: ObservabilityFunction.HealthCheck, description: 'Health of the telemetry pipeline' }, () => {
    const status = (on: boolean) => (on ? 'healthy' : 'disabled');
    return {
      status: 'healthy',
      components: {
        otel: {
          status: status(config.enabled),
          details: {
            exporter: config.exporter,
            logs_exporter: config.logs_exporter,
            service_name: config.service_name,
            sampling_ratio: deps.sampler.describe().default_ratio,
            ...deps.exporters(),
          },
        },
        metrics: {
          status: status(config.enabled && config.metrics_enabled),
          details: {
            sdk_points: deps.workerMetrics?.size ?? 0,
            max_points: config.metrics_max_count,
            retention_seconds: config.metrics_retention_seconds,
            invocations_total: deps.metrics.snapshot(ctx.core.workers.size).invocations.total,
          },
        },
        logs: {
          status: status(collector.logs !== null),
          details: {
            stored_logs: collector.logs?.size ?? 0,
            max_logs: config.logs_max_count,
            stored_bytes: collector.logs?.bytes ?? 0,
            max_bytes: collector.logs?.maxBytes ?? 0,
            evicted_logs: collector.logs?.evicted ?? 0,
            received: collector.logsReceived,
          },
        },
        spans: {
          status: status(collector.spans !== null),
          details: {
            stored_spans: collector.spans?.size ?? 0,
            stored_traces: collector.spans?.traceCount ?? 0,
            max_spans: config.memory_max_spans,
            stored_bytes: collector.spans?.bytes ?? 0,
            max_bytes: collector.spans?.maxBytes ?? 0,
            evicted_spans: collector.spans?.evicted ?? 0,
            received: collector.spansReceived,
          },
        },
      },
      timestamp: Date.now(),
      version: ctx.engineVersion,
    };
  });

  ctx.registerFunction({ id: ObservabilityFunction.SamplingRules, description: 'The sampling rules in force' }, () => ({
    traces: deps.sampler.describe(),
    logs: { sampling_ratio: config.logs_sampling_ratio },
    timestamp: Date.now(),
  }));
}
