import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { type BundlePaths, ensureEmbeddedBundle } from '../scripts/build-bundle.ts';
import type { EmbeddedFile } from '../src/embedded-types.ts';

// issue 7 §2 / seed 4.4 build-time switches: the UI build turned into a module, SKIP_WEB_BUILD and
// PNPM, on temporary web folders (the real packages/web is shared with other running builds).

const quiet = () => undefined;
const JS = `export const answer = ${JSON.stringify('x'.repeat(4000))};\n`;

function tempPaths(): BundlePaths {
  const root = mkdtempSync(join(tmpdir(), 'eng-cw-build-'));
  const webDir = join(root, 'web');
  mkdirSync(webDir);
  return { webDir, distDir: join(webDir, 'dist'), generatedFile: join(root, 'generated/bundle.gen.mjs') };
}

function writeDist(distDir: string): void {
  mkdirSync(join(distDir, 'assets'), { recursive: true });
  writeFileSync(
    join(distDir, 'index.html'),
    '<!doctype html><div id="root"></div><script type="module" src="./assets/app-abc123.js"></script>',
  );
  writeFileSync(join(distDir, 'assets/app-abc123.js'), JS);
  writeFileSync(join(distDir, 'assets/app-abc123.css'), 'body{color:red}');
}

/** A stand-in package manager: records how it was called, then "builds" dist. */
function fakeManager(dir: string, exitCode = 0): string {
  const script = join(dir, 'fake-pm.sh');
  writeFileSync(
    script,
    [
      '#!/bin/sh',
      'echo "$@" > called-with.txt',
      'pwd >> called-with.txt',
      `[ ${exitCode} -ne 0 ] && { echo "vite: syntax error in App.tsx" >&2; exit ${exitCode}; }`,
      'mkdir -p dist/assets',
      'echo \'<div id="root"></div>\' > dist/index.html',
      'echo "console.log(1)" > dist/assets/main-xyz.js',
      '',
    ].join('\n'),
  );
  chmodSync(script, 0o755);
  return script;
}

async function loadModule(file: string): Promise<readonly EmbeddedFile[]> {
  return (await import(`${file}?t=${Date.now()}`)).FILES;
}

describe('the embedded UI module', () => {
  it('holds every file of the build with its type, ETag and compressed forms', async () => {
    const paths = tempPaths();
    writeDist(paths.distDir);
    const result = ensureEmbeddedBundle({ paths, env: { SKIP_WEB_BUILD: '1' }, log: quiet });
    expect(result).toMatchObject({ builtWeb: false, generated: true });
    const files = await loadModule(paths.generatedFile);
    expect(files.map((f) => [f.path, f.type])).toEqual([
      ['/assets/app-abc123.css', 'text/css; charset=utf-8'],
      ['/assets/app-abc123.js', 'text/javascript; charset=utf-8'],
      ['/index.html', 'text/html; charset=utf-8'],
    ]);
    const js = files.find((f) => f.path.endsWith('.js')) as EmbeddedFile;
    expect(Buffer.from(js.body, 'base64').toString()).toBe(JS);
    expect(gunzipSync(Buffer.from(js.gzip as string, 'base64')).toString()).toBe(JS);
    expect(js.br).toBeDefined();
    expect(js.etag).toMatch(/^"[\w-]{22}"$/);
    expect(files.find((f) => f.path.endsWith('.css'))?.gzip).toBeUndefined(); // too small to be worth it
  });

  it('is regenerated only when the build is newer than the module', () => {
    const paths = tempPaths();
    writeDist(paths.distDir);
    ensureEmbeddedBundle({ paths, env: { SKIP_WEB_BUILD: '1' }, log: quiet });
    expect(ensureEmbeddedBundle({ paths, env: { SKIP_WEB_BUILD: '1' }, log: quiet }).generated).toBe(false);
    const later = new Date(Date.now() + 5000);
    utimesSync(join(paths.distDir, 'index.html'), later, later);
    expect(ensureEmbeddedBundle({ paths, env: { SKIP_WEB_BUILD: '1' }, log: quiet }).generated).toBe(true);
  });
});

