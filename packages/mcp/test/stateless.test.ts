/**
 * MCP 2026-07-28 (stateless) behaviour a client relies on, over raw HTTP and stdio:
 * - two eng-mcp instances on one engine, behind a round-robin proxy, answer as one server: the
 *   same lists, calls, an input-required round started on one and finished on the other, and tasks
 *   created on one and read, answered and finished through the other;
 * - a tampered requestState is refused; a task outlives the instance that created it (completed
 *   ones stay readable, a running one reads failed once its instance is gone);
 * - on stdio, 2026-07-28 requests and a 2025-11-25 session share one process;
 * - JSON-RPC errors carry the request id when it is known (issue 28 item 8).
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EngClient } from '@eng/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineProcess } from '../../../test/harness.ts';
import { conformanceWorker2026 } from './conformance-fixtures-2026.ts';
import { type HttpMcp, httpBase, httpMcp, MCP_BIN, post2026, sleep, startMcpEngine, textOf } from './helpers.ts';

const V = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';
const meta = (capabilities: Record<string, unknown> = { elicitation: {}, sampling: {}, roots: {} }) => ({
  'io.modelcontextprotocol/protocolVersion': V,
  'io.modelcontextprotocol/clientInfo': { name: 'stateless-test', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': capabilities,
});

let engine: EngineProcess;
let worker: EngClient;
let a: HttpMcp;
let b: HttpMcp;
let proxy: Server;
let proxyUrl: string;
const hits: string[] = [];
const lateLog: unknown[] = [];
/** Set when probe::late_log has started (a cancel sent before it runs would stop it before it logs). */
let lateStarted = false;

