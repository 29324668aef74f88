import type { StoredLog } from '@eng/protocol';
import { jsonTooDeep, tooDeepMessage } from '../../core/json-limits.ts';
import { escapeControl, type Logger } from '../../log.ts';
import type { Collector } from './collector.ts';
import { truncate } from './limits.ts';
import { type Decoded, decodeLogs, decodeMetrics, decodeTraces, type MetricPoint } from './otlp-decode.ts';
import type { WorkerMetricsStore } from './worker-metrics.ts';

// spec: engine-protocol §8.1 (`OTLP`/`MTRC`/`LOGS` frames), §2.12. Bad input is dropped with a
// log line; the socket stays open and the stores are untouched.

export type TelemetryKind = 'traces' | 'logs' | 'metrics';
export type IngestResult = { ok: true; accepted: number; rejected: number; reason?: string } | { ok: false; reason: string };

const PREFIX_KIND: Record<string, TelemetryKind> = { OTLP: 'traces', LOGS: 'logs', MTRC: 'metrics' };

export interface IngestOptions {
  /** Service name when a payload's resource has none. */
  fallbackService: string;
  logsSamplingRatio: number;
  /** Print each worker log record on stderr (`logs_console_output`). */
  consoleOutput: boolean;
}

/** At most one warning per reason and source per 5 s, with the count of the ones held back. */
class Throttle {
  private readonly last = new Map<string, { at: number; suppressed: number }>();
  constructor(private readonly log: Logger) {}
  warn(key: string, message: string): void {
    const now = Date.now();
    if (this.last.size > 1000) this.last.clear();
    const entry = this.last.get(key);
    if (entry && now - entry.at < 5000) {
      entry.suppressed++;
      return;
    }
    const suffix = entry?.suppressed ? ` (${entry.suppressed} similar dropped since)` : '';
    this.last.set(key, { at: now, suppressed: 0 });
    this.log.warn(`${message}${suffix}`);
  }
}

export class TelemetryIngest {
  private readonly throttle: Throttle;
  framesDropped = 0;
  recordsDropped = 0;

  constructor(
    private readonly collector: Collector,
    private readonly workerMetrics: WorkerMetricsStore | null,
    private readonly options: IngestOptions,
    log: Logger,
  ) {
    this.throttle = new Throttle(log);
  }

  /** The bus's telemetry sink (services `bus.telemetry`). */
  frame(prefix: string, payload: Buffer, workerId: string | null): void {
    const kind = PREFIX_KIND[prefix];
    const source = workerId ? `worker ${workerId}` : '/otel';
    if (!kind) {
      this.framesDropped++;
      this.throttle.warn(`prefix:${source}`, `dropped telemetry frame from ${source}: unknown prefix "${prefix}"`);
      return;
    }
    if (jsonTooDeep(payload)) {
      this.framesDropped++;
      this.throttle.warn(`depth:${kind}:${source}`, `dropped ${prefix} frame from ${source}: ${tooDeepMessage('the payload')}`);
      return;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(payload.toString('utf8'));
    } catch (err) {
      this.framesDropped++;
      this.throttle.warn(`json:${kind}:${source}`, `dropped ${prefix} frame from ${source}: not JSON (${(err as Error).message})`);
      return;
    }
    this.ingest(kind, parsed, workerId, source);
  }

  /** A decoded OTLP/JSON request from any transport (bus frame or OTLP/HTTP). */
  ingest(kind: TelemetryKind, payload: unknown, workerId: string | null, source: string): IngestResult {
    let decoded: Decoded<unknown>;
    try {
      if (kind === 'traces') decoded = decodeTraces(payload, this.options.fallbackService);
      else if (kind === 'logs') decoded = decodeLogs(payload, this.options.fallbackService);
      else decoded = decodeMetrics(payload, this.options.fallbackService);
    } catch (err) {
      this.framesDropped++;
      const reason = `malformed OTLP ${kind}: ${(err as Error).message}`;
      this.throttle.warn(`shape:${kind}:${source}`, `dropped ${kind} payload from ${source}: ${reason}`);
      return { ok: false, reason };
    }
    if (decoded.dropped > 0) {
      this.recordsDropped += decoded.dropped;
      this.throttle.warn(
        `records:${kind}:${source}`,
        `dropped ${decoded.dropped} ${kind} record(s) from ${source}: ${decoded.reasons.join('; ')}`,
      );
    }
    if (kind === 'traces') {
      for (const span of decoded.items as Parameters<Collector['addSpan']>[0][]) this.collector.addSpan(span);
    } else if (kind === 'logs') {
      for (const log of decoded.items as StoredLog[]) {
        if (this.options.logsSamplingRatio < 1 && Math.random() >= this.options.logsSamplingRatio) continue;
        const stored = this.collector.addLog(log);
        if (this.options.consoleOutput) printLog(stored);
      }
    } else {
      this.workerMetrics?.ingest(decoded.items as MetricPoint[], workerId);
    }
    return { ok: true, accepted: decoded.items.length, rejected: decoded.dropped, reason: decoded.reasons[0] };
  }
}

/** Longest worker log body printed on stderr (the stored record keeps up to `limits.log_body_bytes`). */
const MAX_PRINTED_BODY = 4096;

/** `logs_console_output`: worker log lines on the engine's stderr, beside the engine's own. */
function printLog(log: StoredLog): void {
  const time = new Date(Math.floor(log.timestamp_unix_nano / 1e6)).toISOString();
  const data = log.attributes['log.data'];
  let extra = '';
  if (data !== undefined && data !== null) {
    try {
      extra = ` ${JSON.stringify(data).slice(0, 2000)}`;
    } catch {
      extra = ' [unserialisable data]';
    }
  }
  // foreign text: one line per record, whatever newlines or escape sequences it carries
  const service = escapeControl(truncate(log.service_name, 200));
  const level = escapeControl(truncate(log.severity_text, 16));
  process.stderr.write(`${time} ${level.padEnd(5)} [${service}] ${escapeControl(truncate(log.body, MAX_PRINTED_BODY))}${extra}\n`);
}
