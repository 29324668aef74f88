import { writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { connect, type EngClient } from '@eng/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type EngineProcess, freePort, startEngine, waitFor } from '../../../test/harness.ts';
import { RawClient } from '../../../test/raw-client.ts';
import { emptyDir, ensureBundle, startWorker, type WorkerProcess } from './helpers.ts';

/**
 * Issue 19 §1: the console worker serves what eng-console serves besides the UI and `/ws` —
 * `/_console/config|invoke|probe|http/*` and `/ws/streams` — on its one port, with the same Host
 * and Origin rules, and finds the engine's HTTP and streams addresses by itself.
 */
const MODULES = [
  '  - name: eng-http',
  '    config:',
  '      port: {{HTTP_PORT}}',
  '  - name: eng-stream',
  '    config:',
  '      port: {{STREAMS_PORT}}',
].join('\n');

beforeAll(() => ensureBundle(), 180_000);

describe('console API on the console worker, in front of a real engine', () => {
  let engine: EngineProcess;
  let app: EngClient;
  let worker: WorkerProcess;
  const url = (path: string) => `${worker.base}${path}`;

  beforeAll(async () => {
    engine = await startEngine({ workersYaml: MODULES });
    app = connect(engine.busUrl, { name: 'cw-api-test' });
    app.registerFunction('cwtest::hello', (input: { path_params?: { name?: string }; query_params?: { q?: string } }) => ({
      status_code: 201,
      headers: { 'x-test': 'yes' },
      body: { hello: input?.path_params?.name, q: input?.query_params?.q },
    }));
    app.registerFunction('cwtest::echo', (input: { text?: string }) => ({ echoed: input?.text }));
    app.registerTrigger({ type: 'http', function_id: 'cwtest::hello', config: { api_path: 'cwhello/:name', http_method: 'GET' } });
    await app.ready({ timeoutMs: 10_000 });
    await waitFor(async () => (await fetch(`http://127.0.0.1:${engine.ports.HTTP}/cwhello/x`)).status === 201, 10_000);
    worker = await startWorker([
      '--http-port',
      '0',
      '--url',
      engine.busUrl,
      '--engine-http-url',
      `http://127.0.0.1:${engine.ports.HTTP}`,
      '--engine-streams-url',
      `ws://127.0.0.1:${engine.ports.STREAMS}`,
      '--enable-flow',
    ]);
  }, 60_000);
  afterAll(async () => {
    await worker?.stop();
    await app?.close();
    await engine?.stop();
  });

  it('GET /_console/config names this server, its version, ports and engine addresses with their sources', async () => {
    await waitFor(async () => ((await (await fetch(url('/_console/config'))).json()) as { engine_connected: boolean }).engine_connected);
    const res = await fetch(url('/_console/config'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(await res.json()).toMatchObject({
      server: 'console-worker',
      version: '0.1.0',
      host: '127.0.0.1',
      port: worker.ready.http_port,
      url: `${worker.base}/`,
      engine_port: engine.ports.HTTP,
      ws_port: engine.ports.STREAMS,
      bridge_port: engine.busPort,
      engine_urls: {
        http: `http://127.0.0.1:${engine.ports.HTTP}`,
        streams: `ws://127.0.0.1:${engine.ports.STREAMS}`,
        bridge: engine.busUrl,
      },
      engine_connected: true,
      enable_flow: true,
      bus: 'proxy',
      launched_by_engine: false,
      sources: { engine_http_url: 'flag', engine_streams_url: 'flag', enable_flow: 'flag' },
    });
  });

  it('POST /_console/invoke calls a function through the worker’s own engine session', async () => {
    const res = await fetch(url('/_console/invoke'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ function_id: 'cwtest::echo', input: { text: 'hi' } }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ echoed: 'hi' });
    const missing = await fetch(url('/_console/invoke'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ function_id: 'cwtest::nope', input: {} }),
    });
    expect(missing.status).toBe(404);
  });

  it('/_console/http/* forwards the Triggers page’s HTTP test to the engine HTTP port, marked as proxied', async () => {
    const res = await fetch(url('/_console/http/cwhello/ada?q=1'));
    expect(res.status).toBe(201);
    expect(res.headers.get('x-eng-console-proxy')).toBe('1');
    expect(res.headers.get('x-test')).toBe('yes');
    expect(await res.json()).toEqual({ hello: 'ada', q: '1' });
  });

  it('GET /_console/probe reaches the engine HTTP port, streams socket and bus from the worker', async () => {
    const body = (await (await fetch(url('/_console/probe'))).json()) as { probes: Array<{ name: string; ok: boolean; url: string }> };
    expect(body.probes.map((p) => [p.name, p.ok])).toEqual([
      ['engine_http', true],
      ['streams_ws', true],
      ['bridge_ws', true],
    ]);
    expect(body.probes[0]?.url).toBe(`http://127.0.0.1:${engine.ports.HTTP}/`);
  });

  it('/ws/streams relays the streams socket: a join is answered with a sync of the stored items', async () => {
    await app.call('stream::set', { stream_name: 'cwtest', group_id: 'g1', item_id: 'a', data: { n: 1 } });
    const ws = new WebSocket(`${worker.base.replace('http', 'ws')}/ws/streams`);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const sync = new Promise<{ event?: { type?: string; data?: unknown } }>((resolve) =>
      ws.on('message', (raw) => {
        const msg = JSON.parse(raw.toString());
        if (msg.event?.type === 'sync') resolve(msg);
      }),
    );
    ws.send(JSON.stringify({ type: 'join', data: { subscriptionId: 's1', streamName: 'cwtest', groupId: 'g1' } }));
    expect(JSON.stringify((await sync).event?.data)).toContain('"n":1');
    ws.close();
  });

  it('refuses other origins and foreign Host names on the API and /ws/streams, as eng-console does', async () => {
    const cross = await fetch(url('/_console/config'), { headers: { origin: 'http://evil.example' } });
    expect(cross.status).toBe(403);
    // a rebound page sends its own name as Host (fetch cannot set Host: node:http does)
    const rebound = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: worker.ready.http_port,
          path: '/_console/config',
          headers: { host: `evil.example:${worker.ready.http_port}` },
        },
        (res) => {
          let body = '';
          res.on('data', (c: Buffer) => {
            body += c.toString();
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(rebound.status).toBe(403);
    expect(rebound.body).toContain('DNS rebinding');
    const status = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`${worker.base.replace('http', 'ws')}/ws/streams`, { origin: 'http://evil.example' });
      ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.once('open', () => resolve(101));
      ws.once('error', () => undefined);
    });
    expect(status).toBe(403);
  });
});

