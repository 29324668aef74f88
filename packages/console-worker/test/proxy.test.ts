import type { AddressInfo } from 'node:net';
import { connect, type EngClient } from '@eng/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { type EngineProcess, freePort, startEngine, waitFor } from '../../../test/harness.ts';
import { RawClient } from '../../../test/raw-client.ts';
import { ensureBundle, startWorker, type WorkerProcess } from './helpers.ts';

// issue 7 §3: the /ws proxy, exercised by browser-style clients (the `ws` package speaking the
// wire protocol) through a real console worker process.

beforeAll(() => ensureBundle(), 180_000);

function open(url: string, headers: Record<string, string> = {}): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers, maxPayload: 0 });
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
  });
}

function closed(ws: WebSocket): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
}

describe('/ws relays frames 1:1 (a plain ws server as the upstream)', () => {
  let upstream: WebSocketServer;
  let worker: WorkerProcess;
  const peers: WebSocket[] = [];
  beforeAll(async () => {
    upstream = new WebSocketServer({ port: 0, host: '127.0.0.1', maxPayload: 0 });
    upstream.on('connection', (ws) => {
      peers.push(ws);
      ws.on('message', (data, isBinary) => {
        const text = isBinary ? '' : data.toString();
        if (text === 'close-me') ws.close(4001, 'bye from the engine side');
        else if (text === 'ping-me') ws.ping(Buffer.from('p2'));
        else if (text === 'drop-me') ws.terminate();
        else ws.send(data, { binary: isBinary });
      });
    });
    await new Promise((r) => upstream.once('listening', r));
    worker = await startWorker(['--http-port', '0', '--url', `ws://127.0.0.1:${(upstream.address() as AddressInfo).port}`]);
  });
  afterAll(async () => {
    await worker?.stop();
    await new Promise((r) => upstream.close(r));
  });

  const proxied = () => open(`${worker.base.replace('http', 'ws')}/ws`);
  const lastPeer = () => peers[peers.length - 1] as WebSocket;

  it('keeps text as text and binary as binary, both ways', async () => {
    const ws = await proxied();
    const received: Array<{ data: Buffer; isBinary: boolean }> = [];
    lastPeer().on('message', (data, isBinary) => received.push({ data: data as Buffer, isBinary }));
    const echoes: Array<{ data: Buffer; isBinary: boolean }> = [];
    ws.on('message', (data, isBinary) => echoes.push({ data: data as Buffer, isBinary }));
    ws.send('héllo');
    ws.send(Buffer.from([0, 1, 2, 255]), { binary: true });
    await waitFor(() => echoes.length === 2);
    expect(received.map((r) => [r.isBinary, r.data.toString('hex')])).toEqual([
      [false, Buffer.from('héllo').toString('hex')],
      [true, '000102ff'],
    ]);
    expect(echoes.map((r) => [r.isBinary, r.data.toString('hex')])).toEqual([
      [false, Buffer.from('héllo').toString('hex')],
      [true, '000102ff'],
    ]);
    ws.close();
  });

  it('relays pings and pongs instead of answering them itself', async () => {
    const ws = await proxied();
    const upstreamPings: string[] = [];
    lastPeer().on('ping', (d) => upstreamPings.push(d.toString()));
    const pong = new Promise<string>((r) => ws.once('pong', (d) => r(d.toString())));
    ws.ping(Buffer.from('p1'));
    expect(await pong).toBe('p1');
    expect(upstreamPings).toEqual(['p1']);

    const browserPing = new Promise<string>((r) => ws.once('ping', (d) => r(d.toString())));
    const upstreamPong = new Promise<string>((r) => lastPeer().once('pong', (d) => r(d.toString())));
    ws.send('ping-me');
    expect(await browserPing).toBe('p2');
    expect(await upstreamPong).toBe('p2');
    ws.close();
  });

  it('passes close codes and reasons through in both directions', async () => {
    const a = await proxied();
    const peerClosed = closed(lastPeer());
    a.close(4000, 'bye from the browser');
    expect(await peerClosed).toEqual({ code: 4000, reason: 'bye from the browser' });

    const b = await proxied();
    const bClosed = closed(b);
    b.send('close-me');
    expect(await bClosed).toEqual({ code: 4001, reason: 'bye from the engine side' });
  });

  it('tears the other leg down when one side drops without a close frame', async () => {
    const a = await proxied();
    const aClosed = closed(a);
    a.send('drop-me');
    expect((await aClosed).code).toBe(1006);

    const b = await proxied();
    const peerClosed = closed(lastPeer());
    b.terminate();
    expect((await peerClosed).code).toBe(1006);
  });
});

