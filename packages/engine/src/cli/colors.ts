import { createColors } from 'picocolors';

/**
 * Colours only where a person reads them: a terminal, unless NO_COLOR is set (FORCE_COLOR forces
 * them on). picocolors alone also colours whenever `CI` is set, which puts escape codes into
 * piped output and into files a script parses.
 */
function enabled(stream: NodeJS.WriteStream): boolean {
  if ('NO_COLOR' in process.env) return false;
  const force = process.env.FORCE_COLOR;
  if (force !== undefined) return force !== '0' && force !== 'false';
  return stream.isTTY === true && process.env.TERM !== 'dumb';
}

/** Colours for what is written to stdout. */
export const out = createColors(enabled(process.stdout));
/** Colours for what is written to stderr. */
export const err = createColors(enabled(process.stderr));
