import type { Tone } from '../ui/badge.tsx';

/** Colour of each severity (seed 2.7 levels; FATAL from OTel reads as an error). */
export function severityTone(text: string): Tone {
  switch (text.toUpperCase()) {
    case 'ERROR':
    case 'FATAL':
      return 'bad';
    case 'WARN':
    case 'WARNING':
      return 'warn';
    case 'INFO':
      return 'info';
    case 'DEBUG':
      return 'violet';
    default:
      return 'neutral';
  }
}

/** `Nov 22 14:02:03.123` (the date only when not today), from OTel nanoseconds. */
export function formatLogTime(unixNano: number, now = new Date()): { date: string; time: string } {
  const d = new Date(Math.floor(unixNano / 1e6));
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  const time = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
  const sameDay = d.toDateString() === now.toDateString();
  return { date: sameDay ? '' : d.toLocaleDateString(undefined, { month: 'short', day: 'numeric' }), time };
}

/** A stable identity for a log line (records carry no id): time, service and the start of the body. */
export function logIdentity(log: { timestamp_unix_nano: number; service_name: string; body: string; span_id: string | null }): string {
  return `${log.timestamp_unix_nano}|${log.service_name}|${log.span_id ?? ''}|${log.body.slice(0, 64)}`;
}
