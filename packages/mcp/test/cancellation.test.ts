/**
 * Cancellation reaches the function (issue 28 item 7). A tool call cancelled over stdio
 * (notifications/cancelled), over HTTP (2025-11-25 sessions: notifications/cancelled; 2026-07-28:
 * a closed response stream, or a client hanging up before any stream opened) or as a task (tasks/cancel) cancels its engine invocation: the
 * @eng/sdk function sees `ctx.signal` abort, the engine stops counting the call against its worker
 * at once, and later log calls of the call answer that it was cancelled. A notifications/cancelled
 * from another session naming the same request id cancels nothing. An iii-sdk function hears
 * nothing (the iii protocol has no cancel), runs to its end, and its worker keeps serving.
 */
import { connect, type EngClient } from '@eng/sdk';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { registerWorker as registerIii } from 'iii-sdk-0.22.1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, waitFor } from '../../../test/harness.ts';
import {
  type HttpMcp,
  httpClient,
  httpMcp,
  meta2026,
  post2026,
  type StdioMcp,
  sleep,
  startMcpEngine,
  stdioMcp,
  textOf,
} from './helpers.ts';

const V = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';

let engine: EngineProcess;
let worker: EngClient;
let iii: ReturnType<typeof registerIii>;
let stdio: StdioMcp;
let http: HttpMcp;

/** What each run of `cancel::wait` saw, by its `tag` argument. */
const runs = new Map<string, { aborted: boolean; reason?: string; lateLog?: unknown }>();
/** What the iii-sdk function's log call answered after its client cancelled, by tag. */
const iiiRuns = new Map<string, { finished: boolean; lateLog?: unknown }>();

type McpMeta = { mcp?: { log_function?: string; token?: string; progress_token?: string; progress_function?: string } };

beforeAll(async () => {
  engine = await startMcpEngine('  - name: eng-state\n    config:\n      adapter: { name: kv, config: { store_method: in_memory } }\n');
  worker = connect(engine.busUrl, { name: 'cancel-worker', logger: { debug() {}, info() {}, warn() {}, error() {} } });
  const waitOnSignal = async (input: { tag: string }, ctx: import('@eng/sdk').InvocationContext) => {
    const run: { aborted: boolean; reason?: string; lateLog?: unknown } = { aborted: false };
    runs.set(input.tag, run);
    // a first progress notification opens the HTTP response's event stream
    const meta = (ctx.metadata as McpMeta).mcp;
    if (meta?.progress_token && meta.progress_function) {
      await worker.call(meta.progress_function, { token: meta.progress_token, progress: 0, message: 'waiting' });
    }
    await new Promise<void>((resolve) => {
      const stop = () => {
        clearTimeout(timer);
        run.aborted = true;
        run.reason = (ctx.signal.reason as Error).message;
        resolve();
      };
      const timer = setTimeout(resolve, 20_000);
      // the cancellation may have come while the progress call above was out
      if (ctx.signal.aborted) stop();
      else ctx.signal.addEventListener('abort', stop);
    });
    // after the cancel: the call's log function says so
    const mcp = (ctx.metadata as McpMeta).mcp;
    if (mcp?.log_function) run.lateLog = await worker.call(mcp.log_function, { token: mcp.token, level: 'info', data: 'late' });
    return run.aborted ? 'stopped' : 'ran to the end';
  };
  worker.registerFunction('cancel::wait', waitOnSignal, { description: 'waits on its signal', metadata: { 'mcp.expose': true } });
  worker.registerFunction('cancel::task', waitOnSignal, {
    description: 'waits on its signal, as a task',
    metadata: { 'mcp.expose': true, 'mcp.task': 'optional' },
  });
  iii = registerIii(engine.busUrl, { workerName: 'iii-cancel', otel: { enabled: false }, reconnectionConfig: { maxRetries: 0 } });
  iii.registerFunction(
    'iiicancel::slow',
    async (input: { tag: string }, metadata?: unknown) => {
      const meta = metadata as McpMeta | undefined;
      const run: { finished: boolean; lateLog?: unknown } = { finished: false };
      iiiRuns.set(input.tag, run);
      await sleep(input.tag === 'quick' ? 0 : 600);
      const mcp = meta?.mcp;
      if (mcp?.log_function) {
        run.lateLog = await iii.trigger({ function_id: mcp.log_function, payload: { token: mcp.token, level: 'info', data: 'late' } });
      }
      run.finished = true;
      return { tag: input.tag };
    },
    { description: 'an iii-sdk function', metadata: { 'mcp.expose': true } },
  );
  await worker.ready({ timeoutMs: 10_000 });
  await waitFor(async () => {
    const { functions } = await worker.call<{ functions: Array<{ function_id: string }> }>('engine::functions::list', {});
    return ['cancel::wait', 'cancel::task', 'iiicancel::slow'].every((id) => functions.some((f) => f.function_id === id));
  }, 10_000);
  [stdio, http] = await Promise.all([stdioMcp(engine), httpMcp(engine)]);
});

afterAll(async () => {
  await stdio?.close();
  await http?.stop();
  await worker?.close();
  await iii?.shutdown();
  await engine?.stop();
});

async function activeOf(name: string): Promise<number | undefined> {
  const { workers } = await worker.call<{ workers: Array<{ name: string; active_invocations: number }> }>('engine::workers::list', {});
  return workers.find((w) => w.name === name)?.active_invocations;
}

