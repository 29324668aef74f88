import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';

/**
 * Build the UI with Vite when the bundle is missing or older than its sources. Used by the
 * Playwright global setup and by eng-console at start, so `npm test` and `eng-console` work
 * from a fresh checkout without a separate build step. A lock directory keeps two processes
 * from building at once.
 */
export const WEB_DIR = resolve(import.meta.dirname, '..');
export const DIST_DIR = join(WEB_DIR, 'dist');

const SOURCES = ['src', 'index.html', 'vite.config.ts', 'package.json'];

function newestMtime(path: string): number {
  if (!existsSync(path)) return 0;
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

export function bundleState(): { exists: boolean; stale: boolean } {
  const index = join(DIST_DIR, 'index.html');
  if (!existsSync(index)) return { exists: false, stale: true };
  const built = statSync(index).mtimeMs;
  const sources = Math.max(...SOURCES.map((s) => newestMtime(join(WEB_DIR, s))));
  return { exists: true, stale: sources > built };
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

export interface EnsureOptions {
  /** Build even when the bundle looks fresh. */
  force?: boolean;
  /** Only build when there is no bundle at all (do not rebuild a stale one). */
  onlyIfMissing?: boolean;
  log?: (line: string) => void;
}

/** Returns true when it built. Throws with Vite's output when the build fails. */
export function ensureWebBuild(options: EnsureOptions = {}): boolean {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const state = bundleState();
  if (!options.force && state.exists && (!state.stale || options.onlyIfMissing)) return false;
  const lock = join(WEB_DIR, '.build-lock');
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      // another process builds: wait for it, then use its result
      try {
        if (Date.now() - statSync(lock).mtimeMs > 120_000) rmSync(lock, { recursive: true, force: true });
      } catch {
        // lock vanished meanwhile
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for another UI build (lock ${lock})`);
      sleep(250);
      const again = bundleState();
      if (!options.force && again.exists && !again.stale) return false;
    }
  }
  try {
    log(`building the console UI (${state.exists ? 'sources changed' : 'no bundle yet'}) …`);
    const require = createRequire(join(WEB_DIR, 'package.json'));
    const viteBin = join(dirname(require.resolve('vite/package.json')), 'bin', 'vite.js');
    const started = Date.now();
    const result = spawnSync(process.execPath, [viteBin, 'build', '--logLevel', 'warn'], {
      cwd: WEB_DIR,
      encoding: 'utf8',
      env: { ...process.env, NODE_ENV: 'production' },
    });
    if (result.status !== 0) throw new Error(`vite build failed (exit ${result.status}):\n${result.stdout}\n${result.stderr}`);
    log(`console UI built in ${((Date.now() - started) / 1000).toFixed(1)} s → ${DIST_DIR}`);
    return true;
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

// `node --import tsx packages/web/scripts/build.ts` builds when needed; `--force` always.
if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  ensureWebBuild({ force: process.argv.includes('--force') });
}
