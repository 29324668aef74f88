/**
 * Credential values cut out of telemetry text (issue 24 item 12): every occurrence of a known
 * secret (secret-registry.ts) inside any string of a span or log record becomes `[REDACTED]`
 * before the record is kept, exported, persisted or handed to a trigger. The limiter calls it on
 * each string it already visits (limits.ts), so it costs nothing when no secret is known and one
 * precompiled regex test per string otherwise.
 */

export const REDACTED_VALUE = '[REDACTED]';

export type Scrub = (text: string) => string;

const SPECIAL = /[.*+?^${}()|[\]\\/]/g;

/** The scrubber for `values`, or null when there is nothing to scrub. */
export function compileScrubber(values: readonly string[]): Scrub | null {
  const all = new Set<string>();
  for (const value of values) {
    if (!value) continue;
    all.add(value);
    // as quoted inside JSON text (an SDK's payload preview): a `"` or `\` in the value is escaped there
    const quoted = JSON.stringify(value).slice(1, -1);
    if (quoted !== value) all.add(quoted);
  }
  if (all.size === 0) return null;
  // longest first, so a value that contains another one is replaced whole
  const source = [...all]
    .sort((a, b) => b.length - a.length)
    .map((v) => v.replace(SPECIAL, '\\$&'))
    .join('|');
  const probe = new RegExp(source);
  const replace = new RegExp(source, 'g');
  let shortest = Number.POSITIVE_INFINITY;
  for (const value of all) shortest = Math.min(shortest, value.length);
  return (text) => (text.length < shortest || !probe.test(text) ? text : text.replace(replace, REDACTED_VALUE));
}
