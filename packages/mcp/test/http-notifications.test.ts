/**
 * Server notifications over Streamable HTTP (MCP transports/streamable-http, server/resources
 * §subscriptions, server/utilities/logging; seed §2.13): `notifications/resources/updated` after
 * `resources/subscribe` and `notifications/message` after `logging/setLevel`, carried by the
 * session's GET stream (or by a request's own SSE stream when they belong to it), for the MCP SDK
 * client and for a bare HTTP client. Subscriptions to eng://workers and eng://triggers are notified
 * when a worker connects or a trigger of an exposed function is bound, and only then.
 */
import { connect, type EngClient } from '@eng/sdk';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LoggingMessageNotificationSchema, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, waitFor } from '../../../test/harness.ts';
import { demoWorker, type HttpMcp, httpClient, httpMcp, sleep, startMcpEngine, textOf } from './helpers.ts';

/** eng-mcp re-reads subscribed resources this often (`poll_ms`); trigger changes have no engine event. */
const POLL_MS = 500;
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

let engine: EngineProcess;
let worker: EngClient;
let server: HttpMcp;
const cleanup: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  engine = await startMcpEngine();
  worker = await demoWorker(engine);
  // an exposed function that sends an MCP log message through eng-mcp's log function, with the
  // call's token (metadata.mcp.token: to the calling request) or without it (refused: no one to tell)
  worker.registerFunction(
    'notify::log',
    async (input: { level: string; message: string; anonymous?: boolean }, ctx) => {
      const mcp = (ctx.metadata as { mcp?: { log_function?: string; token?: string } })?.mcp;
      if (!mcp?.log_function) return { error: 'no log function in the invocation metadata' };
      const payload: Record<string, unknown> = { level: input.level, data: { message: input.message }, logger: 'notify' };
      if (!input.anonymous) payload.token = mcp.token;
      return worker.call(mcp.log_function, payload);
    },
    {
      description: 'log through eng-mcp',
      request_format: {
        type: 'object',
        properties: { level: { type: 'string' }, message: { type: 'string' }, anonymous: { type: 'boolean' } },
        required: ['level', 'message'],
      },
      metadata: { 'mcp.expose': true },
    },
  );
  await waitFor(async () => {
    const { functions } = await worker.call<{ functions: Array<{ function_id: string }> }>('engine::functions::list', {});
    return functions.some((f) => f.function_id === 'notify::log');
  });
  server = await httpMcp(engine, [], { ENG_WORKER_CONFIG: JSON.stringify({ poll_ms: POLL_MS }) });
});
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step().catch(() => undefined);
});
afterAll(async () => {
  await server?.stop();
  await worker?.close();
  await engine?.stop();
});

async function sdkClient(): Promise<{ client: Client; updates: string[]; logs: Array<{ level: string; logger?: string; data: any }> }> {
  const client = await httpClient(server.url);
  cleanup.push(() => client.close());
  const updates: string[] = [];
  const logs: Array<{ level: string; logger?: string; data: any }> = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    updates.push(n.params.uri);
  });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    logs.push(n.params);
  });
  return { client, updates, logs };
}

/** A worker that connects now (and is listed with a pid), closed after the test. */
async function lateWorker(name: string): Promise<EngClient> {
  const late = connect(engine.busUrl, { name, logger: quiet });
  cleanup.push(() => late.close());
  await late.ready({ timeoutMs: 5000 });
  return late;
}

