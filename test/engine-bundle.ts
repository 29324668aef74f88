/**
 * The engine as one JavaScript file for the tests' many engine starts.
 *
 * `eng start` from the sources runs through tsx, whose loader costs about 1.2 s of CPU per
 * process on this 2-core machine (1.95 s to "ready" against 0.76 s for the same engine bundled).
 * The suite starts a few hundred engines, so `startEngine` runs this bundle: esbuild puts
 * packages/engine/src together (npm packages and @eng/* stay external and load from
 * node_modules, @eng/protocol and @eng/sdk from their built dist/) into
 * packages/engine/dist/cli/program.mjs, rebuilt whenever a source file is newer than it.
 *
 * The bundle sits as deep in the package as src/cli/program.ts, so the paths the engine computes
 * from its own location (the repository root for launched workers, its package.json) are the same.
 * `ENG_TEST_ENGINE=source` runs the sources through tsx instead.
 */
import { mkdirSync, readdirSync, renameSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { buildSync } from 'esbuild';
import { ensurePackagesBuilt } from '../packages/sdk/scripts/build.ts';

const ENGINE_DIR = resolve(import.meta.dirname, '../packages/engine');
const ENTRY = join(ENGINE_DIR, 'src/cli/program.ts');
export const ENGINE_BUNDLE = join(ENGINE_DIR, 'dist/cli/program.mjs');

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs);
  }
  return newest;
}

function bundleTime(): number {
  try {
    return statSync(ENGINE_BUNDLE).mtimeMs;
  } catch {
    return 0;
  }
}

/** Whether the tests run the bundle (the default) or the sources through tsx. */
export const useEngineBundle = (): boolean => process.env.ENG_TEST_ENGINE !== 'source';

/**
 * Build the bundle when it is missing or older than a source of the engine, and the @eng/protocol
 * and @eng/sdk dist/ it loads. Parallel test files may build at once: each writes its own file and
 * renames it into place, so a reader never sees half a bundle.
 */
export function ensureEngineBundle(): string {
  ensurePackagesBuilt({ log: () => undefined });
  if (bundleTime() > newestSource(join(ENGINE_DIR, 'src'))) return ENGINE_BUNDLE;
  mkdirSync(join(ENGINE_DIR, 'dist/cli'), { recursive: true });
  const temp = `${ENGINE_BUNDLE}.${process.pid}.${Date.now()}.tmp.mjs`;
  buildSync({
    entryPoints: [ENTRY],
    outfile: temp,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
  });
  renameSync(temp, ENGINE_BUNDLE);
  return ENGINE_BUNDLE;
}
