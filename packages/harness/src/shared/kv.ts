import type { EngClient } from '@eng/sdk';

/**
 * A durable key-value store over the engine's `state::*` functions (an ordinary worker's way to
 * persist: the engine's state module keeps it in memory, SQLite or Redis as configured).
 *
 * Writes of one key are ordered and coalesced: while a write of a key is in flight, later writes
 * of that key wait, and only the newest waiting value is sent once the wire is free. Each caller's
 * promise resolves when its value, or a newer one, is stored. A streaming writer that updates one
 * entry per chunk therefore never queues more than one pending write per key.
 */
export class StateKv {
  private readonly queues = new Map<string, KeyQueue>();

  constructor(
    private readonly client: EngClient,
    private readonly options: { timeoutMs?: number } = {},
  ) {}

  async get<T>(scope: string, key: string): Promise<T | undefined> {
    const value = await this.client.call<T | null | undefined>('state::get', { scope, key }, { timeoutMs: this.options.timeoutMs });
    return value === null ? undefined : value;
  }

  set(scope: string, key: string, value: unknown): Promise<void> {
    return this.enqueue(scope, key, { value });
  }

  delete(scope: string, key: string): Promise<void> {
    return this.enqueue(scope, key, { delete: true });
  }

  /** Every entry of a scope, sorted by key (read in pages of `pageSize`). */
  async list<T>(scope: string, options: { prefix?: string; pageSize?: number } = {}): Promise<Array<{ key: string; value: T }>> {
    const limit = options.pageSize ?? 1000;
    const out: Array<{ key: string; value: T }> = [];
    for (let offset = 0; ; offset += limit) {
      const page = await this.client.call<{ items: Array<{ key: string; value: T }>; total: number }>(
        'state::list',
        { scope, with_keys: true, offset, limit, ...(options.prefix ? { prefix: options.prefix } : {}) },
        { timeoutMs: this.options.timeoutMs },
      );
      out.push(...page.items);
      if (page.items.length < limit) return out;
    }
  }

  /** Remove every key of a scope. */
  async clear(scope: string): Promise<void> {
    const entries = await this.list(scope);
    await Promise.all(entries.map((entry) => this.delete(scope, entry.key)));
  }

  /** Resolves once every write queued so far is stored (or has failed). */
  async flush(): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.idle()));
  }

  private enqueue(scope: string, key: string, op: Op): Promise<void> {
    const id = `${scope}\u0000${key}`;
    let queue = this.queues.get(id);
    if (!queue) {
      queue = new KeyQueue(
        (o) => this.write(scope, key, o),
        () => this.queues.delete(id),
      );
      this.queues.set(id, queue);
    }
    return queue.push(op);
  }

  private async write(scope: string, key: string, op: Op): Promise<void> {
    if ('delete' in op) await this.client.call('state::delete', { scope, key }, { timeoutMs: this.options.timeoutMs });
    else await this.client.call('state::set', { scope, key, value: op.value }, { timeoutMs: this.options.timeoutMs });
  }
}

type Op = { value: unknown } | { delete: true };
type Waiter = { resolve: () => void; reject: (err: unknown) => void };

class KeyQueue {
  private inflight: Promise<void> | null = null;
  private next: { op: Op; waiters: Waiter[] } | null = null;

  constructor(
    private readonly write: (op: Op) => Promise<void>,
    private readonly onEmpty: () => void,
  ) {}

  push(op: Op): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (this.next) {
        // a newer value supersedes the one still waiting; its caller is answered by this write
        this.next.op = op;
        this.next.waiters.push({ resolve, reject });
      } else this.next = { op, waiters: [{ resolve, reject }] };
      if (!this.inflight) this.drain();
    });
  }

  idle(): Promise<void> {
    return (this.inflight ?? Promise.resolve()).then(
      () => (this.inflight ? this.idle() : undefined),
      () => (this.inflight ? this.idle() : undefined),
    );
  }

  private drain(): void {
    const batch = this.next;
    if (!batch) {
      this.inflight = null;
      this.onEmpty();
      return;
    }
    this.next = null;
    this.inflight = this.write(batch.op).then(
      () => {
        for (const w of batch.waiters) w.resolve();
        this.drain();
      },
      (err) => {
        for (const w of batch.waiters) w.reject(err);
        this.drain();
      },
    );
  }
}
