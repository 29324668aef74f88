/**
 * eng-http with its default config (no body_limit_bytes, no default_timeout) and an @eng/sdk
 * worker: streamed responses reach the client as they are written, the default 10 MiB body limit
 * (413 with a JSON error just over it, accepted up to it), and PATCH and plain OPTIONS routes.
 * spec: engine-protocol §5.2, §6.1.
 */
import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { type ChannelReader, type ChannelWriter, connect, type EngClient } from '@eng/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';

const MiB = 1024 * 1024;
const DEFAULT_LIMIT = 10 * MiB;

let engine: EngineProcess;
let client: EngClient;
let base: string;

/** The streaming handler writes chunk 1, then waits for the test to say it saw chunk 1. */
let sawFirstChunk: () => void = () => {};
let wroteRest = false;
const optionsCalls: Array<{ method: string; origin: string | null }> = [];

const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');

/** POST with node:http so an early 413 is read even while the body is still being sent. */
function post(path: string, body: Buffer, chunked = false): Promise<{ status: number; type: string; text: string }> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream', ...(chunked ? {} : { 'content-length': String(body.length) }) },
      },
      (res) => {
        answered = true;
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), text }));
        res.on('error', reject);
      },
    );
    // the server may cut the upload short after answering 413; only a missing answer is an error
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    // and a write still in flight when it does fails on the socket after the request is done with it
    req.on('socket', (socket) => socket.on('error', () => {}));
    if (!chunked) {
      req.end(body);
      return;
    }
    let offset = 0;
    const pump = () => {
      while (offset < body.length && !req.destroyed) {
        const chunk = body.subarray(offset, offset + 256 * 1024);
        offset += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      req.end();
    };
    pump();
  });
}

beforeAll(async () => {
  // eng-http with nothing but its port: every other setting is the default
  engine = await startEngine({ workersYaml: '  - name: eng-http\n    config:\n      port: {{HTTP_PORT}}\n' });
  base = (engine.addresses.http as { url: string }).url;
  client = connect(engine.busUrl, { name: 'http-defaults' });

  client.registerFunction('stream::incremental', async (req: any) => {
    const out = req.response as ChannelWriter;
    await out.sendMessage(JSON.stringify({ type: 'set_status', status_code: 200 }));
    await out.sendMessage(JSON.stringify({ type: 'set_headers', headers: { 'content-type': 'text/plain', 'x-stage': 'streaming' } }));
    await out.write('chunk-1\n');
    await new Promise<void>((resolve) => {
      sawFirstChunk = resolve;
    });
    wroteRest = true;
    await out.write('chunk-2\n');
    await out.write('chunk-3\n');
    await out.end();
    return undefined;
  });
  client.registerTrigger({ type: 'http', function_id: 'stream::incremental', config: { api_path: 'incremental' } });

  client.registerFunction('upload::digest', async (req: any) => {
    const raw = await (req.request_body as ChannelReader).readAll();
    return { body: { bytes: raw.length, sha256: sha256(raw) } };
  });
  client.registerTrigger({ type: 'http', function_id: 'upload::digest', config: { api_path: 'upload', http_method: 'POST' } });

  client.registerFunction('items::patch', async (req: any) => ({
    body: { id: req.path_params.id, method: req.method, patch: req.body },
  }));
  client.registerTrigger({ type: 'http', function_id: 'items::patch', config: { api_path: 'items/:id', http_method: 'PATCH' } });

  client.registerFunction('items::options', async (req: any) => {
    optionsCalls.push({ method: req.method, origin: req.headers.origin ?? null });
    return { status_code: 200, headers: { allow: 'PATCH, OPTIONS' }, body: { id: req.path_params.id, methods: ['PATCH', 'OPTIONS'] } };
  });
  client.registerTrigger({ type: 'http', function_id: 'items::options', config: { api_path: 'items/:id', http_method: 'OPTIONS' } });

  await client.ready();
  await waitFor(async () => {
    const probes = await Promise.all([
      fetch(`${base}/upload`, { method: 'POST', body: 'x' }),
      fetch(`${base}/items/1`, { method: 'PATCH' }),
      fetch(`${base}/items/1`, { method: 'OPTIONS' }),
    ]);
    return probes.every((r) => r.status === 200);
  });
  optionsCalls.length = 0;
});

