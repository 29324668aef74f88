import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type WebSocket from 'ws';
import { type EngineProcess, startEngine } from '../../../test/harness.ts';
import { RawClient } from '../../../test/raw-client.ts';
import { frame, hex, otelSocket, type SpanSpec, sendFrames, tracesRequest } from './observability-helpers.ts';

// spec: engine-protocol §7.2 `memory_max_spans` — a bounded store: 1M spans into a 100k-span store
// keep the engine's memory flat, evict the oldest spans whole and leave queries working.

const TOTAL = 1_000_000;
const CAPACITY = 100_000;
const SPANS_PER_FRAME = 1000;
const SPANS_PER_TRACE = 5;

let engine: EngineProcess;
let client: RawClient;
let otel: WebSocket;

beforeAll(async () => {
  engine = await startEngine({
    workersYaml: `  - name: eng-observability\n    config:\n      memory_max_spans: ${CAPACITY}\n      logs_console_output: false\n`,
  });
  client = await RawClient.worker(engine.busUrl);
  otel = await otelSocket(engine.busUrl);
});
afterAll(async () => {
  otel?.terminate();
  await client?.terminate();
  await engine?.stop();
});

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

/** Frame `n`: 200 traces of a root and four children, attributes as a worker would send. */
function frameNumber(n: number, baseMs: number): Buffer {
  const specs: SpanSpec[] = [];
  for (let t = 0; t < SPANS_PER_FRAME / SPANS_PER_TRACE; t++) {
    const traceId = hex(16);
    const rootId = hex(8);
    const startMs = baseMs + n * 10 + t * 0.01;
    specs.push({
      traceId,
      spanId: rootId,
      name: `GET /items/${t % 20}`,
      service: `svc-${n % 7}`,
      startMs,
      durationMs: 5 + (t % 50),
      status: 1,
      attributes: { tenant: `t-${t % 13}`, 'eng.invocation.id': hex(8), frame: n },
    });
    for (let c = 1; c < SPANS_PER_TRACE; c++) {
      specs.push({
        traceId,
        parentSpanId: rootId,
        name: `step ${c}`,
        service: `svc-${n % 7}`,
        startMs: startMs + c * 0.001,
        durationMs: 1,
        attributes: { step: c },
      });
    }
  }
  return frame('OTLP', tracesRequest(specs));
}

async function health(): Promise<{ received: number; stored_spans: number; evicted_spans: number; stored_traces: number }> {
  const result = await client.result<{ components: { spans: { details: any } } }>('engine::health::check', {});
  return result.components.spans.details;
}

it('keeps the engine RSS flat while 1M spans stream into a 100k-span store', async () => {
  const pid = engine.process.pid as number;
  const baseMs = Date.now() - 3_600_000;
  const samples: Array<{ spans: number; rss: number }> = [];
  let sent = 0;
  for (let n = 0; sent < TOTAL; n++) {
    await sendFrames(otel, [frameNumber(n, baseMs)]);
    sent += SPANS_PER_FRAME;
    if (sent % 50_000 === 0) {
      // let the engine catch up so its socket buffer does not count as store memory
      for (let h = await health(); h.received < sent; h = await health()) await new Promise((r) => setTimeout(r, 50));
      samples.push({ spans: sent, rss: rssMb(pid) });
    }
  }
  const final = await health();
  expect(final.received).toBe(TOTAL);
  expect(final.stored_spans).toBe(CAPACITY);
  expect(final.evicted_spans).toBe(TOTAL - CAPACITY);
  expect(final.stored_traces).toBe(CAPACITY / SPANS_PER_TRACE);

  // V8 collects the evicted spans in major GCs, so RSS saw-tooths; a leak would make it climb with
  // the spans ingested. The peak over the last 500k spans stays near the peak over the first 500k
  // (where a major GC lands moves a peak by a third on a loaded machine; a leak of 500k spans
  // would add well over 1 GB).
  const peak = (from: number, to: number) => Math.max(...samples.filter((s) => s.spans > from && s.spans <= to).map((s) => s.rss));
  console.log(`engine RSS (MB) by spans ingested: ${samples.map((s) => `${s.spans / 1000}k=${Math.round(s.rss)}`).join(' ')}`);
  expect(peak(500_000, TOTAL)).toBeLessThan(peak(0, 500_000) * 1.5);
  expect(peak(0, TOTAL)).toBeLessThan(1024);

  // the oldest spans are gone whole; the newest are listed; every listed trace is complete
  const oldest = await client.result<{ total: number }>('engine::traces::list', { end_time: baseMs + 10 });
  expect(oldest.total).toBe(0);
  const newest = await client.result<{ spans: Array<{ span_count: number; attributes: [string, string][] }>; total: number }>(
    'engine::traces::list',
    { sort_order: 'desc', limit: 3 },
  );
  expect(newest.total).toBe(CAPACITY / SPANS_PER_TRACE);
  expect(newest.spans.map((s) => s.span_count)).toEqual([5, 5, 5]);
  expect(Object.fromEntries(newest.spans[0]?.attributes ?? []).frame).toBe(String(TOTAL / SPANS_PER_FRAME - 1));
  const filtered = await client.result<{ total: number }>('engine::traces::list', {
    attributes: [['tenant', 't-3']],
    service_name: 'svc-2',
  });
  expect(filtered.total).toBeGreaterThan(0);
}, 600_000);
