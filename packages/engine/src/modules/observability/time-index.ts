/** One entry of a TimeIndex; keep it to remove the value later. */
export interface IndexEntry<T> {
  readonly t: number;
  readonly value: T;
  dead: boolean;
}

/**
 * Values kept sorted by a time key, so time-ordered queries and time-range filters never sort or
 * scan outside the range. Telemetry arrives almost in time order, so an insert is nearly always
 * an append; the oldest end is the other common place (a child whose evicted parent leaves it a
 * root), so the array keeps a gap in front and an insert moves whichever side is shorter. Removal
 * marks a tombstone; the array is compacted once tombstones outnumber the live entries, which
 * keeps ring eviction O(1) amortised.
 */
export class TimeIndex<T> {
  private entries: Array<IndexEntry<T>> = [];
  /** Slots before `start` are the front gap (unused). */
  private start = 0;
  private dead = 0;

  get size(): number {
    return this.entries.length - this.start - this.dead;
  }

  insert(t: number, value: T): IndexEntry<T> {
    const entry: IndexEntry<T> = { t, value, dead: false };
    const entries = this.entries;
    const last = entries[entries.length - 1];
    if (entries.length === this.start || (last as IndexEntry<T>).t <= t) {
      entries.push(entry);
      return entry;
    }
    let position = this.upperBound(t);
    if (position - this.start < entries.length - position) {
      // nearer the front: shift the few older entries one slot into the gap
      if (this.start === 0) {
        const gap = this.openFrontGap();
        position += gap;
      }
      const list = this.entries;
      for (let i = this.start; i < position; i++) list[i - 1] = list[i] as IndexEntry<T>;
      this.start--;
      list[position - 1] = entry;
      return entry;
    }
    entries.splice(position, 0, entry);
    return entry;
  }

  remove(entry: IndexEntry<T>): void {
    if (entry.dead) return;
    entry.dead = true;
    this.dead++;
    // eviction takes the oldest: drop tombstones off the front at once, so the front stays cheap
    const entries = this.entries as Array<IndexEntry<T> | undefined>;
    while (this.start < entries.length && (entries[this.start] as IndexEntry<T>).dead) {
      entries[this.start] = undefined;
      this.start++;
      this.dead--;
    }
    const live = entries.length - this.start;
    if ((this.dead > 1024 && this.dead > live / 2) || (this.start > 4096 && this.start > live)) {
      this.entries = this.entries.slice(this.start).filter((e) => !e.dead);
      this.start = 0;
      this.dead = 0;
    }
  }

  clear(): void {
    this.entries = [];
    this.start = 0;
    this.dead = 0;
  }

  /** Re-allocate with free slots in front; returns how far the entries moved. */
  private openFrontGap(): number {
    const gap = Math.max(64, this.entries.length >> 2);
    const grown = new Array<IndexEntry<T>>(gap + this.entries.length);
    for (let i = 0; i < this.entries.length; i++) grown[gap + i] = this.entries[i] as IndexEntry<T>;
    this.entries = grown;
    this.start = gap;
    return gap;
  }

  /**
   * Visit live values with `from <= t <= to`, ascending or descending. The visitor returns false
   * to stop early.
   */
  visit(visitor: (value: T, t: number) => boolean | undefined, options: { from?: number; to?: number; descending?: boolean } = {}): void {
    const entries = this.entries;
    const lo = options.from === undefined ? this.start : this.lowerBound(options.from);
    const hi = options.to === undefined ? entries.length : this.upperBound(options.to);
    if (options.descending) {
      for (let i = hi - 1; i >= lo; i--) {
        const e = entries[i] as IndexEntry<T>;
        if (!e.dead && visitor(e.value, e.t) === false) return;
      }
      return;
    }
    for (let i = lo; i < hi; i++) {
      const e = entries[i] as IndexEntry<T>;
      if (!e.dead && visitor(e.value, e.t) === false) return;
    }
  }

  /** First index whose t >= value. */
  private lowerBound(value: number): number {
    let lo = this.start;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.entries[mid] as IndexEntry<T>).t < value) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** First index whose t > value. */
  private upperBound(value: number): number {
    let lo = this.start;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.entries[mid] as IndexEntry<T>).t <= value) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/**
 * Entry codes (numbers naming a stored record, see span-store.ts) kept sorted by a time key, in
 * two typed arrays: no object per entry, and moving entries is a memmove. An entry is dead once
 * `resolve` no longer finds its record; the owner says when one dies (`kill`), dead entries at the
 * front are dropped as inserts come (eviction takes the oldest), and the arrays are compacted once
 * the dead outnumber the live. Inserts are nearly always appends (telemetry arrives almost in time
 * order); an out-of-order one moves whichever side of it is shorter, into the free room in front
 * or at the end.
 */
