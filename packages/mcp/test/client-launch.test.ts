/**
 * eng-mcp launched the way an MCP client launches it (README "Use it from an MCP client"): the
 * `command`/`args` of the README's config snippet with the absolute path of this checkout, from an
 * unrelated working directory, with only the environment an MCP client passes on; and `--debug`,
 * whose lines go to stderr while stdout carries nothing but protocol messages (MCP transports/stdio).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type EngClient } from '@eng/sdk';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, freePort, REPO_ROOT, startEngine, waitFor } from '../../../test/harness.ts';
import { demoWorker, MCP_BIN, startMcpEngine, textOf } from './helpers.ts';

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

/** The `mcpServers` snippet of packages/mcp/README.md, parsed. */
function readmeSnippet(): { command: string; args: string[] } {
  const readme = readFileSync(join(REPO_ROOT, 'packages/mcp/README.md'), 'utf8');
  const block = /```json\n(\{\s*"mcpServers"[\s\S]*?)```/.exec(readme)?.[1];
  expect(block, 'README has a json block with mcpServers').toBeDefined();
  const server = JSON.parse(block as string).mcpServers.eng as { command: string; args: string[] };
  expect(server.args[0]).toBe('/path/to/eng/packages/mcp/bin/eng-mcp.js');
  expect(server.args.slice(1)).toEqual(['--engine-url', 'ws://127.0.0.1:49134']);
  return server;
}

describe('launched like an MCP client (README snippet)', () => {
  let engine: EngineProcess;
  let worker: EngClient;
  beforeAll(async () => {
    engine = await startMcpEngine();
    worker = await demoWorker(engine);
  });
  afterAll(async () => {
    await worker?.close();
    await engine?.stop();
  });

  it('runs from an unrelated directory with a client-provided environment: lists tools, calls one, reads a resource', async () => {
    const snippet = readmeSnippet();
    const cwd = realpathSync(mkdtempSync(join(tmpdir(), 'mcp-client-cwd-')));
    const args = snippet.args.map((arg) => arg.replace('/path/to/eng', REPO_ROOT).replace('ws://127.0.0.1:49134', engine.busUrl));
    expect(args[0]).toBe(MCP_BIN);
    // no `env`: the SDK passes only its default set (HOME, PATH, SHELL, TERM, USER, LOGNAME), as clients do
    const transport = new StdioClientTransport({ command: snippet.command, args, cwd, stderr: 'pipe' });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const client = new Client({ name: 'readme-client', version: '1.0.0' });
    try {
      await client.connect(transport);
      expect(client.getServerVersion()).toMatchObject({ name: 'eng-mcp' });
      const tools = await waitFor(async () => {
        const listed = (await client.listTools()).tools.map((t) => t.name);
        return listed.includes('demo__echo') ? listed : undefined;
      }, 10_000);
      expect(tools).toContain('eng_worker_register'); // built-ins are shown on stdio
      expect(tools).not.toContain('demo__hidden');
      const result = await client.callTool({ name: 'demo__echo', arguments: { message: 'from a client' } });
      expect(result.isError).toBeFalsy();
      expect(JSON.parse(textOf(result))).toMatchObject({ echoed: { message: 'from a client' } });
      const { contents } = await client.readResource({ uri: 'eng://context' });
      expect(JSON.parse((contents[0] as { text: string }).text)).toMatchObject({ transport: 'stdio', sdk: '@eng/sdk' });
      // the process really runs where the client put it
      const pid = transport.pid as number;
      expect(realpathSync(`/proc/${pid}/cwd`)).toBe(cwd);
    } finally {
      await client.close();
    }
    expect(stderr).toContain(`connected to the eng engine at ${engine.busUrl}`);
  });
});

// ── --debug ─────────────────────────────────────────────────────────────────────────────────

interface RawMcp {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  send(message: object): void;
  response(id: number, timeoutMs?: number): Promise<any>;
  end(): Promise<number | null>;
}

