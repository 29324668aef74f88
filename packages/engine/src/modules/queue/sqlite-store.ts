import type Database from 'better-sqlite3';
import { acquire, release, type SharedDatabase } from '../../stores/sqlite.ts';
import {
  DuplicateMessageError,
  type LaneRef,
  type NameRef,
  type NewMessage,
  type QueueStore,
  type StoredMessage,
  type SubscriberRecord,
} from './store.ts';

interface Row {
  id: string;
  seq: number;
  lane: string;
  name: string;
  kind: StoredMessage['kind'];
  function_id: string;
  grp: string | null;
  data: string;
  /** '' for no sender; NULL only in rows written before the column existed (see toMessage). */
  sender: string | null;
  traceparent: string | null;
  baggage: string | null;
  attempts: number;
  enqueued_at: number;
  ready_at: number;
  last_error: string | null;
  failed_at: number | null;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS queue_messages (
  id TEXT PRIMARY KEY,
  seq INTEGER NOT NULL,
  lane TEXT NOT NULL,
  name TEXT NOT NULL,
  kind TEXT NOT NULL,
  function_id TEXT NOT NULL,
  grp TEXT,
  data TEXT NOT NULL,
  sender TEXT,
  traceparent TEXT,
  baggage TEXT,
  attempts INTEGER NOT NULL DEFAULT 0,
  enqueued_at INTEGER NOT NULL,
  ready_at INTEGER NOT NULL,
  last_error TEXT,
  failed_at INTEGER
);
CREATE INDEX IF NOT EXISTS queue_messages_pending ON queue_messages (lane, seq) WHERE failed_at IS NULL;
CREATE INDEX IF NOT EXISTS queue_messages_dead ON queue_messages (name, seq) WHERE failed_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS queue_messages_name ON queue_messages (name);
CREATE TABLE IF NOT EXISTS queue_counters (
  name TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  delivered INTEGER NOT NULL DEFAULT 0,
  failed INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS queue_subscribers (
  topic TEXT NOT NULL,
  function_id TEXT NOT NULL,
  config TEXT NOT NULL,
  PRIMARY KEY (topic, function_id)
);
`;

/**
 * Rows stored before the `sender` column (sender NULL) carry the sender in their data, stamped there
 * as `_caller_worker_id` by the engine of that time: it is moved out, so the data is delivered as it
 * was sent and the delivery still acts for the same worker.
 */
function legacySender(row: Row): { data: string; sender: string | null } {
  if (!row.data.includes('"_caller_worker_id"')) return { data: row.data, sender: null };
  const value = JSON.parse(row.data) as unknown;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { data: row.data, sender: null };
  const { _caller_worker_id: sender, ...rest } = value as Record<string, unknown>;
  return { data: JSON.stringify(rest), sender: typeof sender === 'string' ? sender : null };
}

function toMessage(row: Row): StoredMessage {
  const { data, sender } = row.sender === null ? legacySender(row) : { data: row.data, sender: row.sender || null };
  return {
    id: row.id,
    seq: row.seq,
    lane: row.lane,
    name: row.name,
    kind: row.kind,
    functionId: row.function_id,
    group: row.grp,
    dataJson: data,
    sender,
    traceparent: row.traceparent,
    baggage: row.baggage,
    attempts: row.attempts,
    enqueuedAt: row.enqueued_at,
    readyAt: row.ready_at,
    lastError: row.last_error,
    failedAt: row.failed_at,
  };
}

/**
 * Messages in a SQLite file (better-sqlite3, WAL, synchronous=FULL) through the shared store
 * connection, which group-commits: every write requested during one turn of the event loop runs in
 * one transaction and its promise resolves after the fsynced COMMIT — one fsync per batch.
 */
export class SqliteQueueStore implements QueueStore {
  readonly adapterName = 'sqlite' as const;
  private readonly shared: SharedDatabase;
  private readonly db: Database.Database;
  private seq: number;
  private closed = false;
  private readonly stmt;
  /** Runs a function in a savepoint (made once: better-sqlite3 builds a wrapper per `transaction` call). */
  private readonly savepoint: (run: () => unknown) => unknown;
  /** Acknowledgements waiting for the next group commit, and the write that will store them. */
  private acks: StoredMessage[] = [];
  private ackWrite: Promise<void> | null = null;

  constructor(readonly file: string) {
    this.shared = acquire(file, 'full');
    this.db = this.shared.db;
    this.db.exec(SCHEMA);
    // files made before the sender was kept beside the data: the column is added, old rows keep NULL
    const columns = this.db.prepare('PRAGMA table_info(queue_messages)').all() as { name: string }[];
    if (!columns.some((c) => c.name === 'sender')) this.db.exec('ALTER TABLE queue_messages ADD COLUMN sender TEXT');
    this.seq = (this.db.prepare('SELECT COALESCE(MAX(seq), 0) AS seq FROM queue_messages').get() as { seq: number }).seq;
    const db = this.db;
    this.savepoint = db.transaction((run: () => unknown) => run());
    this.stmt = {
      insert: db.prepare(
        `INSERT INTO queue_messages (id, seq, lane, name, kind, function_id, grp, data, sender, traceparent, baggage, enqueued_at, ready_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      scanLane: db.prepare('SELECT * FROM queue_messages WHERE lane = ? AND failed_at IS NULL ORDER BY seq'),
      pendingLanes: db.prepare(
        'SELECT lane, MIN(name) AS name, MIN(kind) AS kind FROM queue_messages WHERE failed_at IS NULL GROUP BY lane',
      ),
      // also from the DLQ: a subscriber that went away had this one in flight, and it succeeded
      delete: db.prepare('DELETE FROM queue_messages WHERE id = ?'),
      retry: db.prepare('UPDATE queue_messages SET attempts = ?, ready_at = ?, last_error = ? WHERE id = ? AND failed_at IS NULL'),
      deadLetter: db.prepare(
        'UPDATE queue_messages SET attempts = ?, last_error = ?, failed_at = ?, seq = ? WHERE id = ? AND failed_at IS NULL',
      ),
      markDead: db.prepare('UPDATE queue_messages SET last_error = ?, failed_at = ?, seq = ? WHERE id = ?'),
      laneIds: db.prepare('SELECT id FROM queue_messages WHERE lane = ? AND failed_at IS NULL ORDER BY seq'),
      deadIds: db.prepare('SELECT id FROM queue_messages WHERE name = ? AND failed_at IS NOT NULL ORDER BY seq'),
      deadOne: db.prepare('SELECT id FROM queue_messages WHERE name = ? AND id = ? AND failed_at IS NOT NULL'),
      redrive: db.prepare(
        'UPDATE queue_messages SET attempts = 0, ready_at = ?, last_error = NULL, failed_at = NULL, seq = ? WHERE id = ?',
      ),
      byId: db.prepare('SELECT * FROM queue_messages WHERE id = ?'),
      discard: db.prepare('DELETE FROM queue_messages WHERE name = ? AND id = ? AND failed_at IS NOT NULL'),
      dlqPage: db.prepare('SELECT * FROM queue_messages WHERE name = ? AND failed_at IS NOT NULL ORDER BY seq LIMIT ? OFFSET ?'),
      dlqCount: db.prepare('SELECT COUNT(*) AS n FROM queue_messages WHERE name = ? AND failed_at IS NOT NULL'),
      pendingCount: db.prepare('SELECT COUNT(*) AS n FROM queue_messages WHERE name = ? AND failed_at IS NULL'),
      names: db.prepare('SELECT DISTINCT name, kind FROM queue_messages UNION SELECT name, kind FROM queue_counters'),
      counters: db.prepare('SELECT delivered, failed FROM queue_counters WHERE name = ?'),
      count: db.prepare(
        `INSERT INTO queue_counters (name, kind, delivered, failed) VALUES (?, ?, ?, ?)
         ON CONFLICT (name) DO UPDATE SET delivered = delivered + excluded.delivered, failed = failed + excluded.failed`,
      ),
      subscribers: db.prepare('SELECT topic, function_id, config FROM queue_subscribers ORDER BY topic, function_id'),
      saveSubscriber: db.prepare(
        'INSERT INTO queue_subscribers (topic, function_id, config) VALUES (?, ?, ?) ON CONFLICT (topic, function_id) DO UPDATE SET config = excluded.config',
      ),
      deleteSubscriber: db.prepare('DELETE FROM queue_subscribers WHERE topic = ? AND function_id = ?'),
    };
  }

