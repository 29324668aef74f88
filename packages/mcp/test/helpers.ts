import { type ChildProcess, spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { connect, type EngClient } from '@eng/sdk';
import { Client, type ClientOptions } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  StreamableHTTPClientTransport,
  type StreamableHTTPClientTransportOptions,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';

// Shared by the eng-mcp tests: a real engine with eng-http, eng-mcp as a real child process (the
// published bin, so tsx registration is exercised too), and real MCP SDK clients.

export const MCP_BIN = resolve(import.meta.dirname, '../bin/eng-mcp.js');
/** The six built-in tools in listing order (seed §2.12), spelled out rather than imported from the code under test. */
export const BUILTINS = [
  'eng_worker_register',
  'eng_worker_stop',
  'eng_trigger_register',
  'eng_trigger_unregister',
  'eng_trigger_void',
  'eng_trigger_enqueue',
];
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every tool name a client lists, following the pagination cursor to the end. */
export async function toolNames(client: Client): Promise<string[]> {
  const names: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    names.push(...page.tools.map((t) => t.name));
    cursor = page.nextCursor;
  } while (cursor);
  return names;
}

export async function startMcpEngine(extraYaml = '', httpTimeoutMs = 30_000): Promise<EngineProcess> {
  return startEngine({
    workersYaml:
      `  - name: eng-http\n    config:\n      port: {{HTTP_PORT}}\n      default_timeout: ${httpTimeoutMs}\n` +
      '  - name: eng-queue\n    config:\n      adapter: { name: memory }\n' +
      '  - name: eng-cron\n' +
      '  - name: eng-engine-functions\n    config:\n      functions_debounce_ms: 50\n' +
      extraYaml,
  });
}

export function httpBase(engine: EngineProcess): string {
  return (engine.addresses.http as { url: string }).url;
}

export interface StdioMcp {
  client: Client;
  transport: StdioClientTransport;
  stderr(): string;
  close(): Promise<void>;
}

/** eng-mcp on stdio, spawned by the MCP SDK's own stdio client transport. */
export async function stdioMcp(
  engine: EngineProcess,
  args: string[] = [],
  env: Record<string, string> = {},
  clientOptions?: ClientOptions,
): Promise<StdioMcp> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MCP_BIN, '--engine-url', engine.busUrl, ...args],
    env: { ...(process.env as Record<string, string>), ENG_WORKER_CONFIG: '', ...env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = new Client({ name: 'eng-mcp-test', version: '1.0.0' }, clientOptions);
  await client.connect(transport);
  return {
    client,
    transport,
    stderr: () => stderr,
    close: () => client.close(),
  };
}

export interface HttpMcp {
  process: ChildProcess;
  url: string;
  output(): string;
  stop(): Promise<void>;
}

