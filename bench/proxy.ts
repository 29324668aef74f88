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
 * Two console worker rows: launched by the engine's supervisor (`npm start`, `eng worker add console`),
 * where it hands each `/ws` socket to the engine after checking the upgrade (bus-handoff.ts) — the
 * budget row; and started on its own (`eng-console-worker --url …`, or against another engine), where
 * it relays bytes.
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
import { ENG_CLI, freePort } from '../test/harness.ts';
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
  close(): void {
    this.ws.close();
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

/**
 * Sequential latency, paired: one call on each path in turn (in a random order each round), so a
 * burst of load from elsewhere on this shared machine lands on every path alike. Then throughput,
 * each path on its own for SECONDS with IN_FLIGHT calls outstanding.
 */
async function measureAll(urls: string[]): Promise<Figures[]> {
  const callers = await Promise.all(urls.map(async (url) => new BrowserCaller(await open(url))));
  for (let i = 0; i < 500; i++) for (const caller of callers) await caller.call(); // warm-up
  const latencies: number[][] = urls.map(() => []);
  const order = callers.map((_, j) => j);
  for (let i = 0; i < SEQ; i++) {
    // a fresh random order each time: a call right after a relay's call shares the 2 cores with that
    // relay's tail, so no path may always follow the same neighbour
    for (let k = order.length - 1; k > 0; k--) {
      const r = Math.floor(Math.random() * (k + 1));
      [order[k], order[r]] = [order[r] as number, order[k] as number];
    }
    for (const j of order) (latencies[j] as number[]).push(await (callers[j] as BrowserCaller).call());
  }
  const figures: Figures[] = [];
  for (let j = 0; j < callers.length; j++) {
    const caller = callers[j] as BrowserCaller;
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
    const sorted = (latencies[j] as number[]).sort((a, b) => a - b);
    figures.push({
      p50: percentile(sorted, 50) * 1000,
      p99: percentile(sorted, 99) * 1000,
      rps: completed / ((performance.now() - started) / 1000),
    });
  }
  for (const caller of callers) caller.close();
  return figures;
}

/** Wait until `url` accepts a WebSocket (the supervised console worker is up). */
async function waitForUpgrade(url: string): Promise<void> {
  for (let attempt = 0; attempt < 600; attempt++) {
    const ws = await open(url).catch(() => undefined);
    if (ws) {
      ws.close();
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} never accepted a WebSocket`);
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
// the engine launches a console worker itself, as `npm start` does
const supervisedPort = await freePort();
writeFileSync(
  config,
  `workers:\n  - name: eng-worker-manager\n    config:\n      port: 0\n  - name: console\n    config:\n      http_port: ${supervisedPort}\n`,
);
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
// The supervised worker's port is chosen here: its URL cannot be learned from `console::status`
// (what the supervisor reports), since the standalone worker registers that function too.
const handoffUrl = `ws://127.0.0.1:${supervisedPort}/ws`;
await waitForUpgrade(handoffUrl);
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
const handedOff: Figures[] = [];
try {
  for (let round = 1; round <= ROUNDS; round++) {
    process.stderr.write(`round ${round}/${ROUNDS}: direct, relays, /ws standalone, /ws launched by the engine (paired)… `);
    const urls = [busUrl, relay.url, proxyUrl, handoffUrl, ...(cRelay ? [cRelay.url] : [])];
    const [dd, rr, pp, hh, cc] = await measureAll(urls);
    direct.push(dd as Figures);
    relayed.push(rr as Figures);
    proxied.push(pp as Figures);
    handedOff.push(hh as Figures);
    if (cc) cRelayed.push(cc);
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
const h = summary(handedOff);
const c = cRelayed.length ? summary(cRelayed) : undefined;
const latencyRatio = h.p50 / d.p50;
console.log(
  `\nbench/proxy — browser-style client → engine → worker and back (medians of ${ROUNDS} rounds; ${SEQ} sequential calls per path, paired across paths; ${IN_FLIGHT} in flight for ${SECONDS}s)\n`,
);
console.log(
  table([
    { client: 'direct to the engine bus (baseline)', 'p50 µs': fmt(d.p50), 'p99 µs': fmt(d.p99), 'calls/s @100': fmt(d.rps, 0) },
    ...(c
      ? [{ client: 'through a C epoll TCP relay (floor)', 'p50 µs': fmt(c.p50), 'p99 µs': fmt(c.p99), 'calls/s @100': fmt(c.rps, 0) }]
      : []),
    { client: 'through a bare Node TCP relay (reference)', 'p50 µs': fmt(r.p50), 'p99 µs': fmt(r.p99), 'calls/s @100': fmt(r.rps, 0) },
    { client: 'console worker /ws, standalone (byte relay)', 'p50 µs': fmt(p.p50), 'p99 µs': fmt(p.p99), 'calls/s @100': fmt(p.rps, 0) },
    {
      client: 'console worker /ws, launched by the engine',
      'p50 µs': fmt(h.p50),
      'p99 µs': fmt(h.p99),
      'calls/s @100': fmt(h.rps, 0),
    },
  ]),
);
console.log(
  `\nlatency ratio (console worker launched by the engine/direct, p50): ${fmt(latencyRatio, 2)}×   budget ≤ 1.15× ${latencyRatio <= 1.15 ? 'OK' : 'OVER'}`,
);
console.log(`latency ratio (launched by the engine/direct, p99): ${fmt(h.p99 / d.p99, 2)}×`);
console.log(`throughput ratio (launched by the engine/direct):   ${fmt((h.rps / d.rps) * 100, 0)}%`);
console.log(
  `standalone relay: p50 ${fmt(p.p50 / d.p50, 2)}× direct, p99 ${fmt(p.p99 / d.p99, 2)}×, throughput ${fmt((p.rps / d.rps) * 100, 0)}% (budget ≤ 1.15× ${p.p50 / d.p50 <= 1.15 ? 'OK' : 'OVER'})`,
);
console.log(
  `reference: bare relay/direct p50 ${fmt(r.p50 / d.p50, 2)}×; proxy/bare relay p50 ${fmt(p.p50 / r.p50, 2)}× (what the proxy adds over moving bytes in JavaScript)`,
);
if (c) {
  console.log(
    `floor: C relay/direct p50 ${fmt(c.p50 / d.p50, 2)}× (a separate process that only copies bytes: the extra hop's own cost; the budget is ${c.p50 / d.p50 <= 1.15 ? 'above' : 'below'} it)`,
  );
}
