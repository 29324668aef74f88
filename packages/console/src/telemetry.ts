import { type Span, SpanKind, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

/**
 * The console's own traces, sent to the engine as OTLP/HTTP JSON (`<engine http>/v1/traces`,
 * console spec §2.6) under `--otel-service-name`. Off with `--no-otel` / `OTEL_DISABLED`.
 */
export interface ConsoleTelemetry {
  enabled: boolean;
  endpoint?: string;
  /** Run `fn` inside a span; the span ends when the promise settles. */
  span<T>(name: string, attributes: Record<string, string | number | boolean>, fn: (span: Span | undefined) => Promise<T>): Promise<T>;
  shutdown(): Promise<void>;
}

export function disabledTelemetry(): ConsoleTelemetry {
  return { enabled: false, span: (_n, _a, fn) => fn(undefined), shutdown: async () => undefined };
}

export function startTelemetry(options: { serviceName: string; version: string; endpoint: string }): ConsoleTelemetry {
  const exporter = new OTLPTraceExporter({ url: options.endpoint, timeoutMillis: 5000 });
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': options.serviceName, 'service.version': options.version }),
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1000 })],
  });
  const tracer: Tracer = provider.getTracer('eng-console', options.version);
  return {
    enabled: true,
    endpoint: options.endpoint,
    span(name, attributes, fn) {
      return tracer.startActiveSpan(name, { kind: SpanKind.SERVER, attributes }, async (span) => {
        try {
          const result = await fn(span);
          return result;
        } catch (err) {
          span.recordException(err as Error);
          span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
          throw err;
        } finally {
          span.end();
        }
      });
    },
    async shutdown() {
      // an unreachable engine must not hold shutdown: flush with a deadline
      await Promise.race([provider.shutdown().catch(() => undefined), new Promise((r) => setTimeout(r, 2000))]);
    },
  };
}

export { trace };
