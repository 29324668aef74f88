/**
 * bench/traces — the observability module under load: span ingest rate over the `/otel` socket,
 * then `engine::traces::list` latency with the store full (100k spans) for no filter, a service
 * filter, an attribute filter and a duration range. Budgets (ARCHITECTURE.md): p50 < 20 ms, and
 * ≤ 1.5 KB of engine memory per stored span: the engine's RSS growth from before the ingest to
 * after it (the store full, the engine idle for a moment), divided by the spans stored.
 *
 *   node --import tsx bench/traces.ts [--spans 120000] [--queries 200] [--batch 500]
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { ENG_CLI, freePort } from '../test/harness.ts';
import { fmt, percentile, spawnTs, stopChild, table } from './lib.ts';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
const SPANS = Number(args.get('spans') ?? 120_000);
const QUERIES = Number(args.get('queries') ?? 200);
const BATCH = Number(args.get('batch') ?? 500);
const STORE = 100_000;
const SPANS_PER_TRACE = 5;
const BUDGET_P50_MS = 20;
const BUDGET_BYTES_PER_SPAN = 1536;

const hex = (n: number) => randomBytes(n).toString('hex');
const ns = (ms: number) => String(BigInt(Math.round(ms * 1000)) * 1000n);
const str = (key: string, value: string) => ({ key, value: { stringValue: value } });

/** One trace as a worker SDK would export it: a root and four children across services. */
function traceSpans(i: number, startMs: number) {
  const traceId = hex(16);
  const rootId = hex(8);
  const duration = 5 + (i % 200);
  const spans = [
    {
      traceId,
      spanId: rootId,
      name: `GET /orders/${i % 50}`,
      kind: 2,
      startTimeUnixNano: ns(startMs),
      endTimeUnixNano: ns(startMs + duration),
      attributes: [
        str('tenant', `t-${i % 20}`),
        str('http.method', 'GET'),
        str('region', i % 2 ? 'eu' : 'us'),
        str('function_id', `orders::get${i % 10}`),
      ],
      events: [],
      links: [],
      status: { code: i % 25 === 0 ? 2 : 1 },
    },
  ];
  for (let c = 1; c < SPANS_PER_TRACE; c++) {
    spans.push({
      traceId,
      spanId: hex(8),
      parentSpanId: rootId,
      name: `step ${c}`,
      kind: 1,
      startTimeUnixNano: ns(startMs + c),
      endTimeUnixNano: ns(startMs + c + duration / 2),
      attributes: [str('step', String(c)), str('db.system', 'postgresql')],
      events: [],
      links: [],
      status: { code: 0 },
    } as (typeof spans)[number]);
  }
  return { service: `svc-${i % 10}`, spans };
}

function frameOf(traces: ReturnType<typeof traceSpans>[]): Buffer {
  const byService = new Map<string, unknown[]>();
  for (const t of traces) byService.set(t.service, [...(byService.get(t.service) ?? []), ...t.spans]);
  const payload = {
    resourceSpans: [...byService].map(([service, spans]) => ({
      resource: { attributes: [str('service.name', service)] },
      scopeSpans: [{ scope: { name: 'bench' }, spans }],
    })),
  };
  return Buffer.concat([Buffer.from('OTLP'), Buffer.from(JSON.stringify(payload))]);
}

