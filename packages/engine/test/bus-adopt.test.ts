import { mkdtempSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../test/harness.ts';
import { RawClient } from '../../../test/raw-client.ts';
import { type BusAdopt, BusService } from '../src/bus/server.ts';
import { Engine } from '../src/engine.ts';
import { adoptedUpgrade } from '../src/supervisor/module.ts';

// The bus side of the console worker's `/ws` handoff: a WebSocket upgrade accepted by another
// process arrives as `{path, headers, head}` plus the socket, and becomes a bus connection.

describe('adoptedUpgrade: the IPC message a supervised worker sends with a socket', () => {
  it('takes a well-formed message, with header names lower-cased and the head decoded', () => {
    const request = adoptedUpgrade({
      type: 'eng:bus-adopt',
      path: '/',
      headers: { Upgrade: 'websocket', 'sec-websocket-protocol': ['a', 'b'] },
      head: Buffer.from('early').toString('base64'),
    });
    expect(request).toEqual({
      path: '/',
      headers: { upgrade: 'websocket', 'sec-websocket-protocol': ['a', 'b'] },
      head: Buffer.from('early'),
    });
  });

  it('ignores anything else, and drops header values that are not strings', () => {
    for (const bad of [
      null,
      'eng:bus-adopt',
      42,
      { type: 'other', path: '/', headers: {}, head: '' },
      { type: 'eng:bus-adopt', headers: {}, head: '' },
      { type: 'eng:bus-adopt', path: 7, headers: {}, head: '' },
      { type: 'eng:bus-adopt', path: '/', headers: {} },
      { type: 'eng:bus-adopt', path: '/', headers: ['upgrade'], head: '' },
      { type: 'eng:bus-adopt', path: '/', headers: null, head: '' },
    ]) {
      expect(adoptedUpgrade(bad)).toBeUndefined();
    }
    const request = adoptedUpgrade({ type: 'eng:bus-adopt', path: '/', headers: { host: 'x', 'x-n': 5, 'x-list': ['a', 3] }, head: '' });
    expect(request?.headers).toEqual({ host: 'x' });
  });
});

describe('bus.adopt: an upgrade accepted elsewhere becomes a bus connection', () => {
  let engine: Engine;
  let adopt: BusAdopt;
  let front: Server;
  let frontUrl: string;
  /** What `front` passes on: the request path it received, or one a test forces. */
  let forcePath: string | undefined;

  beforeAll(async () => {
    engine = new Engine({
      config: { path: 'in-process.yaml', workers: [{ name: 'eng-worker-manager', config: { port: 0 } }] },
      dataDir: mkdtempSync(join(tmpdir(), 'eng-bus-adopt-')),
    });
    await engine.start();
    adopt = engine.services.get<BusAdopt>(BusService.Adopt) as BusAdopt;
    // stands in for the console worker: accepts the upgrade, then hands it to the bus untouched
    front = createServer();
    front.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
      adopt({ path: forcePath ?? req.url ?? '/', headers: req.headers, head }, socket);
    });
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    frontUrl = `ws://127.0.0.1:${(front.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    front?.close();
    await engine?.stop();
  });

  it('greets the client as a worker, which then serves and calls like any other', async () => {
    forcePath = undefined;
    const adopted = await RawClient.worker(`${frontUrl}/`);
    expect(adopted.workerId).toMatch(/[0-9a-f-]{36}/);
    adopted.socket.on('message', (raw) => {
      const frame = JSON.parse(raw.toString());
      if (frame.type === 'invokefunction' && frame.function_id === 'adopt::echo') {
        adopted.send({ type: 'invocationresult', invocation_id: frame.invocation_id, function_id: frame.function_id, result: frame.data });
      }
    });
    adopted.send({ type: 'registerfunction', id: 'adopt::echo' });
    const direct = await RawClient.worker(engine.addresses().bus.url);
    const echoed = await waitFor(async () => {
      const frame = await direct.call('adopt::echo', { n: 1 });
      return frame.error ? undefined : frame.result;
    }, 5000);
    expect(echoed).toMatchObject({ n: 1 });
    const { functions } = await adopted.result('engine::functions::list', {});
    expect(functions.map((f: { function_id: string }) => f.function_id)).toContain('adopt::echo');
    await direct.close();
    await adopted.close();
  });

  it('answers 404 for a path other than the worker path', async () => {
    forcePath = '/otel';
    const refused = await RawClient.connect(`${frontUrl}/`).then(
      () => 'opened',
      (err: Error) => err.message,
    );
    expect(refused).toMatch(/404/);
  });

  it('answers 400 for a handshake without its key, as a direct connection would', async () => {
    forcePath = '/';
    const port = (front.address() as AddressInfo).port;
    const { connect } = await import('node:net');
    const socket = connect(port, '127.0.0.1');
    socket.write('GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n');
    const reply = await new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (chunk) => {
        text += chunk.toString();
      });
      socket.on('close', () => resolve(text));
    });
    expect(reply).toMatch(/^HTTP\/1\.1 400/);
  });

  it('answers 503 once the engine is stopping', async () => {
    forcePath = undefined;
    await engine.stop();
    const refused = await RawClient.connect(`${frontUrl}/`).then(
      () => 'opened',
      (err: Error) => err.message,
    );
    expect(refused).toMatch(/503/);
  });
});
