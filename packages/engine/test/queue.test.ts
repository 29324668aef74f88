/**
 * The durable queue module (eng-queue) against a real engine, driven by the published iii-sdk
 * 0.22.1 and by @eng/sdk: the enqueue action (§2.5 step 6, §11 item 5), retries and the
 * dead-letter queue, FIFO groups, concurrency, stats, durable topics (§5.4) and bad input.
 */
import { connect, type EngClient, TriggerAction as EngTriggerAction } from '@eng/sdk';
import { registerWorker, TriggerAction } from 'iii-sdk-0.22.1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const QUEUE_YAML = `  - name: eng-queue
    config:
      adapter: { name: memory }
      subscriber_ttl_ms: 60000
      queue_configs:
        retrying: { max_retries: 2, backoff_ms: 100 }
        fifo-orders: { type: fifo, message_group_field: customer, concurrency: 5 }
        limited: { concurrency: 2 }
        no-retry: { max_retries: 0 }
        single-ops: { max_retries: 1, backoff_ms: 20 }
        fifo-fast: { type: fifo, message_group_field: customer, backoff_ms: 50 }
`;

// iii-sdk logs every connect step with console.debug; keep the output readable
const originalDebug = console.debug;
console.debug = (...args: unknown[]) => {
  if (typeof args[0] === 'string' && /^\[(iii|OTel)\]/.test(args[0])) return;
  originalDebug(...args);
};

let engine: EngineProcess;
const engClients: EngClient[] = [];
const iiiClients: Array<ReturnType<typeof registerWorker>> = [];

async function engWorker(name: string): Promise<EngClient> {
  const client = connect(engine.busUrl, { name });
  engClients.push(client);
  await client.ready({ timeoutMs: 5000 });
  return client;
}

function iiiWorker(name: string) {
  const client = registerWorker(engine.busUrl, { workerName: name, otel: { enabled: false } });
  iiiClients.push(client);
  return client;
}

let admin: EngClient;
const call = <T = any>(functionId: string, payload: unknown = {}) => admin.call<T>(functionId, payload);
async function rejection(functionId: string, payload: unknown): Promise<{ code: string; message: string }> {
  try {
    await admin.call(functionId, payload);
  } catch (err) {
    return { code: (err as { code: string }).code, message: (err as Error).message };
  }
  throw new Error(`${functionId} accepted ${JSON.stringify(payload)}`);
}
/** Resolves once every function id is registered on the engine. */
async function registered(...ids: string[]): Promise<void> {
  await waitFor(async () => {
    const { functions } = await call<{ functions: Array<{ function_id: string }> }>('engine::functions::list');
    const known = new Set(functions.map((f) => f.function_id));
    return ids.every((id) => known.has(id));
  });
}

beforeAll(async () => {
  engine = await startEngine({ workersYaml: QUEUE_YAML });
  admin = await engWorker('queue-admin');
});
afterAll(async () => {
  await Promise.all(iiiClients.map((c) => c.shutdown().catch(() => {})));
  await Promise.all(engClients.map((c) => c.close().catch(() => {})));
  await engine.stop();
});

describe('enqueue action (§11 item 5)', () => {
  it('iii-sdk 0.22.1: TriggerAction.Enqueue resolves {messageReceiptId} and the handler runs later with the data', async () => {
    const consumer = iiiWorker('q-consumer-iii');
    const producer = iiiWorker('q-producer-iii');
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const seen: unknown[] = [];
    consumer.registerFunction('q11::iii', async (input: unknown) => {
      seen.push(input);
      await gate;
      return { ok: true };
    });
    await registered('q11::iii');
    const receipt = await producer.trigger({
      function_id: 'q11::iii',
      payload: { order: 7 },
      action: TriggerAction.Enqueue({ queue: 'default' }),
    });
    // the receipt came back while the handler is still held: it runs later, apart from the call
    expect(receipt).toEqual({ messageReceiptId: expect.stringMatching(UUID) });
    await waitFor(() => seen.length === 1);
    // the data arrives as it was enqueued, as in iii (issue 26 item 3): the sender is kept beside it
    expect(seen[0]).toEqual({ order: 7 });
    release();
    await waitFor(async () => (await call('engine::queue::topic_stats', { topic: 'default' })).delivered >= 1);
  });

  it('@eng/sdk: Enqueue to a named queue resolves a receipt and delivers every message', async () => {
    const worker = await engWorker('q-eng');
    const seen: number[] = [];
    worker.registerFunction('q11::eng', async (input: { n: number }) => {
      seen.push(input.n);
    });
    await registered('q11::eng');
    const receipts = await Promise.all(
      [1, 2, 3].map((n) =>
        worker.trigger<{ messageReceiptId: string }>({
          function_id: 'q11::eng',
          payload: { n },
          action: EngTriggerAction.Enqueue({ queue: 'eng-named' }),
        }),
      ),
    );
    expect(new Set(receipts.map((r) => r.messageReceiptId)).size).toBe(3);
    for (const r of receipts) expect(r.messageReceiptId).toMatch(UUID);
    await waitFor(() => seen.length === 3);
    expect(seen.sort()).toEqual([1, 2, 3]);
  });

  it('holds messages for a function that is not registered yet and delivers them once it is', async () => {
    const producer = await engWorker('q-early-producer');
    for (const n of [1, 2, 3]) {
      await producer.trigger({ function_id: 'q::late', payload: { n }, action: EngTriggerAction.Enqueue({ queue: 'late' }) });
    }
    await sleep(200);
    const waiting = await call('engine::queue::topic_stats', { topic: 'late' });
    expect(waiting).toMatchObject({ depth: 3, in_flight: 0, delivered: 0, failed: 0 });
    const consumer = await engWorker('q-late-consumer');
    const seen: number[] = [];
    consumer.registerFunction('q::late', async (input: { n: number }) => {
      seen.push(input.n);
    });
    await waitFor(() => seen.length === 3);
    expect(seen.sort()).toEqual([1, 2, 3]);
    await waitFor(async () => (await call('engine::queue::topic_stats', { topic: 'late' })).delivered === 3);
    expect(await call('engine::queue::topic_stats', { topic: 'late' })).toMatchObject({ depth: 0, failed: 0, dlq_count: 0 });
  });

  it('refuses a FIFO message without its group field with a clear enqueue_error, storing nothing', async () => {
    const producer = await engWorker('q-fifo-bad');
    const attempt = async (payload: unknown) => {
      try {
        await producer.trigger({ function_id: 'q::fifo-never', payload, action: EngTriggerAction.Enqueue({ queue: 'fifo-orders' }) });
      } catch (err) {
        return err as { code: string; message: string };
      }
      throw new Error('accepted');
    };
    const missing = await attempt({ total: 1 });
    expect(missing.code).toBe('enqueue_error');
    expect(missing.message).toContain("requires field 'customer'");
    const nulled = await attempt({ customer: null });
    expect(nulled.code).toBe('enqueue_error');
    expect(nulled.message).toContain("'customer' must not be null");
    expect((await attempt('not an object')).code).toBe('enqueue_error');
    expect((await call('engine::queue::topic_stats', { topic: 'fifo-orders' })).depth).toBe(0);
  });
});

describe('retries and the dead-letter queue', () => {
  it('retries with exponential backoff, then dead-letters the message with its last error', async () => {
    const worker = await engWorker('q-retry');
    const attempts: number[] = [];
    worker.registerFunction('q::flaky', async () => {
      attempts.push(Date.now());
      throw new Error(`boom ${attempts.length}`);
    });
    await registered('q::flaky');
    const { messageReceiptId } = await worker.trigger<{ messageReceiptId: string }>({
      function_id: 'q::flaky',
      payload: { job: 'x' },
      action: EngTriggerAction.Enqueue({ queue: 'retrying' }),
    });
    await waitFor(async () => (await call('engine::queue::dlq_messages', { paged: true, topic: 'retrying' })).total === 1, 5000);
    // max_retries 2: one delivery and two retries, 100 ms then 200 ms apart
    expect(attempts).toHaveLength(3);
    expect(attempts[1]! - attempts[0]!).toBeGreaterThanOrEqual(95);
    expect(attempts[2]! - attempts[1]!).toBeGreaterThanOrEqual(195);
    const page = await call('engine::queue::dlq_messages', { paged: true, topic: 'retrying' });
    expect(page.messages[0]).toMatchObject({
      id: messageReceiptId,
      queue: 'retrying',
      function_id: 'q::flaky',
      payload: { job: 'x' },
      retries: 3,
    });
    expect(page.messages[0].error).toContain('boom 3');
    expect(page.messages[0].failed_at).toBeGreaterThanOrEqual(attempts[2]!);
    expect(await call('engine::queue::topic_stats', { topic: 'retrying' })).toMatchObject({
      depth: 0,
      in_flight: 0,
      failed: 3,
      delivered: 0,
      dlq_count: 1,
      dlq_depth: 1,
    });
    expect(await call('engine::queue::dlq_topics')).toContainEqual({ topic: 'retrying', broker_type: 'function_queue', message_count: 1 });
  });

  it('traces each delivery attempt as a consumer span tagged with the message id (group by message)', async () => {
    const worker = await engWorker('q-traced');
    let attempts = 0;
    worker.registerFunction('q::traced', async () => {
      attempts++;
      if (attempts === 1) throw new Error('first attempt fails');
      return 'done';
    });
    await registered('q::traced');
    const { messageReceiptId } = await worker.trigger<{ messageReceiptId: string }>({
      function_id: 'q::traced',
      payload: { job: 'traced' },
      action: EngTriggerAction.Enqueue({ queue: 'single-ops' }),
    });
    type Span = { span_id: string; kind: string; status: string; attributes: Array<[string, string]> };
    const attemptSpans = async (): Promise<Span[]> => {
      const page = await call<{ spans: Array<{ trace_id: string }> }>('engine::traces::list', {
        attributes: [['eng.message.id', messageReceiptId]],
        search_all_spans: true,
      });
      const spans: Span[] = [];
      for (const trace_id of new Set(page.spans.map((row) => row.trace_id))) {
        const detail = await call<{ spans: Span[] }>('engine::traces::spans', { trace_id });
        spans.push(...detail.spans.filter((sp) => sp.attributes.some(([k, v]) => k === 'eng.message.id' && v === messageReceiptId)));
      }
      return spans;
    };
    await waitFor(async () => (await attemptSpans()).filter((sp) => sp.status !== 'unset').length === 2, 5000);
    const spans = (await attemptSpans()).sort((a, b) => {
      const attempt = (sp: Span) => Number(sp.attributes.find(([k]) => k === 'eng.queue.attempt')?.[1]);
      return attempt(a) - attempt(b);
    });
    expect(spans.map((sp) => sp.kind)).toEqual(['consumer', 'consumer']);
    expect(spans.map((sp) => sp.status)).toEqual(['error', 'ok']);
    for (const [i, sp] of spans.entries()) {
      expect(Object.fromEntries(sp.attributes)).toMatchObject({
        'messaging.system': 'eng-queue',
        'messaging.destination.name': 'single-ops',
        'messaging.message.id': messageReceiptId,
        'eng.queue.attempt': String(i + 1),
        function_id: 'q::traced',
      });
    }
    const grouped = await call<{ groups: Array<{ value: string; trace_ids: string[] }> }>('engine::traces::group_by', {
      attribute: 'eng.message.id',
    });
    expect(grouped.groups.find((g) => g.value === messageReceiptId)?.trace_ids.length).toBeGreaterThanOrEqual(1);
  });

  it('redrive moves every dead-lettered message back and it is delivered', async () => {
    const worker = await engWorker('q-redrive');
    let healthy = false;
    const delivered: number[] = [];
    worker.registerFunction('q::redrive', async (input: { n: number }) => {
      if (!healthy) throw new Error('not yet');
      delivered.push(input.n);
    });
    await registered('q::redrive');
    for (const n of [1, 2])
      await worker.trigger({ function_id: 'q::redrive', payload: { n }, action: EngTriggerAction.Enqueue({ queue: 'no-retry' }) });
    await waitFor(async () => (await call('engine::queue::dlq_messages', { paged: true, topic: 'no-retry' })).total === 2);
    healthy = true;
    expect(await call('eng::queue::redrive', { queue: 'no-retry' })).toEqual({ queue: 'no-retry', redriven: 2 });
    await waitFor(() => delivered.length === 2);
    expect(delivered.sort()).toEqual([1, 2]);
    expect((await call('engine::queue::dlq_messages', { paged: true, topic: 'no-retry' })).total).toBe(0);
    // the iii name answers too, with nothing left to move
    expect(await call('iii::queue::redrive', { queue: 'no-retry' })).toEqual({ queue: 'no-retry', redriven: 0 });
  });

  it('redrive_message and discard_message act on one message only', async () => {
    const worker = await engWorker('q-single');
    let healthy = false;
    const delivered: string[] = [];
    worker.registerFunction('q::single', async (input: { tag: string }) => {
      if (!healthy) throw new Error('down');
      delivered.push(input.tag);
    });
    await registered('q::single');
    const queue = 'single-ops';
    for (const tag of ['keep', 'drop']) {
      await worker.trigger({ function_id: 'q::single', payload: { tag }, action: EngTriggerAction.Enqueue({ queue }) });
    }
    await waitFor(async () => (await call('engine::queue::dlq_messages', { paged: true, topic: queue })).total === 2);
    const { messages } = await call('engine::queue::dlq_messages', { paged: true, topic: queue });
    const keep = messages.find((m: any) => m.payload.tag === 'keep');
    const drop = messages.find((m: any) => m.payload.tag === 'drop');
    healthy = true;
    expect(await call('eng::queue::redrive_message', { queue, message_id: keep.id })).toEqual({ queue, message_id: keep.id, redriven: 1 });
    expect(await call('iii::queue::discard_message', { queue, message_id: drop.id })).toEqual({
      queue,
      message_id: drop.id,
      discarded: 1,
      redriven: 1,
    });
    await waitFor(() => delivered.length === 1);
    await sleep(100);
    expect(delivered).toEqual(['keep']);
    expect((await call('engine::queue::dlq_messages', { paged: true, topic: queue })).total).toBe(0);
    // unknown ids: nothing happens, and the answer says so
    expect(await call('eng::queue::redrive_message', { queue, message_id: drop.id })).toMatchObject({ redriven: 0 });
    expect(await call('eng::queue::discard_message', { queue, message_id: 'nope' })).toMatchObject({ discarded: 0 });
  });

  it('pages the dead-letter queue beyond 50 messages with the right total', async () => {
    const worker = await engWorker('q-many');
    worker.registerFunction('q::always-fails', async () => {
      throw new Error('nope');
    });
    await registered('q::always-fails');
    const receipts = await Promise.all(
      Array.from({ length: 120 }, (_, i) =>
        worker.trigger<{ messageReceiptId: string }>({
          function_id: 'q::always-fails',
          payload: { i },
          action: EngTriggerAction.Enqueue({ queue: 'no-retry' }),
        }),
      ),
    );
    await waitFor(async () => (await call('engine::queue::dlq_messages', { paged: true, topic: 'no-retry' })).total === 120, 10_000);
    const first = await call('engine::queue::dlq_messages', { paged: true, topic: 'no-retry' });
    expect(first).toMatchObject({ topic: 'no-retry', total: 120, offset: 0, limit: 50 });
    expect(first.messages).toHaveLength(50);
    const second = await call('engine::queue::dlq_messages', { paged: true, queue: 'no-retry', offset: 50, limit: 50 });
    const last = await call('engine::queue::dlq_messages', { paged: true, topic: 'no-retry', offset: 100 });
    expect(second.messages).toHaveLength(50);
    expect(last.messages).toHaveLength(20);
    expect(last.total).toBe(120);
    const ids = [...first.messages, ...second.messages, ...last.messages].map((m: any) => m.id);
    expect(new Set(ids).size).toBe(120);
    expect(new Set(ids)).toEqual(new Set(receipts.map((r) => r.messageReceiptId)));
    expect((await call('engine::queue::dlq_messages', { paged: true, topic: 'no-retry', offset: 120 })).messages).toEqual([]);
    // clean up for the other tests on this queue
    for (const id of ids) await call('eng::queue::discard_message', { queue: 'no-retry', message_id: id });
    expect((await call('engine::queue::dlq_messages', { paged: true, topic: 'no-retry' })).total).toBe(0);
  }, 20_000);
});

describe('ordering and concurrency', () => {
  it('FIFO: one message at a time per group, in enqueue order, groups in parallel', async () => {
    const worker = await engWorker('q-fifo');
    const order = new Map<string, number[]>();
    const active = new Map<string, number>();
    let overlapInGroup = false;
    let running = 0;
    let maxRunning = 0;
    worker.registerFunction('q::fifo', async (input: { customer: string; seq: number }) => {
      const now = (active.get(input.customer) ?? 0) + 1;
      active.set(input.customer, now);
      if (now > 1) overlapInGroup = true;
      running++;
      maxRunning = Math.max(maxRunning, running);
      await sleep(5 + Math.random() * 15);
      order.set(input.customer, [...(order.get(input.customer) ?? []), input.seq]);
      active.set(input.customer, now - 1);
      running--;
    });
    await registered('q::fifo');
    const customers = ['ann', 'bob', 'cid'];
    for (let seq = 0; seq < 10; seq++) {
      for (const customer of customers) {
        await worker.trigger({
          function_id: 'q::fifo',
          payload: { customer, seq },
          action: EngTriggerAction.Enqueue({ queue: 'fifo-orders' }),
        });
      }
    }
    await waitFor(() => customers.every((c) => order.get(c)?.length === 10), 10_000);
    for (const c of customers) expect(order.get(c)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(overlapInGroup).toBe(false);
    expect(maxRunning).toBeGreaterThan(1);
  });

  it('FIFO: a failing message holds back the rest of its group until it is settled', async () => {
    const worker = await engWorker('q-fifo-retry');
    const order: string[] = [];
    let failuresLeft = 2;
    worker.registerFunction('q::fifo-retry', async (input: { customer: string; step: string }) => {
      if (input.step === 'first' && failuresLeft-- > 0) throw new Error('retry me');
      order.push(input.step);
    });
    await registered('q::fifo-retry');
    for (const step of ['first', 'second', 'third']) {
      await worker.trigger({
        function_id: 'q::fifo-retry',
        payload: { customer: 'dee', step },
        action: EngTriggerAction.Enqueue({ queue: 'fifo-fast' }),
      });
    }
    // the group waits through both backoffs (50 ms, then 100 ms) instead of running ahead
    await waitFor(() => order.length === 3);
    expect(order).toEqual(['first', 'second', 'third']);
    expect(failuresLeft).toBeLessThan(0);
  });

  it('never runs more deliveries of a queue at once than its concurrency', async () => {
    const worker = await engWorker('q-limited');
    let running = 0;
    let maxRunning = 0;
    let done = 0;
    worker.registerFunction('q::limited', async () => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      await sleep(150);
      running--;
      done++;
    });
    await registered('q::limited');
    await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        worker.trigger({ function_id: 'q::limited', payload: { i }, action: EngTriggerAction.Enqueue({ queue: 'limited' }) }),
      ),
    );
    const during = await waitFor(async () => {
      const stats = await call('engine::queue::topic_stats', { topic: 'limited' });
      return stats.in_flight === 2 ? stats : null;
    });
    expect(during.depth + during.in_flight + during.delivered).toBe(8);
    expect(during.consumer_count).toBe(2);
    await waitFor(() => done === 8, 5000);
    expect(maxRunning).toBe(2);
    expect(await call('engine::queue::topic_stats', { topic: 'limited' })).toMatchObject({ depth: 0, in_flight: 0, delivered: 8 });
  });
});

describe('durable topics (durable:subscriber, §5.4)', () => {
  it('delivers every publish to each subscriber, through eng:: and iii:: publish, without trigger metadata', async () => {
    const a = iiiWorker('q-sub-a');
    const b = await engWorker('q-sub-b');
    const gotA: unknown[] = [];
    const gotB: unknown[] = [];
    const metadataA: unknown[] = [];
    a.registerFunction('sub::a', async (input: unknown, metadata?: unknown) => {
      gotA.push(input);
      metadataA.push(metadata);
    });
    // spec §2.5 step 7: the queue passes no trigger metadata to the function
    a.registerTrigger({
      type: 'durable:subscriber',
      function_id: 'sub::a',
      config: { topic: 'orders.created' },
      metadata: { tenant: 't1' },
    });
    b.registerFunction('sub::b', async (input: unknown) => {
      gotB.push(input);
    });
    b.registerTrigger({
      type: 'durable:subscriber',
      function_id: 'sub::b',
      config: { topic: 'orders.created', queue_config: { concurrency: 1 } },
    });
    await waitFor(async () => (await call('engine::queue::topic_stats', { topic: 'orders.created' })).consumer_count === 2);
    expect(
      await a.trigger({ function_id: 'iii::durable::publish', payload: { topic: 'orders.created', data: { id: 1 } } }),
    ).toBeUndefined();
    expect(await call('eng::durable::publish', { topic: 'orders.created', data: { id: 2 } })).toBeUndefined();
    await waitFor(() => gotA.length === 2 && gotB.length === 2);
    // each copy is the data as published (issue 26 item 3)
    const copies = [{ id: 1 }, { id: 2 }];
    expect(gotA).toEqual(expect.arrayContaining(copies));
    expect(gotB).toEqual(expect.arrayContaining(copies));
    expect(metadataA).toEqual([undefined, undefined]);
    const topics = await call<Array<{ name: string; broker_type: string; subscriber_count: number }>>('engine::queue::list_topics');
    expect(topics).toContainEqual(expect.objectContaining({ name: 'orders.created', broker_type: 'topic', subscriber_count: 2 }));
  });

  it('retries a failing subscriber per its queue_config, then dead-letters its copy only', async () => {
    const worker = await engWorker('q-sub-fail');
    let calls = 0;
    const okCopies: unknown[] = [];
    worker.registerFunction('sub::fails', async () => {
      calls++;
      throw new Error('subscriber down');
    });
    worker.registerFunction('sub::fine', async (input: unknown) => {
      okCopies.push(input);
    });
    worker.registerTrigger({
      type: 'durable:subscriber',
      function_id: 'sub::fails',
      config: { topic: 'payments', queue_config: { maxRetries: 1, backoffMs: 20 } },
    });
    worker.registerTrigger({ type: 'durable:subscriber', function_id: 'sub::fine', config: { topic: 'payments' } });
    await waitFor(async () => (await call('engine::queue::topic_stats', { topic: 'payments' })).consumer_count === 2);
    await call('eng::durable::publish', { topic: 'payments', data: { amount: 5 } });
    await waitFor(async () => (await call('engine::queue::dlq_messages', { paged: true, topic: 'payments' })).total === 1);
    expect(calls).toBe(2);
    expect(okCopies).toEqual([{ amount: 5 }]);
    const dead = (await call('engine::queue::dlq_messages', { paged: true, topic: 'payments' })).messages[0];
    expect(dead).toMatchObject({ queue: 'payments', function_id: 'sub::fails', payload: { amount: 5 }, retries: 2 });
    expect(dead.error).toContain('subscriber down');
    expect(await call('engine::queue::topic_stats', { topic: 'payments' })).toMatchObject({ delivered: 1, failed: 2, dlq_count: 1 });
  });

  it('a FIFO subscriber gets the publishes one at a time, in order', async () => {
    const worker = await engWorker('q-sub-fifo');
    const order: number[] = [];
    let running = 0;
    let overlap = false;
    worker.registerFunction('sub::serial', async (input: { n: number }) => {
      if (++running > 1) overlap = true;
      await sleep(Math.random() * 10);
      order.push(input.n);
      running--;
    });
    worker.registerTrigger({
      type: 'durable:subscriber',
      function_id: 'sub::serial',
      config: { topic: 'serial', queue_config: { type: 'fifo' } },
    });
    await waitFor(async () => (await call('engine::queue::topic_stats', { topic: 'serial' })).consumer_count === 1);
    for (let n = 0; n < 10; n++) await call('eng::durable::publish', { topic: 'serial', data: { n } });
    await waitFor(() => order.length === 10);
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(overlap).toBe(false);
  });

  it('counts a delivery that outlives visibilityTimeout as failed', async () => {
    const worker = await engWorker('q-sub-slow');
    worker.registerFunction('sub::hangs', async () => {
      await new Promise(() => {});
    });
    worker.registerTrigger({
      type: 'durable:subscriber',
      function_id: 'sub::hangs',
      config: { topic: 'slow', queue_config: { visibilityTimeout: 0.2, maxRetries: 0 } },
    });
    await waitFor(async () => (await call('engine::queue::topic_stats', { topic: 'slow' })).consumer_count === 1);
    const started = Date.now();
    await call('eng::durable::publish', { topic: 'slow', data: { n: 1 } });
    const page = await waitFor(async () => {
      const p = await call('engine::queue::dlq_messages', { paged: true, topic: 'slow' });
      return p.total === 1 ? p : null;
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(page.messages[0].error).toMatch(/^TIMEOUT: /);
  });

  it('skips a delivery when condition_function_id answers false', async () => {
    const worker = await engWorker('q-sub-cond');
    const got: Array<{ vip: boolean }> = [];
    worker.registerFunction('sub::only-vip', async (input: { vip: boolean }) => {
      got.push(input);
    });
    worker.registerFunction('sub::is-vip', async (input: { vip: boolean }) => input.vip);
    worker.registerTrigger({
      type: 'durable:subscriber',
      function_id: 'sub::only-vip',
      config: { topic: 'customers', condition_function_id: 'sub::is-vip' },
    });
    await waitFor(async () => (await call('engine::queue::topic_stats', { topic: 'customers' })).consumer_count === 1);
    await call('eng::durable::publish', { topic: 'customers', data: { vip: false } });
    await call('eng::durable::publish', { topic: 'customers', data: { vip: true } });
    await waitFor(async () => (await call('engine::queue::topic_stats', { topic: 'customers' })).delivered === 2);
    expect(got).toEqual([{ vip: true }]);
  });

  it('keeps publishing to a subscriber whose worker is reconnecting and delivers when it is back', async () => {
    const first = await engWorker('q-sub-away');
    first.registerFunction('sub::away', async () => {});
    first.registerTrigger({ type: 'durable:subscriber', function_id: 'sub::away', config: { topic: 'away' } });
    await waitFor(async () => (await call('engine::queue::topic_stats', { topic: 'away' })).consumer_count === 1);
    await first.close();
    await waitFor(async () => (await call('engine::queue::topic_stats', { topic: 'away' })).consumer_count === 0);
    await call('eng::durable::publish', { topic: 'away', data: { n: 1 } });
    const stats = await call('engine::queue::topic_stats', { topic: 'away' });
    expect(stats.depth).toBe(1);
    expect(stats.subscribers).toEqual([
      expect.objectContaining({ function_id: 'sub::away', active: false, dormant_since: expect.any(Number) }),
    ]);
    const back = await engWorker('q-sub-back');
    const got: unknown[] = [];
    back.registerFunction('sub::away', async (input: unknown) => {
      got.push(input);
    });
    back.registerTrigger({ type: 'durable:subscriber', function_id: 'sub::away', config: { topic: 'away' } });
    await waitFor(() => got.length === 1);
    expect(got).toEqual([{ n: 1 }]);
  });

  it('refuses a binding without a topic or with a bad queue_config, naming the field', async () => {
    const missing = await rejection('engine::register_trigger', { trigger_type: 'durable:subscriber', function_id: 'x::y', config: {} });
    expect(missing.code).toBe('trigger_registration_failed');
    expect(missing.message).toContain('topic is required');
    const bad = await rejection('engine::register_trigger', {
      trigger_type: 'durable:subscriber',
      function_id: 'x::y',
      config: { topic: 't', queue_config: { maxRetries: 'three' } },
    });
    expect(bad.code).toBe('trigger_registration_failed');
    expect(bad.message).toContain('queue_config.maxRetries');
    const { registered_triggers } = await call('engine::registered-triggers::list', { trigger_type: 'durable:subscriber' });
    expect(registered_triggers.filter((t: any) => t.function_id === 'x::y')).toEqual([]);
  });
});

describe('bad input', () => {
  const cases: Array<[string, unknown, string, string]> = [
    ['engine::queue::enqueue', { function_id: 'a::b', data: 1 }, 'deserialization_error', 'queue'],
    ['engine::queue::enqueue', { queue: 5, function_id: 'a::b', data: 1 }, 'deserialization_error', 'queue'],
    ['engine::queue::enqueue', { queue: 'q' }, 'deserialization_error', 'function_id'],
    ['engine::queue::enqueue', { queue: 'q', function_id: '' }, 'deserialization_error', 'function_id'],
    ['engine::queue::enqueue', { queue: '', function_id: 'a::b' }, 'queue_not_set', 'queue'],
    ['engine::queue::enqueue', { queue: 'q', function_id: 'a::b', messageReceiptId: 7 }, 'deserialization_error', 'messageReceiptId'],
    ['engine::queue::enqueue', { queue: 'q', function_id: 'a::b', traceparent: 5 }, 'deserialization_error', 'traceparent'],
    ['engine::queue::enqueue', { queue: 'q', function_id: 'a::b', baggage: {} }, 'deserialization_error', 'baggage'],
    ['engine::queue::enqueue', [1, 2], 'deserialization_error', '(root)'],
    ['eng::durable::publish', { data: 1 }, 'topic_not_set', 'topic'],
    ['iii::durable::publish', { topic: '', data: 1 }, 'topic_not_set', 'topic'],
    ['eng::durable::publish', { topic: 42, data: 1 }, 'deserialization_error', 'topic'],
    ['eng::durable::publish', 'just text', 'deserialization_error', '(root)'],
    ['eng::queue::redrive', {}, 'queue_not_set', 'queue'],
    ['eng::queue::redrive', { queue: ['x'] }, 'deserialization_error', 'queue'],
    ['eng::queue::redrive_message', { queue: 'q' }, 'deserialization_error', 'message_id'],
    ['eng::queue::redrive_message', { message_id: 'm' }, 'queue_not_set', 'queue'],
    ['eng::queue::discard_message', { queue: 'q', message_id: 3 }, 'deserialization_error', 'message_id'],
    ['iii::queue::discard_message', { queue: 'q', message_id: '' }, 'deserialization_error', 'message_id'],
    ['engine::queue::topic_stats', {}, 'topic_not_set', 'topic'],
    ['engine::queue::topic_stats', { topic: true }, 'deserialization_error', 'topic'],
    ['engine::queue::dlq_messages', { paged: true, topic: 'q', limit: 0 }, 'deserialization_error', 'limit'],
    ['engine::queue::dlq_messages', { paged: true, topic: 'q', offset: -1 }, 'deserialization_error', 'offset'],
    ['engine::queue::dlq_messages', { paged: true, topic: 'q', limit: 'ten' }, 'deserialization_error', 'limit'],
    ['engine::queue::dlq_messages', { paged: true }, 'topic_not_set', 'topic'],
    ['engine::queue::list_topics', 'x', 'deserialization_error', '(root)'],
    ['engine::queue::dlq_topics', 5, 'deserialization_error', '(root)'],
  ];

  it.each(cases)('%s %j → %s naming %s', async (functionId, payload, code, field) => {
    const error = await rejection(functionId, payload);
    expect(error.code).toBe(code);
    expect(error.message).toContain(field);
  });

  it('stored nothing for any of them', async () => {
    const topics = await call<Array<{ name: string }>>('engine::queue::list_topics');
    expect(topics.map((t) => t.name)).not.toContain('q');
    expect(topics.map((t) => t.name)).not.toContain('');
  });

  it('an enqueue action to a queue name the provider refuses comes back as enqueue_error', async () => {
    const producer = await engWorker('q-bad-action');
    await expect(
      producer.trigger({ function_id: 'a::b', payload: {}, action: EngTriggerAction.Enqueue({ queue: '' }) }),
    ).rejects.toMatchObject({ code: 'enqueue_error' });
  });
});

describe('second engine: strict mode, subscriber expiry (module listed by its 0.22.1 name `queue`)', () => {
  let strictEngine: EngineProcess;
  let client: EngClient;
  beforeAll(async () => {
    strictEngine = await startEngine({
      workersYaml:
        '  - name: queue\n    config:\n      adapter: { name: memory }\n      strict: true\n      subscriber_ttl_ms: 1000\n      queue_configs:\n        known: {}\n',
    });
    client = connect(strictEngine.busUrl, { name: 'strict' });
    await client.ready({ timeoutMs: 5000 });
  });
  afterAll(async () => {
    await client?.close();
    await strictEngine?.stop();
  });

  it('refuses an unknown queue with enqueue_error and accepts listed ones and default', async () => {
    await expect(
      client.trigger({ function_id: 'a::b', payload: {}, action: EngTriggerAction.Enqueue({ queue: 'unknown' }) }),
    ).rejects.toMatchObject({
      code: 'enqueue_error',
      message: expect.stringContaining("Queue 'unknown' not found"),
    });
    for (const queue of ['known', 'default']) {
      const receipt = await client.trigger<{ messageReceiptId: string }>({
        function_id: 'a::b',
        payload: {},
        action: EngTriggerAction.Enqueue({ queue }),
      });
      expect(receipt.messageReceiptId).toMatch(UUID);
    }
    const names = (await client.call<Array<{ name: string }>>('engine::queue::list_topics', {})).map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['default', 'known']));
    expect(names).not.toContain('unknown');
  });

  it('moves the copies of a subscriber whose worker never came back to the DLQ after subscriber_ttl_ms', async () => {
    const gone = connect(strictEngine.busUrl, { name: 'gone', reconnect: { maxRetries: 0 } });
    await gone.ready({ timeoutMs: 5000 });
    gone.registerFunction('sub::gone', async () => {});
    gone.registerTrigger({ type: 'durable:subscriber', function_id: 'sub::gone', config: { topic: 'lost' } });
    await waitFor(async () => (await client.call<any>('engine::queue::topic_stats', { topic: 'lost' })).consumer_count === 1);
    await gone.close();
    await waitFor(async () => (await client.call<any>('engine::queue::topic_stats', { topic: 'lost' })).consumer_count === 0);
    for (const n of [1, 2]) await client.call('eng::durable::publish', { topic: 'lost', data: { n } });
    expect((await client.call<any>('engine::queue::topic_stats', { topic: 'lost' })).depth).toBe(2);
    const page = await waitFor(async () => {
      const p = await client.call<any>('engine::queue::dlq_messages', { paged: true, topic: 'lost' });
      return p.total === 2 ? p : null;
    }, 5000);
    // dead-lettered payloads are the data as published
    expect(page.messages.map((m: any) => m.payload)).toEqual([{ n: 1 }, { n: 2 }]);
    expect(page.messages[0].error).toContain('did not come back');
    expect((await client.call<any>('engine::queue::topic_stats', { topic: 'lost' })).subscribers).toEqual([]);
  });

  it('moves the waiting copies of an explicitly removed subscriber to the DLQ, and a publish after that stores nothing', async () => {
    client.registerFunction('sub::leaves', async () => {
      throw new Error('busy');
    });
    const binding = client.registerTrigger({
      type: 'durable:subscriber',
      function_id: 'sub::leaves',
      config: { topic: 'leaving', queue_config: { maxRetries: 5, backoffMs: 10_000 } },
    });
    await waitFor(async () => (await client.call<any>('engine::queue::topic_stats', { topic: 'leaving' })).consumer_count === 1);
    await client.call('eng::durable::publish', { topic: 'leaving', data: { n: 1 } });
    // the first delivery fails, the retry waits 10 s: the copy is pending when the subscriber leaves
    await waitFor(async () => (await client.call<any>('engine::queue::topic_stats', { topic: 'leaving' })).failed === 1);
    binding.unregister();
    const page = await waitFor(async () => {
      const p = await client.call<any>('engine::queue::dlq_messages', { paged: true, topic: 'leaving' });
      return p.total === 1 ? p : null;
    }, 5000);
    expect(page.messages[0]).toMatchObject({ function_id: 'sub::leaves', payload: { n: 1 } });
    expect(page.messages[0].error).toContain('unsubscribed');
    await client.call('eng::durable::publish', { topic: 'leaving', data: { n: 2 } });
    expect((await client.call<any>('engine::queue::topic_stats', { topic: 'leaving' })).depth).toBe(0);
  });
});
