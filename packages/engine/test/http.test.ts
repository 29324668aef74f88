/**
 * eng-http against a real engine with real workers: iii-sdk 0.22.1 (including its `http()`
 * streaming helper and `request_body.readAll()`) and raw protocol clients.
 * spec: engine-protocol §5.2, §6.1, §11 item 6.
 */

import { mkdtempSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect as connectTcp } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ChannelReader, type ChannelWriter, connect as engConnect } from '@eng/sdk';
import { http } from '@iii-dev/helpers/http';
import { registerWorker } from 'iii-sdk-0.22.1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import { RawClient } from '../../../test/raw-client.ts';
import type { EngineModule } from '../src/core/module.ts';
import { Engine } from '../src/engine.ts';
import type { HttpRouterService } from '../src/modules/http/index.ts';

type Worker = ReturnType<typeof registerWorker>;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let engine: EngineProcess;
let base: string;
let worker: Worker;
const raws: RawClient[] = [];

function connect(name: string): Worker {
  return registerWorker(engine.busUrl, { workerName: name, otel: { enabled: false }, enableMetricsReporting: false } as never);
}

/** Poll until `path` stops answering 404 (routes are bound asynchronously). */
async function routeReady(path: string, method = 'GET', from = base): Promise<void> {
  await waitFor(async () => (await fetch(`${from}${path}`, { method })).status !== 404, 5000);
}

async function json(res: Response): Promise<any> {
  return JSON.parse(await res.text());
}

beforeAll(async () => {
  engine = await startEngine({
    workersYaml: '  - name: eng-http\n    config:\n      port: {{HTTP_PORT}}\n      default_timeout: 1500\n      body_limit_bytes: 65536\n',
  });
  base = (engine.addresses.http as { url: string }).url;
  worker = connect('http-test');

  worker.registerFunction('items::get', async (req: any, metadata?: unknown) => ({
    status_code: 200,
    body: { req: { ...req, request_body: undefined, response: undefined }, metadata: metadata ?? null },
  }));
  worker.registerTrigger({
    type: 'http',
    function_id: 'items::get',
    config: { api_path: 'test/items/:id', http_method: 'GET' },
    metadata: { tenant: 't1' },
  });

  worker.registerFunction('items::post', async (req: any) => {
    const raw = await req.request_body.readAll();
    return { status_code: 201, body: { body: req.body, raw: raw.toString('utf8'), type: req.headers['content-type'] ?? null } };
  });
  worker.registerTrigger({ type: 'http', function_id: 'items::post', config: { api_path: '/test/items', http_method: 'POST' } });

  worker.registerFunction('shape::respond', async (req: any) => req.body);
  worker.registerTrigger({ type: 'http', function_id: 'shape::respond', config: { api_path: 'shape', http_method: 'POST' } });

  worker.registerFunction(
    'stream::download',
    http(async (_req: any, res: any) => {
      res.status(201);
      res.headers({ 'content-type': 'text/plain', 'x-streamed': 'yes' });
      res.stream.write(Buffer.from('hello '));
      await sleep(50);
      res.stream.end(Buffer.from('world'));
    }) as never,
  );
  worker.registerTrigger({ type: 'http', function_id: 'stream::download', config: { api_path: 'stream' } });

  worker.registerFunction('fail::throw', async () => {
    throw new Error('boom');
  });
  worker.registerTrigger({ type: 'http', function_id: 'fail::throw', config: { api_path: 'fail' } });

  worker.registerFunction('slow::sleep', async () => {
    await sleep(4000);
    return { body: 'late' };
  });
  worker.registerTrigger({ type: 'http', function_id: 'slow::sleep', config: { api_path: 'slow' } });

  worker.registerFunction('nothing::returned', async () => undefined);
  worker.registerTrigger({ type: 'http', function_id: 'nothing::returned', config: { api_path: 'nothing', http_method: 'delete' } });

  worker.registerFunction('cond::check', async (req: any) => req.query_params.allow === 'yes');
  worker.registerFunction('cond::handler', async (req: any) => ({ body: { ran: true, path: req.path } }));
  worker.registerTrigger({
    type: 'http',
    function_id: 'cond::handler',
    config: { api_path: 'guarded', condition_function_id: 'cond::check' },
  });

  worker.registerFunction('mw::auth', async (input: any) =>
    input.request.headers['x-token'] === 'secret'
      ? { action: 'continue' }
      : { action: 'respond', response: { status_code: 401, body: { error: 'unauthorized' }, headers: { 'x-mw': 'auth' } } },
  );
  worker.registerFunction('mw::handler', async (req: any) => ({ body: { through: true, token: req.headers['x-token'] } }));
  worker.registerTrigger({
    type: 'http',
    function_id: 'mw::handler',
    config: { api_path: 'private/:id', middleware_function_ids: ['mw::auth'] },
  });

  worker.registerFunction('cond::throws', async () => {
    throw new Error('condition broke');
  });
  worker.registerTrigger({
    type: 'http',
    function_id: 'cond::handler',
    config: { api_path: 'guarded-broken', condition_function_id: 'cond::throws' },
  });
  worker.registerFunction('mw::slow', async () => {
    await sleep(2500);
    return { action: 'continue' };
  });
  worker.registerTrigger({
    type: 'http',
    function_id: 'mw::handler',
    config: { api_path: 'slow-mw', middleware_function_ids: ['mw::slow'] },
  });

  worker.registerFunction('echo::id', async (req: any) => ({ body: { id: req.path_params.id, n: Number(req.query_params.n) } }));
  worker.registerTrigger({ type: 'http', function_id: 'echo::id', config: { api_path: 'echo/:id', http_method: 'PUT' } });

  await Promise.all([
    routeReady('/test/items/1'),
    routeReady('/test/items', 'POST'),
    routeReady('/shape', 'POST'),
    routeReady('/stream'),
    routeReady('/fail'),
    routeReady('/guarded'),
    routeReady('/guarded-broken'),
    routeReady('/private/1'),
    routeReady('/echo/1', 'PUT'),
    routeReady('/nothing', 'DELETE'),
  ]);
});

