/**
 * Streamable HTTP on `/mcp` of the engine HTTP port (MCP transports/streamable-http, seed §4.3,
 * mcp.md §12 and §19): sessions, JSON or SSE per Accept, 202 for notifications, GET streams,
 * DELETE, Origin/Host validation, content-type and size checks, batches, long calls that outlive
 * eng-http's timeout, and the MCP SDK client (progress over SSE, cancellation).
 */
import { connect, type EngClient } from '@eng/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineProcess } from '../../../test/harness.ts';
import { demoWorker, type HttpMcp, httpBase, httpClient, httpMcp, startMcpEngine, textOf } from './helpers.ts';

const ENGINE_HTTP_TIMEOUT_MS = 3000;
let engine: EngineProcess;
let worker: EngClient;
let server: HttpMcp;
let url: string;

const BOTH = 'application/json, text/event-stream';
const json = (extra: Record<string, string> = {}) => ({ 'content-type': 'application/json', accept: BOTH, ...extra });
const rpc = (id: number | string, method: string, params: unknown = {}) => ({ jsonrpc: '2.0', id, method, params });

async function post(body: unknown, headers: Record<string, string> = json()): Promise<Response> {
  return fetch(url, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
}

async function initialize(protocolVersion = '2025-11-25'): Promise<{ session: string; result: any }> {
  const res = await post(rpc(1, 'initialize', { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } }));
  expect(res.status).toBe(200);
  const session = res.headers.get('mcp-session-id') as string;
  const body = await res.json();
  const note = await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, json({ 'mcp-session-id': session }));
  expect(note.status).toBe(202);
  expect(await note.text()).toBe('');
  return { session, result: body.result };
}

