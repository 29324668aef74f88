import { request as httpRequest } from 'node:http';
import { connect, type EngClient } from '@eng/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import type { ConsoleServer } from '../src/server.ts';
import { IMMUTABLE, NO_CACHE } from '../src/static-assets.ts';
import { BUNDLE_JS, deadPort, startTestConsole } from './helpers.ts';

// issue 6 §1 / seed 4.1: routes, cache headers, /_console/invoke shapes, the HTTP test forwarder

let engine: EngineProcess;
let worker: EngClient;
let console_: ConsoleServer;

beforeAll(async () => {
  engine = await startEngine({
    workersYaml:
      '  - name: eng-http\n    config:\n      port: {{HTTP_PORT}}\n  - name: eng-stream\n    config:\n      port: {{STREAMS_PORT}}\n',
  });
  worker = connect(engine.busUrl, { name: 'console-test-worker' });
  // the engine adds `_caller_worker_id` to object payloads from bus callers (engine-protocol §2.3.9)
  worker.registerFunction('test::echo', (input: any) => {
    const { _caller_worker_id, ...rest } = input ?? {};
    return { echoed: rest, caller: typeof _caller_worker_id };
  });
  worker.registerFunction('test::fail', () => {
    throw new Error('boom from the handler');
  });
  worker.registerFunction('test::slow', () => new Promise((r) => setTimeout(() => r('late'), 2000)));
  worker.registerFunction('test::nothing', () => undefined);
  worker.registerFunction('test::hello', (input: any) => ({
    status_code: 201,
    headers: { 'x-test': 'yes' },
    body: { hello: input?.path_params?.name, q: input?.query_params?.q },
  }));
  worker.registerTrigger({ type: 'http', function_id: 'test::hello', config: { api_path: 'hello/:name', http_method: 'GET' } });
  await worker.ready();
  console_ = await startTestConsole({
    enginePort: engine.ports.HTTP as number,
    wsPort: engine.ports.STREAMS as number,
    bridgePort: engine.busPort,
  });
  await console_.client.ready({ timeoutMs: 5000 });
  // the http binding is live once the route answers
  await waitFor(async () => (await fetch(`http://127.0.0.1:${engine.ports.HTTP}/hello/x`)).status === 201, 5000);
});

afterAll(async () => {
  await console_?.close();
  await worker?.close();
  await engine?.stop();
});

