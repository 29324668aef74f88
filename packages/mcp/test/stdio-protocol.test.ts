/**
 * The stdio transport at the byte level (MCP transports/stdio, JSON-RPC 2.0; mcp.md §11, §14):
 * lifecycle gate, version negotiation, parse errors, invalid requests, batches, huge messages,
 * invalid params, cancellation without a response, stdout carrying protocol only, clean exit.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EngineProcess } from '../../../test/harness.ts';
import { demoWorker, MCP_BIN, sleep, startMcpEngine } from './helpers.ts';

let engine: EngineProcess;
const children: RawStdio[] = [];

class RawStdio {
  readonly child: ChildProcessWithoutNullStreams;
  readonly received: any[] = [];
  readonly rawLines: string[] = [];
  stderr = '';
  private buffer = '';

  constructor(args: string[] = []) {
    this.child = spawn(process.execPath, [MCP_BIN, '--engine-url', engine.busUrl, ...args], {
      env: { ...process.env, ENG_WORKER_CONFIG: '' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (chunk: string) => {
      this.buffer += chunk;
      let nl = this.buffer.indexOf('\n');
      while (nl !== -1) {
        const line = this.buffer.slice(0, nl);
        this.buffer = this.buffer.slice(nl + 1);
        this.rawLines.push(line);
        this.received.push(JSON.parse(line));
        nl = this.buffer.indexOf('\n');
      }
    });
    this.child.stderr.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString();
    });
    children.push(this);
  }

  write(value: unknown): void {
    this.child.stdin.write(typeof value === 'string' ? value : `${JSON.stringify(value)}\n`);
  }

  /** The next message matching `match`, waiting for it. */
  async next(match: (message: any) => boolean, timeoutMs = 10_000): Promise<any> {
    // before its first line the wait includes eng-mcp's start (over 10 s on a machine at load 15)
    const deadline = Date.now() + (this.rawLines.length === 0 ? Math.max(timeoutMs, 20_000) : timeoutMs);
    while (Date.now() < deadline) {
      const index = this.received.findIndex(match);
      if (index !== -1) return this.received.splice(index, 1)[0];
      await sleep(10);
    }
    throw new Error(`no matching message within ${timeoutMs} ms; got ${JSON.stringify(this.received)}; stderr:\n${this.stderr}`);
  }

  byId(id: unknown, timeoutMs?: number): Promise<any> {
    return this.next((m) => !Array.isArray(m) && m.id === id, timeoutMs);
  }

  async initialize(protocolVersion = '2025-11-25'): Promise<any> {
    this.write({
      jsonrpc: '2.0',
      id: 'init',
      method: 'initialize',
      params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    const reply = await this.byId('init');
    this.write({ jsonrpc: '2.0', method: 'notifications/initialized' });
    return reply;
  }

  exit(): Promise<number | null> {
    if (this.child.exitCode !== null) return Promise.resolve(this.child.exitCode);
    return new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
  }
}

const rpc = (id: unknown, method: string, params?: unknown) => ({
  jsonrpc: '2.0',
  id,
  method,
  ...(params === undefined ? {} : { params }),
});

beforeAll(async () => {
  engine = await startMcpEngine();
  await demoWorker(engine);
});
afterEach(async () => {
  for (const raw of children.splice(0)) {
    if (raw.child.exitCode === null) {
      raw.child.stdin.end();
      await raw.exit();
    }
  }
});
afterAll(async () => {
  await engine?.stop();
});

describe('lifecycle', () => {
  it('answers only ping before initialize, negotiates the version, and refuses a second initialize', async () => {
    const raw = new RawStdio();
    raw.write(rpc(1, 'tools/list'));
    expect((await raw.byId(1)).error).toEqual({ code: -32600, message: 'Invalid Request: Server not initialized (send initialize first)' });
    raw.write(rpc(2, 'ping'));
    expect(await raw.byId(2)).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
    // an initialize with bad params is refused with -32602 and may be sent again
    raw.write(rpc('bad-init', 'initialize', { protocolVersion: 42 }));
    expect((await raw.byId('bad-init')).error.code).toBe(-32602);
    const init = await raw.initialize('2025-06-18');
    expect(init.result.protocolVersion).toBe('2025-06-18');
    expect(init.result.serverInfo.name).toBe('eng-mcp');
    raw.write(rpc(3, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'again', version: '1' } }));
    expect((await raw.byId(3)).error.message).toBe('Invalid Request: Server already initialized');
    raw.write(rpc(4, 'tools/list'));
    expect((await raw.byId(4)).result.tools.length).toBeGreaterThan(6);
  });

  it('exits 0 when stdin closes, and wrote nothing but JSON-RPC to stdout', async () => {
    const raw = new RawStdio();
    await raw.initialize();
    raw.write(rpc(1, 'tools/list'));
    await raw.byId(1);
    raw.child.stdin.end();
    expect(await raw.exit()).toBe(0);
    for (const line of raw.rawLines) expect(JSON.parse(line).jsonrpc).toBe('2.0');
    expect(raw.stderr).toContain('MCP server on stdio');
  });

  it('answers requests still running when stdin closes, then exits', async () => {
    const raw = new RawStdio();
    await raw.initialize();
    raw.write(rpc('last', 'tools/call', { name: 'demo__slow', arguments: { ms: 600 } }));
    raw.child.stdin.end();
    expect(await raw.exit()).toBe(0);
    expect(JSON.parse(raw.received.find((m) => m.id === 'last').result.content[0].text)).toEqual({ slept: 600 });
  });
});