/** Read an SSE body until `done` holds for the events so far, or it ends; returns the parsed `data` events. */
async function readEvents(res: Response, done: (events: any[]) => boolean, timeoutMs = 8000): Promise<any[]> {
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  const events: any[] = [];
  let buffer = '';
  const deadline = Date.now() + timeoutMs;
  try {
    while (Date.now() < deadline && !done(events)) {
      const next = await Promise.race([
        reader.read(),
        new Promise<null>((r) => setTimeout(() => r(null), Math.max(1, deadline - Date.now()))),
      ]);
      if (!next || next.done) break;
      buffer += decoder.decode(next.value, { stream: true });
      let end = buffer.indexOf('\n\n');
      while (end !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = block
          .split('\n')
          .filter((l) => l.startsWith('data: '))
          .map((l) => l.slice(6))
          .join('\n');
        if (data) events.push(JSON.parse(data));
        end = buffer.indexOf('\n\n');
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return events;
}

beforeAll(async () => {
  engine = await startMcpEngine('', ENGINE_HTTP_TIMEOUT_MS);
  worker = await demoWorker(engine);
  server = await httpMcp(engine, [], {
    ENG_WORKER_CONFIG: JSON.stringify({ sse_after_ms: 500, allowed_origins: ['https://tools.example.com'] }),
  });
  url = server.url;
});
afterAll(async () => {
  await server?.stop();
  await worker?.close();
  await engine?.stop();
});

describe('sessions and version negotiation', () => {
  it('initialize opens a session (Mcp-Session-Id) and negotiates 2025-11-25, 2025-06-18 and 2025-03-26', async () => {
    for (const version of ['2025-11-25', '2025-06-18', '2025-03-26']) {
      const { session, result } = await initialize(version);
      expect(session).toMatch(/^[\x21-\x7e]{16,}$/);
      expect(result.protocolVersion).toBe(version);
      expect(result.serverInfo).toMatchObject({ name: 'eng-mcp', version: expect.any(String) });
      expect(result.capabilities).toEqual({
        tools: { listChanged: true },
        resources: { subscribe: true, listChanged: true },
        prompts: { listChanged: true },
        completions: {},
        logging: {},
      });
      expect(result.instructions).toContain('mcp.expose');
    }
    const { result } = await initialize('1999-01-01');
    expect(result.protocolVersion).toBe('2025-11-25');
  });

  it('requires the session header (400), refuses unknown sessions (404) and unsupported protocol headers (400)', async () => {
    const { session } = await initialize();
    const missing = await post(rpc(2, 'tools/list'));
    expect(missing.status).toBe(400);
    expect((await missing.json()).error).toMatchObject({ code: -32000, message: 'Bad Request: Mcp-Session-Id header is required' });
    const unknown = await post(rpc(2, 'tools/list'), json({ 'mcp-session-id': 'no-such-session' }));
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error.code).toBe(-32001);
    const badVersion = await post(rpc(2, 'tools/list'), json({ 'mcp-session-id': session, 'mcp-protocol-version': '2099-01-01' }));
    expect(badVersion.status).toBe(400);
    expect((await badVersion.json()).error.message).toContain('Unsupported protocol version: 2099-01-01');
    const again = await post(
      rpc(3, 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } }),
      json({ 'mcp-session-id': session }),
    );
    expect(again.status).toBe(400);
  });

  it('DELETE ends a session; its id then answers 404', async () => {
    const { session } = await initialize();
    const del = await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': session } });
    expect(del.status).toBe(200);
    expect((await post(rpc(2, 'ping'), json({ 'mcp-session-id': session }))).status).toBe(404);
    expect((await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': session } })).status).toBe(404);
    expect((await fetch(url, { method: 'DELETE' })).status).toBe(400);
  });

  it('a failed initialize leaves no session behind', async () => {
    const res = await post(rpc(1, 'initialize', { protocolVersion: '2025-11-25' }));
    expect(res.status).toBe(200);
    expect(res.headers.get('mcp-session-id')).toBeNull();
    expect((await res.json()).error.code).toBe(-32602);
  });
});

describe('responses', () => {
  it('answers JSON or SSE as Accept allows, and 202 with no body for notifications', async () => {
    const { session } = await initialize();
    const both = await post(rpc(10, 'tools/list'), json({ 'mcp-session-id': session }));
    expect(both.headers.get('content-type')).toContain('application/json');
    const listed = await both.json();
    expect(listed.id).toBe(10);
    expect(listed.result.tools.map((t: { name: string }) => t.name)).toContain('demo__echo');
    // built-ins are hidden over HTTP by default
    expect(listed.result.tools.some((t: { name: string }) => t.name.startsWith('eng_'))).toBe(false);

    const sseOnly = await post(rpc(11, 'ping'), json({ 'mcp-session-id': session, accept: 'text/event-stream' }));
    expect(sseOnly.status).toBe(200);
    expect(sseOnly.headers.get('content-type')).toBe('text/event-stream');
    expect(sseOnly.headers.get('mcp-session-id')).toBe(session);
    expect(await readEvents(sseOnly, (e) => e.length > 0)).toEqual([{ jsonrpc: '2.0', id: 11, result: {} }]);

    const jsonOnly = await post(rpc(12, 'ping'), json({ 'mcp-session-id': session, accept: 'application/json' }));
    expect(await jsonOnly.json()).toEqual({ jsonrpc: '2.0', id: 12, result: {} });
    const neither = await post(rpc(13, 'ping'), json({ 'mcp-session-id': session, accept: 'text/html' }));
    expect(neither.status).toBe(406);

    const unknownMethod = await post(rpc(14, 'tools/explode'), json({ 'mcp-session-id': session }));
    expect((await unknownMethod.json()).error.code).toBe(-32601);
  });

  it('refuses a wrong content type (415), bad JSON (400 -32700), a non-JSON-RPC body (400 -32600) and oversized bodies (413)', async () => {
    const { session } = await initialize();
    const headers = json({ 'mcp-session-id': session });
    const text = await post(rpc(1, 'ping'), { ...headers, 'content-type': 'text/plain' });
    expect(text.status).toBe(415);
    expect((await text.json()).error.message).toContain('Content-Type must be application/json');
    const broken = await post('{"jsonrpc":"2.0",', headers);
    expect(broken.status).toBe(400);
    expect((await broken.json()).error).toMatchObject({ code: -32700, message: 'Parse error: Invalid JSON' });
    const notRpc = await post({ hello: 'world' }, headers);
    expect(notRpc.status).toBe(400);
    expect((await notRpc.json()).error.code).toBe(-32600);
    const nullId = await post({ jsonrpc: '2.0', id: null, method: 'ping' }, headers);
    expect((await nullId.json()).error.code).toBe(-32600);
    const big = await post(rpc(2, 'tools/call', { name: 'demo__echo', arguments: { message: 'x'.repeat(5 * 1024 * 1024) } }), headers);
    expect(big.status).toBe(413);
    expect((await big.json()).error.message).toContain('Payload Too Large');
    // still serving
    expect((await (await post(rpc(3, 'ping'), headers)).json()).result).toEqual({});
  });

  it('batches are answered as batches under 2025-03-26 and refused (400) under later revisions', async () => {
    const old = await initialize('2025-03-26');
    const res = await post(
      [rpc('a', 'ping'), { jsonrpc: '2.0', method: 'notifications/initialized' }, rpc('b', 'tools/list'), { nonsense: true }],
      json({ 'mcp-session-id': old.session }),
    );
    expect(res.status).toBe(200);
    const replies: any[] = await res.json();
    expect(replies).toHaveLength(3);
    expect(replies.find((r) => r.id === 'a')).toEqual({ jsonrpc: '2.0', id: 'a', result: {} });
    expect(replies.find((r) => r.id === 'b').result.tools.length).toBeGreaterThan(0);
    expect(replies.find((r) => r.id === null).error.code).toBe(-32600);

    const current = await initialize('2025-11-25');
    const refused = await post([rpc('a', 'ping')], json({ 'mcp-session-id': current.session }));
    expect(refused.status).toBe(400);
    expect((await refused.json()).error.message).toContain('batches are not supported');
  });

  it('a call slower than eng-http default_timeout still answers, as an SSE stream (JSON-only clients get the 504)', async () => {
    const { session } = await initialize();
    const slow = rpc(20, 'tools/call', { name: 'demo__slow', arguments: { ms: ENGINE_HTTP_TIMEOUT_MS + 1500 } });
    const streamed = await post(slow, json({ 'mcp-session-id': session }));
    expect(streamed.status).toBe(200);
    expect(streamed.headers.get('content-type')).toBe('text/event-stream');
    const events = await readEvents(streamed, (e) => e.some((m) => m.id === 20), 10_000);
    expect(JSON.parse(events.find((m) => m.id === 20).result.content[0].text)).toEqual({ slept: ENGINE_HTTP_TIMEOUT_MS + 1500 });
    const jsonOnly = await post({ ...slow, id: 21 }, json({ 'mcp-session-id': session, accept: 'application/json' }));
    expect(jsonOnly.status).toBe(504);
  });
});

describe('GET streams and security', () => {
  it('GET opens the session stream, which carries tools/list_changed; a second GET is 409', async () => {
    const { session } = await initialize();
    expect((await fetch(url, { headers: { 'mcp-session-id': session, accept: 'application/json' } })).status).toBe(406);
    const stream = await fetch(url, { headers: { 'mcp-session-id': session, accept: 'text/event-stream' } });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toBe('text/event-stream');
    const second = await fetch(url, { headers: { 'mcp-session-id': session, accept: 'text/event-stream' } });
    expect(second.status).toBe(409);
    const late = connect(engine.busUrl, { name: 'late-http', logger: { debug() {}, info() {}, warn() {}, error() {} } });
    late.registerFunction('late::http', () => 1, { metadata: { 'mcp.expose': true } });
    const events = await readEvents(stream, (e) => e.some((m) => m.method === 'notifications/tools/list_changed'));
    expect(events).toContainEqual({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    await late.close();
  });

  it('refuses foreign Origin and Host headers with 403 (DNS rebinding) and accepts loopback and configured ones', async () => {
    const init = rpc(1, 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } });
    const evilOrigin = await post(init, json({ origin: 'http://evil.example.com' }));
    expect(evilOrigin.status).toBe(403);
    expect((await evilOrigin.json()).error.message).toContain('invalid Origin header: http://evil.example.com');
    const port = new URL(url).port;
    const { request } = await import('node:http');
    const evilHost = await new Promise<number>((resolve, reject) => {
      const req = request(url, { method: 'POST', headers: { ...json(), host: `evil.example.com:${port}` } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end(JSON.stringify(init));
    });
    expect(evilHost).toBe(403);
    for (const origin of [`http://localhost:${port}`, 'http://127.0.0.1:9999', 'https://tools.example.com']) {
      expect((await post(init, json({ origin }))).status, origin).toBe(200);
    }
  });

  it('other methods on /mcp get 405 from the engine router', async () => {
    const res = await fetch(url, { method: 'PUT', headers: json(), body: '{}' });
    expect(res.status).toBe(405);
    expect(httpBase(engine)).toContain('127.0.0.1');
  });
});

describe('with the MCP SDK client over Streamable HTTP', () => {
  it('lists, calls, gets progress over SSE and survives a cancelled call', async () => {
    const client = await httpClient(url);
    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools).toContain('demo__typed');
    expect((await client.callTool({ name: 'demo__typed', arguments: { n: 4 } })).structuredContent).toEqual({ doubled: 8 });
    const progress: number[] = [];
    const result = await client.callTool({ name: 'demo__progress', arguments: { steps: 2 } }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    });
    expect(JSON.parse(textOf(result))).toEqual({ steps: 2, sawToken: true });
    expect(progress).toEqual([1, 2]);
    const hidden = await client.callTool({ name: 'demo__hidden', arguments: {} });
    expect(textOf(hidden)).toContain('not exposed via mcp.expose');

    const controller = new AbortController();
    const pending = client.callTool({ name: 'demo__slow', arguments: { ms: 2000 } }, undefined, { signal: controller.signal });
    setTimeout(() => controller.abort(), 200);
    await expect(pending).rejects.toThrow();
    expect(await client.ping()).toEqual({});
    await client.close();
  });
});
