/**
 * Storage adapters shared by modules (state, stream, …): one small interface, three backends
 * picked by config — `memory`, `sqlite` (file_based, WAL) and `redis`.
 *
 * A store holds JSON values under (scope, key). Scopes are the state module's groups or a stream's
 * `stream_name/group_id`. Every write is durable when the promise resolves (for persistent backends).
 */
export interface KvEntry {
  key: string;
  value: unknown;
}

export interface KvStore {
  get(scope: string, key: string): Promise<unknown | undefined>;
  /** Store `value`; resolves the previous value (undefined when there was none). */
  set(scope: string, key: string, value: unknown): Promise<unknown | undefined>;
  /** Remove; resolves the previous value (undefined when there was none). */
  delete(scope: string, key: string): Promise<unknown | undefined>;
  /**
   * Atomic read-modify-write: `fn` gets the current value (undefined when absent) and returns the
   * new one. Concurrent updates of one key never lose a write.
   */
  update(scope: string, key: string, fn: (current: unknown | undefined) => unknown): Promise<{ old: unknown | undefined; value: unknown }>;
  list(scope: string, options?: { offset?: number; limit?: number; prefix?: string }): Promise<KvEntry[]>;
  count(scope: string): Promise<number>;
  /** Scopes that hold at least one key, sorted. */
  scopes(prefix?: string): Promise<string[]>;
  close(): Promise<void>;
}

/** Adapter selection as written in config.yaml (`adapter: {name, config}`, spec §7.2). */
export type StoreAdapterConfig =
  | { name: 'kv'; config?: { store_method?: 'in_memory' | 'file_based'; file_path?: string } }
  | { name: 'memory' }
  | { name: 'redis'; config: { redis_url: string; key_prefix?: string } };
