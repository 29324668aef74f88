/**
 * The MCP conformance suite (@modelcontextprotocol/conformance 0.1.13, mcp.md §16), all 32 server
 * scenarios (`--suite all`: the active 30 plus the pending json-schema-2020-12 and
 * server-sse-polling), against POST /mcp of a real engine with eng-mcp --no-stdio. The suite's
 * "everything server" fixtures are ordinary engine functions of a worker (conformance-fixtures.ts);
 * eng-mcp knows none of their names. 0.1.13 because 0.1.14+ do not start on Node 20.
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
import { type HttpMcp, httpMcp, startMcpEngine } from './helpers.ts';

const SCENARIOS = [
  'server-initialize',
  'logging-set-level',
  'ping',
  'completion-complete',
  'tools-list',
  'tools-call-simple-text',
  'tools-call-image',
  'tools-call-audio',
  'tools-call-embedded-resource',
  'tools-call-mixed-content',
  'tools-call-with-logging',
  'tools-call-error',
  'tools-call-with-progress',
  'tools-call-sampling',
  'tools-call-elicitation',
  'json-schema-2020-12',
  'elicitation-sep1034-defaults',
  'server-sse-polling',
  'server-sse-multiple-streams',
  'elicitation-sep1330-enums',
  'resources-list',
  'resources-read-text',
  'resources-read-binary',
  'resources-templates-read',
  'resources-subscribe',
  'resources-unsubscribe',
  'prompts-list',
  'prompts-get-simple',
  'prompts-get-with-args',
  'prompts-get-embedded-resource',
  'prompts-get-with-image',
  'dns-rebinding-protection',
];

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO';
  errorMessage?: string;
}

const require = createRequire(import.meta.url);
const CONFORMANCE_CLI = join(dirname(require.resolve('@modelcontextprotocol/conformance/package.json')), 'dist/index.js');

let engine: EngineProcess;
let worker: EngClient;
let server: HttpMcp;

beforeAll(async () => {
  engine = await startMcpEngine();
  worker = await conformanceWorker(engine);
  server = await httpMcp(engine);
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await worker?.close();
  await engine?.stop();
});

/** checks.json of every scenario run, by scenario name. */
function checksByScenario(dir: string): Map<string, Check[]> {
  const out = new Map<string, Check[]>();
  for (const entry of readdirSync(dir)) {
    const scenario = SCENARIOS.find((s) => entry.startsWith(`server-${s}-`) && /^\d/.test(entry.slice(`server-${s}-`.length)));
    if (!scenario) continue;
    out.set(scenario, JSON.parse(readFileSync(join(dir, entry, 'checks.json'), 'utf8')) as Check[]);
  }
  return out;
}

it('passes all 32 server scenarios of conformance 0.1.13, with no failure and no warning', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'eng-mcp-conformance-'));
  const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn(process.execPath, [CONFORMANCE_CLI, 'server', '--url', server.url, '--suite', 'all', '-o', dir], {
      env: { ...process.env, NO_COLOR: '1' },
    });
    let text = '';
    child.stdout.on('data', (c: Buffer) => {
      text += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      text += c.toString();
    });
    child.on('exit', (exit) => resolve({ code: exit, output: text }));
  });
  expect(output).toContain(`(${SCENARIOS.length} scenarios)`);
  for (const scenario of SCENARIOS) expect(output, output).toMatch(new RegExp(`✓ ${scenario}: [1-9]\\d* passed, 0 failed`));
  expect(output, output).toMatch(/Total: \d+ passed, 0 failed/);
  expect(code, output).toBe(0);

  // the suite counts a WARNING as passed: every check must have succeeded outright
  const checks = checksByScenario(dir);
  rmSync(dir, { recursive: true, force: true });
  expect([...checks.keys()].sort()).toEqual([...SCENARIOS].sort());
  for (const [scenario, list] of checks) {
    const bad = list.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING');
    expect(bad, `${scenario}: ${JSON.stringify(bad)}`).toEqual([]);
    expect(
      list.some((c) => c.status === 'SUCCESS'),
      scenario,
    ).toBe(true);
  }
  // server-sse-polling ran its checks (a server without resumability passes it with none):
  // priming event first, a retry field, and the result after reconnecting with Last-Event-ID
  const polling = new Map((checks.get('server-sse-polling') ?? []).filter((c) => c.status !== 'INFO').map((c) => [c.id, c.status]));
  expect(Object.fromEntries(polling)).toEqual({
    'server-sse-priming-event': 'SUCCESS',
    'server-sse-retry-field': 'SUCCESS',
    'server-sse-disconnect-resume': 'SUCCESS',
  });
}, 180_000);
