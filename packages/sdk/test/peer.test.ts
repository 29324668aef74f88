import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { EngError } from '@eng/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { type WebSocket, WebSocketServer } from 'ws';
import { client, closeClients, deferred, recordingLogger } from './helpers.ts';

// Frames a correct engine never sends (garbage, unknown function ids, invokes without an id, a
// handshake refusal) cannot be produced with the real engine, so this file plays the engine's
// side of the socket by hand. Everything else is tested against a real engine.

const servers: WebSocketServer[] = [];
afterEach(async () => {
  await closeClients();
  for (const server of servers.splice(0)) {
    for (const socket of server.clients) socket.terminate();
    await new Promise((r) => server.close(r));
  }
});

type Frame = Record<string, unknown>;

interface PeerConnection {
  socket: WebSocket;
  frames: Frame[];
  /** The first frame (already received or still to come) that matches. */
  frame(match: (f: Frame) => boolean): Promise<Frame>;
}

/** A socket peer that greets like the engine and hands each connection to the test. */
async function peer(): Promise<{ url: string; next(): Promise<PeerConnection> }> {
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  servers.push(server);
  await new Promise((r) => server.once('listening', r));
  const takers: Array<(connection: PeerConnection) => void> = [];
  server.on('connection', (socket) => {
    const frames: Frame[] = [];
    const waiters: Array<{ match: (f: Frame) => boolean; resolve(f: Frame): void }> = [];
    socket.on('message', (data, isBinary) => {
      if (isBinary) return; // telemetry frames (OTLP/LOGS), not protocol messages
      const frame = JSON.parse(data.toString()) as Frame;
      frames.push(frame);
      for (const waiter of [...waiters]) {
        if (!waiter.match(frame)) continue;
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(frame);
      }
    });
    socket.send(JSON.stringify({ type: 'workerregistered', worker_id: randomUUID(), reattach_token: randomUUID() }));
    takers.shift()?.({
      socket,
      frames,
      frame: (match) =>
        new Promise((resolve) => {
          const seen = frames.find(match);
          if (seen) resolve(seen);
          else waiters.push({ match, resolve });
        }),
    });
  });
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
    next: () => new Promise((resolve) => takers.push(resolve)),
  };
}

describe('frames a correct engine never sends', () => {
  it('drops malformed frames, keeps the connection, and still serves the next call', async () => {
    const engine = await peer();
    const connection = engine.next();
    const logger = recordingLogger();
    const worker = client(engine.url, { logger, registerWorker: false });
    worker.registerFunction('peer::echo', (input) => input);
    await worker.ready();
    const { socket, frame } = await connection;

    for (const junk of ['not json', '[1,2]', '{"no":"type"}', '{"type":"invokefunction"}', '{"type":"nonsense"}', '   ']) socket.send(junk);
    socket.send(Buffer.from('{"broken'), { binary: true });
    const invocationId = randomUUID();
    socket.send(JSON.stringify({ type: 'invokefunction', invocation_id: invocationId, function_id: 'peer::echo', data: { ok: true } }));
    const result = await frame((f) => f.type === 'invocationresult');
    expect(result).toMatchObject({ invocation_id: invocationId, function_id: 'peer::echo', result: { ok: true } });
    expect(logger.lines.filter((l) => l.level === 'warn' && l.message.startsWith('dropped a frame')).length).toBe(6);
  });

  it('answers an invocation of a function it does not serve with function_not_found', async () => {
    const engine = await peer();
    const connection = engine.next();
    const worker = client(engine.url, { registerWorker: false });
    await worker.ready();
    const { socket, frame } = await connection;
    const invocationId = randomUUID();
    socket.send(JSON.stringify({ type: 'invokefunction', invocation_id: invocationId, function_id: 'peer::missing', data: {} }));
    expect(await frame((f) => f.type === 'invocationresult')).toEqual({
      type: 'invocationresult',
      invocation_id: invocationId,
      function_id: 'peer::missing',
      error: { code: 'function_not_found', message: 'Function peer::missing not found' },
    });
  });

  it('runs the handler of an invocation without id and sends no result', async () => {
    const engine = await peer();
    const connection = engine.next();
    const worker = client(engine.url, { registerWorker: false });
    const ran = deferred<unknown>();
    worker.registerFunction('peer::fire', (input, ctx) => {
      ran.resolve({ input, invocationId: ctx.invocationId });
      return 'nobody listens';
    });
    await worker.ready();
    const { socket, frames } = await connection;
    socket.send(JSON.stringify({ type: 'invokefunction', function_id: 'peer::fire', data: [1] }));
    expect(await ran.promise).toEqual({ input: [1], invocationId: undefined });
    await new Promise((r) => setTimeout(r, 50));
    expect(frames.filter((f) => f.type === 'invocationresult')).toEqual([]);
  });

  it('answers an app-level ping and reports a handshake refusal as an error event', async () => {
    const engine = await peer();
    const connection = engine.next();
    const worker = client(engine.url, { registerWorker: false, reconnect: { maxRetries: 0 } });
    const refused = deferred<EngError>();
    worker.on('error', (e) => refused.resolve(e));
    await worker.ready();
    const { socket, frame } = await connection;
    socket.send('{"type":"ping"}');
    expect(await frame((f) => f.type === 'pong')).toEqual({ type: 'pong' });
    socket.send(JSON.stringify({ type: 'error', error: { code: 'AUTH_ERROR', message: 'auth function returned no result' } }));
    expect(await refused.promise).toMatchObject({ code: 'AUTH_ERROR', message: 'auth function returned no result' });
  });

  it('reports a refused trigger binding once, and only for its own bindings', async () => {
    const engine = await peer();
    const connection = engine.next();
    const logger = recordingLogger();
    const worker = client(engine.url, { logger, registerWorker: false });
    const errors: EngError[] = [];
    worker.on('error', (e) => errors.push(e));
    const binding = worker.registerTrigger({ type: 'http', function_id: 'peer::fn', config: {} });
    await worker.ready();
    const { socket, frame } = await connection;
    await frame((f) => f.type === 'registertrigger');
    const refusal = {
      type: 'triggerregistrationresult',
      trigger_type: 'http',
      function_id: 'peer::fn',
      error: { code: 'trigger_registration_failed', message: 'api_path is required for http triggers' },
    };
    socket.send(JSON.stringify({ ...refusal, id: binding.id }));
    socket.send(JSON.stringify({ ...refusal, id: binding.id }));
    socket.send(JSON.stringify({ ...refusal, id: randomUUID() }));
    socket.send('{"type":"ping"}');
    await frame((f) => f.type === 'pong');
    expect(errors.map((e) => e.code)).toEqual(['trigger_registration_failed', 'trigger_registration_failed']);
    expect(errors[0]?.message).toContain('api_path is required for http triggers');
    expect(logger.lines.filter((l) => l.level === 'warn')).toHaveLength(1);
  });
});
