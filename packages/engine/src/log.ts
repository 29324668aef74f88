/**
 * The engine's logger: leveled lines on stderr, never a secret. Every line passes through
 * `redact`, so a URL with credentials (`ws://user:pw@host`) is printed as `ws://host`.
 * Sinks let the observability module capture engine logs as log records.
 */

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';
const LEVELS: Record<LogLevel, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50 };

export interface LogRecord {
  time: number;
  level: LogLevel;
  scope: string;
  message: string;
  data?: Record<string, unknown>;
}
export type LogSink = (record: LogRecord) => void;

const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@:]+(?::[^\s/@]*)?@/gi;
const SECRET_PARAMS = /([?&](?:key|token|access_key|password|secret|api_key)=)[^&\s"]+/gi;

/** Remove credentials from URLs and secret query parameters from any text. */
export function redact(text: string): string {
  return text.replace(URL_CREDENTIALS, '$1').replace(SECRET_PARAMS, '$1***');
}

export class Logger {
  private static sinks = new Set<LogSink>();
  private static threshold = LEVELS[(process.env.ENG_LOG_LEVEL as LogLevel) ?? 'info'] ?? LEVELS.info;
  private static json = process.env.ENG_LOG_FORMAT === 'json';

  constructor(readonly scope: string) {}

  static setLevel(level: LogLevel): void {
    Logger.threshold = LEVELS[level];
  }
  static addSink(sink: LogSink): () => void {
    Logger.sinks.add(sink);
    return () => Logger.sinks.delete(sink);
  }

  child(scope: string): Logger {
    return new Logger(`${this.scope}:${scope}`);
  }

  trace(message: string, data?: Record<string, unknown>): void {
    this.write('trace', message, data);
  }
  debug(message: string, data?: Record<string, unknown>): void {
    this.write('debug', message, data);
  }
  info(message: string, data?: Record<string, unknown>): void {
    this.write('info', message, data);
  }
  warn(message: string, data?: Record<string, unknown>): void {
    this.write('warn', message, data);
  }
  error(message: string, data?: Record<string, unknown>): void {
    this.write('error', message, data);
  }

  private write(level: LogLevel, message: string, data?: Record<string, unknown>): void {
    const record: LogRecord = { time: Date.now(), level, scope: this.scope, message: redact(message), data };
    for (const sink of Logger.sinks) {
      try {
        sink(record);
      } catch {
        // a broken sink must never break the engine
      }
    }
    if (LEVELS[level] < Logger.threshold) return;
    let line: string;
    if (Logger.json) {
      line = JSON.stringify({ time: new Date(record.time).toISOString(), level, scope: this.scope, msg: record.message, ...data });
    } else {
      const extra = data && Object.keys(data).length ? ` ${safeJson(data)}` : '';
      line = `${new Date(record.time).toISOString()} ${level.toUpperCase().padEnd(5)} [${this.scope}] ${record.message}${extra}`;
    }
    process.stderr.write(`${redact(line)}\n`);
  }
}

function safeJson(value: unknown): string {
  try {
    const text = JSON.stringify(value);
    return text.length > 2000 ? `${text.slice(0, 2000)}…` : text;
  } catch {
    return '[unserialisable]';
  }
}