function open(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

class Client {
  private pending = new Map<string, (frame: any) => void>();
  constructor(private readonly ws: WebSocket) {
    ws.on('message', (raw) => {
      const frame = JSON.parse(raw.toString());
      if (frame.type !== 'invocationresult') return;
      this.pending.get(frame.invocation_id)?.(frame);
      this.pending.delete(frame.invocation_id);
    });
  }
  call(function_id: string, data: unknown): Promise<any> {
    const invocation_id = randomUUID();
    return new Promise((resolve, reject) => {
      this.pending.set(invocation_id, (frame) => (frame.error ? reject(new Error(frame.error.message)) : resolve(frame.result)));
      this.ws.send(JSON.stringify({ type: 'invokefunction', invocation_id, function_id, data }));
    });
  }
}

/** CPU time (user + system) the engine process has used, in ms: immune to other load on the box. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in clock ticks (100 Hz)
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'eng-bench-traces-'));
  const busPort = await freePort();
  const config = join(dir, 'config.yaml');
  writeFileSync(
    config,
    `workers:\n  - name: eng-worker-manager\n    config:\n      port: ${busPort}\n  - name: eng-observability\n    config:\n      memory_max_spans: ${STORE}\n      logs_console_output: false\n`,
  );
  const { child } = await spawnTs(ENG_CLI, ['start', '-c', config, '--data-dir', join(dir, 'data')], /eng: ready/);
  try {
    const url = `ws://127.0.0.1:${busPort}`;
    const client = new Client(await open(url));
    const otel = await open(`${url}/otel`);

    // build every frame first: the measurement is the engine's ingest, not our JSON encoding
    const traceCount = Math.ceil(SPANS / SPANS_PER_TRACE);
    const perFrame = Math.max(1, Math.floor(BATCH / SPANS_PER_TRACE));
    const base = Date.now() - traceCount * 2;
    const frames: Buffer[] = [];
    for (let i = 0; i < traceCount; i += perFrame) {
      const traces = [];
      for (let j = i; j < Math.min(traceCount, i + perFrame); j++) traces.push(traceSpans(j, base + j * 2));
      frames.push(frameOf(traces));
    }
    const total = traceCount * SPANS_PER_TRACE;
    const rssBefore = rssMb(child.pid as number);

    const pid = child.pid as number;
    const cpu0 = cpuMs(pid);
    const t0 = performance.now();
    for (const f of frames) otel.send(f, { binary: true });
    let received = 0;
    while (received < total) {
      await new Promise((r) => setTimeout(r, 20));
      const health = await client.call('engine::health::check', {});
      received = health.components.spans.details.received;
    }
    const ingestSeconds = (performance.now() - t0) / 1000;
    const ingestCpuSeconds = (cpuMs(pid) - cpu0) / 1000;
    const health = await client.call('engine::health::check', {});
    const stored = health.components.spans.details.stored_spans;
    // the engine idle for a moment (its GC settles), then its memory per stored span
    await new Promise((r) => setTimeout(r, 2000));
    const rssIngested = rssMb(pid);
    const bytesPerSpan = ((rssIngested - rssBefore) * 1024 * 1024) / stored;

    const cases: Array<[string, Record<string, unknown>]> = [
      ['no filter', {}],
      ['service filter', { service_name: 'svc-3' }],
      ['attribute filter', { attributes: [['tenant', 't-7']] }],
      ['duration range', { min_duration_ms: 50, max_duration_ms: 100 }],
      ['newest first', { sort_order: 'desc' }],
      ['combined', { service_name: 'svc-3', attributes: [['region', 'eu']], min_duration_ms: 20, status: 'ok', sort_order: 'desc' }],
      ['all spans, name', { search_all_spans: true, name: 'step 2' }],
    ];
    const rows: Array<Record<string, string | number>> = [];
    let worstP50 = 0;
    for (const [label, input] of cases) {
      for (let i = 0; i < 10; i++) await client.call('engine::traces::list', input); // warm-up
      const times: number[] = [];
      let matched = 0;
      const queryCpu0 = cpuMs(pid);
      for (let i = 0; i < QUERIES; i++) {
        const start = performance.now();
        const result = await client.call('engine::traces::list', input);
        times.push(performance.now() - start);
        matched = result.total;
      }
      times.sort((a, b) => a - b);
      const p50 = percentile(times, 50);
      if (label !== 'all spans, name') worstP50 = Math.max(worstP50, p50);
      const engineCpu = (cpuMs(pid) - queryCpu0) / QUERIES;
      rows.push({
        query: label,
        matched,
        'p50 ms': fmt(p50, 2),
        'p99 ms': fmt(percentile(times, 99), 2),
        'engine CPU ms/query': fmt(engineCpu, 2),
        'budget p50': `< ${BUDGET_P50_MS} ms`,
      });
    }

    console.log(
      table([
        {
          'spans sent': total,
          'stored (cap)': `${stored} (${STORE})`,
          'ingest s': fmt(ingestSeconds, 2),
          'spans/s': fmt(total / ingestSeconds, 0),
          'spans per engine CPU-s': fmt(total / ingestCpuSeconds, 0),
          'engine RSS MB before → ingested → after queries': `${fmt(rssBefore, 0)} → ${fmt(rssIngested, 0)} → ${fmt(rssMb(pid), 0)}`,
          'RSS per stored span': `${fmt(bytesPerSpan, 0)} B`,
        },
      ]),
    );
    console.log('');
    console.log(table(rows));
    console.log(`\nload average at the end: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')} (2 cores shared)`);
    console.log(
      `\nworst p50 of the four budgeted filters: ${fmt(worstP50, 2)} ms (budget < ${BUDGET_P50_MS} ms): ${worstP50 < BUDGET_P50_MS ? 'OK' : 'OVER budget'}`,
    );
    console.log(
      `engine memory per stored span: ${fmt(bytesPerSpan, 0)} B (RSS growth over the ingest / ${stored} spans; budget ≤ ${BUDGET_BYTES_PER_SPAN} B): ${bytesPerSpan <= BUDGET_BYTES_PER_SPAN ? 'OK' : 'OVER budget'}`,
    );
    otel.close();
    if (worstP50 >= BUDGET_P50_MS || bytesPerSpan > BUDGET_BYTES_PER_SPAN) process.exitCode = 1;
  } finally {
    await stopChild(child);
  }
}

await main();