describe('/ws in front of a real engine', () => {
  let engine: EngineProcess;
  let worker: WorkerProcess;
  let app: EngClient;
  let wsUrl: string;
  beforeAll(async () => {
    engine = await startEngine();
    app = connect(engine.busUrl, { name: 'proxy-test-app', tracing: false });
    app.registerFunction('cw::echo', (input) => input);
    app.registerFunction('cw::size', (input) => ({ length: String((input as { blob?: string }).blob ?? '').length }));
    await app.ready({ timeoutMs: 10_000 });
    worker = await startWorker(['--http-port', '0', '--url', engine.busUrl]);
    wsUrl = `${worker.base.replace('http', 'ws')}/ws`;
  });
  afterAll(async () => {
    await app?.close();
    await worker?.stop();
    await engine?.stop();
  });

  it('carries the wire protocol both ways: calls out, invocations in', async () => {
    const browser = await RawClient.worker(wsUrl);
    const frame = await browser.call('cw::echo', { hello: 'through the proxy' });
    expect(frame.result).toMatchObject({ hello: 'through the proxy' });
    // a function registered by the browser is invoked by the engine over the same proxied socket
    browser.send({ type: 'registerfunction', id: 'cw::browser-side' });
    await waitFor(async () =>
      (await app.call<{ functions: Array<{ function_id: string }> }>('engine::functions::list', {})).functions.some(
        (f) => f.function_id === 'cw::browser-side',
      ),
    );
    const answer = app.call('cw::browser-side', { q: 1 });
    const invoke = await browser.next((f) => f.type === 'invokefunction' && f.function_id === 'cw::browser-side');
    browser.send({ type: 'invocationresult', invocation_id: invoke.invocation_id, function_id: 'cw::browser-side', result: { a: 2 } });
    expect(await answer).toEqual({ a: 2 });
    await browser.close();
  });

  it('has no frame-size cap: a 32 MiB call and its 32 MiB result', async () => {
    const browser = await RawClient.worker(wsUrl);
    const blob = 'x'.repeat(32 * 1024 * 1024);
    // a size test, not a timing one: 32 MiB each way may take seconds on a busy machine
    const size = await browser.call('cw::size', { blob }, {}, 45_000);
    expect(size.result).toEqual({ length: blob.length });
    const big = await browser.call('cw::echo', { blob }, {}, 45_000);
    expect((big.result as { blob: string }).blob.length).toBe(blob.length);
    expect(browser.isOpen).toBe(true);
    await browser.close();
  }, 120_000);

  it('serves 100 concurrent browser connections, one engine connection each', async () => {
    const browsers = await Promise.all(Array.from({ length: 100 }, () => RawClient.worker(wsUrl)));
    const ids = new Set(browsers.map((b) => b.workerId));
    expect(ids.size).toBe(100);
    const results = await Promise.all(browsers.map((b, i) => b.call('cw::echo', { i })));
    expect(results.map((r) => (r.result as { i: number }).i)).toEqual(browsers.map((_b, i) => i));
    await Promise.all(browsers.map((b) => b.close()));
  }, 60_000);

  it('accepts same-origin and Origin-less upgrades and refuses cross-origin ones with 403', async () => {
    const same = await open(wsUrl, { origin: worker.base });
    same.close();
    const none = await open(wsUrl);
    none.close();
    await expect(open(wsUrl, { origin: 'http://evil.example' })).rejects.toThrow('HTTP 403');
    await expect(open(wsUrl, { origin: `http://localhost:${worker.ready.http_port + 1}` })).rejects.toThrow('HTTP 403');
  });

  it('closes the browser leg when the engine goes away, and works again once it is back', async () => {
    const browser = await RawClient.worker(wsUrl);
    await engine.stop();
    await browser.waitClosed();
    expect(browser.closeInfo?.code).not.toBe(1000);
    await engine.restart();
    const again = await RawClient.worker(wsUrl);
    expect((await again.call('engine::functions::list', {})).result).toBeDefined();
    await again.close();
  }, 60_000);
});

describe('/ws when the engine cannot be reached', () => {
  let worker: WorkerProcess;
  let port: number;
  beforeAll(async () => {
    port = await freePort();
    worker = await startWorker(['--http-port', '0', '--url', `ws://ops:s3cr3t@127.0.0.1:${port}`]);
  });
  afterAll(async () => {
    await worker?.stop();
  });

  it('accepts the upgrade, then closes 1011 with a reason that names the engine without its password', async () => {
    const ws = await open(`${worker.base.replace('http', 'ws')}/ws`);
    const { code, reason } = await closed(ws);
    expect(code).toBe(1011);
    expect(reason).toContain(`engine unreachable at ws://127.0.0.1:${port}`);
    expect(reason).not.toContain('s3cr3t');
  });
});