afterAll(async () => {
  sawFirstChunk();
  await client?.close();
  await engine?.stop();
});

describe('http: streamed responses are incremental', () => {
  it('delivers the headers and the first chunk before the worker writes the next one', async () => {
    const headersOrTimeout = await Promise.race([fetch(`${base}/incremental`), new Promise<null>((r) => setTimeout(() => r(null), 5000))]);
    // a buffering engine would hold the headers until the handler ended, which waits for us
    expect(headersOrTimeout, 'no response headers while the handler waits after chunk 1').not.toBeNull();
    const res = headersOrTimeout as Response;
    expect(res.status).toBe(200);
    expect(res.headers.get('x-stage')).toBe('streaming');
    expect(res.headers.get('content-type')).toBe('text/plain');
    expect(wroteRest).toBe(false);

    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes('\n')) {
      const next = await Promise.race([reader.read(), new Promise<null>((r) => setTimeout(() => r(null), 5000))]);
      expect(next, 'chunk 1 not received while the handler waits').not.toBeNull();
      const { value, done } = next as ReadableStreamReadResult<Uint8Array>;
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    expect(text).toBe('chunk-1\n');
    expect(wroteRest).toBe(false);

    sawFirstChunk();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    expect(wroteRest).toBe(true);
    expect(text).toBe('chunk-1\nchunk-2\nchunk-3\n');
  });
});

describe('http: the default 10 MiB body limit', () => {
  it('accepts a body just under the limit, and one of exactly the limit, intact', async () => {
    for (const size of [DEFAULT_LIMIT - 1, DEFAULT_LIMIT]) {
      const body = Buffer.alloc(size, 'a');
      body.write(`size ${size}`, 0);
      const res = await post('/upload', body);
      expect(res.status, `${size} bytes`).toBe(200);
      expect(JSON.parse(res.text)).toEqual({ bytes: size, sha256: sha256(body) });
    }
  }, 60_000);

  it('answers a body one byte over the limit with 413 and a JSON error, declared or streamed, and keeps serving', async () => {
    const body = Buffer.alloc(DEFAULT_LIMIT + 1, 'b');
    for (const chunked of [false, true]) {
      const res = await post('/upload', body, chunked);
      expect(res.status, chunked ? 'chunked' : 'content-length').toBe(413);
      expect(res.type).toContain('application/json');
      expect(JSON.parse(res.text)).toEqual({
        error: { code: 'PAYLOAD_TOO_LARGE', message: `Request body exceeds the limit of ${DEFAULT_LIMIT} bytes` },
      });
    }
    const after = await post('/upload', Buffer.from('still up'));
    expect(after.status).toBe(200);
    expect(JSON.parse(after.text).bytes).toBe(8);
  }, 60_000);
});

describe('http: PATCH and plain OPTIONS routes', () => {
  it('routes PATCH with its path params and JSON body', async () => {
    const res = await fetch(`${base}/items/42`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ qty: 3 }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: '42', method: 'PATCH', patch: { qty: 3 } });
  });

  it('hands an OPTIONS request that is not a CORS preflight to its route; a preflight is answered by CORS', async () => {
    const plain = await fetch(`${base}/items/7`, { method: 'OPTIONS' });
    expect(plain.status).toBe(200);
    expect(plain.headers.get('allow')).toBe('PATCH, OPTIONS');
    expect(await plain.json()).toEqual({ id: '7', methods: ['PATCH', 'OPTIONS'] });

    // an Origin alone does not make a preflight: the route answers, with the CORS header added
    const withOrigin = await fetch(`${base}/items/8`, { method: 'OPTIONS', headers: { origin: 'http://app.example' } });
    expect(withOrigin.status).toBe(200);
    expect(withOrigin.headers.get('access-control-allow-origin')).toBe('*');
    expect((await withOrigin.json()).id).toBe('8');

    // Origin + Access-Control-Request-Method is a preflight: 204 from the CORS layer, no call
    const preflight = await fetch(`${base}/items/9`, {
      method: 'OPTIONS',
      headers: { origin: 'http://app.example', 'access-control-request-method': 'PATCH' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-methods')).toBe('PATCH');

    expect(optionsCalls).toEqual([
      { method: 'OPTIONS', origin: null },
      { method: 'OPTIONS', origin: 'http://app.example' },
    ]);
  });
});
