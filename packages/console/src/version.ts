import { readFileSync } from 'node:fs';

/** The @eng/console package version, shown by `--version` and `/_console/config`. */
export const CONSOLE_VERSION: string = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;
