/**
 * Storage adapters shared by modules (state, stream, …): one small interface, three backends
 * picked by config — `memory`, `sqlite` (file_based, WAL) and `redis`.
 *
 * A store holds JSON values under (scope, key). Scopes are the state module's groups or a stream's
 * `stream_name/group_id`. Every write is durable when the promise resolves (for persistent backends).
 * Values go through JSON on the way in, so a caller never shares an object with the store.
 */
export interface KvEntry {
  key: string;
  value: unknown;
}

export interface ListOptions {
  offset?: number;
  limit?: number;
  /** Only keys that start with this string. */
  prefix?: string;
}

/** Returned by an `update` function to leave the stored value untouched (nothing is written). */
export const KEEP_CURRENT: unique symbol = Symbol('keep-current');

export interface UpdateResult {
  /** The value before the update (undefined when there was none). */
  old: unknown | undefined;
  /** The value after the update (the old one when `fn` returned KEEP_CURRENT). */
  value: unknown;
  /** False when `fn` returned KEEP_CURRENT. */
  written: boolean;
}

export interface KvStore {
  get(scope: string, key: string): Promise<unknown | undefined>;
  /** Store `value`; resolves the previous value (undefined when there was none). */
  set(scope: string, key: string, value: unknown): Promise<unknown | undefined>;
  /** The value's stored JSON text (undefined when absent), for callers that pass it on unparsed. */
  getText?(scope: string, key: string): Promise<string | undefined>;
  /** Store `text`, the JSON of a value, as it is; resolves the previous value's JSON text. */
  setText?(scope: string, key: string, text: string): Promise<string | undefined>;
  /**
   * `getText` answered in place, for stores whose reads never wait (memory, SQLite): the
   * state::get path then makes no promise. Throws what `getText` would reject with.
   */
  readTextNow?(scope: string, key: string): string | undefined;
  /** `setText` done in place, for stores whose writes never wait (memory): stored when it returns. */
  writeTextNow?(scope: string, key: string, text: string): string | undefined;
  /** Remove; resolves the previous value (undefined when there was none). */
  delete(scope: string, key: string): Promise<unknown | undefined>;
  /**
   * Atomic read-modify-write: `fn` gets the current value (undefined when absent) and returns the
   * new one, or KEEP_CURRENT. Concurrent updates of one key never lose a write. `fn` may run more
   * than once (optimistic backends retry on conflict), so it must not have side effects beyond
   * its return value; if it throws, nothing is written and the promise rejects with that error.
   */
  update(scope: string, key: string, fn: (current: unknown | undefined) => unknown): Promise<UpdateResult>;
  /** Entries of a scope sorted by key. */
  list(scope: string, options?: ListOptions): Promise<KvEntry[]>;
  /** Number of keys in a scope (those starting with `prefix` when given). */
  count(scope: string, prefix?: string): Promise<number>;
  /** Scopes that hold at least one key, sorted. */
  scopes(prefix?: string): Promise<string[]>;
  close(): Promise<void>;
}

/** Adapter selection as written in config.yaml (`adapter: {name, config}`, spec §7.2). */
export type StoreAdapterConfig =
  | {
      name: 'kv';
      config?: {
        store_method?: 'in_memory' | 'file_based';
        file_path?: string;
        /** `full` (default) survives power loss; `normal` survives a killed process only. */
        synchronous?: 'full' | 'normal';
      };
    }
  | { name: 'memory' }
  | { name: 'redis'; config: { redis_url: string; key_prefix?: string } };
