/**
 * bench/invoke — worker-to-worker call through the engine vs a bare WebSocket relay doing the
 * same two hops, measured in the same run. Same raw clients on both sides for both targets, so
 * the only difference is the middle. Budget (ARCHITECTURE.md): ≤ 1.5× latency, ≥ 60% throughput.
 *
 * The caller sends a W3C `traceparent` on every call, as iii-sdk (0.22.1 fabricates one even with
 * OTel off) and @eng/sdk do: the worker's `execute` span is then the trace's record and the engine
 * adds none (engine-protocol §2.6). A second pass sends calls without context, as a bare client
 * would: the engine then opens a root `call` span per call so the call is still traced; its
 * figures are printed too, with the floor under the budget on them: a relay that parses every frame,
 * without and with one span kept per call (bench/relay-server.ts `--mode parse|spans`).
 *
 *   node --import tsx bench/invoke.ts [--rounds 3] [--seq 3000] [--seconds 3] [--context sdk|none|both]
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { ENG_CLI } from '../test/harness.ts';
import { fmt, median, percentile, spawnTs, stopChild, table } from './lib.ts';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
const ROUNDS = Number(args.get('rounds') ?? 3);
const SEQ = Number(args.get('seq') ?? 3000);
const SECONDS = Number(args.get('seconds') ?? 3);
const CONTEXT = args.get('context') ?? 'both';
const IN_FLIGHT = 100;
const PAYLOAD = { order_id: 'ord_123', sku: 'SKU-42', qty: 2, note: 'bench' };

function open(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

/** The executing side: echoes `data` back as the result. */
async function startWorker(url: string, viaEngine: boolean): Promise<WebSocket> {
  const ws = await open(url);
  ws.on('message', (raw) => {
    const frame = JSON.parse(raw.toString());
    if (frame.type !== 'invokefunction') return;
    ws.send(
      JSON.stringify({ type: 'invocationresult', invocation_id: frame.invocation_id, function_id: frame.function_id, result: frame.data }),
    );
  });
  if (viaEngine) {
    ws.send(JSON.stringify({ type: 'registerfunction', id: 'bench::echo' }));
    await new Promise((r) => setTimeout(r, 100));
  }
  return ws;
}

/**
 * A W3C traceparent per call: the calling worker's span, sampled. Made ahead of time, so making
 * them costs neither target anything during the measurement.
 */
const TRACEPARENTS = Array.from({ length: 4096 }, () => `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`);
let nextTraceparent = 0;
function traceparent(): string {
  nextTraceparent = (nextTraceparent + 1) % TRACEPARENTS.length;
  return TRACEPARENTS[nextTraceparent] as string;
}

class Caller {
  private pending = new Map<string, (t: number) => void>();
  constructor(
    private readonly ws: WebSocket,
    private readonly withContext: boolean,
  ) {
    ws.on('message', (raw) => {
      const frame = JSON.parse(raw.toString());
      if (frame.type !== 'invocationresult') return;
      const done = this.pending.get(frame.invocation_id);
      if (done) {
        this.pending.delete(frame.invocation_id);
        done(performance.now());
      }
    });
  }
  call(): Promise<number> {
    const id = randomUUID();
    const started = performance.now();
    return new Promise((resolve) => {
      this.pending.set(id, (t) => resolve(t - started));
      const frame: Record<string, unknown> = { type: 'invokefunction', invocation_id: id, function_id: 'bench::echo', data: PAYLOAD };
      if (this.withContext) frame.traceparent = traceparent();
      this.ws.send(JSON.stringify(frame));
    });
  }
}

/** User+system CPU of a process so far, ms (Linux /proc; 0 elsewhere). */
function cpuMs(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) * 10; // utime + stime, in 100 Hz ticks
  } catch {
    return 0;
  }
}

