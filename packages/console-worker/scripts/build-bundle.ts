import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { TYPES } from '@eng/console/static-assets';
import { bundleState, DIST_DIR, WEB_DIR } from '@eng/web/build';
import type { EmbeddedFile } from '../src/embedded-types.ts';

/**
 * Build step of the console worker (issue 7 §2, console-worker spec §1.9): run the Vite build of
 * @eng/web when its output is missing or older than its sources, then turn packages/web/dist
 * into src/generated/bundle.gen.mjs, which the server imports — it never reads the UI from disk.
 *
 * - `SKIP_WEB_BUILD=1`: no JS build; an existing bundle is used as is, none at all is an error.
 * - `PNPM=<path>`: the package manager that runs `run build` in packages/web (default `npm`).
 */
export const PACKAGE_DIR = resolve(import.meta.dirname, '..');
export const GENERATED_FILE = join(PACKAGE_DIR, 'src/generated/bundle.gen.mjs');

/** Where the UI is built and where the module goes (tests point these at temporary folders). */
export interface BundlePaths {
  webDir: string;
  distDir: string;
  generatedFile: string;
}

export const DEFAULT_PATHS: BundlePaths = { webDir: WEB_DIR, distDir: DIST_DIR, generatedFile: GENERATED_FILE };
const COMPRESSIBLE = /^(text\/|application\/json|image\/svg\+xml)/;

export interface EnsureBundleOptions {
  /** Rebuild the UI and regenerate the module even when both look fresh. */
  force?: boolean;
  env?: NodeJS.ProcessEnv;
  paths?: BundlePaths;
  log?: (line: string) => void;
}

export interface EnsureBundleResult {
  file: string;
  builtWeb: boolean;
  generated: boolean;
}

function envFlag(value: string | undefined): boolean {
  return value !== undefined && /^(1|true|yes|on)$/i.test(value.trim());
}

