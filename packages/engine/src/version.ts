import { existsSync, readFileSync } from 'node:fs';

/**
 * The engine's version, from its package.json: one level up from src/version.ts, two from the
 * test bundle (dist/cli/program.mjs, test/engine-bundle.ts).
 */
const manifest = ['../package.json', '../../package.json'].map((rel) => new URL(rel, import.meta.url)).find((url) => existsSync(url));
export const ENGINE_VERSION: string = manifest ? (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version : '0.0.0';
