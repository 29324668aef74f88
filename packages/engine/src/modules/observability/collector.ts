import type { StoredLog, StoredSpan } from '@eng/protocol';
import { DEFAULT_LIMITS, RecordLimiter, type TelemetryLimits } from './limits.ts';
import type { LogStore } from './log-store.ts';
import type { Scrub } from './scrub.ts';
import type { SpanStore } from './span-store.ts';

/** `bytes`: the record's estimated cost (limits.ts), for listeners that hold records in memory. */
export type SpanListener = (span: StoredSpan, bytes: number) => void;
export type LogListener = (log: StoredLog, bytes: number) => void;

/**
 * Where every span and log record goes, whatever its source (worker frames, OTLP/HTTP, engine
 * spans, engine log lines, `engine::log::*`): the memory stores when enabled, then each listener
 * (OTLP exporter, SQLite persistence, `log`/`trace` triggers, console output). Each record is
 * first held to the limits (attribute sizes and counts, limits.ts), so no source can store more,
 * and known credential values are cut out of its strings (scrub.ts), so no source can store them.
 */
export class Collector {
  private readonly spanListeners: SpanListener[] = [];
  private readonly logListeners: LogListener[] = [];
  spansReceived = 0;
  logsReceived = 0;
  private readonly limiter: RecordLimiter;

  constructor(
    readonly spans: SpanStore | null,
    readonly logs: LogStore | null,
    private readonly onListenerError: (what: string, err: Error) => void,
    limits: TelemetryLimits = DEFAULT_LIMITS,
  ) {
    this.limiter = new RecordLimiter(limits);
  }

  /** Credential values to cut out of every string of every record from now on (null: none). */
  setScrub(scrub: Scrub | null): void {
    this.limiter.scrub = scrub;
  }

  onSpan(listener: SpanListener): void {
    this.spanListeners.push(listener);
  }
  onLog(listener: LogListener): void {
    this.logListeners.push(listener);
  }

  addSpan(received: StoredSpan): void {
    this.spansReceived++;
    const span = this.limiter.span(received);
    const bytes = this.limiter.bytes;
    this.spans?.upsert(span, bytes);
    for (const listener of this.spanListeners) {
      try {
        listener(span, bytes);
      } catch (err) {
        this.onListenerError('span listener', err as Error);
      }
    }
  }

  /** Returns the record as stored (within the limits). */
  addLog(received: StoredLog): StoredLog {
    this.logsReceived++;
    const log = this.limiter.log(received);
    const bytes = this.limiter.bytes;
    this.logs?.add(log, bytes);
    for (const listener of this.logListeners) {
      try {
        listener(log, bytes);
      } catch (err) {
        this.onListenerError('log listener', err as Error);
      }
    }
    return log;
  }

  /** Records read back from disk (persistence.ts): held to the limits and stored, not announced again. */
  restoreSpan(span: StoredSpan): void {
    const limited = this.limiter.span(span);
    this.spans?.upsert(limited, this.limiter.bytes);
  }
  restoreLog(log: StoredLog): void {
    const limited = this.limiter.log(log);
    this.logs?.add(limited, this.limiter.bytes);
  }
}
