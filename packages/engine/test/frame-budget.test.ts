import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { FrameBudget } from '../src/bus/socket-limits.ts';

// The global budget of bytes of frames being received (issue 12 item 13): what counts, and when it
// is released. Real sockets on loopback, the engine's class on the server side.

const KiB = 1024;
let server: Server | undefined;
const clients: WebSocket[] = [];

afterEach(async () => {
  for (const ws of clients.splice(0)) ws.terminate();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

async function watched(maxBytes: number): Promise<{ budget: FrameBudget; url: string; warnings: string[]; messages: string[] }> {
  const warnings: string[] = [];
  const messages: string[] = [];
  const budget = new FrameBudget(maxBytes, 'test bus', 'max_inflight_frame_bytes of test', (m) => warnings.push(m));
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  server = createServer();
  server.on('upgrade', (req, socket, head) => {
    wss.handleUpgrade(req, socket, head, (ws) => {
      budget.watch(ws, socket);
      ws.on('message', (data) => messages.push(data.toString()));
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return { budget, url: `ws://127.0.0.1:${port}`, warnings, messages };
}

async function open(url: string): Promise<WebSocket> {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  clients.push(ws);
  ws.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return ws;
}

/** Ping and wait for the pong: everything sent before the ping has been read by the server. */
async function roundTrip(ws: WebSocket, payload = ''): Promise<void> {
  const pong = new Promise<void>((resolve) => ws.once('pong', () => resolve()));
  ws.ping(payload);
  await pong;
}

describe('FrameBudget', () => {
  it('counts nothing once whole messages and any number of pings (empty or with payload) have been read', async () => {
    const { budget, url, messages } = await watched(1024 * KiB);
    const ws = await open(url);
    for (let i = 0; i < 200; i++) await roundTrip(ws, i % 2 === 0 ? '' : 'x'.repeat(i % 125));
    ws.send('hello');
    await roundTrip(ws);
    expect(messages).toEqual(['hello']);
    expect(budget.inFlight).toBe(0);
  });

  it('keeps the bytes of a fragmented frame counted across pings between its fragments, and frees them when it completes', async () => {
    const { budget, url, messages } = await watched(1024 * KiB);
    const ws = await open(url);
    ws.send('a'.repeat(200 * KiB), { fin: false });
    await roundTrip(ws);
    await roundTrip(ws, 'payload');
    expect(budget.inFlight).toBeGreaterThanOrEqual(200 * KiB);
    ws.send('b', { fin: true });
    await roundTrip(ws);
    expect(messages).toHaveLength(1);
    expect(messages[0]?.length).toBe(200 * KiB + 1);
    expect(budget.inFlight).toBe(0);
  });

  it('refuses the connection whose frame takes the total over, even when its peer pings between fragments', async () => {
    const { budget, url, warnings } = await watched(300 * KiB);
    const first = await open(url);
    first.send('a'.repeat(200 * KiB), { fin: false });
    await roundTrip(first);
    const second = await open(url);
    const closed = new Promise<number>((resolve) => second.once('close', (code) => resolve(code)));
    second.send('b'.repeat(200 * KiB), { fin: false });
    expect(await closed).toBe(1009);
    expect(warnings[0]).toContain('over the budget of 307200 bytes');
    // the refused connection's bytes are released when the server side has closed it too; the
    // first still holds its own
    const deadline = Date.now() + 5000;
    while (budget.inFlight >= 201 * KiB && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(budget.inFlight).toBeGreaterThanOrEqual(200 * KiB);
    expect(budget.inFlight).toBeLessThan(201 * KiB);
  });
});
