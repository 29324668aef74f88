import type { StoredLog, StoredSpan } from '@eng/protocol';
import type { Logger } from '../../log.ts';

// spec: engine-protocol §7.2 `exporter: otlp|both`, `logs_exporter`. We export OTLP/HTTP with JSON
// encoding (iii uses gRPC) in batches from a bounded queue: the engine never waits on a collector.

const KINDS: Record<string, number> = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 };
const MAX_QUEUE = 10_000;
/** One request carries at most about this much (estimated): large records go in smaller batches. */
const MAX_BATCH_BYTES = 4 * 1024 * 1024;
const REQUEST_TIMEOUT_MS = 10_000;
const WARN_EVERY_MS = 5 * 60_000;

const attr = (pairs: [string, string][]) => pairs.map(([key, value]) => ({ key, value: { stringValue: value } }));

function jsonValue(value: unknown): unknown {
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  if (typeof value === 'number') return Number.isInteger(value) ? { intValue: value } : { doubleValue: value };
  return { stringValue: JSON.stringify(value) };
}

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = groups.get(k);
    if (list) list.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

/** The engine's own service and its resource attributes (`service.version`, `service.namespace`). */
export interface EngineResource {
  service: string;
  attributes: Record<string, string>;
}

function resourceAttributes(service: string, engine?: EngineResource) {
  const attributes = engine && service === engine.service ? engine.attributes : { 'service.name': service };
  return Object.entries(attributes).map(([key, value]) => ({ key, value: { stringValue: value } }));
}

/** StoredSpans as an ExportTraceServiceRequest (one resource per service, one scope per scope name). */
export function encodeTraces(spans: StoredSpan[], engine?: EngineResource): unknown {
  return {
    resourceSpans: [...groupBy(spans, (s) => s.service_name)].map(([service, list]) => ({
      resource: { attributes: resourceAttributes(service, engine) },
      scopeSpans: [...groupBy(list, (s) => s.instrumentation_scope_name ?? '')].map(([scope, scoped]) => ({
        scope: { name: scope, version: scoped[0]?.instrumentation_scope_version },
        spans: scoped.map((s) => ({
          traceId: s.trace_id,
          spanId: s.span_id,
          parentSpanId: s.parent_span_id ?? undefined,
          traceState: s.trace_state,
          name: s.name,
          kind: KINDS[s.kind ?? 'internal'] ?? 1,
          startTimeUnixNano: String(s.start_time_unix_nano),
          endTimeUnixNano: String(s.end_time_unix_nano),
          attributes: attr(s.attributes),
          events: s.events.map((e) => ({ name: e.name, timeUnixNano: String(e.timestamp_unix_nano), attributes: attr(e.attributes) })),
          links: s.links.map((l) => ({
            traceId: l.trace_id,
            spanId: l.span_id,
            traceState: l.trace_state ?? undefined,
            attributes: attr(l.attributes),
          })),
          status: { code: s.status === 'error' ? 2 : s.status === 'ok' ? 1 : 0, message: s.status_description },
        })),
      })),
    })),
  };
}

export function encodeLogs(logs: StoredLog[], engine?: EngineResource): unknown {
  return {
    resourceLogs: [...groupBy(logs, (l) => l.service_name)].map(([service, list]) => ({
      resource: { attributes: resourceAttributes(service, engine) },
      scopeLogs: [
        {
          scope: { name: list[0]?.instrumentation_scope_name ?? 'eng' },
          logRecords: list.map((l) => ({
            timeUnixNano: String(l.timestamp_unix_nano),
            observedTimeUnixNano: String(l.observed_timestamp_unix_nano),
            severityNumber: l.severity_number,
            severityText: l.severity_text,
            body: { stringValue: l.body },
            attributes: Object.entries(l.attributes).map(([key, value]) => ({ key, value: jsonValue(value) })),
            traceId: l.trace_id ?? undefined,
            spanId: l.span_id ?? undefined,
          })),
        },
      ],
    })),
  };
}

/** A batching OTLP/HTTP JSON sender for one signal (`/v1/traces` or `/v1/logs`). */
export class OtlpSender<T> {
  private queue: T[] = [];
  /** Estimated bytes of each queued item (limits.ts), so large records are bounded by size too. */
  private sizes: number[] = [];
  private queuedBytes = 0;
  private inFlight = false;
  private timer?: NodeJS.Timeout;
  dropped = 0;
  sent = 0;
  /** Failed requests (each loses one batch). */
  failures = 0;
  private lastWarnAt = 0;
  private failing = false;

  constructor(
    private readonly url: string,
    private readonly encode: (items: T[]) => unknown,
    private readonly batchSize: number,
    intervalMs: number,
    private readonly log: Logger,
    private readonly maxQueueBytes = Number.POSITIVE_INFINITY,
  ) {
    this.timer = setInterval(() => void this.flush(), intervalMs);
    this.timer.unref();
  }

  push(item: T, bytes = 0): void {
    while (this.queue.length > 0 && (this.queue.length >= MAX_QUEUE || this.queuedBytes + bytes > this.maxQueueBytes)) {
      this.queue.shift();
      this.queuedBytes -= this.sizes.shift() ?? 0;
      this.dropped++;
    }
    this.queue.push(item);
    this.sizes.push(bytes);
    this.queuedBytes += bytes;
    if (this.queue.length >= this.batchSize || this.queuedBytes >= MAX_BATCH_BYTES) void this.flush();
  }

  async flush(timeoutMs = REQUEST_TIMEOUT_MS): Promise<void> {
    if (this.inFlight || this.queue.length === 0) return;
    this.inFlight = true;
    // a batch ends at batchSize records or once it holds MAX_BATCH_BYTES (always at least one)
    let take = 0;
    let bytes = 0;
    while (take < this.queue.length && take < this.batchSize && (take === 0 || bytes < MAX_BATCH_BYTES)) bytes += this.sizes[take++] ?? 0;
    const batch = this.queue.splice(0, take);
    this.sizes.splice(0, take);
    this.queuedBytes -= bytes;
    try {
      const res = await fetch(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(this.encode(batch)),
        signal: AbortSignal.timeout(timeoutMs),
      });
      await res.arrayBuffer().catch(() => undefined);
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      this.sent += batch.length;
      if (this.failing) {
        this.failing = false;
        this.log.info(`OTLP export to ${this.url} works again (${this.dropped} records dropped while it failed)`);
      }
    } catch (err) {
      // a collector that is down loses this batch; it never backs up into the engine. One warning
      // when exports start failing, then at most one per 5 minutes while they keep failing.
      this.dropped += batch.length;
      this.failures++;
      if (!this.failing || Date.now() - this.lastWarnAt > WARN_EVERY_MS) {
        this.failing = true;
        this.lastWarnAt = Date.now();
        const cause = (err as Error & { cause?: Error }).cause?.message;
        this.log.warn(
          `OTLP export to ${this.url} failed: ${(err as Error).message}${cause ? ` (${cause})` : ''}; ${this.dropped} records dropped so far`,
        );
      }
    } finally {
      this.inFlight = false;
    }
    if (this.queue.length >= this.batchSize || this.queuedBytes >= MAX_BATCH_BYTES) void this.flush(timeoutMs);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.flush(2000);
  }
}
