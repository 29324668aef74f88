import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from '@eng/sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import type { ConsoleServer } from '../src/server.ts';
import { createWsProxy, type WsProxy } from '../src/ws-proxy.ts';
import { deadPort, startTestConsole } from './helpers.ts';

// issue 6 §1 and issue 7 §3: frames 1:1 both ways, ping/pong, close codes, no size cap, 1011 when
// the engine is unreachable, both legs torn down together, cross-origin upgrades refused

interface Upstream {
  url: string;
  wss: WebSocketServer;
  server: Server;
  sockets: WebSocket[];
  close(): Promise<void>;
}

/** A real WebSocket server standing in for the engine: echoes every message with its type. */
async function startUpstream(): Promise<Upstream> {
  const server = createServer();
  const wss = new WebSocketServer({ server, maxPayload: 0 });
  const sockets: WebSocket[] = [];
  wss.on('connection', (ws) => {
    sockets.push(ws);
    ws.on('message', (data, isBinary) => ws.send(data as Buffer, { binary: isBinary }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `ws://127.0.0.1:${port}`,
    wss,
    server,
    sockets,
    close: () =>
      new Promise<void>((r) => {
        for (const ws of wss.clients) ws.terminate();
        wss.close();
        server.close(() => r());
      }),
  };
}

/** An HTTP server that routes every upgrade to `proxy`, as eng-console does for /ws. */
async function startFront(proxy: WsProxy): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((_req, res) => res.end());
  server.on('upgrade', (req, socket, head) => proxy.handleUpgrade(req, socket, head));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `ws://127.0.0.1:${port}/ws`,
    close: async () => {
      await proxy.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

function open(url: string, headers: Record<string, string> = {}): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers, maxPayload: 0 });
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
  });
}

const nextMessage = (ws: WebSocket) =>
  new Promise<{ data: Buffer; isBinary: boolean }>((r) => ws.once('message', (data, isBinary) => r({ data: data as Buffer, isBinary })));
const closed = (ws: WebSocket) =>
  new Promise<{ code: number; reason: string }>((r) => ws.once('close', (code, reason) => r({ code, reason: reason.toString() })));

describe('ws proxy against a WebSocket server', () => {
  let upstream: Upstream;
  let proxy: WsProxy;
  let front: { url: string; close(): Promise<void> };

  beforeAll(async () => {
    upstream = await startUpstream();
    proxy = createWsProxy({ target: upstream.url });
    front = await startFront(proxy);
  });
  afterAll(async () => {
    await front.close();
    await upstream.close();
  });
  afterEach(async () => {
    await waitFor(() => proxy.size === 0, 3000).catch(() => undefined);
  });

  it('relays text as text and binary as binary, both ways', async () => {
    const ws = await open(front.url);
    const text = nextMessage(ws);
    ws.send('{"type":"ping"}');
    const t = await text;
    expect(t.isBinary).toBe(false);
    expect(t.data.toString()).toBe('{"type":"ping"}');
    const bin = nextMessage(ws);
    ws.send(Buffer.from([0, 1, 2, 255]), { binary: true });
    const b = await bin;
    expect(b.isBinary).toBe(true);
    expect([...b.data]).toEqual([0, 1, 2, 255]);
    // the upstream speaks first too
    const pushed = nextMessage(ws);
    upstream.sockets.at(-1)?.send('from upstream');
    expect((await pushed).data.toString()).toBe('from upstream');
    ws.close();
  });

  it('carries a 32 MiB message without a frame cap', async () => {
    const ws = await open(front.url);
    const big = Buffer.alloc(32 * 1024 * 1024, 7);
    big[big.length - 1] = 9;
    const echoed = nextMessage(ws);
    ws.send(big, { binary: true });
    const got = await echoed;
    expect(got.data.length).toBe(big.length);
    expect(got.data[got.data.length - 1]).toBe(9);
    ws.close();
  }, 30_000);

  it('relays ping and pong instead of answering them itself', async () => {
    const ws = await open(front.url);
    const server = upstream.sockets.at(-1) as WebSocket;
    const serverSawPing = new Promise<string>((r) => server.once('ping', (d) => r(d.toString())));
    const clientSawPong = new Promise<string>((r) => ws.once('pong', (d) => r(d.toString())));
    ws.ping('hello?');
    expect(await serverSawPing).toBe('hello?');
    expect(await clientSawPong).toBe('hello?'); // the upstream's own pong, relayed back
    const clientSawPing = new Promise<string>((r) => ws.once('ping', (d) => r(d.toString())));
    const serverSawPong = new Promise<string>((r) => server.once('pong', (d) => r(d.toString())));
    server.ping('are you there');
    expect(await clientSawPing).toBe('are you there');
    expect(await serverSawPong).toBe('are you there');
    ws.close();
  });

  it('passes close codes and reasons both ways and tears down both legs', async () => {
    const ws = await open(front.url);
    const server = upstream.sockets.at(-1) as WebSocket;
    const clientClosed = closed(ws);
    server.close(4001, 'bye from upstream');
    expect(await clientClosed).toEqual({ code: 4001, reason: 'bye from upstream' });
    await waitFor(() => proxy.size === 0, 2000);

    const ws2 = await open(front.url);
    const server2 = upstream.sockets.at(-1) as WebSocket;
    const serverClosed = closed(server2);
    ws2.close(4002, 'bye from the browser');
    expect(await serverClosed).toEqual({ code: 4002, reason: 'bye from the browser' });
    await waitFor(() => proxy.size === 0, 2000);
  });

  it('relays a fragmented message with a ping between its fragments, and a close without a code as 1005', async () => {
    const ws = await open(front.url);
    const server = upstream.sockets.at(-1) as WebSocket;
    const serverSawPing = new Promise<string>((r) => server.once('ping', (d) => r(d.toString())));
    const echoed = nextMessage(ws);
    ws.send('frag', { fin: false });
    ws.ping('between');
    ws.send('mented', { fin: true });
    expect(await serverSawPing).toBe('between');
    expect((await echoed).data.toString()).toBe('fragmented');
    const serverClosed = closed(server);
    ws.close();
    expect(await serverClosed).toEqual({ code: 1005, reason: '' });
  });

  it('drops the browser leg when the upstream vanishes without a close frame', async () => {
    const ws = await open(front.url);
    const clientClosed = closed(ws);
    upstream.sockets.at(-1)?.terminate();
    expect((await clientClosed).code).toBe(1006);
    await waitFor(() => proxy.size === 0, 2000);
  });

  it('serves many connections at once', async () => {
    const sockets = await Promise.all(Array.from({ length: 40 }, () => open(front.url)));
    const replies = await Promise.all(
      sockets.map((ws, i) => {
        const p = nextMessage(ws);
        ws.send(`n${i}`);
        return p;
      }),
    );
    expect(replies.map((r) => r.data.toString())).toEqual(sockets.map((_, i) => `n${i}`));
    expect(proxy.size).toBe(40);
    for (const ws of sockets) ws.close();
  });

  it('refuses cross-origin upgrades with 403 and accepts same-origin ones', async () => {
    await expect(open(front.url, { origin: 'http://evil.example' })).rejects.toThrow('HTTP 403');
    const host = new URL(front.url).host;
    const ws = await open(front.url, { origin: `http://${host}` });
    ws.close();
  });

  it('closes both legs with 1001 when the proxy shuts down', async () => {
    const other = createWsProxy({ target: upstream.url });
    const otherFront = await startFront(other);
    const ws = await open(otherFront.url);
    const server = upstream.sockets.at(-1) as WebSocket;
    const c1 = closed(ws);
    const c2 = closed(server);
    await other.close();
    expect((await c1).code).toBe(1001);
    expect((await c2).code).toBe(1001);
    await otherFront.close();
  });
});