export class SlotTimeIndex<T> {
  private ts = new Float64Array(256);
  private codes = new Float64Array(256);
  /** Entries are `start <= i < end`. */
  private start = 0;
  private end = 0;
  private dead = 0;
  private live = 0;

  constructor(private readonly resolve: (code: number) => T | undefined) {}

  get size(): number {
    return this.live;
  }

  insert(t: number, code: number): void {
    this.live++;
    this.trimFront();
    if (this.end === this.start || (this.ts[this.end - 1] as number) <= t) {
      if (this.end === this.ts.length) this.makeRoom();
      this.ts[this.end] = t;
      this.codes[this.end] = code;
      this.end++;
      return;
    }
    let position = this.upperBound(t);
    if (this.start > 0 && position - this.start < this.end - position) {
      // nearer the front, with room there: shift the few older entries one slot down
      this.ts.copyWithin(this.start - 1, this.start, position);
      this.codes.copyWithin(this.start - 1, this.start, position);
      this.start--;
      this.ts[position - 1] = t;
      this.codes[position - 1] = code;
      return;
    }
    if (this.end === this.ts.length) position -= this.makeRoom();
    this.ts.copyWithin(position + 1, position, this.end);
    this.codes.copyWithin(position + 1, position, this.end);
    this.ts[position] = t;
    this.codes[position] = code;
    this.end++;
  }

  /** One entry died (its record went or left this index). */
  kill(): void {
    this.live--;
    this.dead++;
    if (this.dead > 1024 && this.dead > this.live) this.compact();
  }

  private trimFront(): void {
    while (this.start < this.end && this.dead > 0 && this.resolve(this.codes[this.start] as number) === undefined) {
      this.start++;
      this.dead--;
    }
  }

  /** Free room at the end: move the entries down over the dropped front, or grow. Returns how far they moved down. */
  private makeRoom(): number {
    const n = this.end - this.start;
    const moved = this.start;
    if (this.start * 4 >= this.ts.length) {
      this.ts.copyWithin(0, this.start, this.end);
      this.codes.copyWithin(0, this.start, this.end);
    } else {
      const ts = new Float64Array(this.ts.length * 2);
      const codes = new Float64Array(this.ts.length * 2);
      ts.set(this.ts.subarray(this.start, this.end));
      codes.set(this.codes.subarray(this.start, this.end));
      this.ts = ts;
      this.codes = codes;
    }
    this.start = 0;
    this.end = n;
    return moved;
  }

  private compact(): void {
    let w = 0;
    for (let i = this.start; i < this.end; i++) {
      const code = this.codes[i] as number;
      if (this.resolve(code) === undefined) continue;
      this.ts[w] = this.ts[i] as number;
      this.codes[w] = code;
      w++;
    }
    this.start = 0;
    this.end = w;
    this.dead = 0;
    this.live = w;
  }

  clear(): void {
    this.ts = new Float64Array(256);
    this.codes = new Float64Array(256);
    this.start = 0;
    this.end = 0;
    this.dead = 0;
    this.live = 0;
  }

  /**
   * Visit live values with `from <= t <= to`, ascending or descending. The visitor returns false
   * to stop early.
   */
  visit(visitor: (value: T, t: number) => boolean | undefined, options: { from?: number; to?: number; descending?: boolean } = {}): void {
    const ts = this.ts;
    const codes = this.codes;
    const lo = options.from === undefined ? this.start : this.lowerBound(options.from);
    const hi = options.to === undefined ? this.end : this.upperBound(options.to);
    if (options.descending) {
      for (let i = hi - 1; i >= lo; i--) {
        const value = this.resolve(codes[i] as number);
        if (value !== undefined && visitor(value, ts[i] as number) === false) return;
      }
      return;
    }
    for (let i = lo; i < hi; i++) {
      const value = this.resolve(codes[i] as number);
      if (value !== undefined && visitor(value, ts[i] as number) === false) return;
    }
  }

  /** First index whose t >= value. */
  private lowerBound(value: number): number {
    let lo = this.start;
    let hi = this.end;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.ts[mid] as number) < value) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** First index whose t > value. */
  private upperBound(value: number): number {
    let lo = this.start;
    let hi = this.end;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.ts[mid] as number) <= value) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
