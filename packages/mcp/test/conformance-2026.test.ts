/**
 * The MCP conformance suite 0.2.0-alpha.12 (`--suite all`, 65 server scenarios: the 2025-11-25
 * ones, the 2026-07-28 ones on the stateless wire, and the tasks and skills extensions) against
 * POST /mcp of a real engine with eng-mcp --no-stdio. Fixtures are ordinary engine functions
 * (conformance-fixtures.ts and conformance-fixtures-2026.ts). The CLI needs Node 22 (node22.ts).
 * `CONFORMANCE_SCENARIO=<name>` runs one scenario (development).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { EngClient } from '@eng/sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { EngineProcess } from '../../../test/harness.ts';
import { conformanceWorker } from './conformance-fixtures.ts';
import { conformanceWorker2026 } from './conformance-fixtures-2026.ts';
import { type HttpMcp, httpMcp, startMcpEngine } from './helpers.ts';
import { node22 } from './node22.ts';

interface Check {
  details?: unknown;
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
}

const require = createRequire(import.meta.url);
const CLI = join(dirname(require.resolve('@modelcontextprotocol/conformance-next/package.json')), 'dist/index.js');
const ONLY = process.env.CONFORMANCE_SCENARIO;

let engine: EngineProcess;
let workers: EngClient[] = [];
let server: HttpMcp;
let node: string;

beforeAll(async () => {
  node = node22();
  // task records live in the engine's state store
  engine = await startMcpEngine('  - name: eng-state\n    config:\n      adapter: { name: kv, config: { store_method: in_memory } }\n');
  workers = [await conformanceWorker(engine), await conformanceWorker2026(engine)];
  server = await httpMcp(engine);
}, 300_000);
afterAll(async () => {
  await server?.stop();
  for (const worker of workers) await worker.close();
  await engine?.stop();
});

function run(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(node, [CLI, 'server', '--url', server.url, ...args], { env: { ...process.env, NO_COLOR: '1' } });
    let text = '';
    child.stdout.on('data', (c: Buffer) => {
      text += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      text += c.toString();
    });
    child.on('exit', (exit) => resolve({ code: exit, output: text }));
  });
}

/** checks.json of every scenario run, by directory name (server-<scenario>-<timestamp>). */
function checksOf(dir: string): Map<string, Check[]> {
  const out = new Map<string, Check[]>();
  for (const entry of readdirSync(dir)) {
    const scenario = entry.replace(/^server-/, '').replace(/-\d{4}-\d\d-\d\dT.*$/, '');
    out.set(scenario, JSON.parse(readFileSync(join(dir, entry, 'checks.json'), 'utf8')) as Check[]);
  }
  return out;
}

it('passes the server scenarios of conformance 0.2.0-alpha.12 (--suite all)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'eng-mcp-conformance-2026-'));
  const { code, output } = await run([...(ONLY ? ['--scenario', ONLY] : ['--suite', 'all']), '-o', dir]);
  const checks = checksOf(dir);
  rmSync(dir, { recursive: true, force: true });
  const failed: string[] = [];
  for (const [scenario, list] of checks) {
    const bad = list.filter((c) => c.status === 'FAILURE');
    if (bad.length)
      failed.push(
        `${scenario}: ${bad.map((c) => `${c.id} ${c.errorMessage ?? ''} ${JSON.stringify(c.details ?? {}).slice(0, 600)}`).join(' | ')}`,
      );
  }
  // what the suite could not exercise or only warned about, for the record
  const soft = [...checks].flatMap(([scenario, list]) =>
    list
      .filter((c) => c.status === 'WARNING' || c.status === 'SKIPPED')
      .map((c) => `${scenario}: ${c.status} ${c.id} ${c.errorMessage ?? ''}`),
  );
  if (soft.length) console.log(`not exercised or warned:\n${soft.join('\n')}`);
  // the skills scenarios run for real on the fixtures' skills (mcp README §Skills): none skipped or warned
  const skills = [...checks].filter(([scenario]) => scenario.startsWith('sep-2640-skills-'));
  if (!ONLY || ONLY.startsWith('sep-2640-skills-')) expect(skills.length).toBeGreaterThan(0);
  for (const [scenario, list] of skills) {
    expect(list.filter((c) => c.status === 'SUCCESS').length, scenario).toBeGreaterThan(0);
    expect(
      list.filter((c) => c.status !== 'SUCCESS').map((c) => `${scenario}: ${c.status} ${c.id} ${c.errorMessage ?? ''}`),
      scenario,
    ).toEqual([]);
  }
  if (!ONLY) expect(output).toContain('(65 scenarios)');
  expect(failed, output.slice(-4000)).toEqual([]);
  expect(code, output.slice(-4000)).toBe(0);
}, 600_000);
