import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, waitFor } from '../../../test/harness.ts';
import { RawClient, type RawFrame } from '../../../test/raw-client.ts';
import { createBusHandoff } from '../src/bus-handoff.ts';
import { startEngineWithConsole } from './helpers.ts';

// The console worker launched by the engine hands `/ws` sockets to the engine (bus-handoff.ts):
// after the handshake the browser talks to the bus with no relay in between.

const quiet = { debug() {}, warn() {} };

describe('createBusHandoff: when the socket may be handed over', () => {
  const channel = { send: () => true, connected: true, channel: null };
  it('hands over only to the engine that launched the worker, over plain ws://, with an IPC channel', () => {
    const engineUrl = 'ws://127.0.0.1:49134';
    expect(createBusHandoff({ engineUrl, env: { ENG_BUS_HANDOFF: engineUrl }, channel, logger: quiet })).toBeTypeOf('function');
    // same bus spelled differently: trailing slash, credentials
    expect(
      createBusHandoff({ engineUrl: 'ws://user:pw@127.0.0.1:49134/', env: { ENG_BUS_HANDOFF: engineUrl }, channel, logger: quiet }),
    ).toBeTypeOf('function');
    // `--url` names another engine than the one that launched it: proxied
    expect(
      createBusHandoff({ engineUrl: 'ws://127.0.0.1:50000', env: { ENG_BUS_HANDOFF: engineUrl }, channel, logger: quiet }),
    ).toBeUndefined();
    // not launched by an engine, or no IPC channel
    expect(createBusHandoff({ engineUrl, env: {}, channel, logger: quiet })).toBeUndefined();
    expect(createBusHandoff({ engineUrl, env: { ENG_BUS_HANDOFF: engineUrl }, channel: {}, logger: quiet })).toBeUndefined();
    // a TLS engine is dialled by the proxy
    expect(
      createBusHandoff({ engineUrl: 'wss://127.0.0.1:49134', env: { ENG_BUS_HANDOFF: 'wss://127.0.0.1:49134' }, channel, logger: quiet }),
    ).toBeUndefined();
  });
});

describe('createBusHandoff: the socket it sends', () => {
  it('stops reading before it leaves, and loses no byte when the send fails and the proxy takes over', async () => {
    const { createServer, connect } = await import('node:net');
    let sent: { head: string } | undefined;
    let bufferedWhileSending = -1;
    const client = { socket: undefined as import('node:net').Socket | undefined };
    const channel = {
      connected: true,
      channel: null,
      // the engine acknowledges late: meanwhile the browser, which already has its 101, sends
      send: (message: unknown, handle: import('node:net').Socket, _o: unknown, callback: (error: Error | null) => void) => {
        sent = message as { head: string };
        client.socket?.write('LLO');
        setTimeout(() => {
          bufferedWhileSending = handle.readableLength;
          callback(new Error('channel closed'));
        }, 200);
        return true;
      },
    };
    const handoff = createBusHandoff({
      engineUrl: 'ws://127.0.0.1:1',
      env: { ENG_BUS_HANDOFF: 'ws://127.0.0.1:1' },
      channel,
      logger: quiet,
    });
    const proxied = new Promise<string>((resolve) => {
      const server = createServer((socket) => {
        const req = {
          method: 'GET',
          url: '/ws',
          headers: {
            host: 'console.test',
            origin: 'http://console.test',
            upgrade: 'websocket',
            connection: 'Upgrade',
            'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
            'sec-websocket-version': '13',
          },
        } as unknown as import('node:http').IncomingMessage;
        // 'E' arrives before the handoff and is read here: it must travel with `head`
        socket.once('readable', () => {
          const fallback = () => {
            let text = '';
            socket.on('data', (chunk) => {
              text += chunk.toString();
              if (text.length >= 4) {
                resolve(text);
                socket.destroy();
                server.close();
              }
            });
          };
          expect(handoff?.(req, socket, Buffer.from('H'), fallback)).toBe(true);
        });
      });
      server.listen(0, '127.0.0.1', () => {
        client.socket = connect((server.address() as import('node:net').AddressInfo).port, '127.0.0.1', () => client.socket?.write('E'));
      });
    });
    const text = await proxied;
    expect(Buffer.from(sent?.head ?? '', 'base64').toString()).toBe('HE');
    // nothing was read in this process while the socket was on its way to the engine
    expect(bufferedWhileSending).toBe(0);
    // the send failed: the proxy reads everything, the early byte first
    expect(text).toBe('ELLO');
    client.socket?.destroy();
  });
});

