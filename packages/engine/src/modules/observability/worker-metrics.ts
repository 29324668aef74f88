import type { WorkerMetrics } from '@eng/protocol';
import type { Core } from '../../core/core.ts';
import { DEFAULT_LIMITS, RecordLimiter } from './limits.ts';
import type { MetricPoint } from './otlp-decode.ts';

// spec: engine-protocol §8.1 — worker gauges (`iii.worker.*`, attributes `worker.id`/`worker.name`)
// become `latest_metrics` of the worker record; every SDK metric point is kept for `metrics::list`.

const GAUGE_FIELDS: Record<string, keyof WorkerMetrics> = {
  'iii.worker.memory.heap_used': 'memory_heap_used',
  'iii.worker.memory.heap_total': 'memory_heap_total',
  'iii.worker.memory.rss': 'memory_rss',
  'iii.worker.memory.external': 'memory_external',
  'iii.worker.cpu.percent': 'cpu_percent',
  'iii.worker.cpu.user_micros': 'cpu_user_micros',
  'iii.worker.cpu.system_micros': 'cpu_system_micros',
  'iii.worker.event_loop.lag_ms': 'event_loop_lag_ms',
  'iii.worker.uptime_seconds': 'uptime_seconds',
};

export class WorkerMetricsStore {
  private points: MetricPoint[] = [];

  constructor(
    private readonly core: Core,
    private readonly maxCount: number,
    private readonly retentionMs: number,
    private readonly limiter = new RecordLimiter(DEFAULT_LIMITS),
  ) {}

  /** Points from one MTRC frame; `connectionWorkerId` is the sender when it came over `/`. */
  ingest(received: MetricPoint[], connectionWorkerId: string | null): void {
    // held to the limits (names and labels), as spans and logs are: the store is bounded by count only
    const points = received.map((point) => this.limiter.metric(point));
    const updates = new Map<string, Partial<WorkerMetrics>>();
    for (const point of points) {
      const field = GAUGE_FIELDS[point.name.replace(/^eng\./, 'iii.')];
      if (!field) continue;
      const workerId = typeof point.attributes['worker.id'] === 'string' ? (point.attributes['worker.id'] as string) : connectionWorkerId;
      if (!workerId) continue;
      const update = updates.get(workerId) ?? {};
      (update as Record<string, number>)[field] = point.value;
      update.timestamp_ms = Math.max(update.timestamp_ms ?? 0, point.timestamp_ms);
      updates.set(workerId, update);
    }
    for (const [workerId, update] of updates) {
      const worker = this.core.workers.get(workerId);
      if (!worker) continue;
      worker.latestMetrics = {
        ...(worker.latestMetrics ?? {}),
        ...update,
        timestamp_ms: update.timestamp_ms ?? Date.now(),
        runtime: worker.info.runtime ?? 'node',
      };
    }
    for (const point of points) this.points.push(point);
    if (this.points.length > this.maxCount * 1.25) this.points = this.points.slice(this.points.length - this.maxCount);
  }

  sweep(now = Date.now()): void {
    const cutoff = now - this.retentionMs;
    if (this.points.length > 0 && (this.points[0] as MetricPoint).timestamp_ms < cutoff) {
      this.points = this.points.filter((p) => p.timestamp_ms >= cutoff);
    }
  }

  list(filter: { start_time?: number; end_time?: number; metric_name?: string }): MetricPoint[] {
    const out: MetricPoint[] = [];
    const start = Math.max(0, this.points.length - this.maxCount);
    for (let i = start; i < this.points.length; i++) {
      const p = this.points[i] as MetricPoint;
      if (filter.metric_name && p.name !== filter.metric_name) continue;
      if (filter.start_time !== undefined && p.timestamp_ms < filter.start_time) continue;
      if (filter.end_time !== undefined && p.timestamp_ms > filter.end_time) continue;
      out.push(p);
    }
    return out;
  }

  get size(): number {
    return Math.min(this.points.length, this.maxCount);
  }

  clear(): void {
    this.points = [];
  }
}