describe('ws proxy with the engine unreachable', () => {
  it('accepts the browser, then closes 1011 with a reason naming the engine (without credentials)', async () => {
    const port = await deadPort();
    const proxy = createWsProxy({ target: `ws://admin:s3cret@127.0.0.1:${port}` });
    const front = await startFront(proxy);
    const ws = await open(front.url);
    const { code, reason } = await closed(ws);
    expect(code).toBe(1011);
    expect(reason).toBe(`engine unreachable at ws://127.0.0.1:${port}: ECONNREFUSED`);
    expect(reason).not.toContain('s3cret');
    await front.close();
  });
});

describe('eng-console /ws and /ws/streams against a real engine', () => {
  let engine: EngineProcess;
  let console_: ConsoleServer;
  beforeAll(async () => {
    engine = await startEngine({ workersYaml: '  - name: eng-stream\n    config:\n      port: {{STREAMS_PORT}}\n' });
    console_ = await startTestConsole({ bridgePort: engine.busPort, wsPort: engine.ports.STREAMS as number, enginePort: await deadPort() });
  });
  afterAll(async () => {
    await console_?.close();
    await engine?.stop();
  });

  it('lets an SDK client work through /ws exactly as against the engine', async () => {
    const provider = connect(`${console_.url.replace('http', 'ws')}/ws`, { name: 'through-proxy', registerWorker: false });
    provider.registerFunction('proxy::double', (n: any) => (n?.x ?? 0) * 2);
    await provider.ready({ timeoutMs: 5000 });
    const direct = connect(engine.busUrl, { name: 'direct', registerWorker: false });
    await direct.ready({ timeoutMs: 5000 });
    await waitFor(async () =>
      (await direct.call<{ functions: Array<{ function_id: string }> }>('engine::functions::list', {})).functions.some(
        (f) => f.function_id === 'proxy::double',
      ),
    );
    expect(await direct.call('proxy::double', { x: 21 })).toBe(42);
    expect(await provider.call('proxy::double', { x: 2 })).toBe(4);
    await provider.close();
    await direct.close();
  });

  it('proxies /ws/streams to the streams socket', async () => {
    const ws = await open(`${console_.url.replace('http', 'ws')}/ws/streams`);
    const sync = nextMessage(ws);
    ws.send(JSON.stringify({ type: 'join', data: { subscriptionId: 's1', streamName: 'chat', groupId: 'room' } }));
    const msg = JSON.parse((await sync).data.toString());
    expect(msg).toMatchObject({ streamName: 'chat', groupId: 'room', event: { type: 'sync' } });
    ws.close();
  });

  it('answers other upgrade paths with 404', async () => {
    await expect(open(`${console_.url.replace('http', 'ws')}/elsewhere`)).rejects.toThrow('HTTP 404');
  });
});