/** eng-mcp over stdio with every byte of stdout and stderr kept. */
function rawMcp(args: string[]): RawMcp {
  const child = spawn(process.execPath, [MCP_BIN, ...args], {
    cwd: mkdtempSync(join(tmpdir(), 'mcp-debug-cwd-')),
    env: { ...process.env, ENG_WORKER_CONFIG: '' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const messages = () =>
    stdout
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line));
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    send: (message) => child.stdin?.write(`${JSON.stringify(message)}\n`),
    response: (id, timeoutMs = 30_000) => waitFor(() => messages().find((m) => m.id === id), timeoutMs),
    async end() {
      child.stdin?.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

const LOG_LINE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (DEBUG|INFO |WARN |ERROR) eng-mcp: /;

/** Every stdout line is one JSON-RPC 2.0 message, and stderr holds log lines only. */
function expectCleanStreams(mcp: RawMcp): void {
  const out = mcp.stdout();
  expect(out.endsWith('\n')).toBe(true);
  for (const line of out.split('\n').slice(0, -1)) {
    const message = JSON.parse(line);
    expect(message.jsonrpc, line).toBe('2.0');
    expect('id' in message || 'method' in message, line).toBe(true);
  }
  for (const line of mcp
    .stderr()
    .split('\n')
    .filter((l) => l !== ''))
    expect(line).toMatch(LOG_LINE);
}

/**
 * A session that produces debug lines: eng-mcp starts before the engine (the SDK's reconnect
 * attempts are debug lines), the engine comes up on that port, a tool is listed and called, and a
 * worker calls eng-mcp's log function with bad input (the SDK logs the handler's failure at debug).
 */
async function session(extraArgs: string[]): Promise<RawMcp> {
  const port = await freePort();
  const url = `ws://127.0.0.1:${port}`;
  const mcp = rawMcp(['--engine-url', url, ...extraArgs]);
  let engine: EngineProcess | undefined;
  let worker: EngClient | undefined;
  try {
    mcp.send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'debug-test', version: '1' } },
    });
    expect((await mcp.response(1)).result.serverInfo.name).toBe('eng-mcp');
    mcp.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    // a few reconnect attempts against the closed port (with --debug, wait until one is logged)
    await new Promise((r) => setTimeout(r, 800));
    if (extraArgs.includes('--debug')) await waitFor(() => /eng-mcp: sdk: reconnecting in \d+ms/.test(mcp.stderr()), 30_000);

    engine = await startEngine({
      configYaml: `workers:\n  - name: eng-worker-manager\n    config:\n      port: ${port}\n  - name: eng-engine-functions\n    config:\n      functions_debounce_ms: 50\n`,
    });
    worker = connect(url, { name: 'debug-worker', logger: quiet });
    worker.registerFunction('dbg::echo', (input) => ({ echoed: input }), { metadata: { 'mcp.expose': true } });
    await worker.ready({ timeoutMs: 10_000 });
    let id = 10;
    await waitFor(async () => {
      const requestId = id++;
      mcp.send({ jsonrpc: '2.0', id: requestId, method: 'tools/list' });
      const listed = await mcp.response(requestId);
      return listed.result.tools.some((t: { name: string }) => t.name === 'dbg__echo');
    }, 30_000);
    mcp.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'dbg__echo', arguments: { n: 1 } } });
    expect(JSON.parse((await mcp.response(2)).result.content[0].text)).toMatchObject({ echoed: { n: 1 } });

    const { functions } = await worker.call<{ functions: Array<{ function_id: string }> }>('engine::functions::list', {
      prefix: 'mcp::',
    });
    const logFunction = functions.map((f) => f.function_id).find((f) => f.endsWith('::log')) as string;
    expect(logFunction).toMatch(/^mcp::[0-9a-f]+::log$/);
    await expect(worker.call(logFunction, { level: 'shouting' })).rejects.toMatchObject({ code: 'INVALID_ARGUMENTS' });
    return mcp;
  } finally {
    expect(await mcp.end()).toBe(0);
    await worker?.close();
    await engine?.stop();
  }
}

describe('--debug', () => {
  it('writes debug lines to stderr only; stdout stays pure protocol', async () => {
    const mcp = await session(['--debug']);
    expectCleanStreams(mcp);
    const debug = mcp
      .stderr()
      .split('\n')
      .filter((l) => / DEBUG eng-mcp: /.test(l));
    expect(debug.some((l) => /eng-mcp: sdk: reconnecting in \d+ms \(attempt \d+\)/.test(l))).toBe(true);
    expect(debug.some((l) => /eng-mcp: sdk: function mcp::[0-9a-f]+::log failed: /.test(l))).toBe(true);
    expect(mcp.stderr()).toMatch(/INFO {2}eng-mcp: connected to the eng engine/);
  }, 60_000);

  it('without it, the same session logs no debug line', async () => {
    const mcp = await session([]);
    expectCleanStreams(mcp);
    expect(mcp.stderr()).not.toMatch(/ DEBUG /);
    expect(mcp.stderr()).toMatch(/INFO {2}eng-mcp: MCP server on stdio/);
  }, 60_000);
});
