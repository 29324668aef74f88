/**
 * The stdio transport hands the requests and notifications it recognised straight to the SDK
 * Protocol's handlers (direct-dispatch.ts), skipping the SDK's per-message schema passes; everything
 * else (responses to the server's own requests) still goes through the SDK's `onmessage`. These
 * tests hold that to what a client relies on: requests answered, cancellation honoured, replies to
 * server requests delivered, and the same behaviour when the SDK lacks the internals (fallback).
 */
import { PassThrough } from 'node:stream';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { type DirectDispatch, directDispatch } from '../src/direct-dispatch.ts';
import { StdioTransport } from '../src/stdio-transport.ts';

interface Wired {
  server: Server;
  send(value: unknown): void;
  next(match: (message: any) => boolean, timeoutMs?: number): Promise<any>;
  received: any[];
  /** How many messages reached the SDK's own `onmessage` (the schema-checked path). */
  viaOnmessage: number;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

async function wire(dispatch: (server: Server) => DirectDispatch | undefined): Promise<Wired> {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const server = new Server({ name: 'test', version: '1' }, { capabilities: { tools: {} } });
  servers.push(server);
  let release: (() => void) | undefined;
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    if (request.params.name === 'slow') await new Promise<void>((resolve) => (release = resolve));
    return { content: [{ type: 'text', text: `called ${request.params.name}` }] };
  });
  const transport = new StdioTransport(stdin, stdout, () => '2025-06-18', dispatch(server));
  await server.connect(transport);
  const wired: Wired = {
    server,
    received: [],
    viaOnmessage: 0,
    send: (value) => stdin.write(`${JSON.stringify(value)}\n`),
    async next(match, timeoutMs = 2000) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const index = wired.received.findIndex(match);
        if (index !== -1) return wired.received.splice(index, 1)[0];
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      throw new Error(`no matching message; got ${JSON.stringify(wired.received)}`);
    },
  };
  // count what takes the SDK's schema-checked path
  const sdkOnmessage = transport.onmessage;
  transport.onmessage = (message, extra) => {
    wired.viaOnmessage++;
    sdkOnmessage?.(message, extra);
  };
  let buffer = '';
  stdout.setEncoding('utf8');
  stdout.on('data', (chunk: string) => {
    buffer += chunk;
    let nl = buffer.indexOf('\n');
    while (nl !== -1) {
      wired.received.push(JSON.parse(buffer.slice(0, nl)));
      buffer = buffer.slice(nl + 1);
      nl = buffer.indexOf('\n');
    }
  });
  (wired as Wired & { release: () => void }).release = () => release?.();
  return wired;
}

async function initialize(wired: Wired): Promise<void> {
  wired.send({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
  });
  expect((await wired.next((m) => m.id === 0)).result.protocolVersion).toBe('2025-06-18');
  wired.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
}

describe.each([
  ['direct dispatch (the pinned SDK has the internals)', directDispatch],
  ['fallback through onmessage (an SDK without them)', () => directDispatch({})],
])('%s', (_label, dispatch) => {
  it('answers requests, honours cancellation, and delivers replies to the server’s own requests', async () => {
    const wired = await wire(dispatch);
    await initialize(wired);

    wired.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'quick', arguments: {} } });
    expect((await wired.next((m) => m.id === 1)).result.content[0].text).toBe('called quick');

    // a cancelled call gets no response; the next one does
    wired.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'slow', arguments: {} } });
    await new Promise((resolve) => setTimeout(resolve, 20));
    wired.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2, reason: 'test' } });
    await new Promise((resolve) => setTimeout(resolve, 20));
    (wired as Wired & { release: () => void }).release();
    wired.send({ jsonrpc: '2.0', id: 3, method: 'ping' });
    expect((await wired.next((m) => m.id === 3)).result).toEqual({});
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(wired.received.filter((m) => m.id === 2)).toEqual([]);

    // the server asks the client (ping); the client's reply reaches the SDK and settles it
    const asked = wired.server.ping();
    const request = await wired.next((m) => m.method === 'ping' && m.id !== undefined);
    wired.send({ jsonrpc: '2.0', id: request.id, result: {} });
    await expect(asked).resolves.toEqual({});
  });
});

describe('which path messages take', () => {
  it('the pinned SDK exposes the Protocol entry points direct dispatch needs', () => {
    const server = new Server({ name: 'test', version: '1' }, { capabilities: {} });
    expect(directDispatch(server)).toBeDefined();
    expect(directDispatch({})).toBeUndefined();
  });

  it('with direct dispatch only replies to the server’s requests take the SDK’s schema-checked path', async () => {
    const direct = await wire(directDispatch);
    await initialize(direct);
    direct.send({ jsonrpc: '2.0', id: 1, method: 'ping' });
    await direct.next((m) => m.id === 1);
    expect(direct.viaOnmessage).toBe(0);
    const asked = direct.server.ping();
    const request = await direct.next((m) => m.method === 'ping' && m.id !== undefined);
    direct.send({ jsonrpc: '2.0', id: request.id, result: {} });
    await asked;
    expect(direct.viaOnmessage).toBe(1);

    const fallback = await wire(() => directDispatch({}));
    await initialize(fallback);
    fallback.send({ jsonrpc: '2.0', id: 1, method: 'ping' });
    await fallback.next((m) => m.id === 1);
    // initialize, notifications/initialized, ping
    expect(fallback.viaOnmessage).toBe(3);
  });
});
