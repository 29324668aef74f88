import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { inject } from 'postject';
import { WORKER_VERSION } from '../src/version.ts';
import { ensureEmbeddedBundle, PACKAGE_DIR } from './build-bundle.ts';

/**
 * `npm run build:sea`: the console worker as one executable (Node 20 single executable
 * application, deps.md "Single executable"): esbuild bundles src/sea-main.ts with the embedded UI
 * into one CommonJS file, Node turns it into a SEA blob, postject injects the blob into a copy of
 * the node binary. The result needs neither tsx nor node_modules nor the UI files.
 */
export const SEA_DIR = join(PACKAGE_DIR, 'dist/sea');
export const SEA_BINARY = join(SEA_DIR, process.platform === 'win32' ? 'eng-console-worker.exe' : 'eng-console-worker');
const SENTINEL_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

export async function buildSea(log: (line: string) => void = (line) => process.stdout.write(`${line}\n`)): Promise<string> {
  const started = Date.now();
  ensureEmbeddedBundle({ log });
  mkdirSync(SEA_DIR, { recursive: true });
  const bundle = join(SEA_DIR, 'console-worker.cjs');
  await build({
    entryPoints: [join(PACKAGE_DIR, 'src/sea-main.ts')],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    outfile: bundle,
    logLevel: 'warning',
    legalComments: 'none',
    // ws's optional native helpers cannot be inside a SEA; tell ws not to look for them
    external: ['bufferutil', 'utf-8-validate'],
    define: { 'process.env.WS_NO_BUFFER_UTIL': '"1"', 'process.env.WS_NO_UTF_8_VALIDATE': '"1"' },
  });
  log(`bundled ${bundle} (${(statSync(bundle).size / 1024 / 1024).toFixed(1)} MiB)`);

  const blob = join(SEA_DIR, 'console-worker.blob');
  const seaConfig = join(SEA_DIR, 'sea-config.json');
  writeFileSync(seaConfig, JSON.stringify({ main: bundle, output: blob, disableExperimentalSEAWarning: true }, null, 2));
  const prep = spawnSync(process.execPath, ['--experimental-sea-config', seaConfig], { encoding: 'utf8' });
  if (prep.status !== 0) throw new Error(`node --experimental-sea-config failed:\n${prep.stdout}\n${prep.stderr}`);

  const tmp = `${SEA_BINARY}.tmp`;
  rmSync(tmp, { force: true });
  copyFileSync(process.execPath, tmp);
  chmodSync(tmp, 0o755);
  // postject prints harmless "Can't find string offset for section name" warnings (deps.md)
  const warn = console.warn;
  console.warn = () => undefined;
  try {
    await inject(tmp, 'NODE_SEA_BLOB', readFileSync(blob), { sentinelFuse: SENTINEL_FUSE });
  } finally {
    console.warn = warn;
  }
  rmSync(SEA_BINARY, { force: true });
  copyFileSync(tmp, SEA_BINARY);
  chmodSync(SEA_BINARY, 0o755);
  rmSync(tmp, { force: true });

  const check = spawnSync(SEA_BINARY, ['--version'], { encoding: 'utf8' });
  if (check.status !== 0 || check.stdout.trim() !== WORKER_VERSION) {
    throw new Error(`the built executable does not run: exit ${check.status}\n${check.stdout}\n${check.stderr}`);
  }
  log(
    `single executable ${SEA_BINARY} (${(statSync(SEA_BINARY).size / 1024 / 1024).toFixed(0)} MiB) in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  return SEA_BINARY;
}

/** True when the executable exists and is newer than everything it is built from. */
export function seaIsFresh(newestSourceMs: number): boolean {
  return existsSync(SEA_BINARY) && statSync(SEA_BINARY).mtimeMs > newestSourceMs;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  buildSea().catch((err) => {
    process.stderr.write(`build-sea: ${(err as Error).message}\n`);
    process.exit(1);
  });
}
