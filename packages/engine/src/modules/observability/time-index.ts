/** One entry of a TimeIndex; keep it to remove the value later. */
export interface IndexEntry<T> {
  readonly t: number;
  readonly value: T;
  dead: boolean;
}

/**
 * Values kept sorted by a time key, so time-ordered queries and time-range filters never sort or
 * scan outside the range. Telemetry arrives almost in time order, so an insert is nearly always
 * an append. Removal marks a tombstone; the array is compacted once tombstones outnumber the live
 * entries, which keeps ring eviction O(1) amortised.
 */
export class TimeIndex<T> {
  private entries: IndexEntry<T>[] = [];
  private dead = 0;

  get size(): number {
    return this.entries.length - this.dead;
  }

  insert(t: number, value: T): IndexEntry<T> {
    const entry: IndexEntry<T> = { t, value, dead: false };
    const entries = this.entries;
    const last = entries[entries.length - 1];
    if (!last || last.t <= t) {
      entries.push(entry);
      return entry;
    }
    entries.splice(this.upperBound(t), 0, entry);
    return entry;
  }

  remove(entry: IndexEntry<T>): void {
    if (entry.dead) return;
    entry.dead = true;
    this.dead++;
    if (this.dead > 1024 && this.dead > this.entries.length / 2) {
      this.entries = this.entries.filter((e) => !e.dead);
      this.dead = 0;
    }
  }

  clear(): void {
    this.entries = [];
    this.dead = 0;
  }

  /**
   * Visit live values with `from <= t <= to`, ascending or descending. The visitor returns false
   * to stop early.
   */
  visit(visitor: (value: T, t: number) => boolean | undefined, options: { from?: number; to?: number; descending?: boolean } = {}): void {
    const entries = this.entries;
    const lo = options.from === undefined ? 0 : this.lowerBound(options.from);
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
    let lo = 0;
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
    let lo = 0;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.entries[mid] as IndexEntry<T>).t <= value) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
