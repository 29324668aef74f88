import { KEEP_CURRENT, type KvEntry, type KvStore, type ListOptions, type UpdateResult } from './types.ts';

/**
 * In-process store (`store_method: in_memory`): lost on restart. Values are kept as JSON text so
 * a caller mutating what it got back never changes what is stored, as with the other backends.
 */
export class MemoryKvStore implements KvStore {
  private readonly scopesMap = new Map<string, Map<string, string>>();

  async get(scope: string, key: string): Promise<unknown | undefined> {
    return decode(this.scopesMap.get(scope)?.get(key));
  }

  async getText(scope: string, key: string): Promise<string | undefined> {
    return this.scopesMap.get(scope)?.get(key);
  }

  readTextNow(scope: string, key: string): string | undefined {
    return this.scopesMap.get(scope)?.get(key);
  }

  async setText(scope: string, key: string, text: string): Promise<string | undefined> {
    return this.writeTextNow(scope, key, text);
  }

  writeTextNow(scope: string, key: string, text: string): string | undefined {
    let entries = this.scopesMap.get(scope);
    if (!entries) {
      entries = new Map();
      this.scopesMap.set(scope, entries);
    }
    const old = entries.get(key);
    entries.set(key, text);
    return old;
  }

  async set(scope: string, key: string, value: unknown): Promise<unknown | undefined> {
    const text = encode(value);
    let entries = this.scopesMap.get(scope);
    if (!entries) {
      entries = new Map();
      this.scopesMap.set(scope, entries);
    }
    const old = entries.get(key);
    entries.set(key, text);
    return decode(old);
  }

  async delete(scope: string, key: string): Promise<unknown | undefined> {
    const entries = this.scopesMap.get(scope);
    const old = entries?.get(key);
    if (entries && old !== undefined) {
      entries.delete(key);
      if (entries.size === 0) this.scopesMap.delete(scope);
    }
    return decode(old);
  }

  async update(scope: string, key: string, fn: (current: unknown | undefined) => unknown): Promise<UpdateResult> {
    // single-threaded: read, compute and write happen without an await in between, so it is atomic
    const oldText = this.scopesMap.get(scope)?.get(key);
    const old = decode(oldText);
    const next = fn(decode(oldText));
    if (next === KEEP_CURRENT) return { old, value: old, written: false };
    await this.set(scope, key, next);
    return { old, value: decode(encode(next)), written: true };
  }

  async list(scope: string, options: ListOptions = {}): Promise<KvEntry[]> {
    const entries = this.scopesMap.get(scope);
    if (!entries) return [];
    const keys = matchingKeys(entries, options.prefix).sort(compareKeys);
    const offset = options.offset ?? 0;
    const page = options.limit === undefined ? keys.slice(offset) : keys.slice(offset, offset + options.limit);
    return page.map((key) => ({ key, value: decode(entries.get(key)) }));
  }

  async count(scope: string, prefix?: string): Promise<number> {
    const entries = this.scopesMap.get(scope);
    if (!entries) return 0;
    return prefix ? matchingKeys(entries, prefix).length : entries.size;
  }

  async scopes(prefix?: string): Promise<string[]> {
    return [...this.scopesMap.keys()].filter((s) => !prefix || s.startsWith(prefix)).sort(compareKeys);
  }

  async close(): Promise<void> {
    this.scopesMap.clear();
  }
}

function matchingKeys(entries: Map<string, string>, prefix: string | undefined): string[] {
  const keys = [...entries.keys()];
  return prefix ? keys.filter((k) => k.startsWith(prefix)) : keys;
}

/** Code-point order, the same order SQLite's BINARY collation gives UTF-8 text. */
export function compareKeys(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

/** UTF-16 units ranked so surrogates (astral code points) sort after U+E000..U+FFFF. */
function codePointRank(unit: number): number {
  if (unit >= 0xd800 && unit <= 0xdfff) return unit + 0x2000;
  if (unit >= 0xe000) return unit - 0x800;
  return unit;
}

export function encode(value: unknown): string {
  const text = JSON.stringify(value);
  // JSON.stringify(undefined) is undefined: store JSON null, which is what the wire would carry
  return text === undefined ? 'null' : text;
}

export function decode(text: string | null | undefined): unknown | undefined {
  return text === undefined || text === null ? undefined : JSON.parse(text);
}
