/**
 * A readable form of the engine's cron expressions (6 or 7 fields, seconds first, cron module
 * README) for the common shapes; `undefined` when the expression is not one of them (the raw
 * expression and the engine's own next-run times are always shown beside it).
 */
const NICKNAMES: Record<string, string> = {
  '@yearly': 'Once a year (Jan 1, 00:00 UTC)',
  '@annually': 'Once a year (Jan 1, 00:00 UTC)',
  '@monthly': 'Once a month (1st, 00:00 UTC)',
  '@weekly': 'Once a week (Sunday 00:00 UTC)',
  '@daily': 'Every day at 00:00 UTC',
  '@midnight': 'Every day at 00:00 UTC',
  '@hourly': 'Every hour, on the hour',
};

const every = (n: number, unit: string) => (n === 1 ? `Every ${unit}` : `Every ${n} ${unit}s`);
const pad = (v: string) => v.padStart(2, '0');
const isNum = (v: string) => /^\d+$/.test(v);
const step = (v: string) => /^(?:\*|0)\/(\d+)$/.exec(v)?.[1];

export function describeCron(expression: string): string | undefined {
  const expr = expression.trim();
  if (NICKNAMES[expr]) return NICKNAMES[expr];
  const f = expr.split(/\s+/);
  if (f.length !== 6 && f.length !== 7) return undefined;
  const [sec, min, hour, dom, mon, dow] = f as [string, string, string, string, string, string];
  const anyDay = (dom === '*' || dom === '?') && mon === '*' && (dow === '*' || dow === '?') && (f[6] === undefined || f[6] === '*');
  if (!anyDay) {
    if (isNum(sec) && isNum(min) && isNum(hour) && (dom === '*' || dom === '?') && mon === '*' && /^(2-6|MON-FRI)$/i.test(dow)) {
      return `Weekdays at ${pad(hour)}:${pad(min)} UTC`;
    }
    return undefined;
  }
  if (sec === '*' && min === '*' && hour === '*') return 'Every second';
  const s = step(sec);
  if (s && min === '*' && hour === '*') return every(Number(s), 'second');
  if (isNum(sec) && min === '*' && hour === '*') return `Every minute at :${pad(sec)}s`;
  const m = step(min);
  if (isNum(sec) && m && hour === '*') return every(Number(m), 'minute');
  if (isNum(sec) && isNum(min) && hour === '*') return `Every hour at :${pad(min)}`;
  const h = step(hour);
  if (isNum(sec) && isNum(min) && h) return every(Number(h), 'hour');
  if (isNum(sec) && isNum(min) && isNum(hour)) return `Every day at ${pad(hour)}:${pad(min)} UTC`;
  return undefined;
}

/**
 * The next runs to show at `now`, from the engine's list (`eng::cron::next_runs`, RFC 3339): only
 * times still ahead, earliest first, at most `count`. The engine's answer ages while the page is
 * open; a time that has passed is never shown as "now". `short` says fewer than `count` remain, so
 * the caller asks the engine again.
 */
export function upcomingRuns(runs: readonly string[] | undefined, now: number, count: number): { times: number[]; short: boolean } {
  const times = [...new Set((runs ?? []).map((iso) => Date.parse(iso)))]
    .filter((t) => Number.isFinite(t) && t > now)
    .sort((a, b) => a - b)
    .slice(0, count);
  return { times, short: times.length < count };
}

/** "in 4s", "in 2m 5s", "in 3h 10m", "in 2d": how far ahead a future time is (a fraction of a second rounds up). */
export function timeUntil(at: number, now: number): string {
  const s = Math.max(1, Math.ceil((at - now) / 1000));
  if (s < 60) return `in ${s}s`;
  if (s < 3600) return `in ${Math.floor(s / 60)}m ${s % 60}s`;
  if (s < 86_400) return `in ${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  return `in ${Math.floor(s / 86_400)}d`;
}
