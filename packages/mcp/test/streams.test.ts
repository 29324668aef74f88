/**
 * Issue 18 item 4, Streamable HTTP in full: SSE events with ids, a priming event with `retry`,
 * resumption with GET + `Last-Event-ID` after a dropped connection (the SDK client does it by
 * itself) and after eng-mcp closed a stream on a function's request (SEP-1699 polling), the
 * session's GET stream resumed too, several concurrent streams in one session, server → client
 * requests on the request's own stream, and a cancelled request's POST answered as the spec asks.
 */
import { connect, type EngClient } from '@eng/sdk';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, waitFor } from '../../../test/harness.ts';
import { mcpOf } from './conformance-fixtures.ts';
import { demoWorker, type HttpMcp, httpClient, httpMcp, sleep, startMcpEngine, textOf } from './helpers.ts';

const BOTH = 'application/json, text/event-stream';
const expose = { 'mcp.expose': true };
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

let engine: EngineProcess;
let worker: EngClient;
let extra: EngClient;
let server: HttpMcp;
/** What streams::ask ended with when the client did not answer. */
const asked: Array<{ error: string; code?: string }> = [];

beforeAll(async () => {
  engine = await startMcpEngine();
  worker = await demoWorker(engine);
  extra = connect(engine.busUrl, { name: 'streams-worker', logger: quiet });
  // progress 1, a pause, progress 2, a pause, the result: room to drop the connection in between
  extra.registerFunction(
    'streams::steps',
    async (input: { tag: string; pause?: number }, ctx) => {
      const mcp = mcpOf(ctx);
      for (const progress of [1, 2]) {
        if (mcp.progress_token && mcp.progress_function) {
          await extra.call(mcp.progress_function, { token: mcp.progress_token, progress, total: 2 });
        }
        await sleep(input.pause ?? 300);
      }
      return { tag: input.tag };
    },
    { request_format: { type: 'object', properties: { tag: { type: 'string' }, pause: { type: 'number' } } }, metadata: expose },
  );
  extra.registerFunction(
    'streams::poll',
    async (_input, ctx) => {
      const mcp = mcpOf(ctx);
      const closed = await extra.call(mcp.close_stream_function, { token: mcp.token, retry_ms: 100 });
      await sleep(400);
      return { closed };
    },
    { metadata: expose },
  );
  extra.registerFunction(
    'streams::ask',
    async (_input, ctx) => {
      const mcp = mcpOf(ctx);
      try {
        return await extra.call(mcp.elicitation_function, {
          token: mcp.token,
          message: 'How many?',
          requestedSchema: { type: 'object', properties: { n: { type: 'integer', minimum: 1 } }, required: ['n'] },
        });
      } catch (err) {
        const outcome = { error: (err as Error).message, code: (err as { code?: string }).code };
        asked.push(outcome);
        return outcome;
      }
    },
    { metadata: expose },
  );
  await extra.ready({ timeoutMs: 10_000 });
  await waitFor(async () => {
    const { functions } = await extra.call<{ functions: Array<{ function_id: string }> }>('engine::functions::list', {});
    return functions.some((f) => f.function_id === 'streams::ask');
  });
  server = await httpMcp(engine);
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await extra?.close();
  await worker?.close();
  await engine?.stop();
});

// ── a bare HTTP client ──────────────────────────────────────────────────────────────────────

interface SseEvent {
  id?: string;
  retry?: number;
  data: string;
}

function parseBlock(block: string): SseEvent | undefined {
  const event: SseEvent = { data: '' };
  let seen = false;
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith(':') || line === '') continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    seen = true;
    if (field === 'id') event.id = value;
    else if (field === 'retry') event.retry = Number(value);
    else if (field === 'data') data.push(value);
  }
  event.data = data.join('\n');
  return seen ? event : undefined;
}

