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