afterAll(async () => {
  await worker?.shutdown();
  await Promise.all(raws.map((r) => r.terminate()));
  await engine?.stop();
});

describe('http trigger: requests', () => {
  it('delivers path params, query params, lower-cased headers, the registered pattern and trigger metadata', async () => {
    const res = await fetch(`${base}/test/items/42?q=x&page=2&q=last`, { headers: { 'X-Custom-Header': 'Value' } });
    expect(res.status).toBe(200);
    const { req, metadata } = await json(res);
    expect(req.path_params).toEqual({ id: '42' });
    expect(req.query_params).toEqual({ q: 'last', page: '2' });
    expect(req.headers['x-custom-header']).toBe('Value');
    expect(req.path).toBe('test/items/:id');
    expect(req.method).toBe('GET');
    expect(req.body).toBeNull();
    expect(req.trigger).toEqual({ type: 'http', path: 'test/items/:id', method: 'GET' });
    expect(metadata).toEqual({ tenant: 't1' });
  });

  it('decodes percent-encoded path parameters and ignores a trailing slash', async () => {
    const res = await fetch(`${base}/test/items/a%20b/`);
    expect((await json(res)).req.path_params).toEqual({ id: 'a b' });
  });

  it('parses JSON bodies and also streams them through request_body', async () => {
    const res = await fetch(`${base}/test/items`, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ name: 'widget', qty: 2 }),
    });
    expect(res.status).toBe(201);
    const body = await json(res);
    expect(body.body).toEqual({ name: 'widget', qty: 2 });
    expect(JSON.parse(body.raw)).toEqual({ name: 'widget', qty: 2 });
  });

  it('leaves body null for other content types and hands the raw bytes to request_body.readAll()', async () => {
    const res = await fetch(`${base}/test/items`, { method: 'POST', headers: { 'content-type': 'text/csv' }, body: 'a,b\n1,2\n' });
    expect(await json(res)).toEqual({ body: null, raw: 'a,b\n1,2\n', type: 'text/csv' });
  });

  it('gives null for invalid JSON, and an empty stream for no body', async () => {
    const bad = await fetch(`${base}/test/items`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{nope' });
    expect(await json(bad)).toEqual({ body: null, raw: '{nope', type: 'application/json' });
    const empty = await fetch(`${base}/test/items`, { method: 'POST' });
    expect(await json(empty)).toEqual({ body: null, raw: '', type: null });
  });

  it('streams a large non-JSON body through request_body intact', async () => {
    const big = 'x'.repeat(60_000);
    const res = await fetch(`${base}/test/items`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: big });
    expect((await json(res)).raw.length).toBe(60_000);
  });

  it('sends the exact §5.2 payload, with channel refs, to a raw worker', async () => {
    const raw = await RawClient.worker(engine.busUrl);
    raws.push(raw);
    raw.send({ type: 'registerfunction', id: 'raw::payload' });
    raw.send({
      type: 'registertrigger',
      id: 'raw-route',
      trigger_type: 'http',
      function_id: 'raw::payload',
      config: { api_path: '/raw/:x', http_method: 'POST' },
    });
    // the route is bound before the request is sent
    await waitFor(async () => {
      const list = await raw.result('engine::registered-triggers::list', {});
      return list.registered_triggers.some((t: { id: string; status?: string }) => t.id === 'raw-route' && t.status === 'active');
    }, 30_000);
    const pending = fetch(`${base}/raw/7?a=1`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"k":true}' });
    const frame = await raw.next((f) => f.type === 'invokefunction' && f.function_id === 'raw::payload');
    const data = frame.data as Record<string, any>;
    expect(Object.keys(data).sort()).toEqual(
      ['body', 'headers', 'method', 'path', 'path_params', 'query_params', 'request_body', 'response', 'trigger'].sort(),
    );
    expect(data).toMatchObject({ path: '/raw/:x', method: 'POST', body: { k: true }, path_params: { x: '7' }, query_params: { a: '1' } });
    expect(data.request_body).toEqual({ channel_id: expect.any(String), access_key: expect.any(String), direction: 'read' });
    expect(data.response).toEqual({ channel_id: expect.any(String), access_key: expect.any(String), direction: 'write' });
    expect(data._caller_worker_id).toBeUndefined();
    raw.send({ type: 'invocationresult', invocation_id: frame.invocation_id, function_id: 'raw::payload', result: { status_code: 202 } });
    const res = await pending;
    expect(res.status).toBe(202);
    expect(await json(res)).toEqual({});
  });

  it('answers 200 concurrent requests, each with its own answer', async () => {
    const answers = await Promise.all(
      Array.from({ length: 200 }, async (_, n) => {
        const res = await fetch(`${base}/echo/id-${n}?n=${n}`, { method: 'PUT' });
        return { status: res.status, body: await json(res) };
      }),
    );
    answers.forEach((answer, n) => {
      expect(answer).toEqual({ status: 200, body: { id: `id-${n}`, n } });
    });
  });
});

