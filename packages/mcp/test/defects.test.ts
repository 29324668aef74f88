/**
 * Issue 18 "defects found", one test each (the log routing one is in http-notifications.test.ts):
 * tool names are portable and reversible (`demo::a__b`, odd characters, long ids), JSON Schema is
 * validated in the dialect it declares, JSON-RPC error messages carry one prefix, reads fail as fast
 * as tool calls when the engine is unreachable, and `engine__x` is floored on every path.
 */
import { connect, type EngClient } from '@eng/sdk';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, waitFor } from '../../../test/harness.ts';
import { type HttpMcp, httpClient, httpMcp, startMcpEngine, stdioMcp, textOf } from './helpers.ts';

const expose = { 'mcp.expose': true };
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const PORTABLE = /^[A-Za-z0-9_-]{1,64}$/;
const LONG_ID = `reports::${'quarterly_revenue_by_region_'.repeat(4)}final`;

let engine: EngineProcess;
let worker: EngClient;
let http: HttpMcp;
const ran: string[] = [];

beforeAll(async () => {
  engine = await startMcpEngine();
  worker = connect(engine.busUrl, { name: 'defects-worker', logger: quiet });
  for (const id of ['demo::a__b', 'demo::a::b', 'reports/v2::sum up', LONG_ID, 'engine__x']) {
    worker.registerFunction(
      id,
      () => {
        ran.push(id);
        return { ran: id };
      },
      { metadata: expose },
    );
  }
  const pair = { type: 'array', prefixItems: [{ type: 'number' }, { type: 'number' }], items: false };
  worker.registerFunction('schema::v2020', (input) => ({ ok: input }), {
    request_format: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      allOf: [{ properties: { point: pair } }],
      required: ['point'],
      unevaluatedProperties: false,
    },
    metadata: expose,
  });
  worker.registerFunction('schema::undeclared', (input) => ({ ok: input }), {
    request_format: { type: 'object', properties: { point: pair }, required: ['point'] },
    metadata: expose,
  });
  worker.registerFunction('schema::draft7', (input) => ({ ok: input }), {
    request_format: {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { point: { type: 'array', items: [{ type: 'number' }, { type: 'number' }], additionalItems: false } },
      required: ['point'],
    },
    metadata: expose,
  });
  await worker.ready({ timeoutMs: 10_000 });
  await waitFor(async () => {
    const { functions } = await worker.call<{ functions: Array<{ function_id: string }> }>('engine::functions::list', {});
    return functions.some((f) => f.function_id === 'schema::draft7');
  });
  http = await httpMcp(engine, ['--expose-all']);
}, 60_000);

afterAll(async () => {
  await http?.stop();
  await worker?.close();
  await engine?.stop();
});

async function rpcError(promise: Promise<unknown>): Promise<McpError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(McpError);
  return err as McpError;
}

describe('tool names', () => {
  it('every listed name is portable, deterministic across servers, and calls the function it names', async () => {
    const viaHttp = await httpClient(http.url);
    const viaStdio = await stdioMcp(engine, ['--expose-all']);
    try {
      const listed = (await viaHttp.listTools()).tools.map((t) => t.name);
      const again = (await viaStdio.client.listTools()).tools.map((t) => t.name);
      const functions = (names: string[]) => names.filter((n) => !n.startsWith('eng_')).sort();
      expect(functions(again)).toEqual(functions(listed));
      const ours = listed.filter((n) => /^(demo|reports)/.test(n));
      expect(
        ours.every((n) => PORTABLE.test(n)),
        ours.join(', '),
      ).toBe(true);
      expect(ours.filter((n) => again.includes(n))).toEqual(ours);
      // `demo::a::b` keeps the plain spelling; the literal `__` id gets a suffix instead of colliding
      expect(ours).toContain('demo__a__b');
      const literal = ours.find((n) => /^demo__a__b_[0-9a-f]{8}$/.test(n)) as string;
      const odd = ours.find((n) => /^reports_v2__sum_up_[0-9a-f]{8}$/.test(n)) as string;
      const long = ours.find((n) => n.startsWith('reports__quarterly') && n.length === 64) as string;
      expect([literal, odd, long].every(Boolean), ours.join(', ')).toBe(true);
      for (const [name, id] of [
        ['demo__a__b', 'demo::a::b'],
        [literal, 'demo::a__b'],
        [odd, 'reports/v2::sum up'],
        [long, LONG_ID],
      ] as const) {
        for (const client of [viaHttp, viaStdio.client]) {
          const result = await client.callTool({ name, arguments: {} });
          expect(JSON.parse(textOf(result)), name).toEqual({ ran: id });
        }
      }
      // the resource of a function names its listed tool
      const described = JSON.parse(
        ((await viaHttp.readResource({ uri: `eng://function/${literal}` })).contents[0] as { text: string }).text,
      );
      expect(described).toMatchObject({ function_id: 'demo::a__b', tool_name: literal });
    } finally {
      await viaHttp.close();
      await viaStdio.close();
    }
  });
});

