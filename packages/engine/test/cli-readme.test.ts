import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../../test/harness.ts';
import { BUILTIN_MODULES } from '../src/modules/index.ts';

/**
 * Issue 25 item 16: packages/engine/README.md says what the package is, how to run and test it and
 * where its parts are. Kept true to the code: every module, reserved namespace, command and port
 * variable of config.yaml is named there, and every path it points at exists.
 */
describe('packages/engine/README.md', () => {
  const file = join(REPO_ROOT, 'packages/engine/README.md');
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';

  it('exists and says how to run and test the engine', () => {
    expect(text).toMatch(/^# @eng\/engine/);
    expect(text).toContain('## Run');
    expect(text).toContain('## Test');
    expect(text).toContain('npx vitest run packages/engine/test/');
  });

  it('names every built-in module, every reserved namespace and every command', () => {
    for (const module of BUILTIN_MODULES) expect(text, module.name).toContain(`\`${module.name}\``);
    // the reserved ids are exact (issue 26): the README points at the list and says engine::console::* is free
    expect(text).toContain('`src/core/reserved-ids.ts`');
    expect(text).toContain('`engine::console::');
    for (const command of ['eng start', 'eng trigger', 'eng worker add', 'eng console']) expect(text, command).toContain(command);
  });

  it('names the port variables config.yaml reads and the configuration file lookup', () => {
    const config = readFileSync(join(REPO_ROOT, 'config.yaml'), 'utf8');
    const variables = [...config.matchAll(/\$\{(ENG_[A-Z_]+_PORT)(?::[^}]*)?\}/g)].map((m) => m[1] as string);
    expect(variables.length).toBeGreaterThanOrEqual(4);
    for (const variable of variables) expect(text, variable).toContain(`\`${variable}\``);
    for (const step of ['$ENG_CONFIG', './config.yaml', '~/.eng/config.yaml', '$ENG_HOME']) expect(text, step).toContain(step);
  });

  it('points only at files that exist', () => {
    const paths = [...text.matchAll(/`((?:src|test|bin)\/[\w./-]+)`|\]\(((?:src)\/[\w./-]+)\)/g)].map((m) => (m[1] ?? m[2]) as string);
    expect(paths.length).toBeGreaterThan(10);
    // paths are the package's, or the repository's (test/harness.ts)
    for (const path of paths)
      expect(existsSync(join(REPO_ROOT, 'packages/engine', path)) || existsSync(join(REPO_ROOT, path)), path).toBe(true);
  });
});
