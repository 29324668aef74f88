/**
 * bench/proxy — a function call made by a browser-style client (the `ws` package speaking the wire
 * protocol) through the console worker's `/ws` proxy, against the same client connected to the
 * engine directly, in the same run and against the same engine and executing worker. Budget
 * (ARCHITECTURE.md): ≤ 1.15× latency.
 *
 * A reference row measures the same client through a bare TCP relay in its own Node process (accept,
 * connect, `on('data')` → `write`, nothing else): the floor for any proxy written in JavaScript, since
 * the console worker's proxy splices bytes the same way after its handshake. A second reference row
 * does the same with bench/c-relay.c (one epoll loop, read/write, compiled with `cc` when the machine
 * has one): the floor for any proxy that runs as its own process, in any language.
 *
 *   node --import tsx bench/proxy.ts [--rounds 3] [--seq 3000] [--seconds 3]
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { ensureEmbeddedBundle } from '../packages/console-worker/scripts/build-bundle.ts';
import { ENG_CLI } from '../test/harness.ts';
import { fmt, median, percentile, spawnTs, stopChild, table } from './lib.ts';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
const ROUNDS = Number(args.get('rounds') ?? 3);
const SEQ = Number(args.get('seq') ?? 3000);
const SECONDS = Number(args.get('seconds') ?? 3);
const IN_FLIGHT = 100;
const PAYLOAD = { order_id: 'ord_123', sku: 'SKU-42', qty: 2, note: 'bench' };

interface Figures {
  p50: number;
  p99: number;
  rps: number;
}

function open(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

/** The executing worker, connected to the engine directly in both cases: echoes `data`. */
async function startEchoWorker(url: string): Promise<WebSocket> {
  const ws = await open(url);
  ws.on('message', (raw) => {
    const frame = JSON.parse(raw.toString());
    if (frame.type !== 'invokefunction') return;
    ws.send(
      JSON.stringify({ type: 'invocationresult', invocation_id: frame.invocation_id, function_id: frame.function_id, result: frame.data }),
    );
  });
  ws.send(JSON.stringify({ type: 'registerfunction', id: 'bench::echo' }));
  await new Promise((r) => setTimeout(r, 100));
  return ws;
}

/** The browser side: invokes `bench::echo` and times each result. */
class BrowserCaller {
  private readonly pending = new Map<string, (t: number) => void>();
  constructor(private readonly ws: WebSocket) {
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
      this.ws.send(JSON.stringify({ type: 'invokefunction', invocation_id: id, function_id: 'bench::echo', data: PAYLOAD }));
    });
  }
}

async function measure(url: string): Promise<Figures> {
  const ws = await open(url);
  const caller = new BrowserCaller(ws);
  for (let i = 0; i < 500; i++) await caller.call(); // warm-up
  const latencies: number[] = [];
  for (let i = 0; i < SEQ; i++) latencies.push(await caller.call());
  latencies.sort((a, b) => a - b);
  let completed = 0;
  const started = performance.now();
  const deadline = started + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (performance.now() < deadline) {
        await caller.call();
        completed++;
      }
    }),
  );
  const rps = completed / ((performance.now() - started) / 1000);
  ws.close();
  return { p50: percentile(latencies, 50) * 1000, p99: percentile(latencies, 99) * 1000, rps };
}

/** The bare relay: one process, one upstream TCP connection per client, bytes passed both ways. */
const RELAY_SOURCE = `
const net = require('node:net');
const target = Number(process.argv[1]);
const server = net.createServer({ noDelay: true }, (client) => {
  const upstream = net.connect({ port: target, host: '127.0.0.1', noDelay: true });
  client.on('data', (d) => upstream.write(d));
  upstream.on('data', (d) => client.write(d));
  const drop = () => { client.destroy(); upstream.destroy(); };
  for (const s of [client, upstream]) { s.on('close', drop); s.on('error', drop); }
});
server.listen(0, '127.0.0.1', () => console.log('relay ready ' + server.address().port));
`;

type Relay = { url: string; stop(): Promise<void> };

function startRelay(targetPort: number, command: string[] = [process.execPath, '-e', RELAY_SOURCE]): Promise<Relay> {
  const child = spawn(command[0] as string, [...command.slice(1), String(targetPort)], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      const port = /relay ready (\d+)/.exec(chunk.toString())?.[1];
      if (port) resolve({ url: `ws://127.0.0.1:${port}`, stop: () => stopChild(child) });
    });
    child.once('exit', (code) => reject(new Error(`relay exited with ${code}`)));
  });
}

