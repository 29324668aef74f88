import { EngineFunction } from '@eng/protocol';
import type { CallRecord, InvocationObserver, InvokeOutcome } from '../../core/invoker.ts';

// spec: engine-protocol §4.3 `engine::metrics::list` (`engine_metrics`), §8.1 engine metric names.

const SERIES_SECONDS = 15 * 60;
// Latency histogram: log buckets 4% wide from 1 µs, so a percentile is off by at most 4%.
const GROWTH = 1.04;
const MIN_MS = 0.001;
const BUCKETS = Math.ceil(Math.log(3_600_000 / MIN_MS) / Math.log(GROWTH)) + 1;

/** Engine built-ins are the console's own polling; they stay out of the application's figures. */
function isBuiltin(functionId: string): boolean {
  return functionId.startsWith('engine::') && !functionId.startsWith('engine::queue::');
}

export interface EngineMetricsSnapshot {
  invocations: { total: number; success: number; error: number; deferred: number; by_function: Record<string, number> };
  workers: { spawns: number; deaths: number; active: number };
  performance: {
    avg_duration_ms: number;
    p50_duration_ms: number;
    p95_duration_ms: number;
    p99_duration_ms: number;
    min_duration_ms: number;
    max_duration_ms: number;
  };
}

export class EngineMetrics implements InvocationObserver {
  /**
   * `isPlumbing(id)`: functions registered with `metadata.internal` (the console's live hooks,
   * eng-mcp's change notifications) are system calls; like built-ins they stay out of the figures.
   */
  constructor(private readonly isPlumbing: (functionId: string) => boolean = () => false) {}

  private total = 0;
  private success = 0;
  private errors = 0;
  private deferred = 0;
  private readonly byFunction = new Map<string, number>();
  private readonly histogram = new Float64Array(BUCKETS);
  private sumMs = 0;
  private minMs = Number.POSITIVE_INFINITY;
  private maxMs = 0;
  spawns = 0;
  deaths = 0;
  // one slot per second of the last 15 minutes, for the console's mini-charts
  private readonly seriesSecond = new Float64Array(SERIES_SECONDS);
  private readonly seriesInvocations = new Uint32Array(SERIES_SECONDS);
  private readonly seriesErrors = new Uint32Array(SERIES_SECONDS);

  afterDispatch(call: CallRecord, outcome: InvokeOutcome, durationNs: bigint): void {
    if (call.functionId === EngineFunction.QueueEnqueue) {
      this.deferred++;
      return;
    }
    if (isBuiltin(call.functionId) || this.isPlumbing(call.functionId)) return;
    this.total++;
    if (outcome.ok) this.success++;
    else this.errors++;
    this.byFunction.set(call.functionId, (this.byFunction.get(call.functionId) ?? 0) + 1);
    const ms = Number(durationNs) / 1e6;
    this.sumMs += ms;
    if (ms < this.minMs) this.minMs = ms;
    if (ms > this.maxMs) this.maxMs = ms;
    const bucket = ms <= MIN_MS ? 0 : Math.min(BUCKETS - 1, Math.ceil(Math.log(ms / MIN_MS) / Math.log(GROWTH)));
    this.histogram[bucket] = (this.histogram[bucket] as number) + 1;

    const second = Math.floor(Date.now() / 1000);
    const slot = second % SERIES_SECONDS;
    if (this.seriesSecond[slot] !== second) {
      this.seriesSecond[slot] = second;
      this.seriesInvocations[slot] = 0;
      this.seriesErrors[slot] = 0;
    }
    this.seriesInvocations[slot] = (this.seriesInvocations[slot] as number) + 1;
    if (!outcome.ok) this.seriesErrors[slot] = (this.seriesErrors[slot] as number) + 1;
  }

  private percentile(p: number): number {
    if (this.total === 0) return 0;
    const rank = Math.ceil(p * this.total);
    let seen = 0;
    for (let i = 0; i < BUCKETS; i++) {
      seen += this.histogram[i] as number;
      if (seen >= rank) {
        const upper = MIN_MS * GROWTH ** i;
        return Math.min(this.maxMs, Math.max(this.minMs, upper));
      }
    }
    return this.maxMs;
  }

  snapshot(activeWorkers: number): EngineMetricsSnapshot {
    const round = (n: number) => Math.round(n * 1000) / 1000;
    return {
      invocations: {
        total: this.total,
        success: this.success,
        error: this.errors,
        deferred: this.deferred,
        by_function: Object.fromEntries(this.byFunction),
      },
      workers: { spawns: this.spawns, deaths: this.deaths, active: activeWorkers },
      performance: {
        avg_duration_ms: this.total ? round(this.sumMs / this.total) : 0,
        p50_duration_ms: round(this.percentile(0.5)),
        p95_duration_ms: round(this.percentile(0.95)),
        p99_duration_ms: round(this.percentile(0.99)),
        min_duration_ms: this.total ? round(this.minMs) : 0,
        max_duration_ms: round(this.maxMs),
      },
    };
  }

  /** Invocations and errors per `intervalSeconds` bucket over the last 15 minutes, oldest first. */
  series(intervalSeconds: number, now = Date.now()): Array<{ t: number; invocations: number; errors: number }> {
    const nowSecond = Math.floor(now / 1000);
    const first = Math.floor((nowSecond - SERIES_SECONDS + 1) / intervalSeconds) * intervalSeconds;
    const buckets: Array<{ t: number; invocations: number; errors: number }> = [];
    for (let start = first; start <= nowSecond; start += intervalSeconds) buckets.push({ t: start * 1000, invocations: 0, errors: 0 });
    for (let slot = 0; slot < SERIES_SECONDS; slot++) {
      const second = this.seriesSecond[slot] as number;
      if (second === 0 || second > nowSecond || second <= nowSecond - SERIES_SECONDS) continue;
      const bucket = buckets[Math.floor((second - first) / intervalSeconds)];
      if (!bucket) continue;
      bucket.invocations += this.seriesInvocations[slot] as number;
      bucket.errors += this.seriesErrors[slot] as number;
    }
    return buckets;
  }
}
