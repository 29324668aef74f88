import { EngError, ErrorCode, type LogsListInput, type StoredLog } from '@eng/protocol';
import { normaliseSeverityText } from './otlp-decode.ts';
import { type IndexEntry, TimeIndex } from './time-index.ts';

// spec: engine-protocol §4.3 (`engine::logs::list`: newest first, total before pagination), seed §2.7.

interface LogRec {
  log: StoredLog;
  slot: number;
  /** Estimated cost counted against the byte budget (limits.ts). */
  bytes: number;
  entry: IndexEntry<LogRec>;
  bodyLc?: string;
}

/**
 * Bounded log store (`logs_max_count`, `logs_max_bytes`, `logs_retention_seconds`): a ring in
 * arrival order for eviction (oldest first, by count and by estimated bytes), a timestamp index
 * for newest-first reads and time ranges, and a trace-id index.
 */
export class LogStore {
  private ring: Array<LogRec | undefined>;
  private head = 0;
  /** Where the search for the oldest record starts: slots from here up to `head` hold records in arrival order (with holes the sweep left). */
  private tail = 0;
  private count = 0;
  private readonly byTime = new TimeIndex<LogRec>();
  private readonly byTrace = new Map<string, Set<LogRec>>();
  evicted = 0;
  /** Estimated bytes of the stored records. */
  bytes = 0;

  constructor(
    readonly capacity: number,
    private readonly retentionMs: number,
    readonly maxBytes = Number.POSITIVE_INFINITY,
  ) {
    this.ring = new Array(capacity);
  }

  get size(): number {
    return this.count;
  }

  /** Store a record; `bytes` is its estimated cost. Stored even when it alone is over the budget. */
  add(log: StoredLog, bytes = 0): void {
    while (this.count > 0 && this.bytes + bytes > this.maxBytes) this.evictOldest();
    const occupant = this.ring[this.head];
    if (occupant) {
      // the ring went round: the occupant is the oldest record, and the next oldest follows it
      this.remove(occupant);
      this.evicted++;
      this.tail = (this.head + 1) % this.capacity;
    }
    const rec: LogRec = { log, slot: this.head, bytes, entry: undefined as never };
    rec.entry = this.byTime.insert(log.timestamp_unix_nano, rec);
    if (log.trace_id) {
      const set = this.byTrace.get(log.trace_id);
      if (set) set.add(rec);
      else this.byTrace.set(log.trace_id, new Set([rec]));
    }
    this.ring[this.head] = rec;
    this.head = (this.head + 1) % this.capacity;
    this.count++;
    this.bytes += bytes;
  }

  private evictOldest(): void {
    for (let step = 0; step < this.capacity; step++) {
      const rec = this.ring[this.tail];
      this.tail = (this.tail + 1) % this.capacity;
      if (rec) {
        this.remove(rec);
        this.evicted++;
        return;
      }
    }
  }

  /** Drop records older than the retention window (run every 60 s, as iii does). */
  sweep(now = Date.now()): number {
    const cutoff = (now - this.retentionMs) * 1e6;
    const old: LogRec[] = [];
    this.byTime.visit(
      (rec) => {
        old.push(rec);
        return undefined;
      },
      { to: cutoff - 1 },
    );
    for (const rec of old) this.remove(rec);
    return old.length;
  }

  clear(): void {
    this.ring = new Array(this.capacity);
    this.head = 0;
    this.tail = 0;
    this.count = 0;
    this.bytes = 0;
    this.byTime.clear();
    this.byTrace.clear();
  }

  private remove(rec: LogRec): void {
    if (this.ring[rec.slot] !== rec) return;
    this.ring[rec.slot] = undefined;
    this.count--;
    this.bytes -= rec.bytes;
    this.byTime.remove(rec.entry);
    const traceId = rec.log.trace_id;
    if (traceId) {
      const set = this.byTrace.get(traceId);
      set?.delete(rec);
      if (set && set.size === 0) this.byTrace.delete(traceId);
    }
  }

  list(input: LogsListInput): { logs: StoredLog[]; total: number } {
    // records past retention never show, even between two 60 s sweeps (cheap: only old entries are visited)
    this.sweep();
    const from = input.start_time !== undefined ? input.start_time * 1e6 : undefined;
    const to = input.end_time !== undefined ? input.end_time * 1e6 : undefined;
    const levels = input.severity_text === undefined ? undefined : new Set([input.severity_text].flat().map(normaliseSeverityText));
    const search = input.search ? input.search.toLowerCase() : undefined;
    const service = input.service_name ? input.service_name.toLowerCase() : undefined;
    const spanId = input.span_id?.toLowerCase();
    const offset = input.offset ?? 0;
    const limit = input.limit ?? Number.POSITIVE_INFINITY;
    if (from !== undefined && to !== undefined && from > to) {
      throw new EngError(ErrorCode.DeserializationError, 'start_time: must not be after end_time');
    }

    const logs: StoredLog[] = [];
    let total = 0;
    const accept = (rec: LogRec) => {
      const log = rec.log;
      if (spanId !== undefined && log.span_id !== spanId) return;
      if (input.severity_min !== undefined && log.severity_number < input.severity_min) return;
      if (levels && !levels.has(log.severity_text)) return;
      if (service !== undefined && !log.service_name.toLowerCase().includes(service)) return;
      if (search !== undefined) {
        rec.bodyLc ??= log.body.toLowerCase();
        if (!rec.bodyLc.includes(search)) return;
      }
      if (total >= offset && logs.length < limit) logs.push(log);
      total++;
    };

    if (input.trace_id) {
      const set = this.byTrace.get(input.trace_id.toLowerCase());
      const recs = set ? [...set] : [];
      recs.sort((a, b) => b.log.timestamp_unix_nano - a.log.timestamp_unix_nano);
      for (const rec of recs) {
        const t = rec.log.timestamp_unix_nano;
        if ((from === undefined || t >= from) && (to === undefined || t <= to)) accept(rec);
      }
    } else {
      this.byTime.visit(
        (rec) => {
          accept(rec);
          return undefined;
        },
        { from, to, descending: true },
      );
    }
    return { logs, total };
  }
}