describe('where the console worker finds the engine HTTP and streams addresses', () => {
  it('launched by the engine: ENG_HTTP_URL / ENG_STREAMS_URL from its supervisor', async () => {
    const engine = await startEngine({
      configYaml: [
        'workers:',
        '  - name: eng-worker-manager',
        '    config:',
        '      port: {{BUS_PORT}}',
        MODULES,
        '  - name: console',
        '    config:',
        '      http_port: {{CONSOLE_PORT}}',
        '',
      ].join('\n'),
      env: { SKIP_WEB_BUILD: '1' },
    });
    try {
      const client = await RawClient.worker(engine.busUrl);
      const status = await waitFor(async () => (await client.call('console::status', {})).result as { url: string } | undefined, 20_000);
      const config = await (await fetch(`${status.url}_console/config`)).json();
      expect(config).toMatchObject({
        server: 'console-worker',
        port: engine.ports.CONSOLE,
        engine_urls: { http: `http://127.0.0.1:${engine.ports.HTTP}`, streams: `ws://127.0.0.1:${engine.ports.STREAMS}` },
        sources: { engine_http_url: 'engine', engine_streams_url: 'engine', enable_flow: 'default' },
        bus: 'handoff',
        launched_by_engine: true,
        enable_flow: false,
      });
      await client.terminate();
    } finally {
      await engine.stop();
    }
  }, 60_000);

  it('from the eng-http / eng-stream entries of an engine config it reads, else the bus host with ports 3111 / 3112', async () => {
    const dir = emptyDir();
    const [http, streams] = [await freePort(), await freePort()];
    const file = join(dir, 'engine.yaml');
    writeFileSync(
      file,
      `workers:\n  - name: eng-http\n    config:\n      port: \${CW_HTTP:${http}}\n      host: 0.0.0.0\n  - name: eng-stream\n    config:\n      port: ${streams}\n  - name: console\n    config:\n      enable_flow: true\n`,
    );
    const fromFile = await startWorker(['--config', file, '--http-port', '0', '--url', 'ws://127.0.0.1:1']);
    const a = await (await fetch(`${fromFile.base}/_console/config`)).json();
    await fromFile.stop();
    expect(a).toMatchObject({
      engine_urls: { http: `http://127.0.0.1:${http}`, streams: `ws://127.0.0.1:${streams}` },
      sources: { engine_http_url: 'engine config', engine_streams_url: 'engine config', enable_flow: 'config file' },
      enable_flow: true,
    });

    const bare = await startWorker(['--http-port', '0', '--url', 'ws://localhost:1']);
    const b = await (await fetch(`${bare.base}/_console/config`)).json();
    await bare.stop();
    expect(b).toMatchObject({
      engine_urls: { http: 'http://localhost:3111', streams: 'ws://localhost:3112', bridge: 'ws://localhost:1' },
      sources: { engine_http_url: 'default', engine_streams_url: 'default' },
      engine_connected: false,
    });
  });

  it('refuses an engine address that is not an http(s) / ws(s) URL, naming the flag or key', async () => {
    const { runWorker } = await import('./helpers.ts');
    const flag = await runWorker(['--url', 'ws://127.0.0.1:1', '--engine-http-url', 'ws://127.0.0.1:3111']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(/--engine-http-url must be a http or https URL/);
    const env = await runWorker(['--url', 'ws://127.0.0.1:1'], { env: { ENG_WORKER_CONFIG: '{"engine_streams_url": "http://x"}' } });
    expect(env.code).toBe(2);
    expect(env.stderr).toMatch(/ENG_WORKER_CONFIG: engine_streams_url: must be a ws:\/\/ or wss:\/\/ URL/);
  });
});
