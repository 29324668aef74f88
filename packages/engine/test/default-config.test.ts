/**
 * `eng start` with no configuration file anywhere: every built-in module starts with its defaults
 * (worker bus 49134, HTTP 3111, streams 3112, stores under ./data) and the output says so. These
 * are fixed ports, so the test waits for them to be free first (an `npm start` elsewhere on the
 * machine would hold them) and names the port when it has to give up.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type EngClient } from '@eng/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engArgs, waitFor } from '../../../test/harness.ts';
import { BUILTIN_MODULES } from '../src/modules/index.ts';
import { StreamsClient } from './kv-clients.ts';

const DEFAULT_PORTS = { bus: 49134, http: 3111, streams: 3112 };

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

let child: ChildProcess;
let output = '';
let ready: Record<string, { url?: string; port?: number }>;
let cwd: string;
let home: string;
let client: EngClient;

beforeAll(async () => {
  for (const port of Object.values(DEFAULT_PORTS)) {
    // 49134 is inside Linux's ephemeral range: a client socket of another process may hold it for a
    // while (TIME_WAIT lasts 60 s), so give it longer than that
    await waitFor(() => portFree(port), 75_000, 500).catch(() => {
      throw new Error(`default port ${port} stays in use (another engine on this machine?); the no-config test needs it`);
    });
  }
  cwd = mkdtempSync(join(tmpdir(), 'eng-noconfig-cwd-'));
  home = mkdtempSync(join(tmpdir(), 'eng-noconfig-home-'));
  const env: NodeJS.ProcessEnv = { ...process.env, ENG_HOME: home, ENG_CONFIG: '', ENG_LOG_LEVEL: 'info' };
  delete env.ENG_DATA_DIR;
  child = spawn(process.execPath, engArgs([]), { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.on('data', (c: Buffer) => {
    output += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    output += c.toString();
  });
  const line = await waitFor(() => /^eng: ready (.*)$/m.exec(output)?.[1], 30_000).catch((err: Error) => {
    throw new Error(`${err.message}\n${output}`);
  });
  ready = JSON.parse(line);
  client = connect(`ws://127.0.0.1:${DEFAULT_PORTS.bus}`, { name: 'no-config-test', reconnect: { maxRetries: 0 } });
  await client.ready({ timeoutMs: 10_000 });
}, 150_000);

afterAll(async () => {
  await client?.close();
  if (child && child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
});

describe('eng start without a configuration file', () => {
  it('says it found no file and starts every built-in module', () => {
    expect(output).toContain(`no configuration file at ${join(home, 'config.yaml')}: starting with the default modules`);
    const names = BUILTIN_MODULES.filter((m) => m.defaultOn).map((m) => m.name);
    expect(names).toEqual([
      'eng-worker-manager',
      'eng-observability',
      'eng-engine-functions',
      'eng-http',
      'eng-pubsub',
      'eng-cron',
      'eng-state',
      'eng-configuration',
      'eng-stream',
      'eng-queue',
      'eng-supervisor',
    ]);
    expect(output).toContain(`  modules     ${names.join(', ')}\n`);
  });

  it('listens on the default ports and prints them', () => {
    expect(ready.bus?.port).toBe(DEFAULT_PORTS.bus);
    expect(ready.http?.url).toBe(`http://127.0.0.1:${DEFAULT_PORTS.http}`);
    expect(ready.streams?.port).toBe(DEFAULT_PORTS.streams);
    expect(output).toMatch(new RegExp(`worker bus {2}ws://[^\\s]+:${DEFAULT_PORTS.bus}`));
    expect(output).toContain(`http://127.0.0.1:${DEFAULT_PORTS.http}`);
  });

  it('serves every module: state, stream, pub/sub, queue, cron, HTTP, observability and introspection', async () => {
    expect(await client.call('state::set', { scope: 'defaults', key: 'k', value: { n: 1 } })).toEqual({
      old_value: null,
      new_value: { n: 1 },
    });
    expect(await client.call('state::get', { scope: 'defaults', key: 'k' })).toEqual({ n: 1 });
    await client.call('stream::set', { stream_name: 'defaults', group_id: 'g', item_id: 'i', data: 'x' });
    expect(await client.call('stream::get', { stream_name: 'defaults', group_id: 'g', item_id: 'i' })).toBe('x');
    expect(await client.call('publish', { topic: 'defaults.topic', data: 1 })).toBeUndefined();
    const topics = await client.call<Array<{ name: string }>>('engine::queue::list_topics', {});
    expect(topics.map((t) => t.name)).toContain('default');
    const runs = await client.call<{ next_runs: string[] }>('eng::cron::next_runs', { expression: '0 0 * * * *', count: 1 });
    expect(runs.next_runs).toHaveLength(1);
    expect(await client.call('engine::logs::list', { limit: 1 })).toHaveProperty('logs');
    const { functions } = await client.call<{ functions: Array<{ function_id: string }> }>('engine::functions::list', {
      include_internal: true,
    });
    expect(functions.map((f) => f.function_id)).toEqual(
      expect.arrayContaining(['engine::supervisor::list', 'state::set', 'configuration::set']),
    );
    // built-ins' schemas are made when first read: every module's comes out whole (a JSON Schema, not dropped)
    const listed = functions as Array<{ function_id: string; request_format?: { type?: string; properties?: Record<string, unknown> } }>;
    for (const [id, field] of [
      ['state::set', 'scope'],
      ['stream::set', 'stream_name'],
      ['configuration::set', 'id'],
      ['engine::traces::list', 'trace_id'],
      ['engine::functions::list', 'include_internal'],
    ] as const) {
      const format = listed.find((f) => f.function_id === id)?.request_format;
      expect(format?.type, id).toBe('object');
      expect(Object.keys(format?.properties ?? {}), id).toContain(field);
    }
    const info = await client.call<{ request_schema?: { properties?: Record<string, unknown> } }>('engine::functions::info', {
      function_id: 'state::get',
    });
    expect(Object.keys(info.request_schema?.properties ?? {})).toEqual(expect.arrayContaining(['scope', 'key']));
    const types = await client.call<{ trigger_types: Array<{ id: string; trigger_request_format?: { type?: string } }> }>(
      'engine::trigger-types::list',
      {},
    );
    expect(types.trigger_types.find((t) => t.id === 'state')?.trigger_request_format?.type).toBe('object');

    // HTTP answers on 3111 (a 404 in the 0.22.1 shape: no routes yet), the streams socket on 3112
    const res = await fetch(`http://127.0.0.1:${DEFAULT_PORTS.http}/nothing-here`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'Not Found' } });
    const socket = await StreamsClient.connect(`ws://127.0.0.1:${DEFAULT_PORTS.streams}`);
    try {
      socket.join('s', 'defaults', 'g');
      expect((await socket.next('sync')).event.data).toEqual(['x']);
    } finally {
      socket.close();
    }
  });

  it('keeps its file stores in ./data of the working directory', () => {
    expect(existsSync(join(cwd, 'data'))).toBe(true);
    expect(existsSync(join(cwd, 'data', 'queue.db'))).toBe(true);
  });
});
