/**
 * The official Python MCP SDK client (mcp 2.3.0, `mcp.Client`) against eng-mcp over stdio and
 * Streamable HTTP, in its default `auto` mode (probes server/discover: 2026-07-28 here) and in
 * `legacy` mode (2025-11-25 initialize): tools, progress, logging, sampling, elicitation, roots,
 * resources, templates, prompts and completion (test/python/sdk_client.py). The package is
 * installed once with pip into a cache directory (or found through $ENG_PYMCP, a directory holding
 * the `mcp` package and its dependencies); the test is skipped, saying why, when neither works.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { EngClient } from '@eng/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineProcess } from '../../../test/harness.ts';
import { conformanceWorker } from './conformance-fixtures.ts';
import { conformanceWorker2026 } from './conformance-fixtures-2026.ts';
import { type HttpMcp, httpMcp, MCP_BIN, startMcpEngine } from './helpers.ts';

const CACHE = resolve(import.meta.dirname, '../../../node_modules/.cache/eng-pymcp');
const SCRIPT = join(import.meta.dirname, 'python/sdk_client.py');

/** A directory with `mcp` 2.3.0 importable, or why there is none. */
function pythonPath(): string | { skip: string } {
  const given = process.env.ENG_PYMCP;
  if (given && existsSync(join(given, 'mcp'))) return given;
  if (existsSync(join(CACHE, 'mcp'))) return CACHE;
  try {
    mkdirSync(CACHE, { recursive: true });
    execFileSync('python3', ['-m', 'pip', 'install', '--quiet', '--retries', '0', '--timeout', '10', '--target', CACHE, 'mcp==2.3.0'], {
      stdio: 'ignore',
      timeout: 300_000,
    });
    return CACHE;
  } catch (err) {
    return { skip: `cannot install the Python MCP SDK (pip install mcp==2.3.0): ${(err as Error).message.split('\n')[0]}; set ENG_PYMCP` };
  }
}

const found = pythonPath();
let engine: EngineProcess;
let workers: EngClient[] = [];
let http: HttpMcp;

beforeAll(async () => {
  if (typeof found !== 'string') return;
  engine = await startMcpEngine();
  workers = [await conformanceWorker(engine), await conformanceWorker2026(engine)];
  http = await httpMcp(engine);
}, 120_000);
afterAll(async () => {
  await http?.stop();
  for (const worker of workers) await worker.close();
  await engine?.stop();
});

function runClient(transport: 'stdio' | 'http', mode: string): Promise<Record<string, unknown>> {
  const target = transport === 'http' ? [http.url] : [process.execPath, MCP_BIN, '--engine-url', engine.busUrl];
  return new Promise((done, fail) => {
    execFile(
      'python3',
      [SCRIPT, transport, mode, ...target],
      { env: { ...process.env, PYTHONPATH: found as string }, timeout: 60_000 },
      (err, stdout, stderr) => {
        if (err) fail(new Error(`${err.message}\n${stderr.slice(-3000)}`));
        else done(JSON.parse(stdout.trim().split('\n').at(-1) as string));
      },
    );
  });
}

describe.skipIf(typeof found !== 'string')(`Python SDK client ${typeof found === 'string' ? '' : `(skipped: ${found.skip})`}`, () => {
  for (const transport of ['stdio', 'http'] as const) {
    for (const [mode, version] of [
      ['auto', '2026-07-28'],
      ['legacy', '2025-11-25'],
    ] as const) {
      it.concurrent(`${transport}, ${mode}: every capability`, async () => {
        const out = await runClient(transport, mode);
        expect(out.version).toBe(version);
        expect(out.tools).toEqual(expect.arrayContaining(['test_simple_text', 'test_sampling']));
        expect(out.simple).toBe('This is a simple text response for testing.');
        expect(out.progress).toEqual([0, 50, 100]);
        expect(out.logs).toEqual(['Tool execution started', 'Tool processing data', 'Tool execution completed']);
        expect(out.sampling).toBe('LLM response: echo: hello');
        expect(out.elicitation).toContain('ada@example.com');
        expect(out.roots).toBe('roots: file:///work');
        expect(out.resources).toEqual(expect.arrayContaining(['eng://functions', 'test://static-text']));
        expect(out.read).toContain('static');
        expect(out.templates).toContain('test://template/{id}/data');
        expect(out.prompts).toEqual(expect.arrayContaining(['register-function', 'test_prompt_with_arguments']));
        expect(out.prompt).toContain('a');
        expect(out.completion).toEqual(['node']);
      }, 90_000);
    }
  }
});
