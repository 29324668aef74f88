import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Builds @eng/protocol and @eng/sdk to dist/ (ESM JavaScript, declarations, source maps) with
 * `tsc -b`, so a worker run by plain `node worker.mjs` can import them (issue 25 item 13). Node
 * resolves both packages to dist/; the `development` export condition (Vitest) still reads src/.
 *
 * `ensurePackagesBuilt()` rebuilds only when a source is newer than the last build: `eng` calls it
 * before it loads anything, so an edit to either package is never run from an old dist/. An
 * installed copy (no src/ or no tsconfig.build.json) is left alone.
 */
export const SDK_DIR = resolve(import.meta.dirname, '..');
/** In build order: the SDK imports the protocol package. */
export const PACKAGE_DIRS = [resolve(SDK_DIR, '../protocol'), SDK_DIR];

const STAMP = 'dist/.built';
const INPUTS = ['src', 'tsconfig.build.json', 'package.json'];

function newestMtime(path: string): number {
  if (!existsSync(path)) return 0;
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

/** Whether this is a checkout that can build, and whether dist/ is missing or older than a source. */
export function buildState(): { buildable: boolean; stale: boolean } {
  const buildable = PACKAGE_DIRS.every((dir) => existsSync(join(dir, 'tsconfig.build.json')) && existsSync(join(dir, 'src')));
  const stale = PACKAGE_DIRS.some((dir) => {
    const stamp = join(dir, STAMP);
    if (!existsSync(stamp)) return true;
    return Math.max(...INPUTS.map((input) => newestMtime(join(dir, input)))) > statSync(stamp).mtimeMs;
  });
  return { buildable, stale };
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** One build at a time across processes (parallel test files each start an engine). */
function withLock<T>(fn: () => T): T {
  const lock = join(SDK_DIR, '.build-lock');
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      try {
        if (Date.now() - statSync(lock).mtimeMs > 120_000) rmSync(lock, { recursive: true, force: true });
      } catch {
        // released meanwhile
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for another build of @eng/sdk (lock ${lock})`);
      sleep(100);
    }
  }
  try {
    return fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/**
 * Build both packages. `--noCheck`: emit only (about 3 s instead of 10); `npm run typecheck`
 * checks the sources.
 */
export interface BuildOptions {
  /** Build even when dist/ looks fresh. */
  force?: boolean;
  log?: (line: string) => void;
}

export function buildPackages(options: BuildOptions = {}): void {
  const { force = false, log = (line) => process.stderr.write(`${line}\n`) } = options;
  const tsc = createRequire(join(SDK_DIR, 'package.json')).resolve('typescript/bin/tsc');
  const started = Date.now();
  const args = [tsc, '-b', join(SDK_DIR, 'tsconfig.build.json'), '--noCheck', ...(force ? ['--force'] : [])];
  const result = spawnSync(process.execPath, args, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`tsc -b failed (exit ${result.status}):\n${result.stdout}\n${result.stderr}`);
  for (const dir of PACKAGE_DIRS) writeFileSync(join(dir, STAMP), `${new Date().toISOString()}\n`);
  log(`built @eng/protocol and @eng/sdk to dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

/** Rebuild when a source changed since the last build; true when it built. */
export function ensurePackagesBuilt(options: BuildOptions = {}): boolean {
  const { force = false, log } = options;
  const state = buildState();
  if (!state.buildable || (!force && !state.stale)) return false;
  return withLock(() => {
    // another process may have built while this one waited
    if (!force && !buildState().stale) return false;
    buildPackages({ force, log });
    return true;
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    ensurePackagesBuilt({ force: process.argv.includes('--force') });
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(1);
  }
}
