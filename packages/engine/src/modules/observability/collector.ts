import type { StoredLog, StoredSpan } from '@eng/protocol';
import type { LogStore } from './log-store.ts';
import type { SpanStore } from './span-store.ts';

export type SpanListener = (span: StoredSpan) => void;
export type LogListener = (log: StoredLog) => void;

/**
 * Where every span and log record goes, whatever its source (worker frames, OTLP/HTTP, engine
 * spans, engine log lines, `engine::log::*`): the memory stores when enabled, then each listener
 * (OTLP exporter, SQLite persistence, `log`/`trace` triggers, console output).
 */
export class Collector {
  private readonly spanListeners: SpanListener[] = [];
  private readonly logListeners: LogListener[] = [];
  spansReceived = 0;
  logsReceived = 0;

  constructor(
    readonly spans: SpanStore | null,
    readonly logs: LogStore | null,
    private readonly onListenerError: (what: string, err: Error) => void,
  ) {}

  onSpan(listener: SpanListener): void {
    this.spanListeners.push(listener);
  }
  onLog(listener: LogListener): void {
    this.logListeners.push(listener);
  }

  addSpan(span: StoredSpan): void {
    this.spansReceived++;
    this.spans?.upsert(span);
    for (const listener of this.spanListeners) {
      try {
        listener(span);
      } catch (err) {
        this.onListenerError('span listener', err as Error);
      }
    }
  }

  addLog(log: StoredLog): void {
    this.logsReceived++;
    this.logs?.add(log);
    for (const listener of this.logListeners) {
      try {
        listener(log);
      } catch (err) {
        this.onListenerError('log listener', err as Error);
      }
    }
  }
}