describe('bad input keeps the server serving', () => {
  it('malformed lines get -32700, non-requests -32600, unknown methods -32601', async () => {
    const raw = new RawStdio();
    await raw.initialize();
    raw.write('{"jsonrpc": "2.0", "id": 1, "method": \n');
    expect(await raw.next((m) => m.error?.code === -32700)).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { message: expect.stringMatching(/^Parse error: /) },
    });
    raw.write('not json at all\n');
    expect((await raw.next((m) => m.error?.code === -32700)).id).toBeNull();
    raw.write('42\n');
    expect(await raw.next((m) => m.error?.code === -32600)).toMatchObject({
      id: null,
      error: { message: 'Invalid Request: a message must be a JSON object' },
    });
    raw.write({ jsonrpc: '1.0', id: 7, method: 'ping' });
    expect((await raw.byId(7)).error.code).toBe(-32600);
    raw.write({ jsonrpc: '2.0', id: null, method: 'ping' });
    expect((await raw.next((m) => m.error?.message?.includes('"id" must be'))).id).toBeNull();
    raw.write({ jsonrpc: '2.0', id: 8, method: 42 });
    expect((await raw.byId(8)).error.code).toBe(-32600);
    raw.write(rpc(9, 'tools/explode'));
    expect((await raw.byId(9)).error).toEqual({ code: -32601, message: 'Method not found' });
    // blank lines are skipped, CRLF line ends are accepted
    raw.write('\n\n   \n');
    raw.write(`${JSON.stringify(rpc(10, 'ping'))}\r\n`);
    expect((await raw.byId(10)).result).toEqual({});
  });

  it('invalid params are -32602, wrong argument types an isError result, unknown tools -32602', async () => {
    const raw = new RawStdio();
    await raw.initialize();
    raw.write(rpc(1, 'tools/call'));
    expect((await raw.byId(1)).error.code).toBe(-32602);
    raw.write(rpc(2, 'tools/call', { arguments: {} }));
    expect((await raw.byId(2)).error.code).toBe(-32602);
    raw.write(rpc(3, 'tools/call', { name: 'demo__echo', arguments: 'not an object' }));
    expect((await raw.byId(3)).error.code).toBe(-32602);
    raw.write(rpc(4, 'tools/call', { name: 'demo__typed', arguments: { n: [1] } }));
    const typed = await raw.byId(4);
    expect(typed.result.isError).toBe(true);
    expect(typed.result.content[0].text).toContain("Invalid arguments for tool 'demo__typed'");
    raw.write(rpc(5, 'tools/call', { name: 'ghost__tool', arguments: {} }));
    expect((await raw.byId(5)).error).toMatchObject({ code: -32602, message: expect.stringContaining('Unknown tool: ghost__tool') });
    raw.write(rpc(6, 'resources/read', { uri: 42 }));
    expect((await raw.byId(6)).error.code).toBe(-32602);
    raw.write(rpc(7, 'prompts/get', { name: 'build-api', arguments: { method: 1, path: '/x' } }));
    expect((await raw.byId(7)).error.code).toBe(-32602);
    raw.write(rpc(8, 'ping'));
    expect((await raw.byId(8)).result).toEqual({});
  });

  it('huge arguments go through; a line past the limit is refused without taking the server down', async () => {
    const raw = new RawStdio();
    await raw.initialize();
    const message = 'x'.repeat(6 * 1024 * 1024);
    raw.write(rpc(1, 'tools/call', { name: 'demo__echo', arguments: { message } }));
    const echoed = await raw.byId(1, 20_000);
    expect(echoed.result.isError).toBe(false);
    expect(JSON.parse(echoed.result.content[0].text).echoed.message).toHaveLength(message.length);
    raw.write(`${JSON.stringify(rpc(2, 'tools/call', { name: 'demo__echo', arguments: { message: 'y'.repeat(17 * 1024 * 1024) } }))}\n`);
    expect(await raw.next((m) => m.error?.message?.includes('exceeds'), 20_000)).toMatchObject({ id: null, error: { code: -32600 } });
    raw.write(rpc(3, 'tools/call', { name: 'demo__echo', arguments: { message: 'small' } }));
    expect(JSON.parse((await raw.byId(3)).result.content[0].text).echoed.message).toBe('small');
  }, 90_000);

  it('a cancelled request gets no response; later requests do', async () => {
    const raw = new RawStdio();
    await raw.initialize();
    raw.write(rpc('slow', 'tools/call', { name: 'demo__slow', arguments: { ms: 1500 } }));
    await sleep(200);
    raw.write({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'slow', reason: 'test' } });
    raw.write(rpc('after', 'ping'));
    expect((await raw.byId('after')).result).toEqual({});
    await sleep(2000);
    expect(raw.received.find((m) => m.id === 'slow')).toBeUndefined();
  });
});