ensureEmbeddedBundle({
  env: { ...process.env, SKIP_WEB_BUILD: process.env.SKIP_WEB_BUILD ?? '1' },
  log: (l) => process.stderr.write(`${l}\n`),
});
const dir = mkdtempSync(join(tmpdir(), 'eng-bench-proxy-'));
const config = join(dir, 'config.yaml');
writeFileSync(config, 'workers:\n  - name: eng-worker-manager\n    config:\n      port: 0\n');
const engineProc = await spawnTs(ENG_CLI, ['start', '-c', config, '--data-dir', join(dir, 'data')], /eng: ready (.*)\n/);
const busUrl = (JSON.parse(engineProc.match[1] as string) as { bus: { url: string } }).bus.url;
const consoleProc = await spawnTs(
  'packages/console-worker/src/main.ts',
  ['--http-port', '0', '--url', busUrl],
  /eng-console-worker: ready (.*)\n/,
  { SKIP_WEB_BUILD: '1' },
);
const proxyUrl = `${(JSON.parse(consoleProc.match[1] as string) as { url: string }).url.replace(/^http/, 'ws')}ws`;
const echo = await startEchoWorker(busUrl);
const relay = await startRelay(Number(new URL(busUrl).port));
/** bench/c-relay.c compiled into the scratch directory; undefined (row skipped) without a C compiler. */
async function startCRelay(targetPort: number): Promise<Relay | undefined> {
  const binary = join(dir, 'c-relay');
  const built = spawnSync('cc', ['-O2', '-o', binary, join(import.meta.dirname, 'c-relay.c')], { stdio: ['ignore', 'ignore', 'pipe'] });
  if (built.error || built.status !== 0) {
    process.stderr.write(`no C relay row: cc failed (${built.error?.message ?? built.stderr.toString().trim()})\n`);
    return undefined;
  }
  return startRelay(targetPort, [binary]);
}
const cRelay = await startCRelay(Number(new URL(busUrl).port));

const direct: Figures[] = [];
const relayed: Figures[] = [];
const cRelayed: Figures[] = [];
const proxied: Figures[] = [];
try {
  for (let round = 1; round <= ROUNDS; round++) {
    process.stderr.write(`round ${round}/${ROUNDS}: direct… `);
    direct.push(await measure(busUrl));
    process.stderr.write('bare relay… ');
    relayed.push(await measure(relay.url));
    if (cRelay) {
      process.stderr.write('C relay… ');
      cRelayed.push(await measure(cRelay.url));
    }
    process.stderr.write('through /ws… ');
    proxied.push(await measure(proxyUrl));
    process.stderr.write('done\n');
  }
} finally {
  echo.close();
  await relay.stop();
  await cRelay?.stop();
  await stopChild(consoleProc.child);
  await stopChild(engineProc.child);
}

const summary = (xs: Figures[]): Figures => ({
  p50: median(xs.map((x) => x.p50)),
  p99: median(xs.map((x) => x.p99)),
  rps: median(xs.map((x) => x.rps)),
});
const d = summary(direct);
const r = summary(relayed);
const p = summary(proxied);
const c = cRelayed.length ? summary(cRelayed) : undefined;
const latencyRatio = p.p50 / d.p50;
console.log(
  `\nbench/proxy — browser-style client → engine → worker and back (medians of ${ROUNDS} rounds; ${SEQ} sequential calls, ${IN_FLIGHT} in flight for ${SECONDS}s)\n`,
);
console.log(
  table([
    { client: 'direct to the engine bus (baseline)', 'p50 µs': fmt(d.p50), 'p99 µs': fmt(d.p99), 'calls/s @100': fmt(d.rps, 0) },
    ...(c
      ? [{ client: 'through a C epoll TCP relay (floor)', 'p50 µs': fmt(c.p50), 'p99 µs': fmt(c.p99), 'calls/s @100': fmt(c.rps, 0) }]
      : []),
    { client: 'through a bare Node TCP relay (reference)', 'p50 µs': fmt(r.p50), 'p99 µs': fmt(r.p99), 'calls/s @100': fmt(r.rps, 0) },
    { client: 'through the console worker /ws', 'p50 µs': fmt(p.p50), 'p99 µs': fmt(p.p99), 'calls/s @100': fmt(p.rps, 0) },
  ]),
);
console.log(`\nlatency ratio (proxy/direct, p50): ${fmt(latencyRatio, 2)}×   budget ≤ 1.15× ${latencyRatio <= 1.15 ? 'OK' : 'OVER'}`);
console.log(`latency ratio (proxy/direct, p99): ${fmt(p.p99 / d.p99, 2)}×`);
console.log(`throughput ratio (proxy/direct):   ${fmt((p.rps / d.rps) * 100, 0)}%`);
console.log(
  `reference: bare relay/direct p50 ${fmt(r.p50 / d.p50, 2)}×; proxy/bare relay p50 ${fmt(p.p50 / r.p50, 2)}× (what the proxy adds over moving bytes in JavaScript)`,
);
if (c) {
  console.log(
    `floor: C relay/direct p50 ${fmt(c.p50 / d.p50, 2)}× (a separate process that only copies bytes: the extra hop's own cost; the budget is ${c.p50 / d.p50 <= 1.15 ? 'above' : 'below'} it)`,
  );
}