async function measure(callerUrl: string, withContext: boolean, middlePid: number | undefined): Promise<Figures> {
  const ws = await open(callerUrl);
  const caller = new Caller(ws, withContext);
  for (let i = 0; i < 500; i++) await caller.call(); // warm-up
  const latencies: number[] = [];
  for (let i = 0; i < SEQ; i++) latencies.push(await caller.call());
  latencies.sort((a, b) => a - b);
  let completed = 0;
  const deadline = performance.now() + SECONDS * 1000;
  const cpu0 = cpuMs(middlePid);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (performance.now() < deadline) {
        await caller.call();
        completed++;
      }
    }),
  );
  const rps = completed / ((performance.now() - started) / 1000);
  const cpuUs = ((cpuMs(middlePid) - cpu0) * 1000) / Math.max(1, completed);
  ws.close();
  return { p50: percentile(latencies, 50) * 1000, p99: percentile(latencies, 99) * 1000, rps, cpuUs };
}

async function runRelay(withContext: boolean, mode: 'raw' | 'parse' | 'spans' = 'raw') {
  const { child, match } = await spawnTs('bench/relay-server.ts', ['--mode', mode], /relay: ready (\d+)/);
  const url = `ws://127.0.0.1:${match[1]}`;
  const worker = await startWorker(`${url}/?role=worker`, false);
  try {
    return await measure(`${url}/?role=caller`, withContext, child.pid);
  } finally {
    worker.close();
    await stopChild(child);
  }
}

async function runEngine(withContext: boolean) {
  const dir = mkdtempSync(join(tmpdir(), 'eng-bench-'));
  const config = join(dir, 'config.yaml');
  writeFileSync(
    config,
    `workers:\n  - name: eng-worker-manager\n    config:\n      port: 0\n${process.env.BENCH_OBS === 'off' ? '  - name: eng-observability\n    config:\n      enabled: false\n' : ''}`,
  );
  const { child, match } = await spawnTs(ENG_CLI, ['start', '-c', config, '--data-dir', join(dir, 'data')], /eng: ready (.*)\n/);
  const url = (JSON.parse(match[1] as string) as { bus: { url: string } }).bus.url;
  const worker = await startWorker(url, true);
  try {
    return await measure(url, withContext, child.pid);
  } finally {
    worker.close();
    await stopChild(child);
  }
}

/** `cpuUs`: CPU the middle process (relay or engine) spent per call while 100 were in flight. */
type Figures = { p50: number; p99: number; rps: number; cpuUs: number };
const summary = (xs: Figures[]): Figures => ({
  p50: median(xs.map((x) => x.p50)),
  p99: median(xs.map((x) => x.p99)),
  rps: median(xs.map((x) => x.rps)),
  cpuUs: median(xs.map((x) => x.cpuUs)),
});

/**
 * Alternating rounds of relay and engine; medians of each. With `floors`, each round also runs the
 * parsing relay without and with spans (bench/relay-server.ts `--mode parse|spans`).
 */
async function pass(
  withContext: boolean,
  label: string,
  floors = false,
): Promise<{ r: Figures; e: Figures; parse?: Figures; spans?: Figures; spanCostUs?: number }> {
  const relay: Figures[] = [];
  const engine: Figures[] = [];
  const parse: Figures[] = [];
  const spans: Figures[] = [];
  const spanCost: number[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    process.stderr.write(`${label} round ${round}/${ROUNDS}: relay… `);
    relay.push(await runRelay(withContext));
    process.stderr.write('engine… ');
    engine.push(await runEngine(withContext));
    if (floors) {
      process.stderr.write('parsing relay… ');
      parse.push(await runRelay(withContext, 'parse'));
      process.stderr.write('parsing relay keeping spans… ');
      spans.push(await runRelay(withContext, 'spans'));
      spanCost.push((spans.at(-1) as Figures).cpuUs - (parse.at(-1) as Figures).cpuUs);
    }
    process.stderr.write('done\n');
  }
  if (!floors) return { r: summary(relay), e: summary(engine) };
  return { r: summary(relay), e: summary(engine), parse: summary(parse), spans: summary(spans), spanCostUs: median(spanCost) };
}