/** A round-robin load balancer: request n goes to /mcp-a or /mcp-b in turn. */
async function startProxy(): Promise<void> {
  let n = 0;
  const base = httpBase(engine);
  proxy = createServer(async (req, res) => {
    const path = n++ % 2 === 0 ? 'mcp-a' : 'mcp-b';
    hits.push(path);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers: Record<string, string> = {};
    for (const [key, value] of Object.entries(req.headers)) {
      if (key !== 'host' && key !== 'content-length' && typeof value === 'string') headers[key] = value;
    }
    const upstream = await fetch(`${base}/${path}`, {
      method: req.method,
      headers,
      body: chunks.length ? Buffer.concat(chunks) : undefined,
    });
    res.writeHead(upstream.status, Object.fromEntries(upstream.headers));
    if (upstream.body) for await (const chunk of upstream.body) res.write(chunk);
    res.end();
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`;
}

let nextId = 1;
async function rpc(
  url: string,
  method: string,
  params: Record<string, unknown> = {},
  caps?: Record<string, unknown>,
  headers: Record<string, string> = {},
) {
  const id = nextId++;
  return { id, ...(await post2026(url, id, method, params, meta(caps), headers)) };
}

beforeAll(async () => {
  engine = await startMcpEngine('  - name: eng-state\n    config:\n      adapter: { name: kv, config: { store_method: in_memory } }\n');
  worker = await conformanceWorker2026(engine);
  // a function that keeps logging after its client cancelled: what its log calls answer is kept here
  worker.registerFunction(
    'probe::late_log',
    async (_input: unknown, ctx: { metadata?: unknown; signal: AbortSignal }) => {
      const mcp = (ctx.metadata as { mcp: { token: string; log_function: string } }).mcp;
      lateStarted = true;
      // logs once its call is cancelled (or after 5 s, when the test then fails on what it hears)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 5000);
        ctx.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          resolve();
        });
      });
      lateLog.push(await worker.call(mcp.log_function, { token: mcp.token, level: 'info', data: 'after the cancel' }));
      return 'done';
    },
    { description: 'logs late', metadata: { 'mcp.expose': true } },
  );
  [a, b] = await Promise.all([
    httpMcp(engine, ['--http-path', 'mcp-a'], {}, 'mcp-a'),
    httpMcp(engine, ['--http-path', 'mcp-b'], {}, 'mcp-b'),
  ]);
  await startProxy();
}, 120_000);
afterAll(async () => {
  proxy?.close();
  await a?.stop();
  await b?.stop();
  await worker?.close();
  await engine?.stop();
});

describe('two eng-mcp instances behind a round-robin proxy', () => {
  it('answer discovery, lists and calls alike, whichever instance gets the request', async () => {
    const discovered = await rpc(proxyUrl, 'server/discover');
    expect(discovered.body.result?.supportedVersions).toEqual([V, '2025-11-25', '2025-06-18', '2025-03-26']);
    const lists = [await rpc(proxyUrl, 'tools/list'), await rpc(proxyUrl, 'tools/list')];
    const names = lists.map((l) => ((l.body.result?.tools ?? []) as Array<{ name: string }>).map((t) => t.name));
    expect(names[0]).toEqual(names[1]);
    expect(names[0]).toContain('greet');
    expect(lists[0]?.body.result?.ttlMs).toBeGreaterThan(0);
    expect(lists[0]?.body.result?.cacheScope).toBe('public');
    for (let i = 0; i < 2; i++) {
      const called = await rpc(proxyUrl, 'tools/call', { name: 'greet', arguments: { name: `n${i}` } });
      expect(textOf(called.body.result)).toBe(`Hello, n${i}!`);
      expect(called.body.result?.resultType).toBe('complete');
    }
    expect(new Set(hits)).toEqual(new Set(['mcp-a', 'mcp-b']));
  });

  it('continues an input-required call on the other instance, over several rounds', async () => {
    const round1 = await rpc(proxyUrl, 'tools/call', { name: 'test_input_required_result_multi_round', arguments: {} });
    expect(round1.body.result?.resultType).toBe('input_required');
    expect(Object.keys(round1.body.result?.inputRequests)).toEqual(['step1']);
    const round2 = await rpc(proxyUrl, 'tools/call', {
      name: 'test_input_required_result_multi_round',
      arguments: {},
      inputResponses: { step1: { action: 'accept', content: { name: 'Ada' } } },
      requestState: round1.body.result?.requestState,
    });
    expect(Object.keys(round2.body.result?.inputRequests)).toEqual(['step2']);
    expect(round2.body.result?.requestState).not.toBe(round1.body.result?.requestState);
    // the old state is spent: replaying it is refused
    const replay = await rpc(proxyUrl, 'tools/call', {
      name: 'test_input_required_result_multi_round',
      arguments: {},
      inputResponses: { step1: { action: 'accept', content: { name: 'Eve' } } },
      requestState: round1.body.result?.requestState,
    });
    expect(replay.body.error?.code).toBe(-32602);
    const round3 = await rpc(proxyUrl, 'tools/call', {
      name: 'test_input_required_result_multi_round',
      arguments: {},
      inputResponses: { step2: { action: 'accept', content: { color: 'green' } } },
      requestState: round2.body.result?.requestState,
    });
    expect(textOf(round3.body.result)).toBe('Ada likes green');
  });

  it('refuses a tampered requestState', async () => {
    const round1 = await rpc(proxyUrl, 'tools/call', { name: 'test_input_required_result_tampered_state', arguments: {} });
    const state = round1.body.result?.requestState as string;
    const [body, mac] = state.split('.');
    const claims = JSON.parse(Buffer.from(body as string, 'base64url').toString());
    const forged = `${Buffer.from(JSON.stringify({ ...claims, r: claims.r + 1 })).toString('base64url')}.${mac}`;
    const refused = await rpc(proxyUrl, 'tools/call', {
      name: 'test_input_required_result_tampered_state',
      arguments: {},
      inputResponses: { user_name: { action: 'accept', content: { name: 'Mallory' } } },
      requestState: forged,
    });
    expect(refused.body.error?.code).toBe(-32602);
    expect(refused.body.error?.message).toMatch(/altered|not issued/);
  });

  it('runs tasks any instance reads, answers and cancels', async () => {
    const caps = { elicitation: {}, extensions: { [TASKS]: {} } };
    const created = await rpc(proxyUrl, 'tools/call', { name: 'confirm_delete', arguments: {} }, caps);
    expect(created.body.result?.resultType).toBe('task');
    const taskId = created.body.result?.taskId as string;
    let task: Record<string, any> | undefined;
    for (let i = 0; i < 40 && task?.status !== 'input_required'; i++) {
      task = (await rpc(proxyUrl, 'tasks/get', { taskId }, caps)).body.result;
      if (task?.status !== 'input_required') await sleep(50);
    }
    expect(task?.status).toBe('input_required');
    expect(Object.keys(task?.inputRequests)).toEqual(['confirm']);
    const ack = await rpc(
      proxyUrl,
      'tasks/update',
      { taskId, inputResponses: { confirm: { action: 'accept', content: { confirm: true } } } },
      caps,
    );
    expect(ack.body.result?.resultType).toBe('complete');
    for (let i = 0; i < 40 && task?.status !== 'completed'; i++) {
      task = (await rpc(proxyUrl, 'tasks/get', { taskId }, caps)).body.result;
      if (task?.status !== 'completed') await sleep(50);
    }
    expect(textOf(task?.result)).toBe('deleted');
    // cancelled through either instance, the task reads cancelled everywhere
    const long = await rpc(proxyUrl, 'tools/call', { name: 'slow_compute', arguments: { seconds: 60, label: 'cancel-me' } }, caps);
    const longId = long.body.result?.taskId as string;
    expect((await rpc(proxyUrl, 'tasks/cancel', { taskId: longId }, caps)).body.result).toMatchObject({ resultType: 'complete' });
    for (let i = 0; i < 2; i++) expect((await rpc(proxyUrl, 'tasks/get', { taskId: longId }, caps)).body.result?.status).toBe('cancelled');
    // without the extension: -32021, HTTP 400
    const refused = await rpc(proxyUrl, 'tasks/get', { taskId }, {});
    expect(refused.status).toBe(400);
    expect(refused.body.error?.code).toBe(-32021);
    const required = await rpc(proxyUrl, 'tools/call', { name: 'failing_job', arguments: {} }, {});
    expect(required.body.error?.data).toEqual({ requiredCapabilities: { extensions: { [TASKS]: {} } } });
  });

  it('tells a subscriptions/listen stream on one instance how a task run by the other goes (notifications/tasks)', async () => {
    const caps = { elicitation: {}, extensions: { [TASKS]: {} } };
    // without the extension, asking for task notifications is -32021
    const refused = await rpc(a.url, 'subscriptions/listen', { notifications: { taskIds: ['x'] } }, {});
    expect(refused.status).toBe(400);
    expect(refused.body.error?.code).toBe(-32021);
    const created = await rpc(b.url, 'tools/call', { name: 'confirm_delete', arguments: {} }, caps);
    const taskId = created.body.result?.taskId as string;
    expect(taskId).toBeTruthy();
    const stream = new AbortController();
    const res = await fetch(a.url, {
      method: 'POST',
      signal: stream.signal,
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': V,
        'mcp-method': 'subscriptions/listen',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'listen-1',
        method: 'subscriptions/listen',
        params: { notifications: { taskIds: [taskId, taskId] }, _meta: meta(caps) },
      }),
    });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const seen: Array<{ method: string; params: Record<string, any> }> = [];
    const reading = (async () => {
      const decoder = new TextDecoder();
      let buffered = '';
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffered += decoder.decode(chunk, { stream: true });
        let end = buffered.indexOf('\n\n');
        while (end !== -1) {
          const data = buffered
            .slice(0, end)
            .split('\n')
            .filter((l) => l.startsWith('data: '))
            .map((l) => l.slice(6))
            .join('');
          buffered = buffered.slice(end + 2);
          if (data) seen.push(JSON.parse(data));
          end = buffered.indexOf('\n\n');
        }
      }
    })().catch(() => undefined);
    const tasks = () => seen.filter((m) => m.method === 'notifications/tasks').map((m) => m.params);
    for (let i = 0; i < 100 && !tasks().some((t) => t.status === 'input_required'); i++) await sleep(50);
    expect(seen[0]?.method).toBe('notifications/subscriptions/acknowledged');
    expect(seen[0]?.params.notifications).toEqual({ taskIds: [taskId] });
    const asking = tasks().find((t) => t.status === 'input_required');
    expect(asking).toMatchObject({ taskId, status: 'input_required', _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen-1' } });
    expect(Object.keys(asking?.inputRequests ?? {})).toEqual(['confirm']);
    expect(asking).not.toHaveProperty('owner');
    await rpc(proxyUrl, 'tasks/update', { taskId, inputResponses: { confirm: { action: 'accept', content: { confirm: true } } } }, caps);
    for (let i = 0; i < 100 && !tasks().some((t) => t.status === 'completed'); i++) await sleep(50);
    const done = tasks().find((t) => t.status === 'completed');
    expect(textOf(done?.result)).toBe('deleted');
    // each notification is a status change, in order
    const statuses = tasks().map((t) => t.status);
    expect(statuses.slice(statuses.indexOf('input_required'))).toEqual(['input_required', 'working', 'completed']);
    stream.abort();
    await reading;
  });

  it('keeps task records when the instance that ran them stops', async () => {
    const caps = { elicitation: {}, extensions: { [TASKS]: {} } };
    // created on a: the first request of a fresh pair goes to whichever instance is next, so ask a directly
    const done = await rpc(
      `${httpBase(engine)}/mcp-a`,
      'tools/call',
      { name: 'slow_compute', arguments: { seconds: 0.1, label: 'kept' } },
      caps,
    );
    const running = await rpc(
      `${httpBase(engine)}/mcp-a`,
      'tools/call',
      { name: 'slow_compute', arguments: { seconds: 60, label: 'orphan' } },
      caps,
    );
    await sleep(400);
    await a.stop();
    const kept = await rpc(`${httpBase(engine)}/mcp-b`, 'tasks/get', { taskId: done.body.result?.taskId }, caps);
    expect(kept.body.result?.status).toBe('completed');
    expect(textOf(kept.body.result?.result)).toContain('computed kept');
    let orphan: Record<string, any> | undefined;
    for (let i = 0; i < 40 && orphan?.status !== 'failed'; i++) {
      orphan = (await rpc(`${httpBase(engine)}/mcp-b`, 'tasks/get', { taskId: running.body.result?.taskId }, caps)).body.result;
      if (orphan?.status !== 'failed') await sleep(100);
    }
    expect(orphan?.status).toBe('failed');
    expect(orphan?.error?.message).toMatch(/stopped before it finished/);
  });
});

describe('request ids on errors (item 8)', () => {
  it('an unsupported MCP-Protocol-Version names the request, as does a second initialize', async () => {
    const url = `${httpBase(engine)}/mcp-b`;
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '1999-01-01' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 11, method: 'tools/list' }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { id: unknown }).id).toBe(11);
    const again = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': 'x' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 12,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      }),
    });
    expect(((await again.json()) as { id: unknown }).id).toBe(12);
  });
});

describe('stdio', () => {
  it('answers 2026-07-28 requests and a 2025-11-25 session in one process, with progress on the request', async () => {
    const child = spawn(process.execPath, [MCP_BIN, '--engine-url', engine.busUrl], {
      env: { ...process.env, ENG_WORKER_CONFIG: '' },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    const lines: Array<Record<string, any>> = [];
    let buffer = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      let nl = buffer.indexOf('\n');
      while (nl !== -1) {
        lines.push(JSON.parse(buffer.slice(0, nl)));
        buffer = buffer.slice(nl + 1);
        nl = buffer.indexOf('\n');
      }
    });
    const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`);
    // the first answer waits for eng-mcp to start, which takes seconds on a loaded machine
    const answer = async (id: number) => {
      for (let i = 0; i < 800; i++) {
        const found = lines.find((l) => l.id === id && ('result' in l || 'error' in l));
        if (found) return found;
        await sleep(25);
      }
      throw new Error(`no answer to ${id}`);
    };
    try {
      send({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: meta() } });
      expect((await answer(1)).result.supportedVersions[0]).toBe(V);
      send({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'slow_compute', arguments: { seconds: 0.05, label: 'p' }, _meta: { ...meta(), progressToken: 'tok' } },
      });
      expect(textOf((await answer(2)).result)).toContain('computed p');
      expect(lines.some((l) => l.method === 'notifications/progress' && l.params.progressToken === 'tok')).toBe(true);
      // cancelled: no answer, and the function's later log call hears that the call was cancelled
      send({
        jsonrpc: '2.0',
        id: 9,
        method: 'tools/call',
        params: { name: 'probe__late_log', arguments: {}, _meta: { ...meta(), 'io.modelcontextprotocol/logLevel': 'info' } },
      });
      // cancelled once the function runs (a cancel that arrives first stops the call before it starts)
      for (let i = 0; i < 200 && !lateStarted; i++) await sleep(25);
      expect(lateStarted).toBe(true);
      send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 9 } });
      for (let i = 0; i < 200 && lateLog.length === 0; i++) await sleep(25);
      expect(lateLog[0]).toMatchObject({ ok: false, cancelled: true });
      expect(lines.some((l) => l.id === 9)).toBe(false);
      send({ jsonrpc: '2.0', id: 3, method: 'ping', params: { _meta: meta() } });
      expect((await answer(3)).error.code).toBe(-32601);
      send({
        jsonrpc: '2.0',
        id: 4,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'legacy', version: '1' } },
      });
      expect((await answer(4)).result.protocolVersion).toBe('2025-11-25');
      send({
        jsonrpc: '2.0',
        id: 5,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'legacy', version: '1' } },
      });
      expect((await answer(5)).error).toMatchObject({ code: -32600 });
    } finally {
      child.kill('SIGTERM');
    }
  });
});
