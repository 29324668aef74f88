import { join } from 'node:path';
import type { StoredLog, StoredSpan } from '@eng/protocol';
import { BusService } from '../../bus/server.ts';
import type { InvocationObserver } from '../../core/invoker.ts';
import type { EngineModule, ModuleContext } from '../../core/module.ts';
import { Logger, type LogLevel, type LogRecord } from '../../log.ts';
import type { HttpRouterService } from '../http/index.ts';
import { callSpanObserver } from './call-spans.ts';
import { Collector } from './collector.ts';
import { logMemoryEnabled, ObservabilityConfig, spanMemoryEnabled } from './config.ts';
import { EngineMetrics } from './engine-metrics.ts';
import { registerObservabilityFunctions } from './functions.ts';
import { TelemetryIngest } from './ingest.ts';
import { defaultStoreBudgets, RecordLimiter, type TelemetryLimits } from './limits.ts';
import { LogStore } from './log-store.ts';
import { severityNumberOf } from './otlp-decode.ts';
import { encodeLogs, encodeTraces, OtlpSender } from './otlp-export.ts';
import { mountOtlpReceiver } from './otlp-http.ts';
import { openPersistence } from './persistence.ts';
import { compileScrubber } from './scrub.ts';
import { credentialEnvValues, secretRegistry } from './secret-registry.ts';
import { SpanStore } from './span-store.ts';
import { Tracer } from './tracer.ts';
import { registerTelemetryTriggers } from './trigger-types.ts';
import { WorkerMetricsStore } from './worker-metrics.ts';

export type { EndSpanOptions, EngineSpan, EngineTracer, SpanKind, StartSpanOptions } from './tracer.ts';

/** Names under which the module publishes its parts on `services` (README.md). */
export const ObservabilityService = {
  Tracer: 'observability.tracer',
} as const;

const LEVEL_RANK: Record<LogLevel, number> = { trace: 0, debug: 1, info: 2, warn: 3, error: 4 };
const SWEEP_MS = 60_000;

/** Log data as plain JSON (an Error or a BigInt in it must not break a listing later). */
function plainData(data: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!data) return {};
  try {
    return JSON.parse(JSON.stringify(data)) as Record<string, unknown>;
  } catch {
    return { 'eng.log.data': '[unserialisable]' };
  }
}

/** Resource attributes of the engine's service (`service_version`, `service_namespace`), OTel names. */
function resourceOf(config: ObservabilityConfig): { service: string; attributes: Record<string, string> } {
  const attributes: Record<string, string> = { 'service.name': config.service_name };
  if (config.service_version) attributes['service.version'] = config.service_version;
  if (config.service_namespace) attributes['service.namespace'] = config.service_namespace;
  return { service: config.service_name, attributes };
}

/** Engine log lines as log records (§8.1: "engine tracing events are also captured as logs"). */
function engineLogSink(collector: Collector, config: ObservabilityConfig): (record: LogRecord) => void {
  let inside = false;
  const threshold = LEVEL_RANK[config.level];
  const resource = resourceOf(config).attributes;
  return (record) => {
    // a line logged while storing a line (a listener failing) is not stored again
    if (inside || LEVEL_RANK[record.level] < threshold) return;
    inside = true;
    try {
      const ns = record.time * 1e6;
      const text = record.level.toUpperCase();
      const log: StoredLog = {
        timestamp_unix_nano: ns,
        observed_timestamp_unix_nano: ns,
        severity_number: severityNumberOf(text),
        severity_text: text,
        body: record.message,
        attributes: { 'eng.log.scope': record.scope, ...plainData(record.data) },
        trace_id: null,
        span_id: null,
        resource,
        service_name: config.service_name,
      };
      collector.addLog(log);
    } finally {
      inside = false;
    }
  };
}