function report(title: string, { r, e }: { r: Figures; e: Figures }, budgeted: boolean): void {
  const latencyRatio = e.p50 / r.p50;
  const throughputRatio = e.rps / r.rps;
  console.log(`\n${title}\n`);
  console.log(
    table([
      {
        target: 'bare WebSocket relay (baseline)',
        'p50 µs': fmt(r.p50),
        'p99 µs': fmt(r.p99),
        'calls/s @100': fmt(r.rps, 0),
        'CPU µs/call @100': fmt(r.cpuUs, 1),
      },
      {
        target: 'eng engine',
        'p50 µs': fmt(e.p50),
        'p99 µs': fmt(e.p99),
        'calls/s @100': fmt(e.rps, 0),
        'CPU µs/call @100': fmt(e.cpuUs, 1),
      },
    ]),
  );
  const verdict = (ok: boolean, bad: string) => (budgeted ? (ok ? 'OK' : bad) : '(for information)');
  console.log(
    `\nlatency ratio (engine/relay, p50): ${fmt(latencyRatio, 2)}×   budget ≤ 1.50× ${verdict(latencyRatio <= 1.5, 'OVER budget')}`,
  );
  console.log(
    `throughput ratio (engine/relay):   ${fmt(throughputRatio * 100, 0)}%   budget ≥ 60% ${verdict(throughputRatio >= 0.6, 'UNDER budget')}`,
  );
  if (budgeted && (latencyRatio > 1.5 || throughputRatio < 0.6)) process.exitCode = 1;
}

const setup = `medians of ${ROUNDS} rounds; ${SEQ} sequential calls, ${IN_FLIGHT} in flight for ${SECONDS}s`;
let withContext: { r: Figures; e: Figures } | undefined;
let withoutContext: Awaited<ReturnType<typeof pass>> | undefined;
if (CONTEXT === 'sdk' || CONTEXT === 'both') {
  withContext = await pass(true, 'sdk-like');
  report(
    `bench/invoke — worker→engine→worker round trip, calls carrying a traceparent as the SDKs send them (${setup})`,
    withContext,
    true,
  );
}
if (CONTEXT === 'none' || CONTEXT === 'both') {
  withoutContext = await pass(false, 'no-context', CONTEXT === 'both');
  report(
    `bench/invoke — the same calls without trace context: the engine opens and stores a root span per call (${setup})`,
    withoutContext,
    CONTEXT === 'none',
  );
}
if (withContext && withoutContext) {
  // budget (issue 16): a call without trace context (the engine records a span for it) costs at
  // most 10% more engine CPU than one with context (the worker's span is the record)
  const cost = withoutContext.e.cpuUs / withContext.e.cpuUs;
  console.log(
    `\nwithout trace context vs with it: engine CPU per call ${fmt(withoutContext.e.cpuUs, 1)} vs ${fmt(withContext.e.cpuUs, 1)} µs = ${fmt(cost, 2)}×   budget ≤ 1.10× ${cost <= 1.1 ? 'OK' : 'OVER budget'}`,
  );
  console.log(
    `  (p50 ${fmt(withoutContext.e.p50 / withContext.e.p50, 2)}×, throughput ${fmt((withoutContext.e.rps / withContext.e.rps) * 100, 0)}% of the calls with context, for information)`,
  );
  if (withoutContext.parse && withoutContext.spans && withoutContext.spanCostUs !== undefined) {
    // the floor: what keeping one span per call costs a relay that parses and rewrites every frame
    // (median of the per-round differences), laid over the engine's own calls with context
    const floorUs = withoutContext.spanCostUs;
    const floorRatio = (withContext.e.cpuUs + floorUs) / withContext.e.cpuUs;
    const engineUs = withoutContext.e.cpuUs - withContext.e.cpuUs;
    console.log(
      `  floor: a relay parsing every frame spends ${fmt(withoutContext.parse.cpuUs, 1)} µs/call, ${fmt(withoutContext.spans.cpuUs, 1)} µs keeping one span per call; the span costs ${fmt(floorUs, 1)} µs at the floor`,
    );
    console.log(
      `  the engine's span per call costs ${fmt(engineUs, 1)} µs (${fmt(engineUs - floorUs, 1)} µs above the floor); with the floor's span cost the ratio could be no lower than ${fmt(floorRatio, 2)}×${floorRatio > 1.1 ? ': the budget is below the floor' : ''}`,
    );
  }
  if (cost > 1.1) process.exitCode = 1;
}