/** Read SSE events until `stop` holds or the body ends. */
async function readSse(res: Response, stop: (events: SseEvent[]) => boolean = () => false, timeoutMs = 8000): Promise<SseEvent[]> {
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  const events: SseEvent[] = [];
  let buffer = '';
  const deadline = Date.now() + timeoutMs;
  try {
    while (Date.now() < deadline && !stop(events)) {
      const next = await Promise.race([
        reader.read(),
        new Promise<null>((r) => setTimeout(() => r(null), Math.max(1, deadline - Date.now()))),
      ]);
      if (!next || next.done) break;
      buffer += decoder.decode(next.value, { stream: true });
      for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
        const event = parseBlock(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        if (event) events.push(event);
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return events;
}

const messages = (events: SseEvent[]) => events.filter((e) => e.data !== '').map((e) => JSON.parse(e.data));

async function rawSession(capabilities: Record<string, unknown> = {}, version = '2025-11-25') {
  const post = (body: unknown, session?: string, accept = BOTH) =>
    fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept, ...(session ? { 'mcp-session-id': session } : {}) },
      body: JSON.stringify(body),
    });
  const init = await post({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: version, capabilities, clientInfo: { name: 'raw-streams', version: '1' } },
  });
  expect(init.status).toBe(200);
  const id = init.headers.get('mcp-session-id') as string;
  await init.json();
  expect((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, id)).status).toBe(202);
  return {
    id,
    post: (body: unknown, accept = BOTH) => post(body, id, accept),
    get: (lastEventId?: string) =>
      fetch(server.url, {
        headers: { 'mcp-session-id': id, accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
      }),
  };
}

