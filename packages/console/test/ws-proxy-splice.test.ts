import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { type AddressInfo, connect, createServer as createTcpServer, type Socket, type Server as TcpServer } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import * as ws from 'ws';
import { waitFor } from '../../../test/harness.ts';
import { createWsProxy, type WsProxy, type WsProxyOptions } from '../src/ws-proxy.ts';

// issue 7 §3 with the byte-splicing proxy: what the engine is sent in the handshake, what happens
// when that handshake fails, bytes that ride along with either handshake, backpressure, and the
// close frames put in at frame boundaries on shutdown. Both ends here are real sockets; the raw
// ones let a test stop a frame halfway.

const { WebSocket, WebSocketServer } = ws;
// not in @types/ws, but exported by ws's ESM entry: its own frame encoder and decoder
const { Sender, Receiver } = ws as unknown as {
  Sender: { frame(data: Buffer, options: Record<string, unknown>): Buffer[] };
  Receiver: new (
    options: Record<string, unknown>,
  ) => NodeJS.WritableStream & {
    on(event: 'message', listener: (data: Buffer, isBinary: boolean) => void): void;
    on(event: 'conclude', listener: (code: number, reason: Buffer) => void): void;
    on(event: 'error', listener: (err: Error) => void): void;
  };
};

const acceptFor = (key: string) => createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
const encode = (data: Buffer | string, mask: boolean, opcode = typeof data === 'string' ? 1 : 2) =>
  Buffer.concat(Sender.frame(Buffer.from(data), { fin: true, opcode, mask, readOnly: false, rsv1: false }));
const CLOSE = 0x8;

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** An HTTP server routing every upgrade to a proxy made with `options`. */
async function startFront(options: WsProxyOptions): Promise<{ proxy: WsProxy; port: number; url: string }> {
  const proxy = createWsProxy(options);
  const server: Server = createServer((_req, res) => res.end());
  server.on('upgrade', (req, socket, head) => proxy.handleUpgrade(req, socket, head));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  cleanups.push(async () => {
    await proxy.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  return { proxy, port, url: `ws://127.0.0.1:${port}/ws` };
}

/** Everything one side of a raw connection received after its handshake, decoded as it arrives. */
class Peer {
  bytes = 0;
  readonly events: string[] = [];
  private readonly receiver;
  constructor(
    readonly socket: Socket,
    isServer: boolean,
  ) {
    this.receiver = new Receiver({ isServer, maxPayload: 0 });
    this.receiver.on('message', (data, isBinary) => this.events.push(isBinary ? `binary ${data.length}` : `text ${data}`));
    this.receiver.on('conclude', (code, reason) => this.events.push(`close ${code} ${reason}`));
    this.receiver.on('error', (err) => this.events.push(`error ${err.message}`));
  }
  take(chunk: Buffer): void {
    this.bytes += chunk.length;
    this.receiver.write(chunk);
  }
}

/** A raw WebSocket server standing in for the engine: answers 101 (plus `greeting` in the same write). */
async function startRawUpstream(greeting: Buffer = Buffer.alloc(0)) {
  const peers: Array<Peer & { head: string }> = [];
  const server: TcpServer = createTcpServer((socket) => {
    let buffered = Buffer.alloc(0);
    const onHead = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onHead);
      const head = buffered.toString('latin1', 0, end);
      const key = /sec-websocket-key: (\S+)/i.exec(head)?.[1] ?? '';
      const peer = Object.assign(new Peer(socket, true), { head });
      peers.push(peer);
      socket.on('data', (c: Buffer) => peer.take(c));
      socket.write(
        Buffer.concat([
          Buffer.from(
            `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${acceptFor(key)}\r\n\r\n`,
          ),
          greeting,
        ]),
      );
      const rest = buffered.subarray(end + 4);
      if (rest.length > 0) peer.take(rest);
    };
    socket.on('data', onHead);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  cleanups.push(() => new Promise((r) => server.close(r)));
  return { url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`, peers, server };
}

/** A raw browser: sends the upgrade request (plus `early` in the same write), reads the 101. */
async function rawBrowser(port: number, options: { early?: Buffer; key?: string } = {}) {
  const socket = connect(port, '127.0.0.1');
  socket.setNoDelay(true);
  socket.on('error', () => undefined);
  cleanups.push(() => socket.destroy());
  const key = options.key ?? randomBytes(16).toString('base64');
  socket.write(
    Buffer.concat([
      Buffer.from(
        `GET /ws HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      ),
      options.early ?? Buffer.alloc(0),
    ]),
  );
  const peer = new Peer(socket, false);
  const head = await new Promise<string>((resolve) => {
    let buffered = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onData);
      socket.on('data', (c: Buffer) => peer.take(c));
      const rest = buffered.subarray(end + 4);
      if (rest.length > 0) peer.take(rest);
      resolve(buffered.toString('latin1', 0, end));
    };
    socket.on('data', onData);
  });
  return Object.assign(peer, { head, key });
}

