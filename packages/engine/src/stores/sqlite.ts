import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { compareKeys, decode, encode } from './memory.ts';
import { KEEP_CURRENT, type KvEntry, type KvStore, type ListOptions, type UpdateResult } from './types.ts';

type Synchronous = 'full' | 'normal';

interface PendingWrite {
  run: () => unknown;
  durable: boolean;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type WriteOutcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * One SQLite connection per file, shared by every store on that file (state and stream may use
 * separate tables of one file). Writes are group-committed: all writes queued during one turn of
 * the event loop run in one transaction, and each promise resolves only after COMMIT returned.
 * With `synchronous=FULL` the commit is fsynced, so an acknowledged write survives `kill -9` and
 * power loss at the cost of one fsync per batch rather than per write.
 */
export class SharedDatabase {
  readonly db: Database.Database;
  private queue: PendingWrite[] = [];
  private scheduled = false;
  /** A read transaction this object opened and that is still open (see `read`). */
  private reading = false;
  private readonly begin: Database.Statement;
  private readonly commit: Database.Statement;
  private readonly endReadLater = () => this.endRead();
  private readonly syncOff: Database.Statement | null;
  private readonly syncOn: Database.Statement | null;
  /** One group commit's writes in one transaction (made once: better-sqlite3 builds a wrapper per `transaction` call). */
  private readonly runBatch: Database.Transaction<(batch: PendingWrite[], outcomes: WriteOutcome[]) => void>;
  refs = 0;

