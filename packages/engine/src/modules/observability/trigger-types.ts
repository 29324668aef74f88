import { describeZodError, LogTriggerConfig, type StoredLog, type StoredSpan, TraceTriggerConfig } from '@eng/protocol';
import type { ModuleContext } from '../../core/module.ts';
import type { TriggerBinding } from '../../core/triggers.ts';
import type { Collector } from './collector.ts';
import { isInternalSpan } from './span-store.ts';
import { formatTraceparent, newSpanId, newTraceId } from './trace-context.ts';
import { parseStatusFilter, type StatusFilter } from './trace-query.ts';

// spec: engine-protocol §5.8 (`log`), §5.9 (`trace`).

const TRACE_DEBOUNCE_MS = 300;

/**
 * Deliveries of telemetry triggers carry an UNSAMPLED context: a handler's own spans would
 * otherwise be new traces that fire the `trace` trigger again, forever.
 */
function quietContext(): string {
  return formatTraceparent({ traceId: newTraceId(), spanId: newSpanId(), sampled: false });
}

function parseConfig<T>(
  schema: { safeParse(v: unknown): { success: true; data: T } | { success: false; error: any } },
  config: unknown,
  type: string,
): T {
  const parsed = schema.safeParse(config ?? {});
  if (!parsed.success) throw new Error(`invalid ${type} trigger config: ${describeZodError(parsed.error)}`);
  return parsed.data;
}

export function registerTelemetryTriggers(ctx: ModuleContext<unknown>, collector: Collector): { stop(): void } {
  const logBindings = new Map<string, { binding: TriggerBinding; level: string }>();
  const traceBindings = new Map<
    string,
    { binding: TriggerBinding; service?: string; status?: StatusFilter; pending: Set<string>; timer?: NodeJS.Timeout }
  >();

  const deliver = (binding: TriggerBinding, payload: unknown) => {
    void ctx.invoke(binding.functionId, payload, { traceparent: quietContext(), metadata: binding.metadata }).then((outcome) => {
      if (!outcome.ok)
        ctx.log.debug(`${binding.triggerType} trigger ${binding.id} → ${binding.functionId} failed: ${outcome.error.message}`);
    });
  };

  ctx.registerTriggerType(
    {
      id: 'log',
      description: 'Fires for every stored log record of the chosen level (exact match; `all` for every record)',
      trigger_request_format: { type: 'object', properties: { level: { enum: ['all', 'trace', 'debug', 'info', 'warn', 'error'] } } },
    },
    {
      register(binding) {
        const config = parseConfig(LogTriggerConfig, binding.config, 'log');
        logBindings.set(binding.id, { binding, level: config.level.toUpperCase() });
      },
      unregister(binding) {
        logBindings.delete(binding.id);
      },
    },
  );

  ctx.registerTriggerType(
    {
      id: 'trace',
      description: 'Debounced (300 ms) notice of traces that received spans: {trace_ids}',
      trigger_request_format: {
        type: 'object',
        properties: { service_name: { type: 'string' }, status: { enum: ['ok', 'error', 'unset', 'pending'] } },
      },
    },
    {
      register(binding) {
        const config = parseConfig(TraceTriggerConfig, binding.config, 'trace');
        let status: StatusFilter | undefined;
        try {
          status = parseStatusFilter(config.status);
        } catch (err) {
          throw new Error(`invalid trace trigger config: ${(err as Error).message}`);
        }
        traceBindings.set(binding.id, { binding, service: config.service_name?.toLowerCase() || undefined, status, pending: new Set() });
      },
      unregister(binding) {
        const entry = traceBindings.get(binding.id);
        if (entry?.timer) clearTimeout(entry.timer);
        traceBindings.delete(binding.id);
      },
    },
  );

  collector.onLog((log: StoredLog) => {
    if (logBindings.size === 0) return;
    for (const { binding, level } of logBindings.values()) {
      // spec §5.8: exact match, despite being documented as a minimum
      if (level === 'ALL' || log.severity_text === level) deliver(binding, log);
    }
  });

  collector.onSpan((span: StoredSpan) => {
    if (traceBindings.size === 0 || isInternalSpan(span)) return;
    for (const entry of traceBindings.values()) {
      if (entry.service && !span.service_name.toLowerCase().includes(entry.service)) continue;
      if (entry.status) {
        const matches =
          entry.status === 'pending'
            ? span.pending === true
            : entry.status === 'ok'
              ? !span.pending && span.status !== 'error'
              : span.status === entry.status;
        if (!matches) continue;
      }
      entry.pending.add(span.trace_id);
      entry.timer ??= setTimeout(() => {
        entry.timer = undefined;
        const traceIds = [...entry.pending];
        entry.pending.clear();
        if (traceBindings.get(entry.binding.id) === entry) deliver(entry.binding, { trace_ids: traceIds });
      }, TRACE_DEBOUNCE_MS);
    }
  });

  return {
    stop() {
      for (const entry of traceBindings.values()) if (entry.timer) clearTimeout(entry.timer);
    },
  };
}