describe('http trigger: responses', () => {
  const respond = (result: unknown) =>
    fetch(`${base}/shape`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(result) });

  it('uses status_code and headers given as a map, JSON by default', async () => {
    const res = await respond({ status_code: 418, headers: { 'X-Tea': 'earl grey' }, body: { short: true } });
    expect(res.status).toBe(418);
    expect(res.headers.get('x-tea')).toBe('earl grey');
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.json()).toEqual({ short: true });
  });

  it('accepts headers as a list of "Name: value" lines, and repeated headers', async () => {
    const res = await respond({ headers: ['X-One: 1', 'Set-Cookie: a=1', 'Set-Cookie: b=2', 'not a header'], body: [1, 2] });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-one')).toBe('1');
    expect(res.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(await res.json()).toEqual([1, 2]);
  });

  it('sends a string body raw under a user content-type, and null as an empty body', async () => {
    const xml = await respond({ headers: { 'Content-Type': 'text/xml' }, body: '<ok/>' });
    expect(xml.headers.get('content-type')).toBe('text/xml');
    expect(await xml.text()).toBe('<ok/>');
    const empty = await respond({ status_code: 202, headers: { 'content-type': 'text/plain' }, body: null });
    expect(empty.status).toBe(202);
    expect(await empty.text()).toBe('');
    const object = await respond({ headers: { 'content-type': 'text/plain' }, body: { a: 1 } });
    expect(await object.text()).toBe('{"a":1}');
  });

  it('defaults the body to {} and a bad status to 200, and drops invalid header values', async () => {
    const res = await respond({ status_code: 'teapot', headers: { 'x-ok': 'yes', 'x-bad': 'a\nb', 'x-num': 5 } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ok')).toBe('yes');
    expect(res.headers.get('x-bad')).toBeNull();
    expect(res.headers.get('x-num')).toBeNull();
    expect(await res.json()).toEqual({});
  });

  it('answers {} when the handler returns nothing and never uses the response channel', async () => {
    const res = await fetch(`${base}/nothing`, { method: 'DELETE' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
  });

  it('streams a response written with the http() helper: status, headers, then body chunks', async () => {
    const res = await fetch(`${base}/stream`);
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toBe('text/plain');
    expect(res.headers.get('x-streamed')).toBe('yes');
    expect(await res.text()).toBe('hello world');
  });

  it('answers HEAD from the GET route, without a body', async () => {
    const res = await fetch(`${base}/test/items/5`, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
  });
});

describe('http trigger: errors', () => {
  it('404 with the 0.22.1 error body for an unknown route', async () => {
    const res = await fetch(`${base}/no/such/route`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'Not Found' } });
  });

  it('405 with an Allow header when the path exists for other methods', async () => {
    const res = await fetch(`${base}/echo/1`);
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('PUT');
    expect((await res.json()).error.code).toBe('METHOD_NOT_ALLOWED');
  });

  it('500 with code, message and error_id when the handler throws', async () => {
    const res = await fetch(`${base}/fail`);
    expect(res.status).toBe(500);
    const body = await res.json();
    expect(body).toEqual({ error: { code: 'invocation_failed', message: 'boom', error_id: expect.stringMatching(/^[0-9a-f]{12}$/) } });
    expect(engine.logs()).toContain(body.error.error_id);
  });

  it('422 CONDITION_NOT_MET with skipped:true when the condition returns false, the handler otherwise', async () => {
    const skipped = await fetch(`${base}/guarded?allow=no`);
    expect(skipped.status).toBe(422);
    expect(await skipped.json()).toEqual({ error: { code: 'CONDITION_NOT_MET', message: 'Request condition not met' }, skipped: true });
    const passed = await fetch(`${base}/guarded?allow=yes`);
    expect(passed.status).toBe(200);
    expect(await passed.json()).toEqual({ ran: true, path: 'guarded' });
  });

  it('500 when the condition function fails, without running the handler', async () => {
    const res = await fetch(`${base}/guarded-broken`);
    expect(res.status).toBe(500);
    expect((await res.json()).error).toMatchObject({ code: 'invocation_failed', message: 'condition broke' });
  });

  it('504 MIDDLEWARE_TIMEOUT when a middleware takes longer than default_timeout', async () => {
    const res = await fetch(`${base}/slow-mw`);
    expect(res.status).toBe(504);
    expect((await res.json()).error.code).toBe('MIDDLEWARE_TIMEOUT');
  });

  it('504 TIMEOUT when the handler takes longer than default_timeout', async () => {
    const started = Date.now();
    const res = await fetch(`${base}/slow`);
    expect(res.status).toBe(504);
    expect(await res.json()).toEqual({ error: { code: 'TIMEOUT', message: 'Request timed out after 1500 ms' } });
    expect(Date.now() - started).toBeLessThan(3500);
  });

  it('413 PAYLOAD_TOO_LARGE for a body over the limit, declared or streamed, and keeps serving', async () => {
    const declared = await fetch(`${base}/test/items`, { method: 'POST', body: 'x'.repeat(70_000) });
    expect(declared.status).toBe(413);
    expect(await declared.json()).toEqual({
      error: { code: 'PAYLOAD_TOO_LARGE', message: 'Request body exceeds the limit of 65536 bytes' },
    });

    // chunked upload (no Content-Length): refused once the limit is passed
    const url = new URL(`${base}/test/items`);
    const streamed = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST' }, (res) => {
        let body = '';
        res.on('data', (c) => {
          body += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      const chunk = Buffer.alloc(16_384, 'y');
      let sent = 0;
      const pump = () => {
        while (sent < 200 && !req.destroyed) {
          sent++;
          if (!req.write(chunk)) return req.once('drain', pump);
        }
        req.end();
      };
      pump();
    });
    expect(streamed.status).toBe(413);
    expect(JSON.parse(streamed.body).error.code).toBe('PAYLOAD_TOO_LARGE');

    // an announced body far beyond the limit is refused before it is sent, and the connection closed
    const socket = connectTcp(Number(url.port), url.hostname);
    socket.write('POST /test/items HTTP/1.1\r\nhost: x\r\ncontent-length: 100000000000\r\n\r\n');
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk;
    });
    await new Promise((resolve) => socket.once('close', resolve));
    expect(answer).toMatch(/^HTTP\/1.1 413 /);
    expect(answer.toLowerCase()).toContain('connection: close');

    const after = await fetch(`${base}/test/items/still-up`);
    expect(after.status).toBe(200);
  });
});

