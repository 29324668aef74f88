import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, REPO_ROOT, startEngine, waitFor } from '../../../test/harness.ts';
import { RawClient } from '../../../test/raw-client.ts';
import type { SupervisedState } from '../../engine/src/supervisor/supervisor.ts';
import { ensurePackagesBuilt, PACKAGE_DIRS } from '../scripts/build.ts';

/**
 * Issue 25 item 13: @eng/sdk worked only under tsx — a worker run by plain `node` crash-looped with
 * ERR_UNKNOWN_FILE_EXTENSION ".ts". The SDK and @eng/protocol ship built JavaScript with types.
 * A user's project is a folder with its own node_modules/@eng/* (linked to this checkout, as an
 * install from a registry or a tarball would place them) and a worker.mjs.
 */
describe('@eng/sdk from plain node', () => {
  let project: string;
  let engine: EngineProcess;
  let client: RawClient;

  beforeAll(async () => {
    ensurePackagesBuilt();
    project = mkdtempSync(join(tmpdir(), 'eng-plain-node-'));
    mkdirSync(join(project, 'node_modules/@eng'), { recursive: true });
    for (const [name, dir] of [
      ['protocol', 'packages/protocol'],
      ['sdk', 'packages/sdk'],
    ])
      symlinkSync(join(REPO_ROOT, dir as string), join(project, 'node_modules/@eng', name as string), 'dir');
    writeFileSync(
      join(project, 'worker.mjs'),
      [
        "import { connect, EngError } from '@eng/sdk';",
        '',
        'const client = connect(); // $ENG_URL, set by the engine that launched it',
        "client.registerFunction('plain::hello', ({ name }) => {",
        "  if (!name) throw new EngError('bad_input', 'name is required');",
        '  return { hello: name, execArgv: process.execArgv, nodeOptions: process.env.NODE_OPTIONS ?? null };',
        '});',
        "process.on('SIGTERM', () => client.close().then(() => process.exit(0)));",
      ].join('\n'),
    );
    engine = await startEngine({
      workersYaml: [
        '  - name: plain-worker',
        `    command: ${process.execPath}`,
        `    args: ["${join(project, 'worker.mjs')}"]`,
        // nothing inherited may load tsx or change how packages resolve: a plain `node`
        '    env:',
        '      NODE_OPTIONS: ""',
      ].join('\n'),
    });
    client = await RawClient.worker(engine.busUrl);
  });
  afterAll(async () => {
    await client?.terminate();
    await engine?.stop();
  });

  it('a worker started with `node worker.mjs` that imports @eng/sdk serves its function', async () => {
    const frame = await waitFor(async () => {
      const answer = await client.call('plain::hello', { name: 'eng' });
      return answer.error ? undefined : answer;
    }, 20_000);
    expect(frame.result).toEqual({ hello: 'eng', execArgv: [], nodeOptions: '' });
    // the SDK's own errors work the same from the built code
    const refused = await client.call('plain::hello', {});
    expect(refused.error).toMatchObject({ code: 'bad_input', message: 'name is required' });
    const { workers } = (await client.result('engine::supervisor::list')) as { workers: SupervisedState[] };
    expect(workers.find((w) => w.name === 'plain-worker')).toMatchObject({ status: 'running', restarts: 0, stderrTail: [] });
  });

  it('every export a user can reach points at built JavaScript and declarations', () => {
    for (const dir of PACKAGE_DIRS) {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      const targets: string[] = [];
      const collect = (value: unknown, condition: string) => {
        if (typeof value === 'string') {
          // `development` (this repository's tests) reads the sources; ./build is the repository's build script
          if (condition !== 'development') targets.push(value);
        } else if (value && typeof value === 'object' && condition !== 'development')
          for (const [c, v] of Object.entries(value)) collect(v, c);
      };
      for (const [subpath, value] of Object.entries(pkg.exports as Record<string, unknown>))
        if (subpath !== './build') collect(value, 'default');
      expect(targets.some((t) => t.endsWith('.d.ts'))).toBe(true);
      expect(targets.filter((t) => t.endsWith('.ts') && !t.endsWith('.d.ts'))).toEqual([]);
      for (const target of targets) expect(existsSync(join(dir, target)), `${pkg.name}: ${target}`).toBe(true);
      expect(pkg.files).toContain('dist');
    }
  });

  it('type-checks a TypeScript user of the built declarations', () => {
    writeFileSync(
      join(project, 'typed.ts'),
      [
        "import { connect, type EngClient, EngError } from '@eng/sdk';",
        "const client: EngClient = connect('ws://127.0.0.1:49134', { name: 'typed' });",
        "client.registerFunction('math::add', ({ a, b }: { a: number; b: number }) => a + b);",
        "export const failure: string = new EngError('x', 'y').code;",
      ].join('\n'),
    );
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          target: 'ES2023',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: [],
        },
        files: ['typed.ts'],
      }),
    );
    const tsc = createRequire(join(REPO_ROOT, 'package.json')).resolve('typescript/bin/tsc');
    const result = spawnSync(process.execPath, [tsc, '-p', join(project, 'tsconfig.json')], { encoding: 'utf8', timeout: 120_000 });
    expect(result.stdout + result.stderr).toBe('');
    expect(result.status).toBe(0);
  }, 120_000);
});
