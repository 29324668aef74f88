import { readFileSync } from 'node:fs';

/** The engine's version, from its package.json. */
export const ENGINE_VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string })
  .version;