describe('MCP SDK client over Streamable HTTP', () => {
  it('subscribed to eng://workers: notified when a worker connects and when it leaves, not while nothing changes', async () => {
    const { client, updates } = await sdkClient();
    expect(await client.subscribeResource({ uri: 'eng://workers' })).toEqual({});
    expect(await client.subscribeResource({ uri: 'eng://functions' })).toEqual({});
    await sleep(POLL_MS * 3);
    expect(updates).toEqual([]);

    const late = await lateWorker('notify-late-worker');
    await waitFor(() => updates.includes('eng://workers'), 10_000);
    // a worker with no functions changes the worker list, not the function list
    await sleep(POLL_MS * 2);
    expect(updates).not.toContain('eng://functions');
    const { contents } = await client.readResource({ uri: 'eng://workers' });
    expect(JSON.parse((contents[0] as { text: string }).text).map((w: { name: string }) => w.name)).toContain('notify-late-worker');

    updates.length = 0;
    await late.close();
    await waitFor(() => updates.includes('eng://workers'), 10_000);

    expect(await client.unsubscribeResource({ uri: 'eng://workers' })).toEqual({});
    updates.length = 0;
    await lateWorker('notify-unwatched-worker');
    await sleep(POLL_MS * 3);
    expect(updates).not.toContain('eng://workers');
  });

  it('a call in flight is not a change of eng://workers (the worker busy, eng-mcp serving /mcp requests and streams)', async () => {
    const { client, updates } = await sdkClient();
    await client.subscribeResource({ uri: 'eng://workers' });
    await client.subscribeResource({ uri: 'eng://worker/mcp-demo' });
    // the demo worker is busy for several polls, and eng-mcp holds this POST and the GET stream open
    const slow = await client.callTool({ name: 'demo__slow', arguments: { ms: POLL_MS * 5 } });
    expect(JSON.parse(textOf(slow))).toEqual({ slept: POLL_MS * 5 });
    await sleep(POLL_MS * 2);
    expect(updates).toEqual([]);
  });

  it('subscribed to eng://triggers: notified when a trigger of an exposed function is bound or removed, not for a hidden one', async () => {
    const { client, updates } = await sdkClient();
    await client.subscribeResource({ uri: 'eng://triggers' });
    const owner = await lateWorker('notify-trigger-owner');

    // demo::hidden has no mcp.expose: its trigger is not in eng://triggers, so nothing to tell
    owner.registerTrigger({ type: 'http', function_id: 'demo::hidden', config: { api_path: 'notify/hidden', http_method: 'POST' } });
    await sleep(POLL_MS * 4);
    expect(updates).toEqual([]);

    const binding = owner.registerTrigger({
      type: 'http',
      function_id: 'demo::echo',
      config: { api_path: 'notify/echo', http_method: 'POST' },
    });
    await waitFor(() => updates.includes('eng://triggers'), 10_000);
    const { contents } = await client.readResource({ uri: 'eng://triggers' });
    const triggers = JSON.parse((contents[0] as { text: string }).text) as Array<{ function_id: string; config: { api_path?: string } }>;
    expect(triggers.some((t) => t.function_id === 'demo::echo' && t.config.api_path === 'notify/echo')).toBe(true);
    expect(triggers.some((t) => t.function_id === 'demo::hidden')).toBe(false);

    updates.length = 0;
    binding.unregister();
    await waitFor(() => updates.includes('eng://triggers'), 10_000);
  });

  it('logging/setLevel filters notifications/message; a log line reaches the calling request only', async () => {
    const { client, logs } = await sdkClient();
    const { client: other, logs: otherLogs } = await sdkClient();
    await other.setLoggingLevel('debug');
    await client.setLoggingLevel('error');
    const below = await client.callTool({ name: 'notify__log', arguments: { level: 'warning', message: 'too low' } });
    expect(JSON.parse(textOf(below))).toEqual({ ok: true, delivered: 0 });
    const at = await client.callTool({ name: 'notify__log', arguments: { level: 'error', message: 'to the caller' } });
    expect(JSON.parse(textOf(at))).toEqual({ ok: true, delivered: 1 });
    await waitFor(() => logs.some((l) => l.data?.message === 'to the caller'), 8000);
    expect(logs.find((l) => l.data?.message === 'to the caller')).toEqual({
      level: 'error',
      logger: 'notify',
      data: { message: 'to the caller' },
    });
    expect(logs.some((l) => l.data?.message === 'too low')).toBe(false);

    // the call asked for no progress: still its own log line only (the defect: it reached every session)
    await client.setLoggingLevel('debug');
    const progress: number[] = [];
    const related = await client.callTool({ name: 'notify__log', arguments: { level: 'info', message: 'related' } }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    });
    expect(JSON.parse(textOf(related))).toEqual({ ok: true, delivered: 1 });
    await waitFor(() => logs.some((l) => l.data?.message === 'related'), 8000);
    expect(logs.find((l) => l.data?.message === 'related')).toMatchObject({ level: 'info', logger: 'notify' });
    // without the call's token a function has no one to log to: refused, nothing sent anywhere
    const anonymous = await client.callTool({ name: 'notify__log', arguments: { level: 'error', message: 'anonymous', anonymous: true } });
    expect(JSON.parse(textOf(anonymous))).toEqual({
      ok: false,
      delivered: 0,
      error: 'token is required: pass metadata.mcp.token of the call',
    });
    await sleep(300);
    expect(otherLogs).toEqual([]);
    expect(logs.some((l) => l.data?.message === 'anonymous')).toBe(false);

    const unknown = await client.setLoggingLevel('loud' as never).catch((e: unknown) => e);
    expect((unknown as { code?: number }).code).toBe(-32602);
  });
});

