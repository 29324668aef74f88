/**
 * Issue 12 item 11: a password (or a `?token=`) in `--engine-url` never leaves eng-mcp — not on
 * stderr (every line, with --debug, engine reachable or not), not in what MCP clients read
 * (eng://context, log notifications, error texts), not in its option errors.
 */
import { spawn, spawnSync } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, freePort, waitFor } from '../../../test/harness.ts';
import { demoWorker, MCP_BIN, startMcpEngine, textOf } from './helpers.ts';

// `pw` as typed, matched as a word so "pwd" elsewhere cannot hide or fake a leak; the user goes too
const LEAK = /(?<![A-Za-z0-9])pw(?![A-Za-z0-9])|admin|s3cr3t-tok/;
const withCredentials = (port: number) => `ws://admin:pw@127.0.0.1:${port}/?token=s3cr3t-tok`;

let engine: EngineProcess;
beforeAll(async () => {
  engine = await startMcpEngine();
  await demoWorker(engine);
});
afterAll(async () => {
  await engine?.stop();
});

describe('eng-mcp redacts engine URL credentials', () => {
  it('unreachable engine, --debug: every stderr line names the host without password or token', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [MCP_BIN, '--engine-url', withCredentials(port), '--no-stdio', '--debug'], {
      env: { ...process.env, ENG_WORKER_CONFIG: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    try {
      // the start line, socket errors, retries, then the 5 s "no connection yet" warning
      await waitFor(() => stderr.includes('no connection to the eng engine'), 20_000, 50);
      expect(stderr).toContain(`127.0.0.1:${port}`);
      expect(stderr).toMatch(/DEBUG .*socket error/);
      expect(stderr).not.toMatch(LEAK);
    } finally {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    expect(stderr).not.toMatch(LEAK);
  });

  it('reachable engine over stdio: stderr, eng://context and tool errors carry no credentials', async () => {
    const url = withCredentials(engine.busPort);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [MCP_BIN, '--engine-url', url, '--debug'],
      env: { ...(process.env as Record<string, string>), ENG_WORKER_CONFIG: '' },
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    const client = new Client({ name: 'redaction-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      await waitFor(() => stderr.includes('connected to the eng engine at'), 15_000, 50);
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toContain('demo__echo'); // really connected, credentials and all
      const echoed = await client.callTool({ name: 'demo__echo', arguments: { message: 'hi' } });
      expect(textOf(echoed)).toContain('hi');
      const context = await client.readResource({ uri: 'eng://context' });
      const text = (context.contents[0] as { text: string }).text;
      expect(JSON.parse(text).engine_url).toBe(`ws://127.0.0.1:${engine.busPort}/?token=***`);
      const failed = await client.callTool({ name: 'demo__fail', arguments: {} });
      expect(failed.isError).toBe(true);
      expect(JSON.stringify(failed)).not.toMatch(LEAK);
      expect(stderr).toContain(`connected to the eng engine at ws://127.0.0.1:${engine.busPort}`);
    } finally {
      await client.close();
    }
    expect(stderr).not.toMatch(LEAK);
  });

  it('a refused --engine-url is named without its credentials', () => {
    const res = spawnSync(process.execPath, [MCP_BIN, '--engine-url', 'http://admin:pw@127.0.0.1:1/?token=s3cr3t-tok'], {
      env: { ...process.env, ENG_WORKER_CONFIG: '' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(res.status).toBe(2);
    expect(res.stderr).toContain('--engine-url must be a ws:// or wss:// URL, got "http://127.0.0.1:1/?token=***"');
    expect(res.stderr).not.toMatch(LEAK);
  });
});
