/**
 * Issue 26 item 3: a queued message and a publish reach a worker's function with the data as it
 * was sent, as iii delivers it (iii-sdk 0.11.6's own queue suite matches it exactly): the engine no
 * longer adds `_caller_worker_id` to it. The sender is kept beside the message, so a built-in
 * reached through a queue still acts for the real sender (hardening-trust covers the forgeries);
 * a direct call still carries `_caller_worker_id`, as in iii.
 *
 * Each path is driven from and received by @eng/sdk, iii-sdk 0.22.1 and iii-sdk 0.11.6 workers:
 * the enqueue action, engine::queue::enqueue, publish, eng::durable::publish, iii::durable::publish,
 * and on the sqlite adapter too (a message stored by an engine before this change, with the stamp
 * in its data, is delivered without it and still acts for its sender).
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type EngClient, TriggerAction as EngTriggerAction } from '@eng/sdk';
import Database from 'better-sqlite3';
import { registerWorker as registerWorker11, TriggerAction as TriggerAction11 } from 'iii-sdk-0.11.6';
import { registerWorker as registerWorker22, TriggerAction as TriggerAction22 } from 'iii-sdk-0.22.1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// iii-sdk logs every connect step with console.debug; keep the output readable
const originalDebug = console.debug;
console.debug = (...args: unknown[]) => {
  if (typeof args[0] === 'string' && /^\[(iii|OTel)\]/.test(args[0])) return;
  originalDebug(...args);
};

/** What the three SDKs share for this test. */
interface Sdk {
  registerFunction(id: string, handler: (input: any) => Promise<any>): unknown;
  registerTrigger(trigger: { type: string; function_id: string; config: unknown }): unknown;
  trigger(request: { function_id: string; payload: unknown; action?: unknown }): Promise<any>;
  shutdown(): Promise<void>;
}

interface Kind {
  name: string;
  connect(url: string, name: string): Promise<Sdk>;
  enqueue(queue: string): unknown;
}

const KINDS: Kind[] = [
  {
    name: 'eng',
    async connect(url, name) {
      const client: EngClient = connect(url, { name });
      await client.ready({ timeoutMs: 10_000 });
      return {
        registerFunction: (id, handler) => client.registerFunction(id, (input: any) => handler(input)),
        registerTrigger: (t) => client.registerTrigger(t),
        trigger: (r) => client.trigger(r as Parameters<EngClient['trigger']>[0]),
        shutdown: () => client.close(),
      };
    },
    enqueue: (queue) => EngTriggerAction.Enqueue({ queue }),
  },
  {
    name: 'iii22',
    async connect(url, name) {
      return registerWorker22(url, { workerName: name, otel: { enabled: false } }) as unknown as Sdk;
    },
    enqueue: (queue) => TriggerAction22.Enqueue({ queue }),
  },
  {
    name: 'iii11',
    async connect(url, name) {
      return registerWorker11(url, { workerName: name, otel: { enabled: false } }) as unknown as Sdk;
    },
    enqueue: (queue) => TriggerAction11.Enqueue({ queue }),
  },
];

/** A payload with the shapes exact matching catches: nesting, arrays, null, a number zero. */
const payload = (path: string, kind: string) => ({ path, kind, order: { items: ['pizza', 'salad'], total: 0 }, note: null });

let engine: EngineProcess;
const clients: Sdk[] = [];
let admin: EngClient;

beforeAll(async () => {
  engine = await startEngine({
    workersYaml: `  - name: eng-pubsub
  - name: eng-queue
    config:
      adapter: { name: memory }
`,
  });
  admin = connect(engine.busUrl, { name: 'pp-admin' });
  await admin.ready({ timeoutMs: 10_000 });
}, 60_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.shutdown().catch(() => {})));
  await admin?.close().catch(() => {});
  await engine?.stop();
});

async function topicConsumers(topic: string): Promise<number> {
  return (await admin.call<any>('engine::queue::topic_stats', { topic })).consumer_count;
}

