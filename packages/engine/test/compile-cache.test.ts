import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../../test/harness.ts';
import { compileEntry } from '../scripts/compile.mjs';

/**
 * The compiled workers and bin commands (scripts/compile.mjs) carry their npm packages: a package
 * upgraded by npm must reach the next start, even though npm dates the files it unpacks to 1985.
 */
describe('compiled entries and their npm packages', () => {
  const NPM_EPOCH = new Date('1985-10-26T08:15:00Z');

  function installPackage(root: string, version: string): void {
    const dir = join(root, 'node_modules/greeting');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'greeting', version, main: 'index.js' }));
    writeFileSync(join(dir, 'index.js'), `module.exports = { version: ${JSON.stringify(version)} };\n`);
    // as npm leaves them: the unpacked files carry a fixed old date, only the folder is new
    for (const file of ['package.json', 'index.js']) utimesSync(join(dir, file), NPM_EPOCH, NPM_EPOCH);
  }

  const run = (file: string) => spawnSync(process.execPath, [file], { encoding: 'utf8' }).stdout.trim();

  it('puts the package into the file, leaves native and optional ones as imports, and rebuilds after an upgrade', async () => {
    const root = mkdtempSync(join(tmpdir(), 'eng-compile-'));
    mkdirSync(join(root, 'node_modules'), { recursive: true });
    symlinkSync(join(REPO_ROOT, 'node_modules/esbuild'), join(root, 'node_modules/esbuild'));
    writeFileSync(join(root, 'package.json'), '{"name":"compile-probe","type":"module"}');
    mkdirSync(join(root, 'src'));
    const source = join(root, 'src/main.ts');
    writeFileSync(
      source,
      "import greeting from 'greeting';\nexport const optional = () => import('ioredis');\nconsole.log('greeting ' + greeting.version);\n",
    );
    installPackage(root, '1.0.0');

    const first = await compileEntry(source, { root });
    expect(first).toBeDefined();
    expect(run(first as string)).toBe('greeting 1.0.0');
    const text = readFileSync(first as string, 'utf8');
    // the package's code is in the file; an optional store client stays an import
    expect(text).toContain('"1.0.0"');
    expect(text).toMatch(/import\(["']ioredis["']\)/);
    const manifest = JSON.parse(readFileSync(`${first}.json`, 'utf8')) as { inputs: string[] };
    expect(manifest.inputs).toContain(join(root, 'node_modules/greeting'));
    expect(manifest.inputs.some((input) => input.endsWith('greeting/index.js'))).toBe(false);

    // unchanged: the same file, not rebuilt
    const again = await compileEntry(source, { root });
    expect(again).toBe(first);
    expect(readFileSync(again as string, 'utf8')).toBe(text);

    await new Promise((r) => setTimeout(r, 20));
    installPackage(root, '2.0.0');
    const upgraded = await compileEntry(source, { root });
    expect(run(upgraded as string)).toBe('greeting 2.0.0');
    rmSync(root, { recursive: true, force: true });
  }, 60_000);

  it('leaves a generated module out and loads the one on disk when it runs (a new one without a rebuild)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'eng-compile-'));
    mkdirSync(join(root, 'node_modules'), { recursive: true });
    symlinkSync(join(REPO_ROOT, 'node_modules/esbuild'), join(root, 'node_modules/esbuild'));
    writeFileSync(join(root, 'package.json'), '{"name":"compile-probe","type":"module"}');
    mkdirSync(join(root, 'src/generated'), { recursive: true });
    const generated = join(root, 'src/generated/ui.gen.mjs');
    writeFileSync(generated, "export const FILES = ['first build'];\n");
    const source = join(root, 'src/main.ts');
    // as the console worker: the entry (re)writes the module, then imports it
    writeFileSync(source, "const { FILES } = await import('./generated/ui.gen.mjs');\nconsole.log(FILES.join());\n");

    const file = await compileEntry(source, { root });
    expect(file).toBeDefined();
    expect(readFileSync(file as string, 'utf8')).not.toContain('first build');
    expect(run(file as string)).toBe('first build');
    writeFileSync(generated, "export const FILES = ['second build'];\n");
    expect(await compileEntry(source, { root })).toBe(file); // not rebuilt: the module is not an input
    expect(run(file as string)).toBe('second build');
    rmSync(root, { recursive: true, force: true });
  }, 60_000);
});
