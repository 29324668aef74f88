/**
 * The queue's file store under a crash: messages whose receipts were returned survive `kill -9`
 * and are delivered after a restart on the same data dir, also when the kill lands among enqueues
 * still in flight; messages in flight at the crash are delivered again; the SQLite file stays
 * intact (spec: engine-protocol §2.5 step 6, §4.7).
 */
import { join } from 'node:path';
import { connect, type EngClient, TriggerAction } from '@eng/sdk';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';

const QUEUE_YAML = `  - name: eng-queue
    config:
      queue_configs:
        durable: { concurrency: 20 }
        inflight: { concurrency: 50 }
`;

let engine: EngineProcess;
const clients: EngClient[] = [];

async function worker(name: string): Promise<EngClient> {
  // no reconnecting across the crash: each phase uses its own clients
  const client = connect(engine.busUrl, { name, reconnect: { maxRetries: 0 } });
  clients.push(client);
  await client.ready({ timeoutMs: 5000 });
  return client;
}

async function closeAll(): Promise<void> {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => {})));
}

function integrity(file: string): string {
  const db = new Database(file);
  try {
    return (db.pragma('integrity_check', { simple: true }) as string) ?? '';
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  engine = await startEngine({ workersYaml: QUEUE_YAML });
});
afterAll(async () => {
  await closeAll();
  await engine.stop();
});