describe('event ids, priming and resumption (bare HTTP client)', () => {
  it('an SSE answer starts with a priming event (id, empty data, retry) and every message has an id', async () => {
    const s = await rawSession();
    const res = await s.post({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'streams__steps', arguments: { tag: 'ids', pause: 20 }, _meta: { progressToken: 'p' } },
    });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const events = await readSse(res);
    expect(events[0]).toMatchObject({ data: '', retry: 1000, id: expect.stringMatching(/^\d+-0$/) });
    const stream = String(events[0]?.id).split('-')[0];
    expect(events.slice(1).map((e) => e.id)).toEqual([`${stream}-1`, `${stream}-2`, `${stream}-3`]);
    expect(messages(events).map((m) => m.method ?? 'response')).toEqual(['notifications/progress', 'notifications/progress', 'response']);
  });

  it('a 2025-06-18 session gets ids but no priming event (an older client may not expect empty events)', async () => {
    const s = await rawSession({}, '2025-06-18');
    const res = await s.post({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'streams__steps', arguments: { tag: 'old', pause: 20 }, _meta: { progressToken: 'p' } },
    });
    const events = await readSse(res);
    expect(events.every((e) => e.data !== '' && /^\d+-\d+$/.test(e.id ?? ''))).toBe(true);
    expect(events).toHaveLength(3);
  });

  it('a dropped POST stream resumes with GET + Last-Event-ID: what followed, then the rest as it comes', async () => {
    const s = await rawSession();
    const res = await s.post({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'streams__steps', arguments: { tag: 'dropped', pause: 400 }, _meta: { progressToken: 'p' } },
    });
    // read the priming event and the first progress notification, then hang up
    const first = await readSse(res, (events) => events.some((e) => e.data.includes('notifications/progress')));
    const last = first.at(-1)?.id as string;
    expect(JSON.parse(first.at(-1)?.data as string)).toMatchObject({ method: 'notifications/progress', params: { progress: 1 } });
    const resumed = await s.get(last);
    expect(resumed.status).toBe(200);
    expect(resumed.headers.get('content-type')).toBe('text/event-stream');
    const rest = await readSse(resumed);
    const [stream, seq] = last.split('-').map(Number) as [number, number];
    expect(rest.map((e) => e.id)).toEqual([`${stream}-${seq + 1}`, `${stream}-${seq + 2}`]);
    const [progress, response] = messages(rest);
    expect(progress).toMatchObject({ method: 'notifications/progress', params: { progress: 2, progressToken: 'p' } });
    expect(response.id).toBe(7);
    expect(JSON.parse(response.result.content[0].text)).toEqual({ tag: 'dropped' });
    // that stream has ended and everything on it was written: it is forgotten, nothing to resume
    const again = await s.get(rest.at(-1)?.id as string);
    expect(again.status).toBe(404);
    expect((await again.json()).error.message).toMatch(/^Not Found: /);
    const unknown = await s.get('999-1');
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error.message).toBe(
      'Not Found: no stream of this session holds event 999-1 (its events were dropped, or it never existed)',
    );
  });

  it("the session's GET stream resumes too: notifications sent while it was down are replayed", async () => {
    const s = await rawSession();
    const stream = await s.get();
    const priming = await readSse(stream, (events) => events.length > 0);
    expect(priming[0]).toMatchObject({ data: '', retry: 1000 });
    // the stream is down (read and cancelled): a new function changes the tool list meanwhile
    const late = connect(engine.busUrl, { name: 'streams-late', logger: quiet });
    late.registerFunction('streams::late', () => 1, { metadata: expose });
    await late.ready({ timeoutMs: 5000 });
    await sleep(1500);
    const resumed = await s.get(priming[0]?.id);
    expect(resumed.status).toBe(200);
    const replayed = await readSse(resumed, (events) => events.some((e) => e.data.includes('list_changed')));
    expect(messages(replayed)).toContainEqual({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    await late.close();
  });

  it('a cancelled request is not answered with a bare 202: an empty SSE stream, or for a JSON-only client a JSON-RPC error', async () => {
    const s = await rawSession();
    const slow = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'demo__slow', arguments: { ms: 3000 } } });
    const cancel = (id: number) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'user' } });

    const started = Date.now();
    const pending = s.post(slow(21));
    await sleep(300);
    expect((await s.post(cancel(21))).status).toBe(202);
    const answer = await pending;
    expect(Date.now() - started).toBeLessThan(2500);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('text/event-stream');
    expect(await answer.text()).toBe('');

    const jsonOnly = s.post(slow(22), 'application/json');
    await sleep(300);
    await s.post(cancel(22));
    const json = await jsonOnly;
    expect(json.status).toBe(200);
    expect(await json.json()).toEqual({
      jsonrpc: '2.0',
      id: 22,
      error: { code: -32800, message: 'Request cancelled: the client sent notifications/cancelled' },
    });
  });

  it('a request to the client travels on the POST stream of the call; a reply that breaks the requested schema is refused', async () => {
    const s = await rawSession({ elicitation: {} });
    const res = await s.post({ jsonrpc: '2.0', id: 31, method: 'tools/call', params: { name: 'streams__ask', arguments: {} } });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = '';
    let request: any;
    while (!request) {
      const next = await reader.read();
      if (next.done) break;
      text += decoder.decode(next.value, { stream: true });
      const found = text
        .split('\n\n')
        .map(parseBlock)
        .find((e) => e?.data.includes('elicitation/create'));
      if (found) request = JSON.parse(found.data);
    }
    // the params as the function wrote them, and nothing else (not the engine's _caller_worker_id)
    expect(request).toEqual({
      jsonrpc: '2.0',
      id: expect.any(Number),
      method: 'elicitation/create',
      params: {
        message: 'How many?',
        requestedSchema: { type: 'object', properties: { n: { type: 'integer', minimum: 1 } }, required: ['n'] },
      },
    });
    expect(request.id).toBeGreaterThan(0);
    expect((await s.post({ jsonrpc: '2.0', id: request.id, result: { action: 'accept', content: { n: 0 } } })).status).toBe(202);
    let rest = '';
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      rest += decoder.decode(next.value, { stream: true });
    }
    const response = rest
      .split('\n\n')
      .map(parseBlock)
      .filter((e): e is SseEvent => Boolean(e?.data))
      .map((e) => JSON.parse(e.data))
      .find((m) => m.id === 31);
    expect(JSON.parse(response.result.content[0].text)).toEqual({
      code: 'CLIENT_ERROR',
      error: 'the MCP client accepted with content that does not match requestedSchema: content/n must be >= 1',
    });
  });

  it('a JSON-only request with no GET stream cannot carry a request to the client: the function learns it at once', async () => {
    const s = await rawSession({ elicitation: {} });
    const res = await s.post(
      { jsonrpc: '2.0', id: 41, method: 'tools/call', params: { name: 'streams__ask', arguments: {} } },
      'application/json',
    );
    const body = await res.json();
    expect(JSON.parse(body.result.content[0].text)).toEqual({
      code: 'CLIENT_UNREACHABLE',
      error:
        'cannot ask the MCP client (elicitation/create): cannot send elicitation/create to the client: its request is answered as JSON only and the session has no GET stream open',
    });
  });
});

