/**
 * The engine bundle for the tests' many engine starts: the same file `eng` runs
 * (packages/engine/scripts/bundle.ts, packages/engine/dist/cli/program.mjs), built before the first
 * engine starts and rebuilt whenever a source is newer. `ENG_TEST_ENGINE=source` runs the sources
 * through tsx instead.
 */
import { buildSync } from 'esbuild';
import { ENGINE_BUNDLE, ensureEngineBundleSync } from '../packages/engine/scripts/bundle.ts';

export { ENGINE_BUNDLE };

/** Whether the tests run the bundle (the default) or the sources through tsx. */
export const useEngineBundle = (): boolean => process.env.ENG_TEST_ENGINE !== 'source';

/** Build the bundle when it is missing or older than a source of the engine; its path. */
export function ensureEngineBundle(): string {
  return ensureEngineBundleSync(buildSync);
}