const url = (path: string) => `${console_.url}${path}`;
const invoke = (body: unknown, headers: Record<string, string> = {}) =>
  fetch(url('/_console/invoke'), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

describe('the UI bundle', () => {
  it('serves index.html at / with no-cache and defensive headers', async () => {
    const res = await fetch(url('/'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe(NO_CACHE);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("frame-ancestors 'none'");
    // the inline theme script is allowed by its hash, nothing else inline
    expect(csp).toMatch(/script-src 'self' 'sha256-[A-Za-z0-9+/=]+'/);
    expect(await res.text()).toContain('<div id="root">');
  });

  it('serves hashed assets as immutable with their content type, compressed on request', async () => {
    const js = await fetch(url('/assets/index-AbC123.js'), { headers: { 'accept-encoding': 'gzip' } });
    expect(js.status).toBe(200);
    expect(js.headers.get('cache-control')).toBe(IMMUTABLE);
    expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await js.text()).toBe(BUNDLE_JS); // fetch decodes gzip
    const raw = await new Promise<{ encoding?: string; length: number }>((resolve, reject) => {
      httpRequest(url('/assets/index-AbC123.js'), { headers: { 'accept-encoding': 'br' } }, (res) => {
        let length = 0;
        res.on('data', (c: Buffer) => {
          length += c.length;
        });
        res.on('end', () => resolve({ encoding: res.headers['content-encoding'], length }));
      })
        .on('error', reject)
        .end();
    });
    expect(raw.encoding).toBe('br');
    expect(raw.length).toBeLessThan(BUNDLE_JS.length / 4);
    const css = await fetch(url('/assets/index-Xy9.css'));
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    const font = await fetch(url('/assets/inter-latin-Q1.woff2'));
    expect(font.headers.get('content-type')).toBe('font/woff2');
    expect(font.headers.get('cache-control')).toBe(IMMUTABLE);
  });

  it('answers 304 to a matching ETag and 404 to unknown paths', async () => {
    const first = await fetch(url('/assets/index-AbC123.js'));
    const etag = first.headers.get('etag') as string;
    expect(etag).toMatch(/^"/);
    expect((await fetch(url('/assets/index-AbC123.js'), { headers: { 'if-none-match': etag } })).status).toBe(304);
    expect((await fetch(url('/assets/nope.js'))).status).toBe(404);
    expect((await fetch(url('/some/page'))).status).toBe(404);
    expect((await fetch(url('/'), { method: 'POST' })).status).toBe(405);
    const head = await fetch(url('/'), { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('cache-control')).toBe(NO_CACHE);
  });
});

describe('GET /_console/config', () => {
  it('reports the resolved settings, version and engine URLs', async () => {
    const res = await fetch(url('/_console/config'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    const body = await res.json();
    expect(body).toMatchObject({
      version: '0.1.0',
      host: '127.0.0.1',
      port: console_.port,
      engine_host: '127.0.0.1',
      engine_port: engine.ports.HTTP,
      ws_port: engine.ports.STREAMS,
      bridge_port: engine.busPort,
      otel: { enabled: false, service_name: 'eng-console' },
      enable_flow: false,
      engine_connected: true,
      engine_urls: {
        bridge: engine.busUrl,
        http: `http://127.0.0.1:${engine.ports.HTTP}`,
        streams: `ws://127.0.0.1:${engine.ports.STREAMS}`,
      },
    });
    expect((await fetch(url('/_console/config'), { method: 'POST' })).status).toBe(405);
    expect((await fetch(url('/_console/nope'))).status).toBe(404);
  });
});

describe('POST /_console/invoke', () => {
  it('answers the function result as JSON', async () => {
    const res = await invoke({ function_id: 'test::echo', input: { a: 1, b: [true, null] } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(Number(res.headers.get('x-eng-duration-ms'))).toBeGreaterThan(0);
    expect(await res.json()).toEqual({ echoed: { a: 1, b: [true, null] }, caller: 'string' });
  });

  it('passes {} when input is absent and answers null for a function without result', async () => {
    expect(await (await invoke({ function_id: 'test::echo' })).json()).toEqual({ echoed: {}, caller: 'string' });
    const res = await invoke({ function_id: 'test::nothing', input: 1 });
    expect(res.status).toBe(200);
    expect(await res.json()).toBeNull();
  });

  it('reports a failing function as 500 with the code and message', async () => {
    const res = await invoke({ function_id: 'test::fail', input: {} });
    expect(res.status).toBe(500);
    const body = await res.json();
    expect(body.error.message).toContain('boom from the handler');
    expect(typeof body.error.code).toBe('string');
  });

  it('answers 404 function_not_found for an unknown function', async () => {
    const res = await invoke({ function_id: 'no::such', input: {} });
    expect(res.status).toBe(404);
    expect((await res.json()).error).toMatchObject({ code: 'function_not_found' });
  });

  it('answers 504 TIMEOUT when the function outlives timeout_ms', async () => {
    const res = await invoke({ function_id: 'test::slow', input: {}, timeout_ms: 200 });
    expect(res.status).toBe(504);
    expect((await res.json()).error).toMatchObject({ code: 'TIMEOUT' });
  });

  it('refuses malformed bodies with 400 and a JSON error, invoking nothing', async () => {
    const cases: Array<[unknown, string, RegExp]> = [
      ['{not json', 'JSON_ERROR', /not valid JSON/],
      ['', 'JSON_ERROR', /not valid JSON/],
      ['[1,2]', 'INVALID_ARGUMENTS', /JSON object/],
      ['"text"', 'INVALID_ARGUMENTS', /JSON object/],
      [{ input: {} }, 'INVALID_ARGUMENTS', /function_id is required/],
      [{ function_id: 42 }, 'INVALID_ARGUMENTS', /function_id is required/],
      [{ function_id: '  ' }, 'INVALID_ARGUMENTS', /function_id is required/],
      [{ function_id: 'test::echo', timeout_ms: 'soon' }, 'INVALID_ARGUMENTS', /timeout_ms/],
      [{ function_id: 'test::echo', timeout_ms: 0 }, 'INVALID_ARGUMENTS', /timeout_ms/],
    ];
    for (const [body, code, message] of cases) {
      const res = await invoke(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.headers.get('content-type')).toContain('application/json');
      const json = await res.json();
      expect(json.error.code).toBe(code);
      expect(json.error.message).toMatch(message);
    }
  });

  it('refuses other methods, oversized bodies and cross-origin callers', async () => {
    const get = await fetch(url('/_console/invoke'));
    expect(get.status).toBe(405);
    expect((await get.json()).error.code).toBe('METHOD_NOT_ALLOWED');
    const big = await invoke({ function_id: 'test::echo', input: 'x'.repeat(17 * 1024 * 1024) });
    expect(big.status).toBe(413);
    expect((await big.json()).error.code).toBe('PAYLOAD_TOO_LARGE');
    const cross = await invoke({ function_id: 'test::echo' }, { origin: 'http://evil.example' });
    expect(cross.status).toBe(403);
    expect((await cross.json()).error.code).toBe('FORBIDDEN');
    const same = await invoke({ function_id: 'test::echo' }, { origin: console_.url });
    expect(same.status).toBe(200);
  });
});

describe('DNS rebinding', () => {
  const raw = (path: string, headers: Record<string, string>, method = 'GET') =>
    new Promise<number>((resolve, reject) => {
      const req = httpRequest(url(path), { method, headers }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('upgrade', (res, socket) => {
        socket.destroy();
        resolve(res.statusCode ?? 101);
      });
      req.on('error', reject);
      req.end(method === 'POST' ? '{"function_id":"test::echo"}' : undefined);
    });
  const port = () => new URL(console_.url).port;

  it('refuses the API and the bus to a foreign Host name on a loopback bind', async () => {
    const evil = { host: `evil.example:${port()}`, origin: `http://evil.example:${port()}`, 'content-type': 'application/json' };
    expect(await raw('/_console/invoke', evil, 'POST')).toBe(403);
    expect(await raw('/_console/config', evil)).toBe(403);
    const upgrade = {
      connection: 'Upgrade',
      upgrade: 'websocket',
      'sec-websocket-version': '13',
      'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
    };
    expect(await raw('/ws', { ...upgrade, host: `evil.example:${port()}` })).toBe(403);
    // loopback names are fine
    expect(await raw('/_console/config', { host: `localhost:${port()}` })).toBe(200);
    expect(await raw('/ws', { ...upgrade, host: `127.0.0.1:${port()}` })).toBe(101);
  });

  /** Status, content type and body of one GET with the given Host header. */
  const get = (path: string, host: string) =>
    new Promise<{ status: number; type: string; body: string }>((resolve, reject) => {
      httpRequest(url(path), { headers: { host } }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          body += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body }));
      })
        .on('error', reject)
        .end();
    });

  it('refuses the UI itself to a foreign Host name: /, an asset and an unknown path, each saying why (issue 24 item 11)', async () => {
    for (const host of [`evil.example:${port()}`, 'evil.example', `127.0.0.1.evil.example:${port()}`]) {
      for (const path of ['/', '/index.html', '/assets/index-AbC123.js', '/some/page']) {
        const res = await get(path, host);
        expect(res.status, `${host} ${path}`).toBe(403);
        expect(res.type).toBe('text/plain; charset=utf-8');
        expect(res.body).toContain(`Host ${host} is not this console's address (DNS rebinding protection)`);
        expect(res.body).toContain(console_.url);
        expect(res.body).not.toContain('<div id="root">');
        expect(res.body).not.toContain('console.log');
      }
    }
    // the API says the same in its JSON shape
    const api = await get('/_console/config', `evil.example:${port()}`);
    expect(api.status).toBe(403);
    expect(JSON.parse(api.body).error).toMatchObject({ code: 'FORBIDDEN', message: expect.stringContaining('DNS rebinding protection') });
  });

  it('serves the UI under the loopback names and the configured --host', async () => {
    // the test console is bound to 127.0.0.1, the default --host
    for (const host of [`127.0.0.1:${port()}`, `localhost:${port()}`, `[::1]:${port()}`, '127.0.0.1', `app.localhost:${port()}`]) {
      const index = await get('/', host);
      expect(index.status, host).toBe(200);
      expect(index.body).toContain('<div id="root">');
      expect((await get('/assets/index-AbC123.js', host)).status, host).toBe(200);
      expect((await get('/some/page', host)).status, host).toBe(404);
    }
  });

  it('a console bound to --host localhost serves that name and still refuses foreign ones', async () => {
    const named = await startTestConsole({ host: 'localhost', bridgePort: engine.busPort });
    try {
      const at = (path: string, host: string) =>
        new Promise<number>((resolve, reject) => {
          httpRequest({ host: 'localhost', port: named.port, path, headers: { host } }, (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          })
            .on('error', reject)
            .end();
        });
      expect(await at('/', `localhost:${named.port}`)).toBe(200);
      expect(await at('/assets/index-AbC123.js', `localhost:${named.port}`)).toBe(200);
      expect(await at('/', `evil.example:${named.port}`)).toBe(403);
      expect(await at('/assets/index-AbC123.js', `evil.example:${named.port}`)).toBe(403);
    } finally {
      await named.close();
    }
  });
});

describe('/_console/http/* (Test HTTP trigger)', () => {
  it('forwards method, path, query and answers the engine status, headers and body', async () => {
    const res = await fetch(url('/_console/http/hello/ada?q=42'));
    expect(res.status).toBe(201);
    expect(res.headers.get('x-eng-console-proxy')).toBe('1');
    expect(res.headers.get('x-test')).toBe('yes');
    expect(await res.json()).toEqual({ hello: 'ada', q: '42' });
  });

  it('passes the engine 404 through, marked as the engine’s', async () => {
    const res = await fetch(url('/_console/http/no/route'));
    expect(res.status).toBe(404);
    expect(res.headers.get('x-eng-console-proxy')).toBe('1');
  });
});

describe('GET /_console/probe', () => {
  it('probes the engine HTTP port, streams socket and bridge', async () => {
    const res = await fetch(url('/_console/probe'));
    const body = (await res.json()) as { probes: Array<{ name: string; ok: boolean; latency_ms: number }> };
    expect(body.probes.map((p) => [p.name, p.ok])).toEqual([
      ['engine_http', true],
      ['streams_ws', true],
      ['bridge_ws', true],
    ]);
  });
});

describe('with the engine down', () => {
  it('still serves the UI and answers invoke and HTTP tests with 502 naming the engine', async () => {
    const port = await deadPort();
    const down = await startTestConsole({ enginePort: port, wsPort: port, bridgePort: port });
    try {
      const page = await fetch(`${down.url}/`);
      expect(page.status).toBe(200);
      const res = await fetch(`${down.url}/_console/invoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"function_id":"test::echo"}',
      });
      expect(res.status).toBe(502);
      const body = await res.json();
      expect(body.error.code).toBe('not_connected');
      expect(body.error.message).toBe(`engine unreachable at ws://127.0.0.1:${port}`);
      const http = await fetch(`${down.url}/_console/http/anything`);
      expect(http.status).toBe(502);
      expect(http.headers.get('x-eng-console-proxy')).toBeNull();
      expect((await http.json()).error.message).toContain(`engine HTTP port unreachable at http://127.0.0.1:${port}`);
      const config = await (await fetch(`${down.url}/_console/config`)).json();
      expect(config.engine_connected).toBe(false);
      const probes = (await (await fetch(`${down.url}/_console/probe`)).json()).probes as Array<{ ok: boolean; detail: string }>;
      expect(probes.every((p) => !p.ok)).toBe(true);
      expect(probes[0]?.detail).toBe('ECONNREFUSED');
    } finally {
      await down.close();
    }
  });
});
