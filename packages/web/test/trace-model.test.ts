import type { StoredSpan } from '@eng/protocol';
import { describe, expect, it } from 'vitest';
import { buildTraceModel, serviceBreakdown } from '../src/components/traces/trace-model.ts';
import { formatDuration } from '../src/lib/format.ts';

// seed 2.6 Service Breakdown (spans, average duration, error rate) and the durations every trace
// view shows: nanosecond epochs as doubles carry ~256 ns of noise, so durations are rounded to
// the microsecond like the engine's `duration_ms`.

// a realistic epoch in ns (beyond 2^53, so not exact): computed naively, the 25 ms span below
// reads 24.99976 and the 10 ms one 10.00024 ("10.0 ms"), and the gateway average 102.4999 ("102 ms")
const T0 = 1_763_900_000_777 * 1e6;
function span(id: string, parent: string | null, service: string, startMs: number, durationMs: number, status = 'ok'): StoredSpan {
  return {
    trace_id: 'a'.repeat(32),
    span_id: id.padStart(16, '0'),
    parent_span_id: parent ? parent.padStart(16, '0') : null,
    name: `span ${id}`,
    start_time_unix_nano: T0 + startMs * 1e6,
    end_time_unix_nano: T0 + (startMs + durationMs) * 1e6,
    status,
    attributes: [],
    events: [],
    links: [],
    service_name: service,
  } as unknown as StoredSpan;
}

describe('trace model durations and service breakdown', () => {
  it('reads whole-millisecond spans as whole milliseconds', () => {
    const model = buildTraceModel([span('1', null, 'gateway', 0, 180), span('2', '1', 'gateway', 140, 25), span('3', '1', 'cart', 10, 10)]);
    expect(model.nodes.map((n) => n.durationMs)).toEqual([180, 10, 25]);
    expect(model.durationMs).toBe(180);
    expect(formatDuration(model.nodes[1]?.durationMs as number)).toBe('10 ms');
  });

  it('averages per service and counts the error rate', () => {
    const model = buildTraceModel([
      span('1', null, 'gateway', 0, 180),
      span('2', '1', 'gateway', 140, 25),
      span('3', '1', 'payments', 10, 120, 'error'),
      span('4', '3', 'payments', 20, 30),
      span('5', '3', 'payments', 60, 30),
    ]);
    const stats = Object.fromEntries(serviceBreakdown(model).map((s) => [s.service, s]));
    expect(stats.gateway).toMatchObject({ spans: 2, avgMs: 102.5, errors: 0, errorRate: 0 });
    expect(formatDuration(stats.gateway?.avgMs as number)).toBe('103 ms');
    expect(stats.payments).toMatchObject({ spans: 3, avgMs: 60, errors: 1 });
    expect(stats.payments?.errorRate).toBeCloseTo(1 / 3, 10);
  });
});
