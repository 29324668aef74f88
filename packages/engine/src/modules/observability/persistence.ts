import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { StoredLog, StoredSpan } from '@eng/protocol';
import Database from 'better-sqlite3';
import type { Logger } from '../../log.ts';
import type { Collector } from './collector.ts';

// `persist: true`: traces and logs survive a restart in `<dataDir>/observability.db`. Writes are
// batched (one transaction per flush) and the tables are trimmed to the memory store's sizes and
// byte budgets, so the file stays bounded like the stores it backs.

const FLUSH_MS = 500;

export class TelemetryPersistence {
  private readonly db: Database.Database;
  private spans: StoredSpan[] = [];
  private logs: StoredLog[] = [];
  private readonly timer: NodeJS.Timeout;
  private writesSinceTrim = 0;
  private bytesSinceTrim = 0;

  constructor(
    file: string,
    private readonly maxSpans: number,
    private readonly maxLogs: number,
    private readonly log: Logger,
    private readonly maxSpanBytes = Number.POSITIVE_INFINITY,
    private readonly maxLogBytes = Number.POSITIVE_INFINITY,
  ) {
    mkdirSync(dirname(file), { recursive: true });
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS spans (trace_id TEXT NOT NULL, span_id TEXT NOT NULL, body TEXT NOT NULL, UNIQUE (trace_id, span_id));
      CREATE TABLE IF NOT EXISTS logs (id INTEGER PRIMARY KEY, body TEXT NOT NULL);
    `);
    this.timer = setInterval(() => this.flush(), FLUSH_MS);
    this.timer.unref();
  }

  /** Stored spans and logs, oldest first, at most the store sizes. */
  load(): { spans: StoredSpan[]; logs: StoredLog[] } {
    const spans = this.db
      .prepare('SELECT body FROM spans ORDER BY rowid DESC LIMIT ?')
      .all(this.maxSpans)
      .map((row) => JSON.parse((row as { body: string }).body) as StoredSpan)
      .reverse();
    const logs = this.db
      .prepare('SELECT body FROM logs ORDER BY id DESC LIMIT ?')
      .all(this.maxLogs)
      .map((row) => JSON.parse((row as { body: string }).body) as StoredLog)
      .reverse();
    return { spans, logs };
  }

  /** Finished spans only: a pending snapshot is rewritten when its span ends. */
  addSpan(span: StoredSpan): void {
    if (!span.pending) this.spans.push(span);
  }
  addLog(log: StoredLog): void {
    this.logs.push(log);
  }

  flush(): void {
    if (this.spans.length === 0 && this.logs.length === 0) return;
    const spans = this.spans;
    const logs = this.logs;
    this.spans = [];
    this.logs = [];
    try {
      const insertSpan = this.db.prepare('INSERT OR REPLACE INTO spans (trace_id, span_id, body) VALUES (?, ?, ?)');
      const insertLog = this.db.prepare('INSERT INTO logs (body) VALUES (?)');
      let bytes = 0;
      this.db.transaction(() => {
        for (const span of spans) {
          const body = JSON.stringify(span);
          bytes += body.length;
          insertSpan.run(span.trace_id, span.span_id, body);
        }
        for (const log of logs) {
          const body = JSON.stringify(log);
          bytes += body.length;
          insertLog.run(body);
        }
      })();
      this.writesSinceTrim += spans.length + logs.length;
      this.bytesSinceTrim += bytes;
      // large records trim sooner: the file never holds much more than the budgets
      if (this.writesSinceTrim > 5000 || this.bytesSinceTrim > Math.min(this.maxSpanBytes, this.maxLogBytes) / 4) this.trim();
    } catch (err) {
      this.log.warn(`could not persist telemetry: ${(err as Error).message}`);
    }
  }

  private trim(): void {
    this.writesSinceTrim = 0;
    this.bytesSinceTrim = 0;
    this.db.prepare('DELETE FROM spans WHERE rowid <= (SELECT MAX(rowid) FROM spans) - ?').run(this.maxSpans);
    this.db.prepare('DELETE FROM logs WHERE id <= (SELECT MAX(id) FROM logs) - ?').run(this.maxLogs);
    // then by bytes, newest kept: drop every row older than the one where the running total passes the budget
    if (Number.isFinite(this.maxSpanBytes)) {
      this.db
        .prepare(
          'DELETE FROM spans WHERE rowid <= (SELECT MAX(rowid) FROM (SELECT rowid, SUM(length(body)) OVER (ORDER BY rowid DESC) AS total FROM spans) WHERE total > ?)',
        )
        .run(this.maxSpanBytes);
    }
    if (Number.isFinite(this.maxLogBytes)) {
      this.db
        .prepare(
          'DELETE FROM logs WHERE id <= (SELECT MAX(id) FROM (SELECT id, SUM(length(body)) OVER (ORDER BY id DESC) AS total FROM logs) WHERE total > ?)',
        )
        .run(this.maxLogBytes);
    }
  }

  clearSpans(): void {
    this.spans = [];
    this.db.exec('DELETE FROM spans');
  }
  clearLogs(): void {
    this.logs = [];
    this.db.exec('DELETE FROM logs');
  }

  close(): void {
    clearInterval(this.timer);
    this.flush();
    try {
      this.trim();
    } catch {
      // trimming is housekeeping; the data is already committed
    }
    this.db.close();
  }
}

/**
 * Open `<dataDir>/observability.db`, load it into the collector's stores and keep it up to date.
 * An unusable file (corrupt, unwritable) is reported and the engine runs without persistence.
 */
export function openPersistence(
  file: string,
  collector: Collector,
  maxSpans: number,
  maxLogs: number,
  log: Logger,
  maxSpanBytes = Number.POSITIVE_INFINITY,
  maxLogBytes = Number.POSITIVE_INFINITY,
): TelemetryPersistence | undefined {
  const { spans: spanStore, logs: logStore } = collector;
  if (!spanStore && !logStore) return undefined;
  let db: TelemetryPersistence;
  let saved: { spans: StoredSpan[]; logs: StoredLog[] };
  try {
    db = new TelemetryPersistence(file, maxSpans, maxLogs, log, maxSpanBytes, maxLogBytes);
    saved = db.load();
  } catch (err) {
    log.error(`${file} is unusable (${(err as Error).message}): traces and logs will not survive a restart`);
    return undefined;
  }
  // straight into the stores: restored records are not new (no triggers, no re-export)
  for (const span of saved.spans) collector.restoreSpan(span);
  for (const record of saved.logs) collector.restoreLog(record);
  if (spanStore) collector.onSpan((span) => db.addSpan(span));
  if (logStore) collector.onLog((record) => db.addLog(record));
  log.info(`restored ${saved.spans.length} spans and ${saved.logs.length} logs from ${file}`);
  return db;
}
