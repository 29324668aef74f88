/**
 * The rabbitmq queue adapter after losing its broker: a real rabbitmq-server, reached through a TCP
 * relay this test can cut (every connection dropped, new ones refused) and restore, and a real
 * rabbitmq-server restart. While the broker is unreachable an enqueue fails at once with a clear
 * error (a receipt means the broker holds the message, so nothing is buffered in the engine); when
 * it is back the engine reconnects by itself, consumption resumes, and every message whose receipt
 * came back runs at least once — those that were running when the connection dropped included.
 */
import { createServer, type Server, Socket } from 'node:net';
import { connect, type EngClient, TriggerAction } from '@eng/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, freePort, startEngine, waitFor } from '../../../test/harness.ts';
import { type RabbitProcess, startRabbit } from './queue-rabbitmq-server.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A TCP relay to the broker: `cut()` drops every connection and refuses new ones until `restore()`. */
async function startRelay(targetPort: number): Promise<{ port: number; cut(): void; restore(): void; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let open = true;
  const server: Server = createServer((client) => {
    if (!open) {
      client.destroy();
      return;
    }
    const upstream = new Socket();
    sockets.add(client);
    sockets.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    upstream.connect(targetPort, '127.0.0.1', () => {
      client.pipe(upstream);
      upstream.pipe(client);
    });
  });
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  return {
    port,
    cut() {
      open = false;
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
    restore() {
      open = true;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

describe('rabbitmq queue adapter: losing the broker', () => {
  let rabbit: RabbitProcess;
  let relay: Awaited<ReturnType<typeof startRelay>>;
  let engine: EngineProcess;
  const clients: EngClient[] = [];

  beforeAll(async () => {
    rabbit = await startRabbit();
    relay = await startRelay(rabbit.port);
    const amqp = `amqp://guest:guest@127.0.0.1:${relay.port}`;
    engine = await startEngine({
      workersYaml: `  - name: eng-queue
    config:
      adapter: { name: rabbitmq, config: { amqp_url: "${amqp}" } }
      queue_configs:
        work: { concurrency: 5, max_retries: 2, backoff_ms: 50 }
`,
      readyTimeoutMs: 30_000,
    });
  }, 120_000);
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await engine?.stop();
    await relay?.close();
    await rabbit?.stop();
  });

  async function client(name: string): Promise<EngClient> {
    const c = connect(engine.busUrl, { name });
    clients.push(c);
    await c.ready({ timeoutMs: 10_000 });
    return c;
  }
  const enqueue = (c: EngClient, n: number) =>
    c.trigger<{ messageReceiptId: string }>({ function_id: 'r::work', payload: { n }, action: TriggerAction.Enqueue({ queue: 'work' }) });

  it('fails enqueues at once while the broker is unreachable, reconnects, and runs every acknowledged message', async () => {
    const worker = await client('rabbit-worker');
    const producer = await client('rabbit-producer');
    const seen = new Map<number, number>();
    worker.registerFunction('r::work', async (input: { n: number }) => {
      seen.set(input.n, (seen.get(input.n) ?? 0) + 1);
      // slow enough that some deliveries are running when the connection drops
      await sleep(40);
      return null;
    });
    await waitFor(async () => {
      const { functions } = await producer.call<{ functions: Array<{ function_id: string }> }>('engine::functions::list', {});
      return functions.some((f) => f.function_id === 'r::work');
    }, 10_000);

    const acknowledged: number[] = [];
    await Promise.all(
      Array.from({ length: 40 }, async (_, n) => {
        await enqueue(producer, n);
        acknowledged.push(n);
      }),
    );
    await waitFor(() => seen.size >= 5, 10_000);

    relay.cut();
    // the engine notices the closed connection; an enqueue now is refused with the reason
    await waitFor(() => /rabbitmq connection lost/.test(engine.logs()), 10_000);
    const refused = await enqueue(producer, 1000).then(
      () => null,
      (err: { code?: string; message?: string }) => err,
    );
    expect(refused).toMatchObject({ code: 'enqueue_error' });
    expect(refused?.message).toMatch(/rabbitmq is unreachable .*not stored/);

    await sleep(500);
    relay.restore();
    // back by itself: a new enqueue is stored once the engine has reconnected
    await waitFor(
      async () =>
        enqueue(producer, 100).then(
          () => true,
          () => false,
        ),
      15_000,
      100,
    );
    acknowledged.push(100);
    await Promise.all([101, 102, 103].map((n) => enqueue(producer, n).then(() => acknowledged.push(n))));
    expect(engine.logs()).toMatch(/rabbitmq connection back/);

    // nothing acknowledged is lost: each ran at least once (those cut mid-delivery ran again)
    await waitFor(() => acknowledged.every((n) => seen.has(n)), 20_000);
    expect(seen.has(1000)).toBe(false);
  }, 60_000);

  it('carries on after rabbitmq-server itself stops and starts again: stored messages survive and run', async () => {
    const worker = await client('restart-worker');
    const producer = await client('restart-producer');
    const seen = new Set<number>();
    let open!: () => void;
    const gate = new Promise<void>((r) => {
      open = r;
    });
    // handlers answer only once the broker is back: 5 (the concurrency) are running across the
    // restart, unacknowledged, and the other 5 wait in the broker's durable queue
    worker.registerFunction('r::later', async (input: { n: number }) => {
      await gate;
      seen.add(input.n);
      return null;
    });
    worker.registerFunction('r::work', async () => null);
    await waitFor(async () => {
      const { functions } = await producer.call<{ functions: Array<{ function_id: string }> }>('engine::functions::list', {});
      return functions.some((f) => f.function_id === 'r::later');
    }, 10_000);
    const later = (n: number) =>
      producer.trigger({ function_id: 'r::later', payload: { n }, action: TriggerAction.Enqueue({ queue: 'work' }) });
    await Promise.all(Array.from({ length: 10 }, (_, n) => later(n)));

    const lostBefore = (engine.logs().match(/rabbitmq connection lost/g) ?? []).length;
    const backBefore = (engine.logs().match(/rabbitmq connection back/g) ?? []).length;
    await rabbit.restart();
    await waitFor(() => (engine.logs().match(/rabbitmq connection lost/g) ?? []).length > lostBefore, 10_000);
    await waitFor(() => (engine.logs().match(/rabbitmq connection back/g) ?? []).length > backBefore, 30_000, 100);
    await later(10);
    open();
    await waitFor(() => Array.from({ length: 11 }, (_, n) => n).every((n) => seen.has(n)), 20_000);
  }, 120_000);
});