// ── a bare HTTP client: the notifications travel on the session's GET stream ─────────────────

const BOTH = 'application/json, text/event-stream';

/** A session opened by hand, with its GET stream read in the background. */
/** The `data` events of an SSE body, parsed, until it ends. */
async function sseEvents(res: Response): Promise<any[]> {
  const events: any[] = [];
  for (const block of (await res.text()).split('\n\n')) {
    const data = block
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => l.slice(6))
      .join('\n');
    if (data) events.push(JSON.parse(data));
  }
  return events;
}

async function rawSession(): Promise<{
  id: string;
  events: any[];
  rpc(id: number, method: string, params?: unknown): Promise<any>;
  stream(id: number, method: string, params?: unknown): Promise<any[]>;
}> {
  const post = (body: unknown, session?: string) =>
    fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: BOTH, ...(session ? { 'mcp-session-id': session } : {}) },
      body: JSON.stringify(body),
    });
  const init = await post({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw-notify', version: '1' } },
  });
  expect(init.status).toBe(200);
  const id = init.headers.get('mcp-session-id') as string;
  await init.json();
  expect((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, id)).status).toBe(202);

  const stream = await fetch(server.url, { headers: { 'mcp-session-id': id, accept: 'text/event-stream' } });
  expect(stream.status).toBe(200);
  expect(stream.headers.get('content-type')).toBe('text/event-stream');
  const events: any[] = [];
  const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
  cleanup.push(async () => {
    await reader.cancel().catch(() => undefined);
    await fetch(server.url, { method: 'DELETE', headers: { 'mcp-session-id': id } });
  });
  void (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      const next = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (next.done) return;
      buffer += decoder.decode(next.value, { stream: true });
      for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
        const data = buffer
          .slice(0, end)
          .split('\n')
          .filter((l) => l.startsWith('data: '))
          .map((l) => l.slice(6))
          .join('\n');
        buffer = buffer.slice(end + 2);
        if (data) events.push(JSON.parse(data));
      }
    }
  })();
  let next = 1;
  return {
    id,
    events,
    async rpc(requestId, method, params = {}) {
      const res = await post({ jsonrpc: '2.0', id: requestId ?? next++, method, params }, id);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('application/json');
      return res.json();
    },
    async stream(requestId, method, params = {}) {
      const res = await post({ jsonrpc: '2.0', id: requestId, method, params }, id);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/event-stream');
      return sseEvents(res);
    },
  };
}

describe('bare HTTP client with a GET stream', () => {
  it("gets resources/updated on its GET stream and a call's log line on that call's own POST stream; a session that did not subscribe gets nothing", async () => {
    const watcher = await rawSession();
    const bystander = await rawSession();
    expect((await watcher.rpc(1, 'resources/subscribe', { uri: 'eng://workers' })).result).toEqual({});
    expect((await watcher.rpc(2, 'logging/setLevel', { level: 'notice' })).result).toEqual({});
    expect((await bystander.rpc(1, 'logging/setLevel', { level: 'emergency' })).result).toEqual({});

    await lateWorker('notify-raw-worker');
    await waitFor(() => watcher.events.some((e) => e.method === 'notifications/resources/updated'), 10_000);
    expect(watcher.events.filter((e) => e.method === 'notifications/resources/updated')).toContainEqual({
      jsonrpc: '2.0',
      method: 'notifications/resources/updated',
      params: { uri: 'eng://workers' },
    });

    // a log line of a call travels on that call's own POST, which turns into an SSE stream for it
    const call = await watcher.stream(3, 'tools/call', { name: 'notify__log', arguments: { level: 'notice', message: 'raw related' } });
    expect(call.map((e) => e.method ?? 'response')).toEqual(['notifications/message', 'response']);
    expect(call[0]).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/message',
      params: { level: 'notice', logger: 'notify', data: { message: 'raw related' } },
    });
    expect(JSON.parse(call[1].result.content[0].text)).toEqual({ ok: true, delivered: 1 });
    expect(watcher.events.some((e) => e.method === 'notifications/message')).toBe(false);

    await sleep(POLL_MS * 2);
    expect(bystander.events.filter((e) => e.method === 'notifications/resources/updated' || e.method === 'notifications/message')).toEqual(
      [],
    );
  });
});