describe('JSON Schema dialects', () => {
  it('validates a 2020-12 schema with 2020-12 rules (prefixItems, items: false, unevaluatedProperties)', async () => {
    const client = await httpClient(http.url);
    try {
      const call = (name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args });
      expect((await call('schema__v2020', { point: [1, 2] })).isError).toBe(false);
      for (const bad of [{ point: ['x', 2] }, { point: [1, 2, 3] }, { point: [1, 2], extra: true }]) {
        const result = await call('schema__v2020', bad);
        expect(result.isError, JSON.stringify(bad)).toBe(true);
        expect(textOf(result)).toMatch(/^Invalid arguments for tool 'schema__v2020': arguments/);
      }
      // MCP 2025-11-25: a schema that declares nothing is 2020-12
      expect((await call('schema__undeclared', { point: [1, 2] })).isError).toBe(false);
      expect((await call('schema__undeclared', { point: [1, 2, 3] })).isError).toBe(true);
      // a draft-07 schema keeps its own meaning (array items as a tuple)
      expect((await call('schema__draft7', { point: [1, 2] })).isError).toBe(false);
      expect((await call('schema__draft7', { point: [1, 'y'] })).isError).toBe(true);
      expect((await call('schema__draft7', { point: [1, 2, 3] })).isError).toBe(true);
    } finally {
      await client.close();
    }
  });
});

describe('error messages', () => {
  it('carry one "MCP error <code>:" prefix on the client, none on the wire', async () => {
    const client = await httpClient(http.url);
    try {
      const unknown = await rpcError(client.callTool({ name: 'no__such_tool', arguments: {} }));
      expect(unknown.message).toBe('MCP error -32602: Unknown tool: no__such_tool');
      const missing = await rpcError(client.readResource({ uri: 'eng://function/no::such' }));
      expect(missing.message).toBe('MCP error -32002: Resource not found: eng://function/no::such');
    } finally {
      await client.close();
    }
    const init = await fetch(http.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      }),
    });
    const session = init.headers.get('mcp-session-id') as string;
    const res = await fetch(http.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'mcp-session-id': session },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'prompts/get', params: { name: 'nope' } }),
    });
    expect((await res.json()).error).toEqual({ code: -32602, message: 'Unknown prompt: nope' });
  });
});

describe('the hard floor on the real id', () => {
  it('a function literally named engine__x is neither listed nor called, by any name, on any path', async () => {
    const client = await httpClient(http.url);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names.filter((n) => n.startsWith('engine'))).toEqual([]);
      const described = JSON.parse(((await client.readResource({ uri: 'eng://functions' })).contents[0] as { text: string }).text);
      expect(described.filter((f: { function_id: string }) => f.function_id.startsWith('engine'))).toEqual([]);
      // the plain spelling means engine::x; the generated one engine__x itself: both floored, twice (mirror warm)
      const { createHash } = await import('node:crypto');
      const generated = `engine__x_${createHash('sha256').update('engine__x').digest('hex').slice(0, 8)}`;
      for (const name of ['engine__x', generated, 'engine__x', generated]) {
        const result = await client.callTool({ name, arguments: {} });
        expect(result.isError, name).toBe(true);
        expect(textOf(result), name).toMatch(/^Function 'engine(::|__)x' is in the eng engine internal namespace/);
      }
      expect((await rpcError(client.readResource({ uri: 'eng://function/engine__x' }))).code).toBe(-32002);
      await new Promise((r) => setTimeout(r, 200));
      expect(ran.filter((id) => id.startsWith('engine'))).toEqual([]);
    } finally {
      await client.close();
    }
  });
});

describe('an unreachable engine', () => {
  it('fails reads, prompts and calls within about a second each, naming the cause', async () => {
    const own = await startMcpEngine();
    const fnWorker = connect(own.busUrl, { name: 'fast-fail-worker', logger: quiet });
    fnWorker.registerFunction('docs::page', () => 'page', { metadata: { ...expose, 'mcp.resource': { uri: 'docs://page' } } });
    fnWorker.registerFunction('docs::tool', () => 'tool', { metadata: expose });
    fnWorker.registerFunction('docs::prompt', () => 'prompt', { metadata: { ...expose, 'mcp.prompt': { name: 'docs_prompt' } } });
    await fnWorker.ready({ timeoutMs: 10_000 });
    const mcp = await stdioMcp(own);
    try {
      await waitFor(async () => (await mcp.client.listResources()).resources.some((r) => r.uri === 'docs://page'), 10_000);
      await fnWorker.close();
      await own.stop();
      await waitFor(() => mcp.stderr().includes('lost the connection'), 10_000);
      const timed = async <T>(work: () => Promise<T>): Promise<{ value?: T; error?: McpError; ms: number }> => {
        const started = Date.now();
        const outcome = await work().then(
          (value) => ({ value }),
          (error: unknown) => ({ error: error as McpError }),
        );
        return { ...outcome, ms: Date.now() - started };
      };
      const engRead = await timed(() => mcp.client.readResource({ uri: 'eng://functions' }));
      expect(engRead.error?.code).toBe(-32603);
      expect(engRead.error?.message).toContain('the eng engine is not connected');
      expect(engRead.ms).toBeLessThan(3000);
      const fnRead = await timed(() => mcp.client.readResource({ uri: 'docs://page' }));
      expect(fnRead.error?.code).toBe(-32603);
      expect(fnRead.error?.message).toContain('the eng engine is not connected');
      expect(fnRead.ms).toBeLessThan(3000);
      const prompt = await timed(() => mcp.client.getPrompt({ name: 'docs_prompt' }));
      expect(prompt.error?.code).toBe(-32603);
      expect(prompt.error?.message).toBe('MCP error -32603: cannot render the prompt docs_prompt: the eng engine is not connected');
      expect(prompt.ms).toBeLessThan(3000);
      const call = await timed(() => mcp.client.callTool({ name: 'docs__tool', arguments: {} }));
      expect(textOf(call.value)).toContain('exposure could not be verified');
      expect(call.ms).toBeLessThan(3000);
    } finally {
      await mcp.close();
      await own.stop().catch(() => undefined);
    }
  }, 60_000);
});