function mtime(path: string): number {
  return existsSync(path) ? statSync(path).mtimeMs : 0;
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** One UI build at a time; the lock directory is the one @eng/web's ensureWebBuild uses. */
function withBuildLock<T>(webDir: string, fn: () => T): T {
  const lock = join(webDir, '.build-lock');
  const deadline = Date.now() + 180_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      try {
        if (Date.now() - statSync(lock).mtimeMs > 180_000) rmSync(lock, { recursive: true, force: true }); // a dead builder's lock
      } catch {
        // the lock went away meanwhile
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for another UI build (lock ${lock})`);
      sleep(250);
    }
  }
  try {
    return fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** `<PNPM or npm> run build` in packages/web. */
function buildWeb(paths: BundlePaths, env: NodeJS.ProcessEnv, log: (line: string) => void, reason: string): void {
  const manager = env.PNPM?.trim() || 'npm';
  const index = join(paths.distDir, 'index.html');
  withBuildLock(paths.webDir, () => {
    // another process may have built it while we waited for the lock
    if (reason !== 'forced' && !webIsStale(paths)) return;
    log(`building the console UI with \`${manager} run build\` in ${paths.webDir} (${reason}) …`);
    const started = Date.now();
    const result = spawnSync(manager, ['run', 'build'], {
      cwd: paths.webDir,
      encoding: 'utf8',
      env: { ...env, NODE_ENV: 'production' },
      maxBuffer: 64 * 1024 * 1024,
    });
    if (result.error) {
      const code = (result.error as NodeJS.ErrnoException).code;
      throw new Error(
        code === 'ENOENT'
          ? `cannot run the package manager "${manager}"${env.PNPM ? ' (from PNPM)' : ''}: not found on PATH`
          : `cannot run "${manager} run build": ${result.error.message}`,
      );
    }
    if (result.status !== 0) {
      throw new Error(`"${manager} run build" in ${paths.webDir} failed (exit ${result.status}):\n${result.stdout}\n${result.stderr}`);
    }
    if (!existsSync(index)) throw new Error(`"${manager} run build" succeeded but ${index} is missing`);
    log(`console UI built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  });
}

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...walk(full));
    else if (entry.isFile()) out.push(full);
  }
  return out.sort();
}

function contentType(path: string): string {
  const dot = path.lastIndexOf('.');
  const ext = dot >= 0 ? path.slice(dot).toLowerCase() : '';
  return TYPES[ext] ?? (ext === '.webp' ? 'image/webp' : ext === '.wasm' ? 'application/wasm' : 'application/octet-stream');
}

/** Read packages/web/dist into the module text. */
export function renderModule(distDir: string = DIST_DIR): { text: string; files: number; bytes: number } {
  const files: EmbeddedFile[] = [];
  let bytes = 0;
  for (const full of walk(distDir)) {
    const path = `/${relative(distDir, full).split(sep).join('/')}`;
    const body = readFileSync(full);
    bytes += body.length;
    const type = contentType(path);
    const file: EmbeddedFile = {
      path,
      type,
      etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
      body: body.toString('base64'),
    };
    if (COMPRESSIBLE.test(type) && body.length > 512) {
      const gzip = gzipSync(body, { level: 9 });
      const br = brotliCompressSync(body, {
        params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length },
      });
      // keep an encoding only when it saves something worth the bytes in the module
      if (gzip.length < body.length * 0.9) file.gzip = gzip.toString('base64');
      if (br.length < body.length * 0.9) file.br = br.toString('base64');
    }
    files.push(file);
  }
  const source = createHash('sha256')
    .update(files.map((f) => `${f.path}:${f.etag}`).join('\n'))
    .digest('hex')
    .slice(0, 16);
  const text = [
    '// Generated by packages/console-worker/scripts/build-bundle.ts from packages/web/dist. Do not edit;',
    '// rebuild with `npm run build:web` (or `npm run build -w @eng/console-worker`). Plain JavaScript',
    '// (types in bundle.gen.d.mts): a compiled console worker loads it as it is, at run time.',
    '',
    `export const BUNDLE_SOURCE = ${JSON.stringify(source)};`,
    '',
    'export const FILES = [',
    ...files.map((f) => `  ${JSON.stringify(f)},`),
    '];',
    '',
  ].join('\n');
  return { text, files: files.length, bytes };
}

/** Read dist under the build lock (no Vite run empties it meanwhile); retry if an unlocked build raced us. */
function renderStable(paths: BundlePaths): ReturnType<typeof renderModule> {
  for (let attempt = 1; ; attempt++) {
    try {
      return withBuildLock(paths.webDir, () => renderModule(paths.distDir));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 10) throw err;
      sleep(1000);
    }
  }
}

function generate(paths: BundlePaths, log: (line: string) => void): void {
  const { text, files, bytes } = renderStable(paths);
  const target = paths.generatedFile;
  mkdirSync(dirname(target), { recursive: true });
  const tmp = `${target}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, target); // atomic: a concurrent start never imports half a module
  log(`embedded ${files} UI files (${(bytes / 1024).toFixed(0)} KiB) into ${relative(process.cwd(), target) || target}`);
}

/** The UI sources changed since the last Vite build (@eng/web's own check), or there is no build. */
function webIsStale(paths: BundlePaths): boolean {
  if (paths.webDir === WEB_DIR && paths.distDir === DIST_DIR) return bundleState().stale;
  return !existsSync(join(paths.distDir, 'index.html'));
}

/** Make sure src/generated/bundle.gen.mjs exists and matches the UI sources. */
export function ensureEmbeddedBundle(options: EnsureBundleOptions = {}): EnsureBundleResult {
  const env = options.env ?? process.env;
  const paths = options.paths ?? DEFAULT_PATHS;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const index = join(paths.distDir, 'index.html');
  const result: EnsureBundleResult = { file: paths.generatedFile, builtWeb: false, generated: false };
  const haveModule = existsSync(paths.generatedFile);
  const moduleIsOld = () => options.force || !haveModule || mtime(index) > mtime(paths.generatedFile);

  if (envFlag(env.SKIP_WEB_BUILD)) {
    if (!existsSync(index)) {
      if (haveModule) return result;
      throw new Error(
        `SKIP_WEB_BUILD is set but there is no UI bundle to embed: neither ${paths.generatedFile} nor ${index} exists. ` +
          'Unset SKIP_WEB_BUILD to build it, or run `npm run build:web` first.',
      );
    }
    if (moduleIsOld()) {
      generate(paths, log);
      result.generated = true;
    }
    return result;
  }

  if (options.force || webIsStale(paths)) {
    buildWeb(paths, env, log, options.force ? 'forced' : existsSync(index) ? 'sources changed' : 'no bundle yet');
    result.builtWeb = true;
  }
  if (moduleIsOld()) {
    generate(paths, log);
    result.generated = true;
  }
  return result;
}

// `node --import tsx scripts/build-bundle.ts [--force]`
if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  try {
    ensureEmbeddedBundle({ force: process.argv.includes('--force'), log: (line) => process.stdout.write(`${line}\n`) });
  } catch (err) {
    process.stderr.write(`build-bundle: ${(err as Error).message}\n`);
    process.exit(1);
  }
}