function openBrowser(url: string, protocols: string[] = []): Promise<ws.WebSocket> {
  return new Promise((resolve, reject) => {
    const client = new WebSocket(url, protocols, { maxPayload: 0 }); // offers permessage-deflate, as browsers do
    client.once('open', () => resolve(client));
    client.once('error', reject);
    client.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    cleanups.push(() => client.terminate());
  });
}

const closeOf = (client: ws.WebSocket) =>
  new Promise<{ code: number; reason: string }>((r) => client.once('close', (code, reason) => r({ code, reason: reason.toString() })));

describe('the handshake with the engine', () => {
  it('carries the target path, query, Host and Basic credentials, and the browser key and subprotocols, not its extensions', async () => {
    const seen: IncomingMessage[] = [];
    const engine = new WebSocketServer({
      port: 0,
      host: '127.0.0.1',
      perMessageDeflate: true, // would be agreed if the proxy passed the browser's offer on
      handleProtocols: (offered) => (offered.has('eng.v2') ? 'eng.v2' : false),
      verifyClient: (info: { req: IncomingMessage }) => {
        seen.push(info.req);
        return true;
      },
    });
    engine.on('connection', (peer) => peer.on('message', (data, isBinary) => peer.send(data, { binary: isBinary })));
    await new Promise((r) => engine.once('listening', r));
    cleanups.push(() => new Promise((r) => engine.close(r)));
    const enginePort = (engine.address() as AddressInfo).port;
    const { url } = await startFront({ target: `ws://us%40er:p%3Ass@127.0.0.1:${enginePort}/engine/bus?x=1&y=2` });

    const client = await openBrowser(url, ['eng.v1', 'eng.v2']);
    expect(client.protocol).toBe('eng.v2');
    expect(client.extensions).toBe('');
    const echoed = new Promise<string>((r) => client.once('message', (d) => r(d.toString())));
    client.send('plain frames');
    expect(await echoed).toBe('plain frames');

    const req = seen[0] as IncomingMessage;
    expect(req.url).toBe('/engine/bus?x=1&y=2');
    expect(req.headers.host).toBe(`127.0.0.1:${enginePort}`);
    expect(req.headers.authorization).toBe(`Basic ${Buffer.from('us@er:p:ss').toString('base64')}`);
    expect(req.headers['sec-websocket-extensions']).toBeUndefined();
    expect(req.headers['sec-websocket-protocol']).toBe('eng.v1,eng.v2');
  });

  it('answers a request that is not a WebSocket upgrade with 400, without dialling', async () => {
    const upstream = await startRawUpstream();
    let dialled = 0;
    upstream.server.on('connection', () => dialled++);
    const { port } = await startFront({ target: upstream.url });
    const socket = connect(port, '127.0.0.1');
    cleanups.push(() => socket.destroy());
    socket.write(
      `GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: short\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    );
    const answer = await new Promise<string>((r) => socket.once('data', (d) => r(d.toString())));
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(dialled).toBe(0);
  });

  it('passes on bytes that arrive with either handshake', async () => {
    const upstream = await startRawUpstream(encode('hello from the engine', false));
    const { port } = await startFront({ target: upstream.url });
    const browser = await rawBrowser(port, { early: encode('sent with the upgrade', true) });
    expect(browser.head).toContain(`Sec-WebSocket-Accept: ${acceptFor(browser.key)}`);
    await waitFor(() => browser.events.length === 1 && upstream.peers[0]?.events.length === 1, 15_000);
    expect(browser.events).toEqual(['text hello from the engine']);
    expect(upstream.peers[0]?.events).toEqual(['text sent with the upgrade']);
  });
});

describe('when the engine handshake fails', () => {
  it('closes the browser 1011 on a non-101 answer, naming the engine', async () => {
    const engine = new WebSocketServer({ port: 0, host: '127.0.0.1', verifyClient: (_info, cb) => cb(false, 403) });
    await new Promise((r) => engine.once('listening', r));
    cleanups.push(() => new Promise((r) => engine.close(r)));
    const target = `ws://127.0.0.1:${(engine.address() as AddressInfo).port}`;
    const { url } = await startFront({ target });
    const client = await openBrowser(url);
    expect(await closeOf(client)).toEqual({ code: 1011, reason: `engine unreachable at ${target}: HTTP 403` });
  });

  it('closes the browser 1011 when the engine does not answer within connectTimeoutMs', async () => {
    const silent = createTcpServer((socket) => socket.on('error', () => undefined).resume()); // reads, never answers
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    cleanups.push(() => new Promise((r) => silent.close(r)));
    const target = `ws://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    const { url } = await startFront({ target, connectTimeoutMs: 300 });
    const started = Date.now();
    const client = await openBrowser(url);
    expect(await closeOf(client)).toEqual({ code: 1011, reason: `engine unreachable at ${target}: handshake timed out` });
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('closes the browser 1011 when the target is not a WebSocket URL', async () => {
    for (const target of ['not a url', 'ftp://127.0.0.1:1/']) {
      const { url } = await startFront({ target });
      const client = await openBrowser(url);
      expect(await closeOf(client)).toEqual({ code: 1011, reason: `engine unreachable at ${target}: invalid URL` });
    }
  });

  it('dials a wss:// engine over TLS and checks its certificate', async () => {
    // a self-signed test certificate (P-256, valid until 2126): the proxy must refuse it
    const key = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgLBJO2fQM9OAAYXn3
3FRgsi2dOIhvgHiUWBc8DVeC+tahRANCAARCCkxHF8Q+peR5h6wP0cqhIZcowayy
VI+7GHNthztsfOE4pPYCnj8OqOc+Sza32ge5LSxTnUQbhvw1Yj6TXTeg
-----END PRIVATE KEY-----`;
    const cert = `-----BEGIN CERTIFICATE-----
MIIBfjCCASWgAwIBAgIUbgQeo++s/qI1JAfjtLt69GG1ekcwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJbG9jYWxob3N0MCAXDTI2MTEyMjA2MjkwNVoYDzIxMjYxMDI5
MDYyOTA1WjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAARCCkxHF8Q+peR5h6wP0cqhIZcowayyVI+7GHNthztsfOE4pPYCnj8O
qOc+Sza32ge5LSxTnUQbhvw1Yj6TXTego1MwUTAdBgNVHQ4EFgQUs1KS0oMUBt1n
iLQcuRRV1sR9VtswHwYDVR0jBBgwFoAUs1KS0oMUBt1niLQcuRRV1sR9VtswDwYD
VR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNHADBEAiAwm3Kod1sHdiHtgqntAgCO
Afei40VOL25dxRoFDexlpgIgGlK4wbZIbUyQ3X47/fitTE1Jf1LN8DaETvBi9lCN
qkQ=
-----END CERTIFICATE-----`;
    let hellos = 0;
    const tlsServer = createTlsServer({ key, cert }, (socket) => socket.destroy());
    tlsServer.on('tlsClientError', () => hellos++);
    await new Promise<void>((r) => tlsServer.listen(0, '127.0.0.1', () => r()));
    cleanups.push(() => new Promise((r) => tlsServer.close(r)));
    const target = `wss://127.0.0.1:${(tlsServer.address() as AddressInfo).port}`;
    const { url } = await startFront({ target });
    const { code, reason } = await closeOf(await openBrowser(url));
    expect(code).toBe(1011);
    expect(reason).toMatch(new RegExp(`^engine unreachable at ${target}: (DEPTH_ZERO_SELF_SIGNED_CERT|CERT_NOT_YET_VALID)$`));
    await waitFor(() => hellos === 1, 15_000); // a TLS handshake was attempted, and given up by the proxy
  });

  it('stops dialling when the browser hangs up first', async () => {
    const dials: Socket[] = [];
    const silent = createTcpServer((socket) => {
      dials.push(socket);
      socket.on('error', () => undefined).resume(); // reads, never answers
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    cleanups.push(() => new Promise((r) => silent.close(r)));
    const { port, proxy } = await startFront({
      target: `ws://127.0.0.1:${(silent.address() as AddressInfo).port}`,
      connectTimeoutMs: 30_000,
    });
    const socket = connect(port, '127.0.0.1');
    socket.write(
      `GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    );
    await waitFor(() => dials.length === 1, 15_000);
    const dialClosed = new Promise((r) => dials[0]?.once('close', r));
    socket.destroy();
    await dialClosed; // long before the 30 s handshake deadline
    expect(proxy.size).toBe(0);
  });
});

describe('while spliced', () => {
  it('stops reading the engine while the browser is not reading, instead of buffering', async () => {
    let enginePeer: ws.WebSocket | undefined;
    const engine = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    engine.on('connection', (peer) => {
      enginePeer = peer;
    });
    await new Promise((r) => engine.once('listening', r));
    cleanups.push(() => new Promise((r) => engine.close(r)));
    const { port } = await startFront({ target: `ws://127.0.0.1:${(engine.address() as AddressInfo).port}`, highWaterMark: 1024 * 1024 });
    const browser = await rawBrowser(port);
    browser.socket.pause();
    await waitFor(() => enginePeer !== undefined, 30_000);
    const mib = Buffer.alloc(1024 * 1024, 1);
    for (let i = 0; i < 64; i++) enginePeer?.send(mib);
    await new Promise((r) => setTimeout(r, 500));
    // the proxy holds at most its 1 MiB mark: the rest waits in the engine or in kernel buffers
    expect(enginePeer?.bufferedAmount).toBeGreaterThan(40 * 1024 * 1024);
    browser.socket.resume();
    await waitFor(() => browser.events.length === 64, 30_000);
    expect(new Set(browser.events)).toEqual(new Set([`binary ${mib.length}`]));
  }, 60_000);
});

describe('shutdown', () => {
  it('puts the 1001 close frames in at frame boundaries, after frames cut halfway in both directions', async () => {
    const upstream = await startRawUpstream();
    const { port, proxy } = await startFront({ target: upstream.url });
    const browser = await rawBrowser(port);
    await waitFor(() => upstream.peers.length === 1, 15_000);
    const engine = upstream.peers[0] as Peer;

    const fromBrowser = encode(Buffer.alloc(100_000, 2), true);
    const fromEngine = encode(Buffer.alloc(100_000, 3), false);
    browser.socket.write(fromBrowser.subarray(0, 1000));
    engine.socket.write(fromEngine.subarray(0, 1000));
    await waitFor(() => engine.bytes === 1000 && browser.bytes === 1000, 15_000);

    const closing = proxy.close(1001, 'going away');
    await new Promise((r) => setTimeout(r, 100));
    expect([engine.bytes, browser.bytes]).toEqual([1000, 1000]); // nothing put inside a frame
    browser.socket.write(fromBrowser.subarray(1000));
    engine.socket.write(fromEngine.subarray(1000));
    await waitFor(() => engine.events.length === 2 && browser.events.length === 2, 15_000);
    expect(engine.events).toEqual(['binary 100000', 'close 1001 going away']);
    expect(browser.events).toEqual(['binary 100000', 'close 1001 going away']);

    // each end answers as a WebSocket endpoint would; the proxy then lets both connections go
    const browserEnded = new Promise((r) => browser.socket.once('end', r));
    const engineEnded = new Promise((r) => engine.socket.once('end', r));
    const answeredAt = Date.now();
    browser.socket.write(encode(Buffer.alloc(0), true, CLOSE));
    engine.socket.end(encode(Buffer.alloc(0), false, CLOSE)); // the server closes TCP first
    await Promise.all([browserEnded, engineEnded, closing]);
    expect(Date.now() - answeredAt).toBeLessThan(1000); // not the 1500 ms forced teardown
    expect(proxy.size).toBe(0);
  });

  it('refuses new upgrades with 503 once closing', async () => {
    const upstream = await startRawUpstream();
    const { url, proxy } = await startFront({ target: upstream.url });
    await proxy.close();
    await expect(openBrowser(url)).rejects.toThrow('HTTP 503');
  });
});
