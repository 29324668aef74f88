import { format } from 'node:util';
import { redactText } from '@eng/protocol';

// MCP stdio rule (spec 2025-11-25 §transports/stdio): stdout carries protocol messages only, so
// every log line goes to stderr.

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };

export interface Log {
  debug(message: string, ...details: unknown[]): void;
  info(message: string, ...details: unknown[]): void;
  warn(message: string, ...details: unknown[]): void;
  error(message: string, ...details: unknown[]): void;
}

export function stderrLog(debug: boolean, write: (line: string) => void = (line) => process.stderr.write(line)): Log {
  const min = debug ? ORDER.debug : ORDER.info;
  const emit = (level: LogLevel, message: string, details: unknown[]) => {
    if (ORDER[level] < min) return;
    const extra = details.length ? ` ${details.map((d) => (typeof d === 'string' ? d : format('%o', d))).join(' ')}` : '';
    // every line, whatever it quotes (SDK and ws errors echo URLs): never a URL credential
    write(redactText(`${new Date().toISOString()} ${level.toUpperCase().padEnd(5)} eng-mcp: ${message}${extra}\n`));
  };
  return {
    debug: (m, ...d) => emit('debug', m, d),
    info: (m, ...d) => emit('info', m, d),
    warn: (m, ...d) => emit('warn', m, d),
    error: (m, ...d) => emit('error', m, d),
  };
}