describe('with the MCP SDK client', () => {
  it('resumes by itself after its POST stream dropped mid-call: progress and result all arrive', async () => {
    const lastEventIds: Array<string | null> = [];
    let drop = true;
    const dropping: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if ((init?.method ?? 'GET') === 'GET') lastEventIds.push(new Headers(init?.headers).get('last-event-id'));
      const sse = res.headers.get('content-type')?.includes('text/event-stream');
      if (init?.method !== 'POST' || !sse || !drop || !String(init.body).includes('streams__steps')) return res;
      drop = false;
      // hand the client the body up to the first progress notification, then break the connection
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      const decoder = new TextDecoder();
      let seen = '';
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const next = await reader.read();
          if (next.done) return controller.close();
          controller.enqueue(next.value);
          seen += decoder.decode(next.value, { stream: true });
          if (seen.includes('notifications/progress')) {
            await reader.cancel();
            controller.error(new Error('connection reset'));
          }
        },
      });
      return new Response(body, { status: res.status, headers: res.headers });
    };
    const client = await httpClient(server.url, undefined, { fetch: dropping });
    try {
      const progress: number[] = [];
      const result = await client.callTool({ name: 'streams__steps', arguments: { tag: 'sdk', pause: 600 } }, undefined, {
        onprogress: (p) => progress.push(p.progress),
      });
      expect(JSON.parse(textOf(result))).toEqual({ tag: 'sdk' });
      expect(progress).toEqual([1, 2]);
      expect(lastEventIds.filter((id) => id !== null)).toEqual([expect.stringMatching(/^\d+-1$/)]);
    } finally {
      await client.close();
    }
  });

  it('follows a stream eng-mcp closed on the function’s request (SEP-1699) and gets the result on the resumed stream', async () => {
    const resumes: string[] = [];
    const watching: typeof fetch = async (input, init) => {
      const id = (init?.method ?? 'GET') === 'GET' ? new Headers(init?.headers).get('last-event-id') : null;
      if (id) resumes.push(id);
      return fetch(input, init);
    };
    const client = await httpClient(server.url, undefined, { fetch: watching });
    try {
      const result = await client.callTool({ name: 'streams__poll', arguments: {} });
      expect(JSON.parse(textOf(result))).toEqual({ closed: { closed: true } });
      expect(resumes).toEqual([expect.stringMatching(/^\d+-0$/)]);
    } finally {
      await client.close();
    }
  });

  it('a call cancelled while its function waits for the client: the request to the client is cancelled, the function told so', async () => {
    const client = await httpClient(server.url, { capabilities: { elicitation: {} } });
    const cancelledAtClient: unknown[] = [];
    let elicited = false;
    try {
      client.setRequestHandler(ElicitRequestSchema, (_request, extra) => {
        elicited = true;
        // a user who never answers; the SDK aborts this handler when eng-mcp cancels the request
        return new Promise((_resolve, reject) => {
          extra.signal.addEventListener('abort', () => {
            cancelledAtClient.push(extra.signal.reason);
            reject(new Error('aborted'));
          });
        });
      });
      const controller = new AbortController();
      const pending = client.callTool({ name: 'streams__ask', arguments: {} }, undefined, { signal: controller.signal });
      // cancelled while the function waits for the client: its request has reached the client
      await waitFor(() => elicited, 30_000);
      controller.abort();
      await expect(pending).rejects.toThrow();
      await waitFor(() => asked.some((a) => a.code === 'CANCELLED'), 30_000);
      expect(asked.find((a) => a.code === 'CANCELLED')).toEqual({
        code: 'CANCELLED',
        error: 'the client cancelled the tool call while it was asked for elicitation/create',
      });
      await waitFor(() => cancelledAtClient.length === 1, 30_000);
      expect(await client.ping()).toEqual({});
    } finally {
      await client.close();
    }
  });

  it('serves several streams of one session at once', async () => {
    const client = await httpClient(server.url);
    try {
      const runs = Array.from({ length: 6 }, async (_, i) => {
        const progress: number[] = [];
        const result = await client.callTool({ name: 'streams__steps', arguments: { tag: `run-${i}`, pause: 100 } }, undefined, {
          onprogress: (p) => progress.push(p.progress),
        });
        return { result: JSON.parse(textOf(result)), progress };
      });
      expect(await Promise.all(runs)).toEqual(Array.from({ length: 6 }, (_, i) => ({ result: { tag: `run-${i}` }, progress: [1, 2] })));
    } finally {
      await client.close();
    }
  });

  it('a JSON-only call has no stream to close: the function is told why', async () => {
    const s = await rawSession();
    const res = await s.post(
      { jsonrpc: '2.0', id: 51, method: 'tools/call', params: { name: 'streams__poll', arguments: {} } },
      'application/json',
    );
    const body = await res.json();
    expect(JSON.parse(body.result.content[0].text)).toEqual({
      closed: { closed: false, reason: 'the client accepts only JSON for this request, so its answer cannot be resumed' },
    });
  });
});
