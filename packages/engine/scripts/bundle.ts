/**
 * The engine as one JavaScript file: packages/engine/dist/cli/program.mjs.
 *
 * `eng` runs it (packages/engine/src/cli/main.ts) rather than the TypeScript sources through tsx:
 * the same code, but compiled once ahead instead of transformed at every start, and without the
 * helpers tsx adds to keep function names (a call per closure made): 0.44–0.50 s of CPU to "ready"
 * instead of 1.95 s on this 2-core machine (per HTTP request, bench/http showed no clear
 * difference). The suite starts a few hundred engines from it too (test/harness.ts).
 *
 * esbuild puts packages/engine/src together with the npm packages it imports and @eng/protocol and
 * @eng/sdk from their built dist/ (but the native, build-time and optional ones: STAY_EXTERNAL in
 * compile.mjs): loading zod, yaml, ws and the rest module by module was a third of a start's CPU
 * (0.57–0.71 s to "ready" with them as imports, 0.40–0.50 s in the file). It is rebuilt whenever a
 * source file, a dist/ of those two or the installed packages are newer than it, so an edit to the
 * engine never runs from an old build. The file
 * sits as deep in the package as src/cli/program.ts, so the paths the engine computes from its own
 * location (the repository root for launched workers, its package.json) are the same.
 * `ENG_FROM_SOURCE=1` runs the sources through tsx instead.
 */
import { existsSync, mkdirSync, readdirSync, renameSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ensurePackagesBuilt } from '../../sdk/scripts/build.ts';
import { REQUIRE_BANNER, STAY_EXTERNAL } from './compile.mjs';

export const ENGINE_DIR = resolve(import.meta.dirname, '..');
const SOURCES = join(ENGINE_DIR, 'src');
/** What else goes into the bundle: the two workspace packages' builds, and npm's record of what is installed. */
const BUNDLED_BUILDS = [join(ENGINE_DIR, '../protocol/dist'), join(ENGINE_DIR, '../sdk/dist')];
const INSTALLED = join(ENGINE_DIR, '../../node_modules/.package-lock.json');
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

function mtimeOf(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

function newestInput(): number {
  // how the bundle is built counts too (this file, compile.mjs's list of packages left out)
  let newest = Math.max(
    newestSource(SOURCES),
    mtimeOf(INSTALLED),
    mtimeOf(import.meta.filename),
    mtimeOf(join(import.meta.dirname, 'compile.mjs')),
  );
  for (const dir of BUNDLED_BUILDS) if (existsSync(dir)) newest = Math.max(newest, newestSource(dir));
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
  if (!existsSync(SOURCES) || bundleTime() > newestInput()) return ENGINE_BUNDLE;
  // esbuild is a build tool: loaded only when a build is due
  const { buildSync } = await import('esbuild');
  buildBundle(buildSync);
  return ENGINE_BUNDLE;
}

/** The same, for callers that cannot wait (test harness): esbuild handed in. */
export function ensureEngineBundleSync(buildSync: typeof import('esbuild').buildSync): string {
  ensurePackagesBuilt({ log: () => undefined });
  if (!existsSync(SOURCES) || bundleTime() > newestInput()) return ENGINE_BUNDLE;
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
    // @eng/console too: `eng console` loads it only when run
    external: [...STAY_EXTERNAL, '@eng/console'].flatMap((name) => [name, `${name}/*`]),
    banner: { js: REQUIRE_BANNER },
    logLevel: 'warning',
  });
  renameSync(temp, ENGINE_BUNDLE);
}