/** `eng-observability` (iii: `iii-observability`): traces, logs and metrics. spec: engine-protocol §8. */
export function observabilityModule(): EngineModule<ObservabilityConfig> {
  const cleanups: Array<() => void | Promise<void>> = [];
  let context: ModuleContext<ObservabilityConfig> | undefined;
  let ingest: TelemetryIngest | undefined;

  return {
    name: 'eng-observability',
    aliases: ['iii-observability'],
    description: 'traces, logs and metrics: collection from workers, engine spans, queries',
    configSchema: ObservabilityConfig,
    mandatory: true,
    start(ctx) {
      context = ctx;
      const config = ctx.config;
      if (config.alerts?.length) ctx.log.warn('observability `alerts` are not supported by this engine; the rules are ignored');
      // iii keys accepted so an iii config.yaml starts, but with no effect here: say so rather than ignore them silently
      const ignored = [
        config.metrics_exporter === 'otlp' ? 'metrics_exporter: otlp (metrics stay in memory)' : '',
        config.format !== undefined ? 'format' : '',
        config.collapse_spans !== undefined ? 'collapse_spans' : '',
      ].filter(Boolean);
      if (ignored.length) ctx.log.warn(`observability config keys accepted for iii compatibility but not acted on: ${ignored.join(', ')}`);

      const budgets = defaultStoreBudgets();
      const spanBytes = config.memory_max_bytes ?? budgets.spans;
      const logBytes = config.logs_max_bytes ?? budgets.logs;
      const spanStore = spanMemoryEnabled(config) ? new SpanStore(config.memory_max_spans, spanBytes) : null;
      const logStore = logMemoryEnabled(config)
        ? new LogStore(config.logs_max_count, config.logs_retention_seconds * 1000, logBytes)
        : null;
      const limits: TelemetryLimits = {
        attributeValueBytes: config.limits.attribute_value_bytes,
        attributes: config.limits.attributes,
        events: config.limits.events,
        links: config.limits.links,
        recordBytes: config.limits.record_bytes,
        logBodyBytes: config.limits.log_body_bytes,
      };
      const collector = new Collector(spanStore, logStore, (what, err) => ctx.log.debug(`${what} failed: ${err.message}`), limits);
      // known credentials (configuration secrets, the engine's credential-named env, which its
      // workers inherit) are cut out of every record's strings: a worker may quote one in a payload
      const secrets = secretRegistry(ctx.services);
      secrets.set('environment', credentialEnvValues());
      const rescrub = () => {
        const scrub = compileScrubber(secrets.values());
        collector.setScrub(scrub);
        // the engine's own stderr lines as well as the records kept from them
        Logger.setScrub(scrub);
      };
      rescrub();
      cleanups.push(secrets.onChange(rescrub), () => Logger.setScrub(null));

      const persistence = config.persist
        ? openPersistence(
            join(ctx.dataDir, 'observability.db'),
            collector,
            config.memory_max_spans,
            config.logs_max_count,
            ctx.log,
            spanBytes,
            logBytes,
          )
        : undefined;
      if (persistence) cleanups.push(() => persistence.close());

      const endpoint = config.endpoint.replace(/\/+$/, '');
      const resource = resourceOf(config);
      let spanSender: OtlpSender<StoredSpan> | undefined;
      let logSender: OtlpSender<StoredLog> | undefined;
      if (config.enabled && config.exporter !== 'memory') {
        const sender = new OtlpSender(
          `${endpoint}/v1/traces`,
          (spans: StoredSpan[]) => encodeTraces(spans, resource),
          512,
          1000,
          ctx.log,
          spanBytes,
        );
        spanSender = sender;
        collector.onSpan((span, bytes) => {
          if (!span.pending) sender.push(span, bytes);
        });
        cleanups.push(() => sender.stop());
      }
      if (config.enabled && config.logs_enabled && config.logs_exporter !== 'memory') {
        const sender = new OtlpSender(
          `${endpoint}/v1/logs`,
          (logs: StoredLog[]) => encodeLogs(logs, resource),
          config.logs_batch_size,
          config.logs_flush_interval_ms,
          ctx.log,
          logBytes,
        );
        logSender = sender;
        collector.onLog((log, bytes) => sender.push(log, bytes));
        cleanups.push(() => sender.stop());
      }

      const tracer = new Tracer(config, (span) => collector.addSpan(span));
      cleanups.push(() => tracer.stop());
      // disabled, the engine opens no spans at all: HTTP, cron and state triggers then pass the
      // caller's trace context through as it came (an unsampled span of ours would replace it with
      // flags 00 and switch off the tracing of the user's own workers)
      if (config.enabled) ctx.services.set(ObservabilityService.Tracer, tracer);

      const metrics = new EngineMetrics((id) => ctx.core.functions.get(id)?.metadata?.internal === true);
      // enabled: false collects nothing, engine metrics included (metrics::list then reports zeros)
      const observers: InvocationObserver[] = [];
      if (config.enabled) {
        observers.push(metrics);
        observers.push(callSpanObserver(ctx.core, tracer, { traceBuiltins: config.trace_builtins }));
      }
      ctx.core.invoker.observers.push(...observers);
      cleanups.push(() => {
        for (const observer of observers) {
          const index = ctx.core.invoker.observers.indexOf(observer);
          if (index >= 0) ctx.core.invoker.observers.splice(index, 1);
        }
      });
      if (config.enabled) {
        cleanups.push(
          ctx.core.onWorkerEvent((event) => {
            if (event.event === 'worker_connected') metrics.spawns++;
            else if (event.event === 'worker_disconnected') metrics.deaths++;
          }),
        );
      }

      const workerMetrics =
        config.enabled && config.metrics_enabled
          ? new WorkerMetricsStore(ctx.core, config.metrics_max_count, config.metrics_retention_seconds * 1000, new RecordLimiter(limits))
          : null;
      const telemetry = new TelemetryIngest(
        collector,
        workerMetrics,
        { fallbackService: 'unknown_service', logsSamplingRatio: config.logs_sampling_ratio, consoleOutput: config.logs_console_output },
        ctx.log,
      );
      ingest = telemetry;
      // disabled: frames are still accepted (no reconnect spam from SDKs, §11 item 17), then dropped
      ctx.services.set(BusService.Telemetry, config.enabled ? telemetry.frame.bind(telemetry) : () => {});

      if (config.enabled && config.logs_enabled) cleanups.push(Logger.addSink(engineLogSink(collector, config)));

      registerObservabilityFunctions(ctx, {
        config,
        collector,
        metrics,
        workerMetrics,
        sampler: tracer.sampler,
        exporters: () => ({
          endpoint: spanSender || logSender ? endpoint : undefined,
          spans: spanSender ? { sent: spanSender.sent, dropped: spanSender.dropped, failures: spanSender.failures } : undefined,
          logs: logSender ? { sent: logSender.sent, dropped: logSender.dropped, failures: logSender.failures } : undefined,
        }),
        onClearSpans: () => persistence?.clearSpans(),
        onClearLogs: () => persistence?.clearLogs(),
      });
      const triggers = registerTelemetryTriggers(ctx, collector);
      cleanups.push(() => triggers.stop());

      const sweep = setInterval(() => {
        logStore?.sweep();
        workerMetrics?.sweep();
      }, SWEEP_MS);
      sweep.unref();
      cleanups.push(() => clearInterval(sweep));
    },
    afterStart() {
      // mounted here so the order of modules does not matter (eng-http publishes its router in start)
      if (!context || !ingest || !context.config.enabled) return;
      const router = context.services.get<HttpRouterService>('http.router');
      if (!router) {
        context.log.debug('OTLP/HTTP receiver not mounted: eng-http is not running');
        return;
      }
      cleanups.push(mountOtlpReceiver(router, ingest));
      context.log.info(`OTLP/HTTP receiver (JSON) on ${router.address?.url ?? 'the HTTP port'}/v1/traces, /v1/logs, /v1/metrics`);
    },
    async stop() {
      for (const cleanup of cleanups.splice(0).reverse()) {
        try {
          await cleanup();
        } catch (err) {
          context?.log.warn(`observability cleanup failed: ${(err as Error).message}`);
        }
      }
    },
  };
}