  insert(messages: NewMessage[]): Promise<void> {
    // one INSERT is atomic by itself: a savepoint only when several must all be stored or none
    return this.write(
      () => {
        for (const m of messages) {
          try {
            this.stmt.insert.run(
              m.id,
              ++this.seq,
              m.lane,
              m.name,
              m.kind,
              m.functionId,
              m.group,
              m.dataJson,
              m.sender ?? '',
              m.traceparent,
              m.baggage,
              m.enqueuedAt,
              m.readyAt,
            );
          } catch (err) {
            if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY') throw new DuplicateMessageError(m.id);
            throw err;
          }
        }
      },
      true,
      messages.length > 1,
    );
  }

  *scanLane(lane: string, skip?: (id: string) => boolean): Iterable<StoredMessage> {
    for (const row of this.stmt.scanLane.iterate(lane) as IterableIterator<Row>) {
      if (skip?.(row.id)) continue;
      yield toMessage(row);
    }
  }

  pendingLanes(): LaneRef[] {
    return this.stmt.pendingLanes.all() as LaneRef[];
  }

  ack(message: StoredMessage): Promise<void> {
    // the acknowledgements of one group commit are one write, with one counter update per name;
    // not fsynced on its own: lost in a power cut, the message is delivered again (at-least-once)
    this.acks.push(message);
    if (this.ackWrite) return this.ackWrite;
    const write = this.write(this.writeAcks, false, false);
    this.ackWrite = write;
    // a commit that failed before running it: its callers are told (the messages stay queued and
    // run again), and the next acknowledgement starts a write of its own
    write.catch(() => {
      if (this.ackWrite !== write) return;
      this.ackWrite = null;
      this.acks = [];
    });
    return write;
  }

