import pkg from '../package.json' with { type: 'json' };

/** The worker version (`--version`, `--manifest`, `console::status`), compiled in so the SEA binary needs no package.json. */
export const WORKER_VERSION: string = pkg.version;