describe('console worker launched by the engine: /ws handed to the bus', () => {
  let engine: EngineProcess;
  let echo: RawClient;
  let control: RawClient;
  let wsUrl: string;
  let origin: string;

  const consolePid = async (): Promise<number | null> => {
    const { workers } = await control.result('engine::supervisor::list', {});
    const state = workers.find((w: { name: string }) => w.name === 'console');
    return state?.running && state.url ? state.pid : null;
  };

  /** A browser-style connection through the console port: Origin of the page it was served from. */
  const browser = async (): Promise<RawClient> => {
    const client = await RawClient.connect(wsUrl, { headers: { origin }, perMessageDeflate: false });
    await client.next((f) => f.type === 'workerregistered');
    return client;
  };

  beforeAll(async () => {
    engine = await startEngineWithConsole();
    origin = `http://127.0.0.1:${engine.ports.CONSOLE}`;
    wsUrl = `ws://127.0.0.1:${engine.ports.CONSOLE}/ws`;
    control = await RawClient.worker(engine.busUrl);
    await waitFor(consolePid, 30_000);
    // the function the browser calls, served by a worker connected to the bus directly
    echo = await RawClient.worker(engine.busUrl);
    echo.socket.on('message', (raw) => {
      const frame = JSON.parse(raw.toString()) as RawFrame;
      if (frame.type !== 'invokefunction') return;
      echo.send({ type: 'invocationresult', invocation_id: frame.invocation_id, function_id: frame.function_id, result: frame.data });
    });
    echo.send({ type: 'registerfunction', id: 'handoff::echo' });
    await waitFor(async () => {
      const { functions } = await control.result('engine::functions::list', {});
      return functions.some((f: { function_id: string }) => f.function_id === 'handoff::echo');
    }, 5000);
  }, 120_000);
  afterAll(async () => {
    await echo?.terminate();
    await control?.terminate();
    await engine?.stop();
  });

  it('says so in its log when it starts', async () => {
    const { workers } = await control.result('engine::supervisor::list', {});
    const logFile = workers.find((w: { name: string }) => w.name === 'console').logFile as string;
    await waitFor(() => readFileSync(logFile, 'utf8').includes('/ws handed to the engine that launched this worker'), 5000);
  });

  it('serves calls over /ws, and the connection outlives a crash of the console worker', async () => {
    const page = await browser();
    const first = await page.call('handoff::echo', { n: 1 });
    expect(first.result).toMatchObject({ n: 1 });

    const pid = (await consolePid()) as number;
    process.kill(pid, 'SIGKILL');
    const restarted = await waitFor(async () => {
      const next = await consolePid();
      return next && next !== pid ? next : undefined;
    }, 30_000);
    expect(restarted).not.toBe(pid);

    // a relayed connection would have died with the relay; this one is the bus's own
    expect(page.isOpen).toBe(true);
    const second = await page.call('handoff::echo', { n: 2 });
    expect(second.result).toMatchObject({ n: 2 });
    // and the restarted worker hands over new connections too
    const again = await browser();
    expect((await again.call('handoff::echo', { n: 3 })).result).toMatchObject({ n: 3 });
    await again.close();
    await page.close();
  }, 60_000);

  it('carries a 32 MiB message each way', async () => {
    const page = await browser();
    const big = 'x'.repeat(32 * 1024 * 1024);
    // a size test, not a timing one: 32 MiB each way may take seconds on a busy machine
    const frame = await page.call('handoff::echo', { big }, {}, 45_000);
    expect((frame.result as { big: string }).big.length).toBe(big.length);
    await page.close();
  }, 90_000);

  it('still refuses a cross-origin upgrade with 403, and a plain GET with 426', async () => {
    const refused = await RawClient.connect(wsUrl, { headers: { origin: 'http://evil.example' } }).then(
      () => 'opened',
      (err: Error) => err.message,
    );
    expect(refused).toMatch(/403/);
    const plain = await fetch(`${origin}/ws`);
    expect(plain.status).toBe(426);
  });

  it("does not wait for handed-over pages when the worker stops: they are the engine's, and stay open", async () => {
    const page = await browser();
    const { workers } = await control.result('engine::supervisor::list', {});
    const logFile = workers.find((w: { name: string }) => w.name === 'console').logFile as string;
    const pid = (await consolePid()) as number;
    const from = readFileSync(logFile, 'utf8').length;
    process.kill(pid, 'SIGTERM');
    await waitFor(async () => {
      const next = await consolePid();
      return next && next !== pid ? next : undefined;
    }, 30_000);
    const shutdown = readFileSync(logFile, 'utf8').slice(from);
    expect(shutdown).toContain('console: stopped');
    expect(shutdown).not.toContain('took longer');
    expect(page.isOpen).toBe(true);
    expect((await page.call('handoff::echo', { n: 4 })).result).toMatchObject({ n: 4 });
    await page.close();
  }, 60_000);

  it('closes handed-over connections with 1001 when the engine stops, so the browser reconnects', async () => {
    const page = await browser();
    await echo.terminate();
    await control.terminate();
    expect(await engine.stop()).toBe(0);
    await page.waitClosed();
    expect(page.closeInfo?.code).toBe(1001);
  }, 30_000);
});