describe('http trigger: middleware and CORS', () => {
  it('per-route middleware can continue or respond', async () => {
    const denied = await fetch(`${base}/private/9`);
    expect(denied.status).toBe(401);
    expect(denied.headers.get('x-mw')).toBe('auth');
    expect(await denied.json()).toEqual({ error: 'unauthorized' });
    const allowed = await fetch(`${base}/private/9`, { headers: { 'x-token': 'secret' } });
    expect(allowed.status).toBe(200);
    expect(await allowed.json()).toEqual({ through: true, token: 'secret' });
  });

  it('is fully permissive without a cors block, preflight included', async () => {
    const preflight = await fetch(`${base}/test/items`, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://app.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'x-a, content-type',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-methods')).toBe('POST');
    expect(preflight.headers.get('access-control-allow-headers')).toBe('x-a, content-type');
    const simple = await fetch(`${base}/test/items/1`, { headers: { origin: 'http://app.example' } });
    expect(simple.headers.get('access-control-allow-origin')).toBe('*');
  });

  describe('with a cors block and global middleware', () => {
    let other: EngineProcess;
    let otherBase: string;
    let otherWorker: Worker;

    beforeAll(async () => {
      other = await startEngine({
        workersYaml: [
          '  - name: iii-http',
          '    config:',
          '      port: {{HTTP_PORT}}',
          '      concurrency_request_limit: 2',
          '      cors:',
          '        allowed_origins: ["http://good.example"]',
          '        allowed_methods: ["GET", "POST"]',
          '      middleware:',
          '        - function_id: gmw::second',
          '          priority: 20',
          '        - function_id: gmw::first',
          '          priority: 10',
          '',
        ].join('\n'),
      });
      otherBase = (other.addresses.http as { url: string }).url;
      otherWorker = registerWorker(other.busUrl, {
        workerName: 'http-cors',
        otel: { enabled: false },
        enableMetricsReporting: false,
      } as never);
      const order: string[] = [];
      otherWorker.registerFunction('gmw::first', async (input: any) => {
        order.push('first');
        return input.request.query_params.block
          ? { action: 'respond', response: { status_code: 403, body: { order } } }
          : { action: 'continue' };
      });
      otherWorker.registerFunction('gmw::second', async () => {
        order.push('second');
        return { action: 'continue' };
      });
      otherWorker.registerFunction('cors::handler', async () => {
        const seen = [...order];
        order.length = 0;
        return { body: { order: seen } };
      });
      otherWorker.registerTrigger({ type: 'http', function_id: 'cors::handler', config: { api_path: 'c' } });
      let running = 0;
      let peak = 0;
      otherWorker.registerFunction('limit::slow', async () => {
        running++;
        peak = Math.max(peak, running);
        await sleep(200);
        running--;
        return { body: { peak } };
      });
      otherWorker.registerTrigger({ type: 'http', function_id: 'limit::slow', config: { api_path: 'limited' } });
      await routeReady('/c', 'GET', otherBase);
      await routeReady('/limited', 'GET', otherBase);
      order.length = 0;
    });
    afterAll(async () => {
      await otherWorker?.shutdown();
      await other?.stop();
    });

    it('runs global middleware by priority before the handler, and lets it respond', async () => {
      const res = await fetch(`${otherBase}/c`);
      expect(await res.json()).toEqual({ order: ['first', 'second'] });
      const blocked = await fetch(`${otherBase}/c?block=1`);
      expect(blocked.status).toBe(403);
      expect(await blocked.json()).toEqual({ order: ['first'] });
    });

    it('serves at most concurrency_request_limit requests at once; the rest wait and are answered', async () => {
      const answers = await Promise.all(Array.from({ length: 6 }, () => fetch(`${otherBase}/limited`).then((r) => r.json())));
      expect(answers).toHaveLength(6);
      expect(Math.max(...answers.map((a) => a.peak))).toBe(2);
    });

    it('allows only the listed origins and methods', async () => {
      const good = await fetch(`${otherBase}/c`, {
        method: 'OPTIONS',
        headers: { origin: 'http://good.example', 'access-control-request-method': 'DELETE' },
      });
      expect(good.status).toBe(204);
      expect(good.headers.get('access-control-allow-origin')).toBe('http://good.example');
      expect(good.headers.get('access-control-allow-methods')).toBe('GET, POST');
      expect(good.headers.get('vary')).toBe('origin');
      const bad = await fetch(`${otherBase}/c`, { headers: { origin: 'http://evil.example' } });
      expect(bad.status).toBe(200);
      expect(bad.headers.get('access-control-allow-origin')).toBeNull();
    });
  });
});

describe('http trigger: registration', () => {
  it('refuses a route of the same shape with other parameter names, and a missing api_path', async () => {
    const raw = await RawClient.worker(engine.busUrl);
    raws.push(raw);
    raw.send({ type: 'registerfunction', id: 'raw::conflict' });
    raw.send({
      type: 'registertrigger',
      id: 'conflict-1',
      trigger_type: 'http',
      function_id: 'raw::conflict',
      config: { api_path: 'test/items/:uid' },
    });
    const conflict = await raw.next((f) => f.type === 'triggerregistrationresult' && f.id === 'conflict-1');
    expect(conflict.error).toEqual({
      code: 'trigger_registration_failed',
      message:
        "Route 'GET test/items/:uid' conflicts with already-registered route 'GET test/items/:id': routes with identical structure but different path-parameter names are not supported",
    });
    raw.send({
      type: 'registertrigger',
      id: 'conflict-2',
      trigger_type: 'http',
      function_id: 'raw::conflict',
      config: { http_method: 'GET' },
    });
    const missing = await raw.next((f) => f.type === 'triggerregistrationresult' && f.id === 'conflict-2');
    expect((missing.error as { message: string }).message).toMatch(/^api_path is required for http triggers/);
    raw.send({
      type: 'registertrigger',
      id: 'conflict-3',
      trigger_type: 'http',
      function_id: 'raw::conflict',
      config: { api_path: 'x', http_method: 'TRACE' },
    });
    const method = await raw.next((f) => f.type === 'triggerregistrationresult' && f.id === 'conflict-3');
    expect((method.error as { message: string }).message).toContain(
      'http_method: must be one of GET, POST, PUT, DELETE, PATCH, HEAD, OPTIONS',
    );
    // the refused bindings are listed as Error with the reason, and serve nothing
    const listed = await raw.result<{ registered_triggers: Array<{ id: string; status: string; error?: string }> }>(
      'engine::registered-triggers::list',
      { trigger_type: 'http' },
    );
    const refused = listed.registered_triggers.filter((t) => t.id.startsWith('conflict-'));
    expect(refused.map((t) => [t.id, t.status])).toEqual([
      ['conflict-1', 'error'],
      ['conflict-2', 'error'],
      ['conflict-3', 'error'],
    ]);
    expect(refused[0]?.error).toContain("conflicts with already-registered route 'GET test/items/:id'");
    // the existing route still answers
    expect((await fetch(`${base}/test/items/1`)).status).toBe(200);
  });

  it('lets the same method and path be registered again (last wins), and removes routes when the worker disconnects', async () => {
    const a = connect('http-a');
    a.registerFunction('owner::a', async () => ({ body: 'a' }));
    a.registerTrigger({ type: 'http', function_id: 'owner::a', config: { api_path: 'owned', http_method: 'POST' } });
    await routeReady('/owned', 'POST');
    expect(await (await fetch(`${base}/owned`, { method: 'POST' })).json()).toBe('a');

    const b = connect('http-b');
    b.registerFunction('owner::b', async () => ({ body: 'b' }));
    b.registerTrigger({ type: 'http', function_id: 'owner::b', config: { api_path: '/owned', http_method: 'post' } });
    await waitFor(async () => (await (await fetch(`${base}/owned`, { method: 'POST' })).json()) === 'b');

    // a leaving does not take b's route with it
    await a.shutdown();
    await sleep(200);
    expect(await (await fetch(`${base}/owned`, { method: 'POST' })).json()).toBe('b');

    await b.shutdown();
    await waitFor(async () => (await fetch(`${base}/owned`, { method: 'POST' })).status === 404);
    expect(await (await fetch(`${base}/owned`, { method: 'POST' })).json()).toEqual({ error: { code: 'NOT_FOUND', message: 'Not Found' } });
  });
});

describe('http trigger with @eng/sdk workers', () => {
  it('serves params and JSON bodies, reads request_body and streams a response through the channel', async () => {
    const client = engConnect(engine.busUrl, { name: 'http-eng-sdk' });
    try {
      client.registerFunction('eng::get', (req: any, ctx) => ({
        body: { id: req.path_params.id, q: req.query_params, meta: ctx.metadata },
      }));
      client.registerTrigger({ type: 'http', function_id: 'eng::get', config: { api_path: 'eng/:id' }, metadata: { via: 'eng' } });
      client.registerFunction('eng::post', async (req: any) => {
        const raw = new TextDecoder().decode(await (req.request_body as ChannelReader).readAll());
        return { status_code: 201, headers: ['X-Eng: yes'], body: { parsed: req.body, raw } };
      });
      client.registerTrigger({ type: 'http', function_id: 'eng::post', config: { api_path: 'eng', http_method: 'POST' } });
      client.registerFunction('eng::stream', async (req: any) => {
        const out = req.response as ChannelWriter;
        await out.sendMessage(JSON.stringify({ type: 'set_status', status_code: 206 }));
        await out.sendMessage(JSON.stringify({ type: 'set_headers', headers: { 'content-type': 'text/plain' } }));
        await out.write('part 1, ');
        await out.write('part 2');
        await out.end();
        return undefined;
      });
      client.registerTrigger({ type: 'http', function_id: 'eng::stream', config: { api_path: 'eng-stream' } });
      await client.ready();
      await Promise.all([routeReady('/eng/1'), routeReady('/eng', 'POST'), routeReady('/eng-stream')]);

      const got = await fetch(`${base}/eng/abc?x=1`);
      expect(await got.json()).toEqual({ id: 'abc', q: { x: '1' }, meta: { via: 'eng' } });

      const posted = await fetch(`${base}/eng`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"n":1}' });
      expect(posted.status).toBe(201);
      expect(posted.headers.get('x-eng')).toBe('yes');
      expect(await posted.json()).toEqual({ parsed: { n: 1 }, raw: '{"n":1}' });

      const streamed = await fetch(`${base}/eng-stream`);
      expect(streamed.status).toBe(206);
      expect(streamed.headers.get('content-type')).toBe('text/plain');
      expect(await streamed.text()).toBe('part 1, part 2');
    } finally {
      await client.close();
    }
  });
});

describe('http.router: routes mounted by engine modules', () => {
  it('serves an engine route before trigger routes, with body limit and error handling', async () => {
    // an in-process engine with one extra module, the way observability mounts POST /v1/traces
    const mounted: EngineModule = {
      name: 'test-mount',
      configSchema: z.object({}),
      start(ctx) {
        const router = ctx.services.get<HttpRouterService>('http.router');
        if (!router) throw new Error('http.router missing');
        router.addRoute('POST', '/v1/things/:kind', async (req, res, params) => {
          const body = await router.readBody(req);
          router.sendJson(res, 200, { kind: params.kind, bytes: body.length });
        });
        router.addRoute('GET', 'v1/broken', () => {
          throw new Error('mount failed');
        });
      },
    };
    const inProcess = new Engine({
      config: {
        path: 'in-process.yaml',
        workers: [
          { name: 'eng-worker-manager', config: { port: 0 } },
          { name: 'eng-http', config: { port: 0, body_limit_bytes: 1024 } },
        ],
      },
      dataDir: mkdtempSync(join(tmpdir(), 'eng-http-mount-')),
      extraModules: [mounted],
    });
    const addresses = await inProcess.start();
    const url = (addresses.http as { url: string }).url;
    try {
      const ok = await fetch(`${url}/v1/things/spans`, { method: 'POST', body: 'abc' });
      expect(await ok.json()).toEqual({ kind: 'spans', bytes: 3 });
      const tooBig = await fetch(`${url}/v1/things/spans`, { method: 'POST', body: 'x'.repeat(2048) });
      expect(tooBig.status).toBe(413);
      const broken = await fetch(`${url}/v1/broken`);
      expect(broken.status).toBe(500);
      expect((await broken.json()).error).toMatchObject({ code: 'INTERNAL_ERROR', message: 'mount failed' });
    } finally {
      await inProcess.stop();
    }
  });
});