describe('queue durability with the sqlite store', () => {
  it('delivers all 1,000 acknowledged messages after kill -9 and a restart, and the file passes integrity_check', async () => {
    const producer = await worker('durable-producer');
    const receipts = new Set<string>();
    for (let batch = 0; batch < 10; batch++) {
      const results = await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          producer.trigger<{ messageReceiptId: string }>({
            function_id: 'durable::consume',
            payload: { n: batch * 100 + i },
            action: TriggerAction.Enqueue({ queue: 'durable' }),
          }),
        ),
      );
      for (const r of results) receipts.add(r.messageReceiptId);
    }
    expect(receipts.size).toBe(1000);
    expect((await producer.call<{ depth: number }>('engine::queue::topic_stats', { topic: 'durable' })).depth).toBe(1000);

    await closeAll();
    await engine.kill('SIGKILL');
    const file = join(engine.dataDir, 'queue.db');
    expect(integrity(file)).toBe('ok');

    await engine.restart();
    const consumer = await worker('durable-consumer');
    const seen = new Map<number, number>();
    consumer.registerFunction('durable::consume', async (input: { n: number }) => {
      seen.set(input.n, (seen.get(input.n) ?? 0) + 1);
    });
    await waitFor(() => seen.size === 1000, 30_000);
    expect([...seen.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: 1000 }, (_, i) => i));
    await waitFor(async () => (await consumer.call<{ depth: number }>('engine::queue::topic_stats', { topic: 'durable' })).depth === 0);

    await closeAll();
    await engine.stop();
    expect(integrity(file)).toBe('ok');
    await engine.restart();
  }, 90_000);

  it('delivers again the messages that were in flight when the engine crashed', async () => {
    const stuck = await worker('durable-stuck');
    const held: number[] = [];
    stuck.registerFunction('durable::slow', async (input: { n: number }) => {
      held.push(input.n);
      await new Promise(() => {}); // never answers: the engine dies first
    });
    const producer = await worker('durable-producer-2');
    await waitFor(async () => {
      const { functions } = await producer.call<{ functions: Array<{ function_id: string }> }>('engine::functions::list', {});
      return functions.some((f) => f.function_id === 'durable::slow');
    });
    for (let n = 0; n < 30; n++) {
      await producer.trigger({ function_id: 'durable::slow', payload: { n }, action: TriggerAction.Enqueue({ queue: 'durable' }) });
    }
    // concurrency 20: twenty are in flight, ten wait
    await waitFor(() => held.length === 20);

    await closeAll();
    await engine.kill('SIGKILL');
    await engine.restart();
    const consumer = await worker('durable-fast');
    const seen = new Set<number>();
    consumer.registerFunction('durable::slow', async (input: { n: number }) => {
      seen.add(input.n);
    });
    await waitFor(() => seen.size === 30, 15_000);
    for (const n of held) expect(seen.has(n)).toBe(true);
  }, 60_000);

  it('delivers every message whose receipt came back while enqueues were in flight at kill -9', async () => {
    const producer = await worker('inflight-producer');
    const LANES = 100;
    const acked = new Map<number, string>(); // n → receipt
    let sent = 0;
    let killed = false;
    // LANES enqueues outstanding at all times until the engine dies under them
    const lane = async () => {
      while (!killed) {
        const n = sent++;
        try {
          const { messageReceiptId } = await producer.trigger<{ messageReceiptId: string }>({
            function_id: 'inflight::consume',
            payload: { n },
            action: TriggerAction.Enqueue({ queue: 'inflight' }),
          });
          acked.set(n, messageReceiptId);
        } catch {
          return; // cut off by the kill: never acknowledged
        }
      }
    };
    const producing = Promise.all(Array.from({ length: LANES }, lane));
    await waitFor(() => acked.size >= 2000, 20_000);
    await engine.kill('SIGKILL');
    killed = true;
    // calls the kill cut off end when the client closes; a receipt that still arrived counts
    await closeAll();
    await producing;
    const unanswered = sent - acked.size;
    expect(unanswered).toBeGreaterThan(0); // the kill really hit enqueues in flight
    expect(new Set(acked.values()).size).toBe(acked.size);
    expect(integrity(join(engine.dataDir, 'queue.db'))).toBe('ok');

    await engine.restart();
    const consumer = await worker('inflight-consumer');
    const seen = new Set<number>();
    consumer.registerFunction('inflight::consume', async (input: { n: number }) => {
      seen.add(input.n);
    });
    const missing = () => [...acked.keys()].filter((n) => !seen.has(n));
    await waitFor(() => missing().length === 0, 45_000, 100).catch(() => {
      throw new Error(`${missing().length} of ${acked.size} acknowledged messages not delivered, e.g. n=${missing().slice(0, 5)}`);
    });
    // whatever else arrives is one of the enqueues that were sent: stored, but cut off before the receipt
    await waitFor(async () => (await consumer.call<{ depth: number }>('engine::queue::topic_stats', { topic: 'inflight' })).depth === 0);
    for (const n of seen) expect(n).toBeLessThan(sent);
    expect(seen.size - acked.size).toBeLessThanOrEqual(unanswered);
  }, 90_000);

  it('does not deliver again what was acknowledged before a clean restart', async () => {
    const consumer = await worker('durable-once');
    let count = 0;
    consumer.registerFunction('durable::once', async () => {
      count++;
    });
    for (let n = 0; n < 10; n++) {
      await consumer.trigger({ function_id: 'durable::once', payload: { n }, action: TriggerAction.Enqueue({ queue: 'once' }) });
    }
    await waitFor(() => count === 10);
    await waitFor(
      async () => (await consumer.call<{ delivered: number }>('engine::queue::topic_stats', { topic: 'once' })).delivered === 10,
    );

    await closeAll();
    await engine.restart();
    const again = await worker('durable-once-again');
    let redelivered = 0;
    again.registerFunction('durable::once', async () => {
      redelivered++;
    });
    await new Promise((r) => setTimeout(r, 500));
    expect(redelivered).toBe(0);
    // counters are stored with the messages, so they survive the restart too
    expect(await again.call('engine::queue::topic_stats', { topic: 'once' })).toMatchObject({ depth: 0, delivered: 10, failed: 0 });
  });

  it('remembers durable subscribers across a crash: copies published before and after it reach the subscriber', async () => {
    const subscriber = await worker('durable-sub');
    subscriber.registerFunction('durable::on-event', async () => {
      await new Promise(() => {}); // holds every delivery until the crash
    });
    subscriber.registerTrigger({ type: 'durable:subscriber', function_id: 'durable::on-event', config: { topic: 'events' } });
    await waitFor(
      async () =>
        (await subscriber.call<{ consumer_count: number }>('engine::queue::topic_stats', { topic: 'events' })).consumer_count === 1,
    );
    for (let n = 0; n < 5; n++) await subscriber.call('eng::durable::publish', { topic: 'events', data: { n } });

    await closeAll();
    await engine.kill('SIGKILL');
    await engine.restart();
    // the subscriber's worker is not back yet: it is remembered, so these are kept for it
    const publisher = await worker('durable-pub');
    for (let n = 5; n < 8; n++) await publisher.call('eng::durable::publish', { topic: 'events', data: { n } });
    expect((await publisher.call<{ depth: number }>('engine::queue::topic_stats', { topic: 'events' })).depth).toBe(8);

    const back = await worker('durable-sub-back');
    const seen = new Set<number>();
    back.registerFunction('durable::on-event', async (input: { n: number }) => {
      seen.add(input.n);
    });
    back.registerTrigger({ type: 'durable:subscriber', function_id: 'durable::on-event', config: { topic: 'events' } });
    await waitFor(() => seen.size === 8, 10_000);
  }, 30_000);

  it('refuses a duplicate message id without undoing the other writes of the same commit', async () => {
    const client = await worker('durable-dupes');
    const enqueue = (id: string) =>
      client.call('engine::queue::enqueue', { queue: 'dupes', function_id: 'nobody::home', data: { id }, messageReceiptId: id }).then(
        (r) => ({ ok: true as const, r }),
        (e: { code: string; message: string }) => ({ ok: false as const, e }),
      );
    // sent together, so they share one group commit
    const results = await Promise.all([enqueue('m-1'), enqueue('m-2'), enqueue('m-1'), enqueue('m-3')]);
    expect(results.map((x) => x.ok)).toEqual([true, true, false, true]);
    const refused = results[2] as { ok: false; e: { code: string; message: string } };
    expect(refused.e.code).toBe('enqueue_error');
    expect(refused.e.message).toContain('m-1 is already queued');
    expect((await client.call<{ depth: number }>('engine::queue::topic_stats', { topic: 'dupes' })).depth).toBe(3);
  });
});