  constructor(
    readonly file: string,
    synchronous: Synchronous,
  ) {
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma(`synchronous = ${synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
    this.db.pragma('busy_timeout = 5000');
    this.begin = this.db.prepare('BEGIN');
    this.commit = this.db.prepare('COMMIT');
    // a batch of writes that need not survive a power loss commits without its fsync (see write)
    this.syncOff = synchronous === 'full' ? this.db.prepare('PRAGMA synchronous = NORMAL') : null;
    this.syncOn = synchronous === 'full' ? this.db.prepare('PRAGMA synchronous = FULL') : null;
    this.runBatch = this.db.transaction((batch: PendingWrite[], outcomes: WriteOutcome[]) => {
      for (const item of batch) {
        // one write's failure (its update function threw) must not undo the others
        try {
          outcomes.push({ ok: true, value: item.run() });
        } catch (error) {
          outcomes.push({ ok: false, error });
        }
      }
    });
  }

  /**
   * Run a read. In WAL mode every statement outside a transaction takes and drops a read lock on
   * the shared-memory index (two fcntl calls, most of a point read's cost); here the reads of one
   * event-loop turn share one read transaction instead, opened by the first and ended in the
   * check phase or before the next group commit, whichever comes first. A read therefore sees
   * what was committed when its turn's first read ran; the writes of this process are committed
   * in their own turn's check phase, as before.
   */
  read<T>(run: () => T): T {
    if (!this.reading && !this.db.inTransaction) {
      this.begin.run();
      this.reading = true;
      setImmediate(this.endReadLater);
    }
    return run();
  }

  /** End the turn's read transaction (nothing was written in it: no sync). */
  private endRead(): void {
    if (!this.reading) return;
    this.reading = false;
    if (this.db.open && this.db.inTransaction) this.commit.run();
  }

  /**
   * Queue a write for this turn's group commit. `durable: false` is for a write whose loss in a
   * power cut (not a crash of the process: the WAL is in the OS's hands once committed) is
   * harmless, e.g. a queue's acknowledgement (the message is delivered again: at-least-once). A
   * batch of only such writes commits without an fsync; the next durable commit fsyncs the WAL,
   * and them with it.
   */
  write<T>(run: () => T, durable = true): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ run, durable, resolve: resolve as (value: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    // a write transaction opened inside the read one would only be a savepoint
    this.endRead();
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    const outcomes: WriteOutcome[] = [];
    const lazy = this.syncOff !== null && batch.every((item) => !item.durable);
    if (lazy) this.syncOff?.run();
    try {
      this.runBatch.immediate(batch, outcomes);
    } catch (error) {
      for (const item of batch) item.reject(error);
      return;
    } finally {
      if (lazy) this.syncOn?.run();
    }
    batch.forEach((item, i) => {
      const outcome = outcomes[i] as (typeof outcomes)[number];
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.error);
    });
  }

  /** Run what is queued now (used before closing). */
  drain(): void {
    if (this.queue.length) this.flush();
    this.endRead();
  }
}

const openDatabases = new Map<string, SharedDatabase>();

export function acquire(file: string, synchronous: Synchronous): SharedDatabase {
  let shared = openDatabases.get(file);
  if (!shared) {
    shared = new SharedDatabase(file, synchronous);
    openDatabases.set(file, shared);
  }
  shared.refs++;
  return shared;
}

export function release(shared: SharedDatabase): void {
  shared.refs--;
  if (shared.refs > 0) return;
  shared.drain();
  openDatabases.delete(shared.file);
  shared.db.close();
}

const TABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `store_method: file_based`: a table `(scope, key) → JSON text` in a WAL-mode SQLite file. */
export class SqliteKvStore implements KvStore {
  private readonly shared: SharedDatabase;
  private readonly stmt: ReturnType<SqliteKvStore['prepare']>;
  private closed = false;

  constructor(file: string, options: { table: string; synchronous?: Synchronous }) {
    if (!TABLE_NAME.test(options.table)) throw new Error(`invalid table name "${options.table}"`);
    this.shared = acquire(file, options.synchronous ?? 'full');
    this.stmt = this.prepare(options.table);
  }

  private prepare(table: string) {
    const db = this.shared.db;
    db.exec(
      `CREATE TABLE IF NOT EXISTS ${table} (scope TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (scope, key)) WITHOUT ROWID`,
    );
    return {
      get: db.prepare<[string, string], { value: string }>(`SELECT value FROM ${table} WHERE scope = ? AND key = ?`),
      /** The same, giving the value's text itself rather than a row object. */
      value: db.prepare<[string, string], string>(`SELECT value FROM ${table} WHERE scope = ? AND key = ?`).pluck(),
      upsert: db.prepare<[string, string, string]>(
        `INSERT INTO ${table} (scope, key, value) VALUES (?, ?, ?) ON CONFLICT (scope, key) DO UPDATE SET value = excluded.value`,
      ),
      delete: db.prepare<[string, string]>(`DELETE FROM ${table} WHERE scope = ? AND key = ?`),
      list: db.prepare<[string, number, number], { key: string; value: string }>(
        `SELECT key, value FROM ${table} WHERE scope = ? ORDER BY key LIMIT ? OFFSET ?`,
      ),
      listPrefix: db.prepare<[string, string, string | Buffer, number, string, number, number], { key: string; value: string }>(
        `SELECT key, value FROM ${table} WHERE scope = ? AND key >= ? AND key < ? AND substr(key, 1, ?) = ? ORDER BY key LIMIT ? OFFSET ?`,
      ),
      count: db.prepare<[string], { n: number }>(`SELECT count(*) AS n FROM ${table} WHERE scope = ?`),
      countPrefix: db.prepare<[string, string, string | Buffer, number, string], { n: number }>(
        `SELECT count(*) AS n FROM ${table} WHERE scope = ? AND key >= ? AND key < ? AND substr(key, 1, ?) = ?`,
      ),
      scopes: db.prepare<[], { scope: string }>(`SELECT DISTINCT scope FROM ${table} ORDER BY scope`),
      scopesPrefix: db.prepare<[string, string | Buffer, number, string], { scope: string }>(
        `SELECT DISTINCT scope FROM ${table} WHERE scope >= ? AND scope < ? AND substr(scope, 1, ?) = ? ORDER BY scope`,
      ),
    };
  }

  async get(scope: string, key: string): Promise<unknown | undefined> {
    return decode(this.readTextNow(scope, key));
  }

  async getText(scope: string, key: string): Promise<string | undefined> {
    return this.readTextNow(scope, key);
  }

  readTextNow(scope: string, key: string): string | undefined {
    this.readScope = scope;
    this.readKey = key;
    return this.shared.read(this.readValue);
  }

  /** The read `readTextNow` runs (made once: no closure per call); its arguments are set just before. */
  private readScope = '';
  private readKey = '';
  private readonly readValue = (): string | undefined => this.stmt.value.get(this.readScope, this.readKey);

  setText(scope: string, key: string, text: string): Promise<string | undefined> {
    return this.shared.write(() => {
      const old = this.stmt.value.get(scope, key);
      this.stmt.upsert.run(scope, key, text);
      return old;
    });
  }

  set(scope: string, key: string, value: unknown): Promise<unknown | undefined> {
    const text = encode(value);
    return this.shared.write(() => {
      const old = this.stmt.get.get(scope, key)?.value;
      this.stmt.upsert.run(scope, key, text);
      return decode(old);
    });
  }

  delete(scope: string, key: string): Promise<unknown | undefined> {
    return this.shared.write(() => {
      const old = this.stmt.get.get(scope, key)?.value;
      if (old !== undefined) this.stmt.delete.run(scope, key);
      return decode(old);
    });
  }

  update(scope: string, key: string, fn: (current: unknown | undefined) => unknown): Promise<UpdateResult> {
    // runs inside the batch transaction: nothing else writes between the read and the write
    return this.shared.write(() => {
      const oldText = this.stmt.get.get(scope, key)?.value;
      const old = decode(oldText);
      const next = fn(decode(oldText));
      if (next === KEEP_CURRENT) return { old, value: old, written: false };
      const text = encode(next);
      this.stmt.upsert.run(scope, key, text);
      return { old, value: JSON.parse(text), written: true };
    });
  }

  async list(scope: string, options: ListOptions = {}): Promise<KvEntry[]> {
    const limit = options.limit ?? -1;
    const offset = options.offset ?? 0;
    const rows = options.prefix
      ? this.stmt.listPrefix.all(
          scope,
          options.prefix,
          upperBound(options.prefix),
          [...options.prefix].length,
          options.prefix,
          limit,
          offset,
        )
      : this.stmt.list.all(scope, limit, offset);
    return rows.map((row) => ({ key: row.key, value: JSON.parse(row.value) }));
  }

  async count(scope: string, prefix?: string): Promise<number> {
    if (!prefix) return this.stmt.count.get(scope)?.n ?? 0;
    return this.stmt.countPrefix.get(scope, prefix, upperBound(prefix), [...prefix].length, prefix)?.n ?? 0;
  }

  async scopes(prefix?: string): Promise<string[]> {
    const rows = prefix ? this.stmt.scopesPrefix.all(prefix, upperBound(prefix), [...prefix].length, prefix) : this.stmt.scopes.all();
    return rows.map((r) => r.scope).sort(compareKeys);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    release(this.shared);
  }
}

/**
 * The smallest string greater than every string starting with `prefix` (for an index range
 * scan); SQLite compares UTF-8 bytes, which is code-point order. Where no such string exists a
 * BLOB is returned: SQLite orders every TEXT value before every BLOB.
 */
function upperBound(prefix: string): string | Buffer {
  const points = [...prefix];
  while (points.length) {
    const last = (points.pop() as string).codePointAt(0) as number;
    if (last < 0x10ffff) {
      const next = last + 1 === 0xd800 ? 0xe000 : last + 1;
      return points.join('') + String.fromCodePoint(next);
    }
  }
  return Buffer.from([0xff]);
}
