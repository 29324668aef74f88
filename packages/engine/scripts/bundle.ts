/**
 * The engine as one JavaScript file: packages/engine/dist/cli/program.mjs.
 *
 * `eng` runs it (packages/engine/src/cli/main.ts) rather than the TypeScript sources through tsx:
 * the same code, but compiled once ahead instead of transformed at every start, and without the
 * helpers tsx adds to keep function names (a call per closure made): 0.76 s of CPU to "ready"
 * instead of 1.95 s on this 2-core machine (per HTTP request, bench/http showed no clear difference). The suite starts a few hundred engines from it too (test/harness.ts).
 *
 * esbuild puts packages/engine/src together (npm packages and @eng/* stay external and load from
 * node_modules, @eng/protocol and @eng/sdk from their built dist/). It is rebuilt whenever a
 * source file is newer than it, so an edit to the engine never runs from an old build. The file
 * sits as deep in the package as src/cli/program.ts, so the paths the engine computes from its own
 * location (the repository root for launched workers, its package.json) are the same.
 * `ENG_FROM_SOURCE=1` runs the sources through tsx instead.
 */
import { existsSync, mkdirSync, readdirSync, renameSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ensurePackagesBuilt } from '../../sdk/scripts/build.ts';

export const ENGINE_DIR = resolve(import.meta.dirname, '..');
const SOURCES = join(ENGINE_DIR, 'src');
const ENTRY = join(SOURCES, 'cli/program.ts');
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

/**
 * Build the bundle when it is missing or older than a source of the engine (and the @eng/protocol
 * and @eng/sdk dist/ it loads). Several processes may build at once: each writes its own file and
 * renames it into place, so a reader never sees half a bundle. An installed copy without sources
 * uses the bundle it ships.
 */
export async function ensureEngineBundle(): Promise<string> {
  ensurePackagesBuilt({ log: () => undefined });
  if (!existsSync(SOURCES) || bundleTime() > newestSource(SOURCES)) return ENGINE_BUNDLE;
  // esbuild is a build tool: loaded only when a build is due
  const { buildSync } = await import('esbuild');
  buildBundle(buildSync);
  return ENGINE_BUNDLE;
}

/** The same, for callers that cannot wait (test harness): esbuild handed in. */
export function ensureEngineBundleSync(buildSync: typeof import('esbuild').buildSync): string {
  ensurePackagesBuilt({ log: () => undefined });
  if (!existsSync(SOURCES) || bundleTime() > newestSource(SOURCES)) return ENGINE_BUNDLE;
  buildBundle(buildSync);
  return ENGINE_BUNDLE;
}

function buildBundle(buildSync: typeof import('esbuild').buildSync): void {
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
}
