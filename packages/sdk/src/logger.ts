import type { Logger } from './types.ts';

/** Default logger: the console, prefixed, silent on debug. */
export const consoleLogger: Logger = {
  debug() {},
  info: (message, ...details) => console.info(`[eng] ${message}`, ...details),
  warn: (message, ...details) => console.warn(`[eng] ${message}`, ...details),
  error: (message, ...details) => console.error(`[eng] ${message}`, ...details),
};

/** Wrap a user logger so a throwing one can never take the client down with it. */
export function guardLogger(logger: Logger): Logger {
  const guard =
    (level: keyof Logger) =>
    (message: string, ...details: unknown[]) => {
      try {
        logger[level](message, ...details);
      } catch {
        // a logger that fails has nowhere left to report to
      }
    };
  return { debug: guard('debug'), info: guard('info'), warn: guard('warn'), error: guard('error') };
}

/** A URL safe to print: no credentials, no query (channel keys travel there). */
export function printableUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname === '/' ? '' : parsed.pathname}`;
  } catch {
    return '(invalid url)';
  }
}