/** eng-mcp --no-stdio as a child process; resolves once POST /mcp is routed. */
export async function httpMcp(
  engine: EngineProcess,
  args: string[] = [],
  env: Record<string, string> = {},
  path = 'mcp',
): Promise<HttpMcp> {
  const child = spawn(process.execPath, [MCP_BIN, '--engine-url', engine.busUrl, '--no-stdio', ...args], {
    env: { ...process.env, ENG_WORKER_CONFIG: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (c: Buffer) => {
    output += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    output += c.toString();
  });
  const url = `${httpBase(engine)}/${path}`;
  // a route answers 405/4xx instead of the engine's 404 once the trigger is bound
  await waitFor(async () => (await fetch(url, { method: 'DELETE' })).status !== 404, 30_000, 50);
  return {
    process: child,
    url,
    output: () => output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

export async function httpClient(
  url: string,
  clientOptions?: ClientOptions,
  transportOptions?: StreamableHTTPClientTransportOptions,
): Promise<Client> {
  const client = new Client({ name: 'eng-mcp-http-test', version: '1.0.0' }, clientOptions);
  await client.connect(new StreamableHTTPClientTransport(new URL(url), transportOptions));
  return client;
}

/** A worker on @eng/sdk with the functions most tests use. */
export async function demoWorker(engine: EngineProcess, name = 'mcp-demo'): Promise<EngClient> {
  const worker = connect(engine.busUrl, {
    name,
    logger: { debug() {}, info() {}, warn() {}, error() {} },
    reconnect: { initialDelayMs: 200, maxDelayMs: 1000 },
  });
  const expose = { 'mcp.expose': true };
  worker.registerFunction('demo::echo', (input) => ({ echoed: input }), {
    description: 'Echo the input',
    request_format: { type: 'object', properties: { message: { type: 'string' } } },
    metadata: expose,
  });
  worker.registerFunction('demo::hidden', () => 'should never run', { description: 'not opted in' });
  worker.registerFunction('demo::string_flag', () => 'x', { metadata: { 'mcp.expose': 'true' } });
  worker.registerFunction('demo::nested_flag', () => 'x', { metadata: { mcp: { expose: true } } });
  worker.registerFunction('demo::gold', () => ({ tier: 'gold' }), {
    description: 'gold tier',
    metadata: { ...expose, 'mcp.tier': 'gold' },
  });
  worker.registerFunction('demo::silver', () => ({ tier: 'silver' }), { metadata: { ...expose, 'mcp.tier': 'silver' } });
  worker.registerFunction('demo::no_description', (input) => input, { metadata: expose });
  worker.registerFunction('demo::typed', (input: { n: number }) => ({ doubled: input.n * 2 }), {
    description: 'Double a number',
    request_format: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
    response_format: { type: 'object', properties: { doubled: { type: 'number' } }, required: ['doubled'] },
    metadata: { ...expose, mcp: { title: 'Doubler', read_only_hint: true, idempotent_hint: true } },
  });
  worker.registerFunction('demo::liar', () => 'not an object', {
    response_format: { type: 'object', properties: { x: { type: 'number' } } },
    metadata: expose,
  });
  worker.registerFunction('demo::scalar', (input: string) => `got ${input}`, { request_format: { type: 'string' }, metadata: expose });
  worker.registerFunction('demo::text', () => 'plain text', { metadata: expose });
  worker.registerFunction(
    'demo::fail',
    () => {
      throw new Error('boom');
    },
    { metadata: expose },
  );
  worker.registerFunction(
    'demo::slow',
    async (input: { ms?: number }) => {
      await sleep(input?.ms ?? 1000);
      return { slept: input?.ms ?? 1000 };
    },
    { metadata: expose },
  );
  worker.registerFunction(
    'demo::progress',
    async (input: { steps?: number }, ctx) => {
      const mcp = (ctx.metadata as { mcp?: { progress_token?: string; progress_function?: string; log_function?: string } })?.mcp;
      const steps = input?.steps ?? 3;
      for (let i = 1; i <= steps; i++) {
        if (mcp?.progress_token && mcp.progress_function) {
          await worker.call(mcp.progress_function, { token: mcp.progress_token, progress: i, total: steps, message: `step ${i}` });
        }
        await sleep(20);
      }
      if (mcp?.log_function)
        await worker.call(mcp.log_function, { level: 'warning', data: { done: steps }, logger: 'demo', token: mcp.progress_token });
      return { steps, sawToken: Boolean(mcp?.progress_token) };
    },
    { metadata: expose },
  );
  for (const id of ['state::sneaky', 'stream::sneaky', 'eng::sneaky', 'eng.sneaky', 'mcp::sneaky', 'a2a::sneaky']) {
    worker.registerFunction(id, () => 'floor breached', { metadata: expose });
  }
  await worker.ready({ timeoutMs: 10_000 });
  await waitFor(async () => {
    const { functions } = await worker.call<{ functions: Array<{ function_id: string }> }>('engine::functions::list', {});
    return functions.some((f) => f.function_id === 'a2a::sneaky');
  });
  return worker;
}

export const textOf = (result: unknown): string =>
  ((result as { content?: Array<{ type: string; text?: string }> }).content ?? []).map((c) => c.text ?? '').join('');

export { join };

/** The MCP revision of the stateless requests below. */
export const MCP_2026 = '2026-07-28';

/** A 2026-07-28 request's `_meta`: the revision, the client and its capabilities, on every request. */
export function meta2026(capabilities: Record<string, unknown> = {}, client = 'eng-test'): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': MCP_2026,
    'io.modelcontextprotocol/clientInfo': { name: client, version: '1' },
    'io.modelcontextprotocol/clientCapabilities': capabilities,
  };
}

export interface Answer2026 {
  status: number;
  body: { id?: unknown; result?: Record<string, any>; error?: { code: number; message: string; data?: any } };
}

/**
 * One 2026-07-28 request over HTTP, as a stateless client sends it: no session, `_meta` from
 * `meta` (merged with any `_meta` in `params`), the Mcp-Method header and Mcp-Name when the params
 * name a tool, resource or task. The answer is JSON, or SSE whose last data line is the response.
 */
export async function post2026(
  url: string,
  id: number,
  method: string,
  params: Record<string, unknown>,
  meta: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<Answer2026> {
  const name = (params.name ?? params.uri ?? params.taskId) as string | undefined;
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MCP_2026,
      'mcp-method': method,
      ...(name !== undefined ? { 'mcp-name': String(name) } : {}),
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: { ...meta, ...(params._meta as object) } } }),
  });
  const text = await res.text();
  const body = res.headers.get('content-type')?.includes('text/event-stream')
    ? JSON.parse(
        text
          .split('\n')
          .filter((l) => l.startsWith('data: '))
          .at(-1)
          ?.slice(6) ?? '{}',
      )
    : JSON.parse(text);
  return { status: res.status, body };
}