describe('SKIP_WEB_BUILD', () => {
  it('fails clearly when there is no bundle at all', () => {
    const paths = tempPaths();
    expect(() => ensureEmbeddedBundle({ paths, env: { SKIP_WEB_BUILD: '1', PNPM: '/must/not/run' }, log: quiet })).toThrow(
      /SKIP_WEB_BUILD is set but there is no UI bundle to embed: neither .*bundle\.gen\.mjs nor .*index\.html exists/,
    );
  });

  it('uses an existing module as is, without building', () => {
    const paths = tempPaths();
    writeDist(paths.distDir);
    ensureEmbeddedBundle({ paths, env: { SKIP_WEB_BUILD: '1' }, log: quiet });
    const before = readFileSync(paths.generatedFile, 'utf8');
    const noDist = { ...paths, distDir: join(paths.webDir, 'gone') };
    expect(ensureEmbeddedBundle({ paths: noDist, env: { SKIP_WEB_BUILD: '1', PNPM: '/must/not/run' }, log: quiet })).toMatchObject({
      builtWeb: false,
      generated: false,
    });
    expect(readFileSync(paths.generatedFile, 'utf8')).toBe(before);
  });
});

describe('the JS build (PNPM overrides the package manager)', () => {
  it('runs `<PNPM> run build` in the web folder, then embeds its output', async () => {
    const paths = tempPaths();
    const pm = fakeManager(paths.webDir);
    const lines: string[] = [];
    const result = ensureEmbeddedBundle({ paths, env: { ...process.env, PNPM: pm }, log: (l) => lines.push(l) });
    expect(result).toMatchObject({ builtWeb: true, generated: true });
    expect(readFileSync(join(paths.webDir, 'called-with.txt'), 'utf8')).toBe(`run build\n${paths.webDir}\n`);
    expect(lines[0]).toContain(`building the console UI with \`${pm} run build\``);
    expect((await loadModule(paths.generatedFile)).map((f) => f.path)).toEqual(['/assets/main-xyz.js', '/index.html']);
    expect(existsSync(join(paths.webDir, '.build-lock'))).toBe(false);
  });

  it('runs `npm run build` by default', async () => {
    const paths = tempPaths();
    writeFileSync(
      join(paths.webDir, 'package.json'),
      JSON.stringify({ name: 'fake-web', private: true, scripts: { build: 'node build.mjs' } }),
    );
    writeFileSync(
      join(paths.webDir, 'build.mjs'),
      "import { mkdirSync, writeFileSync } from 'node:fs'; mkdirSync('dist', { recursive: true }); writeFileSync('dist/index.html', '<div id=\"root\">npm</div>');",
    );
    const env = { ...process.env };
    delete env.PNPM;
    expect(ensureEmbeddedBundle({ paths, env, log: quiet })).toMatchObject({ builtWeb: true, generated: true });
    const files = await loadModule(paths.generatedFile);
    expect(Buffer.from((files[0] as EmbeddedFile).body, 'base64').toString()).toContain('npm');
  }, 60_000);

  it('reports a missing package manager and a failing build with its output', () => {
    const paths = tempPaths();
    expect(() => ensureEmbeddedBundle({ paths, env: { ...process.env, PNPM: '/nonexistent/pnpm' }, log: quiet })).toThrow(
      'cannot run the package manager "/nonexistent/pnpm" (from PNPM): not found on PATH',
    );
    const failing = fakeManager(paths.webDir, 3);
    expect(() => ensureEmbeddedBundle({ paths, env: { ...process.env, PNPM: failing }, log: quiet })).toThrow(
      /run build" in .* failed \(exit 3\):[\s\S]*vite: syntax error in App\.tsx/,
    );
    expect(existsSync(paths.generatedFile)).toBe(false);
    expect(existsSync(join(paths.webDir, '.build-lock'))).toBe(false);
  });
});