/** Cancel an MCP SDK client's call of `cancel::wait` once the function runs; what the function saw. */
async function cancelThroughClient(client: Client, tag: string) {
  const controller = new AbortController();
  const pending = client.callTool({ name: 'cancel__wait', arguments: { tag } }, undefined, { signal: controller.signal });
  await waitFor(() => runs.has(tag), 10_000);
  expect(await activeOf('cancel-worker')).toBe(1);
  controller.abort('the user pressed stop');
  await expect(pending).rejects.toThrow();
  await waitFor(() => runs.get(tag)?.aborted, 5000);
  // the engine ended the invocation: nothing is counted against the worker any more
  await waitFor(async () => (await activeOf('cancel-worker')) === 0, 5000);
  await waitFor(() => runs.get(tag)?.lateLog !== undefined, 5000);
  expect(runs.get(tag)?.lateLog).toMatchObject({ ok: false, cancelled: true });
}

/** A raw 2026-07-28 tools/call of `cancel__wait` over HTTP that `signal` can abandon (extra `_meta` merged in). */
function waitCall2026(tag: string, signal: AbortSignal, meta: Record<string, unknown> = {}) {
  return fetch(http.url, {
    method: 'POST',
    signal,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': V,
      'mcp-method': 'tools/call',
      'mcp-name': 'cancel__wait',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: 'cancel__wait',
        arguments: { tag },
        _meta: {
          ...meta,
          'io.modelcontextprotocol/protocolVersion': V,
          'io.modelcontextprotocol/clientInfo': { name: 'cancel-test', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
  });
}

describe('a cancelled tool call cancels its engine invocation', () => {
  it('over stdio (notifications/cancelled)', async () => {
    await cancelThroughClient(stdio.client, 'stdio');
    expect(runs.get('stdio')?.reason).toContain('cancelled');
    // the session goes on
    expect(await stdio.client.ping()).toEqual({});
  });

  it('over HTTP on a 2025-11-25 session (notifications/cancelled)', async () => {
    const client = await httpClient(http.url);
    try {
      await cancelThroughClient(client, 'http-2025');
    } finally {
      await client.close();
    }
  });

  it("over HTTP on 2026-07-28 when the client closes the request's stream", async () => {
    const controller = new AbortController();
    const request = waitCall2026('http-2026', controller.signal, { progressToken: 'p1' });
    // the function's first progress notification opened the event stream; then the client goes away
    const response = await request;
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    expect(runs.has('http-2026')).toBe(true);
    controller.abort();
    await waitFor(() => runs.get('http-2026')?.aborted, 5000);
    await waitFor(async () => (await activeOf('cancel-worker')) === 0, 5000);
  });

  it('over HTTP on 2026-07-28 when the client hangs up before any event stream opened', async () => {
    const controller = new AbortController();
    // no progress token: nothing is sent before the answer, so the response has not started
    const request = waitCall2026('http-2026-early', controller.signal).catch((e: unknown) => e);
    await waitFor(() => runs.has('http-2026-early'), 10_000);
    controller.abort();
    expect(await request).toBeInstanceOf(Error);
    // the engine cancels eng-mcp's call for the request; eng-mcp cancels the tool's call
    await waitFor(() => runs.get('http-2026-early')?.aborted, 5000);
    await waitFor(async () => (await activeOf('cancel-worker')) === 0, 5000);
  });

  it('as a task (tasks/cancel)', async () => {
    const caps = { extensions: { [TASKS]: {} } };
    const post = async (id: number, method: string, params: Record<string, unknown>) =>
      (await post2026(http.url, id, method, params, meta2026(caps, 'cancel-test'))).body;
    const created = await post(1, 'tools/call', { name: 'cancel__task', arguments: { tag: 'task' } });
    expect(created.result?.resultType).toBe('task');
    const taskId = created.result?.taskId as string;
    await waitFor(() => runs.has('task'), 10_000);
    expect((await post(2, 'tasks/cancel', { taskId })).result?.resultType).toBe('complete');
    await waitFor(() => runs.get('task')?.aborted, 5000);
    await waitFor(async () => (await activeOf('cancel-worker')) === 0, 5000);
    expect((await post(3, 'tasks/get', { taskId })).result?.status).toBe('cancelled');
  });

  it("is not done by another session's notifications/cancelled naming the same request id", async () => {
    const a = await httpClient(http.url);
    const b = await httpClient(http.url);
    try {
      // both clients number their requests alike: b's next id is a's call's id
      const mine = new AbortController();
      const call = a.callTool({ name: 'cancel__wait', arguments: { tag: 'victim' } }, undefined, { signal: mine.signal });
      await waitFor(() => runs.has('victim'), 10_000);
      for (let id = 0; id < 6; id++) {
        await b.notification({ method: 'notifications/cancelled', params: { requestId: id, reason: 'hostile' } });
      }
      await sleep(300);
      expect(runs.get('victim')?.aborted).toBe(false);
      expect(await activeOf('cancel-worker')).toBe(1);
      // a's own cancel still works
      mine.abort();
      await expect(call).rejects.toThrow();
      await waitFor(() => runs.get('victim')?.aborted, 5000);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe('an iii-sdk function', () => {
  it('hears nothing, runs to its end (its log call answers cancelled) and its worker keeps serving', async () => {
    const controller = new AbortController();
    const pending = stdio.client.callTool({ name: 'iiicancel__slow', arguments: { tag: 'iii' } }, undefined, { signal: controller.signal });
    await waitFor(() => iiiRuns.has('iii'), 10_000);
    controller.abort();
    await expect(pending).rejects.toThrow();
    await waitFor(async () => (await activeOf('iii-cancel')) === 0, 5000);
    await waitFor(() => iiiRuns.get('iii')?.finished, 5000);
    expect(iiiRuns.get('iii')?.lateLog).toMatchObject({ ok: false, cancelled: true });
    const again = await stdio.client.callTool({ name: 'iiicancel__slow', arguments: { tag: 'quick' } });
    expect(JSON.parse(textOf(again))).toEqual({ tag: 'quick' });
  });
});
