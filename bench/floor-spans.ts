import { randomBytes } from 'node:crypto';

/**
 * The least any engine keeping spans in memory can do per span, shared by bench/spans and
 * bench/http's floor: fresh random trace and span ids (cut from a pooled random hex string, as the
 * engine makes them), the W3C traceparent string handed to the call, one record holding the span's
 * fields and its attributes as a flat array, kept in a ring of `capacity` and in a Map by trace id
 * (the least a store answering "the spans of trace X" keeps), the oldest dropped from both.
 */
export interface FloorRecord {
  traceId: string;
  spanId: string;
  parentId: string | null;
  name: string;
  kind: string;
  start: number;
  end: number;
  status: number;
  attrs: string[];
}

export class FloorSpanStore {
  private pool = '';
  private offset = 0;
  private readonly ring: Array<FloorRecord | undefined>;
  private readonly byTrace = new Map<string, FloorRecord>();
  private head = 0;

  constructor(private readonly capacity = 100_000) {
    this.ring = new Array(capacity);
  }

  get size(): number {
    return this.byTrace.size;
  }

  private hex(chars: number): string {
    if (this.offset + chars > this.pool.length) {
      this.pool = randomBytes(2048).toString('hex');
      this.offset = 0;
    }
    const out = this.pool.slice(this.offset, this.offset + chars);
    this.offset += chars;
    return out;
  }

  /** Open a span: its record and the traceparent for the call made inside it. */
  open(name: string, attrs: string[]): { record: FloorRecord; traceparent: string } {
    const traceId = this.hex(32);
    const spanId = this.hex(16);
    const record: FloorRecord = {
      traceId,
      spanId,
      parentId: null,
      name,
      kind: 'server',
      start: performance.now(),
      end: 0,
      status: 0,
      attrs,
    };
    return { record, traceparent: `00-${traceId}-${spanId}-01` };
  }

  /** End and keep it, dropping the oldest when full. */
  close(record: FloorRecord, status: number): void {
    record.end = performance.now();
    record.status = status;
    const old = this.ring[this.head];
    if (old) this.byTrace.delete(old.traceId);
    this.ring[this.head] = record;
    this.byTrace.set(record.traceId, record);
    this.head = (this.head + 1) % this.capacity;
  }
}
