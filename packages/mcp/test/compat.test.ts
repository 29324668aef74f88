/**
 * eng-mcp beyond its own SDK: a worker written with the published iii-sdk 0.22.1 (seed §2.11: the
 * opt-in is plain registration metadata), the engine supervisor launching the catalog worker `mcp`
 * after `eng worker add mcp`, and the command line (seed §4.4).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EngClient } from '@eng/sdk';
import { LoggingMessageNotificationSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { registerWorker } from 'iii-sdk-0.22.1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, engArgs, REPO_ROOT, startEngine, waitFor } from '../../../test/harness.ts';
import {
  BUILTINS,
  demoWorker,
  httpBase,
  httpClient,
  httpMcp,
  MCP_BIN,
  type StdioMcp,
  startMcpEngine,
  stdioMcp,
  textOf,
} from './helpers.ts';

type IiiWorker = ReturnType<typeof registerWorker>;

describe('a worker on iii-sdk 0.22.1', () => {
  let engine: EngineProcess;
  let iii: IiiWorker;
  let mcp: StdioMcp;

  beforeAll(async () => {
    engine = await startMcpEngine();
    iii = registerWorker(engine.busUrl, { workerName: 'iii-legacy', otel: { enabled: false }, enableMetricsReporting: false } as never);
    iii.registerFunction('legacy::add', async (input: { a: number; b: number }) => ({ sum: input.a + input.b }), {
      description: 'Add two numbers',
      request_format: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
      metadata: { 'mcp.expose': true },
    } as never);
    iii.registerFunction('legacy::secret', async () => 'secret', { description: 'not opted in' } as never);
    // 0.22.1 hands the invocation metadata to the handler as its second argument
    iii.registerFunction(
      'legacy::steps',
      (async (_input: unknown, metadata?: { mcp?: { progress_token?: string; progress_function?: string } }) => {
        const mcp = metadata?.mcp;
        if (mcp?.progress_token && mcp.progress_function) {
          await iii.trigger({ function_id: mcp.progress_function, payload: { token: mcp.progress_token, progress: 50, total: 100 } });
        }
        return { done: true };
      }) as never,
      { metadata: { 'mcp.expose': true } } as never,
    );
    mcp = await stdioMcp(engine);
    await waitFor(async () => (await mcp.client.listTools()).tools.some((t) => t.name === 'legacy__steps'), 10_000);
  });
  afterAll(async () => {
    await mcp?.close();
    await iii?.shutdown();
    await engine?.stop();
  });

  it('its opted-in functions are tools over stdio, with their schema; the others are not', async () => {
    const { tools } = await mcp.client.listTools();
    const add = tools.find((t) => t.name === 'legacy__add');
    expect(add).toMatchObject({ description: 'Add two numbers', inputSchema: { type: 'object', required: ['a', 'b'] } });
    expect(tools.some((t) => t.name === 'legacy__secret')).toBe(false);
    expect(JSON.parse(textOf(await mcp.client.callTool({ name: 'legacy__add', arguments: { a: 2, b: 40 } })))).toEqual({ sum: 42 });
    const secret = await mcp.client.callTool({ name: 'legacy__secret', arguments: {} });
    expect(secret.isError).toBe(true);
  });

  it('reports progress through the metadata it receives, and is callable over HTTP too', async () => {
    const progress: number[] = [];
    const result = await mcp.client.callTool({ name: 'legacy__steps', arguments: {} }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    });
    expect(JSON.parse(textOf(result))).toEqual({ done: true });
    expect(progress).toEqual([50]);

    const server = await httpMcp(engine);
    try {
      const client = await httpClient(server.url);
      expect(JSON.parse(textOf(await client.callTool({ name: 'legacy__add', arguments: { a: 1, b: 1 } })))).toEqual({ sum: 2 });
      await client.close();
    } finally {
      await server.stop();
    }
  });
});

describe('launched by the engine supervisor after `eng worker add mcp`', () => {
  let engine: EngineProcess;

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'eng-mcp-supervised-'));
    const file = join(dir, 'config.yaml');
    // sentinel ports (a `{{X_PORT}}` placeholder is not YAML the CLI can rewrite), swapped for the harness's after
    writeFileSync(
      file,
      'workers:\n  - name: eng-worker-manager\n    config:\n      port: 65001\n  - name: eng-http\n    config:\n      port: 65002\n',
    );
    const added = spawnSync(process.execPath, engArgs(['worker', 'add', 'mcp', '-c', file]), {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    });
    expect(added.status, added.stderr).toBe(0);
    const configYaml = readFileSync(file, 'utf8').replace('65001', '{{BUS_PORT}}').replace('65002', '{{HTTP_PORT}}');
    expect(configYaml).toMatch(/- name: mcp\n\s+config:\n\s+no_stdio: true/);
    engine = await startEngine({ configYaml });
  });
  afterAll(async () => {
    await engine?.stop();
  });

  it('serves /mcp on the engine HTTP port with the config block applied (HTTP only, built-ins hidden)', async () => {
    const url = `${httpBase(engine)}/mcp`;
    await waitFor(async () => (await fetch(url, { method: 'DELETE' })).status !== 404, 20_000, 100);
    const client = await httpClient(url);
    const { tools } = await client.listTools();
    expect(tools.some((t) => t.name.startsWith('eng_'))).toBe(false);
    const context = JSON.parse(((await client.readResource({ uri: 'eng://context' })).contents[0] as { text: string }).text);
    expect(context).toMatchObject({ transport: 'http', builtins_visible: false });
    await client.close();
    const probe = registerWorker(engine.busUrl, { workerName: 'probe', otel: { enabled: false }, enableMetricsReporting: false } as never);
    const { workers } = (await probe.trigger({ function_id: 'engine::supervisor::list', payload: {} })) as {
      workers: Array<{ name: string }>;
    };
    expect(workers.map((w) => w.name)).toContain('mcp');
    await probe.shutdown();
  });
});

describe('when the engine goes away and comes back', () => {
  let engine: EngineProcess;
  let worker: EngClient;
  let mcp: StdioMcp;

  beforeAll(async () => {
    engine = await startMcpEngine();
    worker = await demoWorker(engine);
    mcp = await stdioMcp(engine);
  });
  afterAll(async () => {
    await mcp?.close();
    await worker?.close();
    await engine?.stop();
  });

  it('lists only the built-ins at once while it is down, says so, and announces the tools when it is back', async () => {
    const logs: Array<{ level: string; data: { message?: string } }> = [];
    let changes = 0;
    mcp.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      logs.push(n.params as never);
    });
    mcp.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changes++;
    });
    expect((await mcp.client.listTools()).tools.some((t) => t.name === 'demo__echo')).toBe(true);
    await engine.kill();
    await waitFor(() => logs.some((l) => l.level === 'warning' && l.data.message?.includes('lost the connection')), 10_000);
    const started = Date.now();
    const down = (await mcp.client.listTools()).tools.map((t) => t.name);
    expect(Date.now() - started).toBeLessThan(2500);
    expect(down).toEqual(BUILTINS);
    // a call cannot be verified while the engine is away: it fails closed
    const refused = await mcp.client.callTool({ name: 'demo__text', arguments: {} });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toBe(
      "Function 'demo::text' exposure could not be verified (engine error: the eng engine is not connected); denying call",
    );
    const before = changes;
    await engine.restart();
    await waitFor(() => changes > before, 20_000);
    await waitFor(async () => (await mcp.client.listTools()).tools.some((t) => t.name === 'demo__echo'), 20_000);
    expect(textOf(await mcp.client.callTool({ name: 'demo__text', arguments: {} }))).toBe('plain text');
  });
});

describe('command line', () => {
  const run = (args: string[], env: Record<string, string> = {}) =>
    spawnSync(process.execPath, [MCP_BIN, ...args], {
      encoding: 'utf8',
      env: { ...process.env, ENG_WORKER_CONFIG: '', ...env },
      timeout: 20_000,
    });

  it('--help lists exactly the seed flags; --version prints the version', () => {
    const help = run(['--help']);
    expect(help.status).toBe(0);
    for (const flag of [
      '--engine-url <URL>',
      '--no-stdio',
      '--expose-all',
      '--no-builtins',
      '--http-builtins',
      '--tier <name>',
      '--debug',
      '--help',
      '--version',
    ]) {
      expect(help.stdout).toContain(flag);
    }
    expect(help.stdout).toContain('ws://localhost:49134');
    const version = run(['--version']);
    expect(version.status).toBe(0);
    expect(version.stdout.trim()).toMatch(/^eng-mcp \d+\.\d+\.\d+$/);
  });

  it('refuses unknown flags, bad URLs and a bad ENG_WORKER_CONFIG with exit code 2 and a message on stderr', () => {
    const unknown = run(['--bogus']);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain("Unknown option '--bogus'");
    expect(unknown.stdout).toBe('');
    const url = run(['--engine-url', 'http://127.0.0.1:1']);
    expect(url.status).toBe(2);
    expect(url.stderr).toContain('must be a ws:// or wss:// URL');
    const json = run([], { ENG_WORKER_CONFIG: '{nope' });
    expect(json.status).toBe(2);
    expect(json.stderr).toContain('ENG_WORKER_CONFIG is not valid JSON');
    const key = run([], { ENG_WORKER_CONFIG: '{"no_stdio": "yes"}' });
    expect(key.status).toBe(2);
    expect(key.stderr).toContain('no_stdio');
    const emptyTier = run(['--tier', '']);
    expect(emptyTier.status).toBe(2);
  });
});