describe.each(KINDS)('data arrives as sent: $name workers', (kind) => {
  let worker: Sdk;
  const seen = new Map<string, unknown[]>();
  const fn = (path: string) => `pp::${kind.name}::${path}`;

  beforeAll(async () => {
    worker = await kind.connect(engine.busUrl, `pp-${kind.name}`);
    clients.push(worker);
    for (const path of ['enqueue-action', 'queue-enqueue', 'publish', 'durable', 'direct']) {
      seen.set(path, []);
      worker.registerFunction(fn(path), async (input: unknown) => {
        seen.get(path)?.push(input);
        return { ok: true };
      });
    }
    worker.registerTrigger({ type: 'subscribe', function_id: fn('publish'), config: { topic: `pp-${kind.name}` } });
    worker.registerTrigger({ type: 'durable:subscriber', function_id: fn('durable'), config: { topic: `pp-durable-${kind.name}` } });
    await waitFor(async () => {
      const { functions } = await admin.call<any>('engine::functions::list', {});
      return functions.filter((f: { function_id: string }) => f.function_id.startsWith(`pp::${kind.name}::`)).length === 5;
    }, 15_000);
    await waitFor(async () => (await topicConsumers(`pp-durable-${kind.name}`)) === 1, 15_000);
  }, 60_000);

  const delivered = (path: string, count = 1) => waitFor(() => ((seen.get(path)?.length ?? 0) >= count ? seen.get(path) : null), 15_000);

  it('the enqueue action', async () => {
    const sent = payload('enqueue-action', kind.name);
    const receipt = await worker.trigger({ function_id: fn('enqueue-action'), payload: sent, action: kind.enqueue('default') });
    expect(receipt).toEqual({ messageReceiptId: expect.stringMatching(UUID) });
    expect(await delivered('enqueue-action')).toEqual([sent]);
  });

  it('engine::queue::enqueue', async () => {
    const sent = payload('queue-enqueue', kind.name);
    await worker.trigger({
      function_id: 'engine::queue::enqueue',
      payload: { queue: 'default', function_id: fn('queue-enqueue'), data: sent },
    });
    expect(await delivered('queue-enqueue')).toEqual([sent]);
  });

  it('publish (a subscribe trigger), from this worker and from another', async () => {
    const own = payload('publish', kind.name);
    await worker.trigger({ function_id: 'publish', payload: { topic: `pp-${kind.name}`, data: own } });
    expect(await delivered('publish')).toEqual([own]);
    const other = { from: 'admin', list: [1, 2, 3] };
    await admin.call('publish', { topic: `pp-${kind.name}`, data: other });
    expect(await delivered('publish', 2)).toEqual([own, other]);
  });

  it('eng::durable::publish and iii::durable::publish (a durable:subscriber)', async () => {
    const first = payload('durable-eng', kind.name);
    await worker.trigger({ function_id: 'eng::durable::publish', payload: { topic: `pp-durable-${kind.name}`, data: first } });
    expect(await delivered('durable')).toEqual([first]);
    const second = payload('durable-iii', kind.name);
    await worker.trigger({ function_id: 'iii::durable::publish', payload: { topic: `pp-durable-${kind.name}`, data: second } });
    expect(await delivered('durable', 2)).toEqual([first, second]);
  });

  it('a direct call still carries the caller as _caller_worker_id, as in iii', async () => {
    const sent = payload('direct', kind.name);
    await admin.call(fn('direct'), sent);
    expect(await delivered('direct')).toEqual([{ ...sent, _caller_worker_id: admin.workerId }]);
  });
});

describe('the sqlite adapter', () => {
  let dir: string;
  let durable: EngineProcess;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'eng-pp-'));
  });
  afterAll(async () => {
    await durable?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stores the data as sent and delivers it so; a message stored with the old stamp in its data is delivered without it', async () => {
    const file = join(dir, 'queue.db');
    const yaml = `  - name: eng-queue
    config:
      adapter: { name: sqlite, config: { file_path: ${file} } }
`;
    durable = await startEngine({ workersYaml: yaml });
    const client = connect(durable.busUrl, { name: 'pp-sqlite' });
    await client.ready({ timeoutMs: 10_000 });
    const got: unknown[] = [];
    client.registerFunction('pp::sqlite', async (input: unknown) => {
      got.push(input);
      return null;
    });
    await waitFor(
      async () => (await client.call<any>('engine::functions::info', { function_id: 'pp::sqlite' }).catch(() => null)) !== null,
    );
    const sent = payload('sqlite', 'eng');
    await client.trigger({ function_id: 'pp::sqlite', payload: sent, action: EngTriggerAction.Enqueue({ queue: 'default' }) });
    await waitFor(() => got.length === 1, 15_000);
    expect(got).toEqual([sent]);
    await client.close();
    await durable.stop();

    // a row as the engine before this change wrote it: no sender column, the sender in the data
    const db = new Database(file);
    db.exec('ALTER TABLE queue_messages DROP COLUMN sender');
    db.prepare(
      `INSERT INTO queue_messages (id, seq, lane, name, kind, function_id, grp, data, traceparent, baggage, enqueued_at, ready_at)
       VALUES ('legacy-1', 1000, 'q:default', 'default', 'queue', 'pp::sqlite', NULL, ?, NULL, NULL, ?, ?)`,
    ).run(JSON.stringify({ n: 1, _caller_worker_id: 'an-old-worker-id' }), Date.now(), Date.now());
    db.close();

    durable = await startEngine({ workersYaml: yaml });
    const again = connect(durable.busUrl, { name: 'pp-sqlite-again' });
    await again.ready({ timeoutMs: 10_000 });
    const later: unknown[] = [];
    again.registerFunction('pp::sqlite', async (input: unknown) => {
      later.push(input);
      return null;
    });
    await waitFor(() => later.length === 1, 15_000);
    expect(later).toEqual([{ n: 1 }]);
    await again.close();
  }, 90_000);
});
