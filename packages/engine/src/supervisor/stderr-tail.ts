import { redactText } from '@eng/protocol';
import { escapeControl } from '../log.ts';

/** Lines kept per worker, and characters per line: enough for a Node crash (message and stack), bounded. */
export const STDERR_TAIL_LINES = 20;
export const STDERR_LINE_CHARS = 400;

// colour and cursor sequences: a page or a JSON reader shows them as garbage
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching ESC is the point
const ANSI = /\u001b\[[0-9;?]*[A-Za-z]/g;

/**
 * The last lines a supervised worker wrote to stderr: why it failed, for `engine::supervisor::list`
 * and the Workers page (issue 25 item 12), instead of only a log file path. The lines of the latest
 * run that wrote any are kept, so a crash-looping worker keeps showing its reason while it waits for
 * the next launch. Every line is redacted before it is kept (`scrub`).
 */
export class StderrTail {
  private lines: string[] = [];
  private partial = '';
  /** The next complete line begins a new run's tail. */
  private newRun = true;

  constructor(private readonly scrub: (text: string) => string) {}

  startRun(): void {
    this.flush();
    this.newRun = true;
  }

  write(chunk: string): void {
    this.partial += chunk;
    let newline = this.partial.indexOf('\n');
    while (newline !== -1) {
      this.push(this.partial.slice(0, newline));
      this.partial = this.partial.slice(newline + 1);
      newline = this.partial.indexOf('\n');
    }
    // a line without an end (a progress bar, a binary dump) must not grow without bound
    if (this.partial.length > STDERR_LINE_CHARS) {
      this.push(this.partial);
      this.partial = '';
    }
  }

  /** The run ended: its last line may have had no newline. */
  flush(): void {
    if (this.partial) this.push(this.partial);
    this.partial = '';
  }

  snapshot(): string[] {
    return [...this.lines];
  }

  private push(raw: string): void {
    const text = raw.replace(ANSI, '').replace(/\r$/, '');
    if (!text.trim()) return;
    if (this.newRun) {
      this.lines = [];
      this.newRun = false;
    }
    const clipped = text.length > STDERR_LINE_CHARS ? `${text.slice(0, STDERR_LINE_CHARS)}…` : text;
    this.lines.push(escapeControl(this.scrub(clipped)));
    if (this.lines.length > STDERR_TAIL_LINES) this.lines.shift();
  }
}

/** Values shorter than this are not cut out: replacing every `1234` would garble the reason, not protect it. */
const MIN_SECRET_CHARS = 4;

/**
 * URL credentials (`@eng/protocol`'s redactText) and the given secret values (credential-named
 * environment variables of the worker, configuration secrets) replaced by `[REDACTED]`.
 */
export function secretScrubber(values: () => Iterable<string>): (text: string) => string {
  return (text) => {
    let out = redactText(text);
    const known = [...new Set(values())].filter((v) => v.length >= MIN_SECRET_CHARS).sort((a, b) => b.length - a.length);
    for (const value of known) if (out.includes(value)) out = out.split(value).join('[REDACTED]');
    return out;
  };
}

// a stack frame, Node's version footer, the braces and fields of an error object dump, the caret
const NOISE = /^\s*(at\s|Node\.js v\d|[{}^]|code: |\.\.\.)/;

/**
 * The line of a tail that says why the worker ended, for the engine's log line: the last one that
 * names an error, else the last one that is not part of a stack or Node's footer.
 */
export function reasonOf(lines: readonly string[]): string | undefined {
  const meaningful = lines.filter((line) => !NOISE.test(line));
  const reason = meaningful.findLast((line) => /error|fatal|panic|refused|denied|not found|cannot|failed/i.test(line)) ?? meaningful.at(-1);
  return reason && reason.length > 200 ? `${reason.slice(0, 200)}…` : reason;
}
