/**
 * The queue's two local stores (memory, sqlite) under the same contract: what a group commit of
 * many writes leaves behind. The sqlite store writes the acknowledgements of one commit together
 * (one counter update per name) and takes a savepoint only for a write of several statements, so
 * these pin what users see through `engine::queue::topic_stats` and the DLQ: every delivery
 * counted once under its own name, a batch with a known id stored not at all, and (sqlite) all of it
 * still there after the file is opened again.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryQueueStore } from '../src/modules/queue/memory-store.ts';
import { SqliteQueueStore } from '../src/modules/queue/sqlite-store.ts';
import { DuplicateMessageError, type NewMessage, type QueueStore, queueLaneKey, topicLaneKey } from '../src/modules/queue/store.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function sqliteFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'eng-queue-store-'));
  dirs.push(dir);
  return join(dir, 'queue.db');
}

let next = 0;
function message(name: string, kind: 'queue' | 'topic' = 'queue', extra: Partial<NewMessage> = {}): NewMessage {
  const now = Date.now();
  return {
    id: `m-${++next}`,
    lane: kind === 'queue' ? queueLaneKey(name) : topicLaneKey(name, 'orders::audit'),
    name,
    kind,
    functionId: kind === 'queue' ? 'orders::ship' : 'orders::audit',
    group: null,
    dataJson: JSON.stringify({ n: next }),
    sender: null,
    traceparent: null,
    baggage: null,
    enqueuedAt: now,
    readyAt: now,
    ...extra,
  };
}

const stored = (store: QueueStore, lane: string) => [...store.scanLane(lane)];

function must<T>(value: T | undefined): T {
  if (value === undefined) throw new Error('expected a value');
  return value;
}

describe.each([
  ['memory', () => new MemoryQueueStore()],
  ['sqlite', () => new SqliteQueueStore(sqliteFile())],
] as const)('the %s queue store', (_name, open) => {
  async function withStore(run: (store: QueueStore) => Promise<void>): Promise<void> {
    const store = open();
    try {
      await run(store);
    } finally {
      store.close();
    }
  }

  it('counts every acknowledgement of one commit under its own name, once', () =>
    withStore(async (store) => {
      await store.insert([message('orders'), message('orders'), message('orders'), message('billing'), message('billing')]);
      await store.insert([message('events', 'topic')]);
      const [a0, a1, a2] = stored(store, queueLaneKey('orders')).map(must);
      const [b0, b1] = stored(store, queueLaneKey('billing')).map(must);
      const topicCopy = must(stored(store, topicLaneKey('events', 'orders::audit'))[0]);
      expect(topicCopy.kind).toBe('topic');
      // interleaved names in one turn, and the same message acknowledged twice
      await Promise.all([a0, b0, a1, b1, a0, topicCopy].map((m) => store.ack(must(m))));
      expect(store.counters('orders')).toEqual({ delivered: 2, failed: 0 });
      expect(store.counters('billing')).toEqual({ delivered: 2, failed: 0 });
      expect(store.counters('events')).toEqual({ delivered: 1, failed: 0 });
      expect(stored(store, queueLaneKey('orders')).map((m) => m.id)).toEqual([must(a2).id]);
      expect(stored(store, queueLaneKey('billing'))).toEqual([]);
      expect(store.pendingCount('events')).toBe(0);
    }));

  it('stores none of a batch that holds a known id, and keeps the other writes of the same commit', () =>
    withStore(async (store) => {
      const known = message('orders');
      await store.insert([known]);
      const fresh = message('orders');
      const other = message('orders');
      const results = await Promise.allSettled([store.insert([fresh, { ...known }]), store.insert([other]), store.insert([{ ...known }])]);
      expect(results[0].status).toBe('rejected');
      expect((results[0] as PromiseRejectedResult).reason).toBeInstanceOf(DuplicateMessageError);
      expect(results[1].status).toBe('fulfilled');
      expect((results[2] as PromiseRejectedResult).reason).toBeInstanceOf(DuplicateMessageError);
      expect(stored(store, queueLaneKey('orders')).map((m) => m.id)).toEqual([known.id, other.id]);
    }));

  it('skips the messages in flight and gives the others whole, in order', () =>
    withStore(async (store) => {
      const batch = Array.from({ length: 6 }, (_, i) => message('orders', 'queue', { sender: `w-${i}`, dataJson: JSON.stringify({ i }) }));
      await store.insert(batch);
      const ids = batch.map((m) => m.id);
      const inFlight = new Set([ids[0], ids[1], ids[3]]);
      const seen = [...store.scanLane(queueLaneKey('orders'), (id) => inFlight.has(id))];
      expect(seen.map((m) => m.id)).toEqual([ids[2], ids[4], ids[5]]);
      expect(seen.map((m) => [m.sender, JSON.parse(m.dataJson)])).toEqual([
        ['w-2', { i: 2 }],
        ['w-4', { i: 4 }],
        ['w-5', { i: 5 }],
      ]);
      // a scan stopped early (the lane's free slots are filled) leaves the store usable
      for (const _m of store.scanLane(queueLaneKey('orders'), () => false)) break;
      await store.ack(must(seen[0]));
      expect(store.pendingCount('orders')).toBe(5);
    }));

  it('keeps every field of a message as it was inserted', () =>
    withStore(async (store) => {
      const m = message('orders', 'queue', {
        sender: 'worker-7',
        traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
        baggage: 'tenant=acme',
        group: '"g1"',
      });
      const anonymous = message('orders');
      await store.insert([m, anonymous]);
      const [read, readAnonymous] = stored(store, queueLaneKey('orders'));
      expect(read).toMatchObject({ ...m, attempts: 0, lastError: null, failedAt: null });
      expect(readAnonymous?.sender).toBeNull();
      expect((read?.seq ?? 0) < (readAnonymous?.seq ?? 0)).toBe(true);
    }));
});

describe('the sqlite queue store across a reopen', () => {
  it('has forgotten what was acknowledged, kept what was not, and kept the counters', async () => {
    const file = sqliteFile();
    const store = new SqliteQueueStore(file);
    const [done, kept, failed] = [message('orders'), message('orders'), message('orders')];
    await store.insert([done, kept, failed]);
    const [d, , f] = stored(store, queueLaneKey('orders')).map(must);
    await Promise.all([store.ack(must(d)), store.retry(must(f), 1, Date.now(), 'boom')]);
    store.close();

    const again = new SqliteQueueStore(file);
    try {
      expect(stored(again, queueLaneKey('orders')).map((m) => m.id)).toEqual([kept.id, failed.id]);
      expect(again.counters('orders')).toEqual({ delivered: 1, failed: 1 });
      // new messages continue after the ones kept
      const later = message('orders');
      await again.insert([later]);
      expect(stored(again, queueLaneKey('orders')).at(-1)?.id).toBe(later.id);
    } finally {
      again.close();
    }
  });
});
