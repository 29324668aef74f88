import { Cron } from 'croner';

// spec: engine-protocol §5.3 — iii parses with the Rust `cron` crate: 6 or 7 fields, seconds first
// (5-field crontab lines are refused), day-of-week 1–7 with 1 = Sunday, `?` allowed in the day
// fields, @yearly/@monthly/@weekly/@daily/@hourly, evaluated in UTC. croner does the date
// arithmetic; this file makes it accept exactly that dialect.

const NICKNAMES: Record<string, string> = {
  '@yearly': '0 0 0 1 1 *',
  '@annually': '0 0 0 1 1 *',
  '@monthly': '0 0 0 1 * *',
  '@weekly': '0 0 0 * * 1',
  '@daily': '0 0 0 * * *',
  '@midnight': '0 0 0 * * *',
  '@hourly': '0 0 * * * *',
};

export class CronExpressionError extends Error {}

/** A parsed expression: next fire times in UTC. */
export class CronSchedule {
  private readonly cron: Cron;

  private constructor(
    readonly expression: string,
    pattern: string,
  ) {
    // Quartz weekday numbering (1 = Sunday) and AND of day-of-month/day-of-week, as the cron crate
    this.cron = new Cron(pattern, { paused: true, timezone: 'UTC', mode: '6-or-7-parts', alternativeWeekdays: true, domAndDow: true });
  }

  /** Parse or throw CronExpressionError with a message that quotes the expression. */
  static parse(expression: unknown): CronSchedule {
    if (typeof expression !== 'string' || expression.trim() === '') {
      throw new CronExpressionError('expression is required for cron triggers (for example "0 */5 * * * *")');
    }
    const text = expression.trim();
    const fail = (reason: string): never => {
      throw new CronExpressionError(`invalid cron expression "${expression}": ${reason}`);
    };
    let pattern = text;
    if (text.startsWith('@')) {
      pattern = NICKNAMES[text.toLowerCase()] ?? fail(`unknown shorthand; use one of ${Object.keys(NICKNAMES).join(', ')}`);
    }
    const fields = pattern.split(/\s+/);
    if (fields.length !== 6 && fields.length !== 7) {
      fail(`expected 6 or 7 fields (sec min hour day-of-month month day-of-week [year]), got ${fields.length}`);
    }
    // `?` means "no specific value" (croner would read it as "the current time")
    const normalised = fields.map((f) => (f === '?' ? '*' : f));
    checkDayOfWeek(normalised[5] as string, fail);
    try {
      const schedule = new CronSchedule(expression, normalised.join(' '));
      if (!schedule.next(new Date())) fail('it never fires');
      return schedule;
    } catch (err) {
      if (err instanceof CronExpressionError) throw err;
      return fail((err as Error).message.replace(/^CronPattern: /, ''));
    }
  }

  /** The first fire time strictly after `after`, or null when there is none. */
  next(after: Date): Date | null {
    return this.cron.nextRun(after);
  }

  nextRuns(count: number, after: Date = new Date()): Date[] {
    return this.cron.nextRuns(count, after);
  }
}

/** Day-of-week numbers must be 1–7 (croner would wrap 0 and 8 silently). */
function checkDayOfWeek(field: string, fail: (reason: string) => never): void {
  const withoutSteps = field.replace(/[/#]\d+/g, '');
  for (const match of withoutSteps.matchAll(/\d+/g)) {
    const value = Number(match[0]);
    if (value < 1 || value > 7) fail(`day-of-week ${value} is out of range (1–7, 1 = Sunday)`);
  }
}

/** RFC 3339 in UTC with a `+00:00` offset, as chrono prints it (milliseconds only when non-zero). */
export function rfc3339(date: Date): string {
  const iso = date.toISOString();
  return `${date.getUTCMilliseconds() === 0 ? iso.slice(0, 19) : iso.slice(0, 23)}+00:00`;
}