describe('batches', () => {
  it('under 2025-03-26 a batch gets one array of replies (invalid members get their error)', async () => {
    const raw = new RawStdio();
    expect((await raw.initialize('2025-03-26')).result.protocolVersion).toBe('2025-03-26');
    raw.write([
      rpc('a', 'ping'),
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      rpc('b', 'tools/call', { name: 'demo__text', arguments: {} }),
      { bogus: 1 },
    ]);
    const batch = await raw.next((m) => Array.isArray(m));
    expect(batch).toHaveLength(3);
    expect(batch.find((r: any) => r.id === 'a').result).toEqual({});
    expect(batch.find((r: any) => r.id === 'b').result.content[0].text).toBe('plain text');
    expect(batch.find((r: any) => r.id === null).error.code).toBe(-32600);
    raw.write([]);
    expect((await raw.next((m) => m.error?.message === 'Invalid Request: empty batch')).id).toBeNull();
    // notifications only: nothing to answer
    raw.write([{ jsonrpc: '2.0', method: 'notifications/initialized' }]);
    raw.write(rpc('c', 'ping'));
    await raw.byId('c');
    expect(raw.received.filter((m) => Array.isArray(m) || 'id' in m)).toEqual([]);
  });

  it('after 2025-06-18 (batching removed) a batch is refused with -32600', async () => {
    const raw = new RawStdio();
    await raw.initialize('2025-11-25');
    raw.write([rpc('a', 'ping')]);
    const refused = await raw.next((m) => m.error?.code === -32600);
    expect(refused.error.message).toContain('batches are not supported in protocol version 2025-11-25');
    raw.write(rpc('b', 'ping'));
    expect((await raw.byId('b')).result).toEqual({});
  });
});