  private readonly writeAcks = (): void => {
    const acks = this.acks;
    this.acks = [];
    this.ackWrite = null;
    let name = '';
    let kind: StoredMessage['kind'] = 'queue';
    let done = 0;
    for (const message of acks) {
      if (!this.stmt.delete.run(message.id).changes) continue;
      if (message.name !== name || message.kind !== kind) {
        if (done) this.stmt.count.run(name, kind, done, 0);
        name = message.name;
        kind = message.kind;
        done = 0;
      }
      done++;
    }
    if (done) this.stmt.count.run(name, kind, done, 0);
  };

  retry(message: StoredMessage, attempts: number, readyAt: number, error: string): Promise<void> {
    return this.write(() => {
      if (this.stmt.retry.run(attempts, readyAt, error, message.id).changes) this.stmt.count.run(message.name, message.kind, 0, 1);
    });
  }

  deadLetter(message: StoredMessage, attempts: number, error: string, failedAt: number): Promise<void> {
    return this.write(() => {
      if (this.stmt.deadLetter.run(attempts, error, failedAt, ++this.seq, message.id).changes) {
        this.stmt.count.run(message.name, message.kind, 0, 1);
      }
    });
  }

  deadLetterLane(lane: string, error: string, failedAt: number): Promise<number> {
    return this.write(() => {
      const ids = this.stmt.laneIds.all(lane) as Array<{ id: string }>;
      for (const { id } of ids) this.stmt.markDead.run(error, failedAt, ++this.seq, id);
      return ids.length;
    });
  }

  redrive(name: string, id: string | null, now: number): Promise<StoredMessage[]> {
    return this.write(() => {
      const ids = (id === null ? this.stmt.deadIds.all(name) : this.stmt.deadOne.all(name, id)) as Array<{ id: string }>;
      const moved: StoredMessage[] = [];
      for (const row of ids) {
        this.stmt.redrive.run(now, ++this.seq, row.id);
        moved.push(toMessage(this.stmt.byId.get(row.id) as Row));
      }
      return moved;
    });
  }

  discard(name: string, id: string): Promise<boolean> {
    return this.write(() => this.stmt.discard.run(name, id).changes > 0);
  }

  dlqPage(name: string, offset: number, limit: number): { messages: StoredMessage[]; total: number } {
    const rows = this.stmt.dlqPage.all(name, limit, offset) as Row[];
    return { messages: rows.map(toMessage), total: this.dlqCount(name) };
  }

  dlqCount(name: string): number {
    return (this.stmt.dlqCount.get(name) as { n: number }).n;
  }

  pendingCount(name: string): number {
    return (this.stmt.pendingCount.get(name) as { n: number }).n;
  }

  names(): NameRef[] {
    return this.stmt.names.all() as NameRef[];
  }

  counters(name: string): { delivered: number; failed: number } {
    const row = this.stmt.counters.get(name) as { delivered: number; failed: number } | undefined;
    return row ?? { delivered: 0, failed: 0 };
  }

  subscribers(): SubscriberRecord[] {
    const rows = this.stmt.subscribers.all() as Array<{ topic: string; function_id: string; config: string }>;
    return rows.map((r) => ({ topic: r.topic, functionId: r.function_id, config: JSON.parse(r.config) }));
  }

  saveSubscriber(record: SubscriberRecord): Promise<void> {
    return this.write(() => {
      this.stmt.saveSubscriber.run(record.topic, record.functionId, JSON.stringify(record.config ?? {}));
    });
  }

  deleteSubscriber(topic: string, functionId: string): Promise<void> {
    return this.write(() => {
      this.stmt.deleteSubscriber.run(topic, functionId);
    });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    release(this.shared);
  }

  /**
   * Queue a write for the shared group commit. `atomic`: in a savepoint of its own (a nested
   * transaction), so that a write that fails half way (a duplicate id) leaves nothing behind.
   */
  private write<T>(run: () => T, durable = true, atomic = true): Promise<T> {
    if (this.closed) return Promise.reject(new Error('queue store is closed'));
    return this.shared.write(atomic ? () => this.savepoint(run) as T : run, durable);
  }
}
