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

// C0 controls but tab, DEL, C1 controls, line/paragraph separators and bidi overrides: a foreign
// id with a newline would otherwise forge a whole log line, an ESC sequence repaint the terminal
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r' };

/**
 * Control characters of `text` written as escapes (`\n`, `\u001b`), so a log line built from
 * foreign strings (ids, names, worker log bodies) stays one line and paints nothing.
 */
export function escapeControl(text: string): string {
  CONTROL.lastIndex = 0;
  if (!CONTROL.test(text)) return text;
  return text.replace(CONTROL, (c) => NAMED[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Longest message printed on one line; the rest is cut with a count (a 1 MiB id must not become a 1 MiB line). */
export const MAX_LINE_MESSAGE = 8192;

function clampLine(text: string): string {
  return text.length > MAX_LINE_MESSAGE ? `${text.slice(0, MAX_LINE_MESSAGE)}…[${text.length - MAX_LINE_MESSAGE} more characters]` : text;
}

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
  /**
   * Known credential values cut out of every message and line (issue 24 item 12), set by the
   * observability module from the engine's secret registry; null: none known.
   */
  private static scrub: ((text: string) => string) | null = null;
  static setScrub(scrub: ((text: string) => string) | null): void {
    Logger.scrub = scrub;
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
    const scrub = Logger.scrub;
    const record: LogRecord = {
      time: Date.now(),
      level,
      scope: this.scope,
      message: scrub ? scrub(redact(message)) : redact(message),
      data,
    };
    for (const sink of Logger.sinks) {
      try {
        sink(record);
      } catch {
        // a broken sink must never break the engine
      }
    }
    if (LEVELS[level] < Logger.threshold) return;
    let line: string;
    const text = clampLine(record.message);
    if (Logger.json) {
      const fields = { time: new Date(record.time).toISOString(), level, scope: this.scope, msg: text };
      try {
        line = JSON.stringify({ ...fields, ...data });
      } catch {
        line = JSON.stringify({ ...fields, data: '[unserialisable]' });
      }
    } else {
      const extra = data && Object.keys(data).length ? ` ${safeJson(data)}` : '';
      line = `${new Date(record.time).toISOString()} ${level.toUpperCase().padEnd(5)} [${escapeControl(this.scope)}] ${escapeControl(text)}${extra}`;
    }
    // the data fields too: a secret quoted there never reaches the terminal
    process.stderr.write(`${scrub ? scrub(redact(line)) : redact(line)}\n`);
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
