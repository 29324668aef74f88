/**
 * bench/queue — enqueue → handler through the engine's queue, for each adapter (sqlite, redis,
 * rabbitmq), against its floor measured in the same run on the same broker: a bare client doing
 * the same flow with nothing between producer and consumer but the broker.
 *
 *   node --import tsx bench/queue.ts [--rounds 3] [--seconds 2] [--latency 300] [--inflight 100]
 *                                    [--adapters sqlite,redis,rabbitmq] [--diag 1]
 *
 * --diag 1 prints, for each throughput phase, the CPU share and CPU per message of this process, the
 * engine and redis-server, and streams the engine's log to stderr.
 *
 * Engine path: an @eng/sdk client in this process enqueues (`TriggerAction.Enqueue`) to a queue of
 * an engine (its own process) whose eng-queue uses the adapter; an @eng/sdk worker in this process
 * serves the function. Floors, in this process too:
 *   sqlite   better-sqlite3 (WAL, synchronous=FULL, as the engine's store): inserts of one turn in one
 *            transaction, a consumer that selects what is ready, runs the handler, deletes in one
 *            transaction (without its own fsync, as the engine commits acknowledgements);
 *   redis    ioredis: XADD to a stream; a consumer on its own connection XREADGROUP BLOCK … COUNT 100,
 *            runs the handler, XACK;
 *   rabbitmq amqplib: publish persistent to a durable queue on a confirm channel (wait for the
 *            confirm, as the engine does before its receipt), consume with prefetch 100, ack.
 * Latency: one message at a time (`--latency` of them), from just before the enqueue to the handler's
 * start (one clock: producer and handler share this process); p50 and p99. Throughput: `--inflight`
 * enqueues outstanding for `--seconds`, handled messages per second. Rounds alternate the order of
 * floor and engine; figures are medians of the rounds. Budget (ARCHITECTURE.md): engine ≥ 70% of
 * its floor's throughput and ≤ 1.5× its p50. Exits 1 when a budget is missed. For information, the
 * same engine's plain call (caller → engine → worker → back, 100 in flight; latency to the handler's
 * start) in the same rounds: the two WebSocket hops every queued message also makes (enqueue, then
 * delivery), which the floors do not have; the row "floor + engine call in series" puts the two
 * together (throughput 1 / (1/floor + 1/call), p50 floor + call) and the last column compares the
 * engine with it: what a queue behind one engine process can be held to. redis-server and
 * rabbitmq-server are started by hand on free ports (as the tests do); the machine's cores are shared
 * by the broker, the engine and this process.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, TriggerAction } from '@eng/sdk';
import amqp from 'amqplib';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import { startRabbit } from '../packages/engine/test/queue-rabbitmq-server.ts';
import { ENG_CLI } from '../test/harness.ts';
import { startRedis } from '../test/redis.ts';
import { fmt, median, percentile, spawnTs, stopChild, table } from './lib.ts';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set((process.argv[i] as string).replace(/^--/, ''), process.argv[i + 1] ?? '');
const ROUNDS = Number(args.get('rounds') ?? 3);
const SECONDS = Number(args.get('seconds') ?? 2);
const LATENCY_N = Number(args.get('latency') ?? 300);
const IN_FLIGHT = Number(args.get('inflight') ?? 100);
const ADAPTERS = (args.get('adapters') ?? 'sqlite,redis,rabbitmq').split(',') as Adapter[];
const DIAG = args.has('diag');
type Adapter = 'sqlite' | 'redis' | 'rabbitmq';
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const payload = (t0: number, i: number) => ({ t0, i, order: `ord-${i}`, items: [1, 2, 3], note: 'x'.repeat(40) });
type Payload = ReturnType<typeof payload>;

/** CPU seconds a process has used (utime + stime from /proc, 10 ms ticks). */
function procCpu(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(f[11]) + Number(f[12])) / 100;
}

/** One way to run the flow: enqueue(data) resolves when the broker holds it; onHandle sees each handled message. */
interface Target {
  /** The engine's process, for --diag's CPU figures. */
  pid?: number | undefined;
  enqueue(data: Payload): Promise<unknown>;
  onHandle: (data: Payload) => void;
  close(): Promise<void>;
}

interface Figures {
  rate: number;
  p50: number;
  p99: number;
}

/** Serial latency, then throughput with IN_FLIGHT outstanding. */
async function measure(target: Target): Promise<Figures> {
  const latencies: number[] = [];
  let waiting: ((t: number) => void) | null = null;
  target.onHandle = (data) => {
    if (waiting) waiting(performance.now() - data.t0);
  };
  for (let i = 0; i < LATENCY_N; i++) {
    const handled = new Promise<number>((r) => {
      waiting = r;
    });
    await target.enqueue(payload(performance.now(), i));
    latencies.push(await handled);
  }
  waiting = null;
  let handled = 0;
  target.onHandle = () => {
    handled++;
  };
  let sent = 0;
  const deadline = performance.now() + SECONDS * 1000;
  const lane = async () => {
    while (performance.now() < deadline) await target.enqueue(payload(performance.now(), sent++));
  };
  const started = performance.now();
  const before = handled;
  const cpu0 = process.cpuUsage();
  const e0 = target.pid ? procCpu(target.pid) : 0;
  const b0 = brokerPid ? procCpu(brokerPid) : 0;
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
  const elapsed = (performance.now() - started) / 1000;
  const rate = (handled - before) / elapsed;
  if (DIAG) {
    // where the CPU went during the throughput phase: this process (producer, worker or floor), the
    // engine, redis-server; a figure far below 100% on every process means something waits
    const n = Math.max(1, handled - before);
    const own = process.cpuUsage(cpu0);
    const engine = target.pid ? procCpu(target.pid) - e0 : null;
    const broker = brokerPid ? procCpu(brokerPid) - b0 : null;
    const share = (cpu: number | null) => (cpu === null ? '-' : `${fmt((cpu / elapsed) * 100, 0)}% (${fmt((cpu * 1e6) / n, 0)} µs/msg)`);
    process.stderr.write(
      `\n[diag] ${fmt(rate, 0)} msgs/s; CPU: bench ${share((own.user + own.system) / 1e6)}, engine ${share(engine)}, redis ${share(broker)}\n`,
    );
  }
  // let the backlog drain before the next measurement
  const drainUntil = performance.now() + 30_000;
  while (handled < sent && performance.now() < drainUntil) await new Promise((r) => setTimeout(r, 20));
  latencies.sort((a, b) => a - b);
  return { rate, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

// ── floors ─────────────────────────────────────────────────────────────

function sqliteFloor(file: string): Target {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE IF NOT EXISTS q (id INTEGER PRIMARY KEY, data TEXT NOT NULL)');
  const insert = db.prepare('INSERT INTO q (data) VALUES (?)');
  const select = db.prepare('SELECT id, data FROM q ORDER BY id LIMIT 100');
  const remove = db.prepare('DELETE FROM q WHERE id = ?');
  let batch: Array<{ data: string; done: () => void }> = [];
  let inflight = new Set<number>();
  let consuming = false;
  const target: Target = {
    onHandle: () => {},
    enqueue(data) {
      return new Promise<void>((resolve) => {
        batch.push({ data: JSON.stringify(data), done: resolve });
        if (batch.length === 1) setImmediate(flush);
      });
    },
    async close() {
      db.close();
    },
  };
  // one transaction per turn, as the engine's group commit
  const flush = () => {
    const mine = batch;
    batch = [];
    db.transaction(() => {
      for (const m of mine) insert.run(m.data);
    })();
    for (const m of mine) m.done();
    consume();
  };
  const consume = () => {
    if (consuming) return;
    consuming = true;
    setImmediate(() => {
      consuming = false;
      const rows = (select.all() as Array<{ id: number; data: string }>).filter((r) => !inflight.has(r.id));
      if (rows.length === 0) return;
      for (const r of rows) inflight.add(r.id);
      for (const r of rows) target.onHandle(JSON.parse(r.data) as Payload);
      // as the engine acknowledges: removals commit without their own fsync (the next insert's has them)
      db.pragma('synchronous = NORMAL');
      db.transaction(() => {
        for (const r of rows) remove.run(r.id);
      })();
      db.pragma('synchronous = FULL');
      inflight = new Set([...inflight].filter((id) => !rows.some((r) => r.id === id)));
      consume();
    });
  };
  return target;
}

async function redisFloor(url: string): Promise<Target> {
  const producer = new Redis(url);
  const consumer = new Redis(url);
  const stream = `floor:${Date.now()}`;
  await producer.xgroup('CREATE', stream, 'g', '$', 'MKSTREAM');
  let closed = false;
  const target: Target = {
    onHandle: () => {},
    enqueue: (data) => producer.xadd(stream, '*', 'd', JSON.stringify(data)),
    async close() {
      closed = true;
      consumer.disconnect();
      await producer.quit();
    },
  };
  (async () => {
    while (!closed) {
      const reply = (await consumer
        .xreadgroup('GROUP', 'g', 'c1', 'COUNT', 100, 'BLOCK', 0, 'STREAMS', stream, '>')
        .catch(() => null)) as Array<[string, Array<[string, string[]]>]> | null;
      if (!reply) continue;
      const entries = reply[0]?.[1] ?? [];
      for (const [, fields] of entries) target.onHandle(JSON.parse(fields[1] as string) as Payload);
      if (entries.length) await consumer.xack(stream, 'g', ...entries.map(([id]) => id)).catch(() => {});
    }
  })();
  return target;
}

async function rabbitFloor(url: string): Promise<Target> {
  const connection = await amqp.connect(url);
  const pub = await connection.createConfirmChannel();
  const sub = await connection.createChannel();
  const queue = `floor.${Date.now()}`;
  await pub.assertQueue(queue, { durable: true });
  await sub.prefetch(100);
  const target: Target = {
    onHandle: () => {},
    enqueue: (data) =>
      new Promise<void>((resolve, reject) => {
        pub.publish('', queue, Buffer.from(JSON.stringify(data)), { persistent: true }, (err: unknown) => (err ? reject(err) : resolve()));
      }),
    async close() {
      await connection.close();
    },
  };
  await sub.consume(queue, (msg) => {
    if (!msg) return;
    target.onHandle(JSON.parse(msg.content.toString()) as Payload);
    sub.ack(msg);
  });
  return target;
}

// ── the engine ─────────────────────────────────────────────────────────

async function engineTarget(adapterYaml: string, dir: string): Promise<Target & { pid: number | undefined; call: Target }> {
  const config = join(dir, `config-${Date.now()}.yaml`);
  writeFileSync(
    config,
    `workers:\n  - name: eng-worker-manager\n    config:\n      port: 0\n  - name: eng-queue\n    config:\n      adapter: ${adapterYaml}\n      queue_configs:\n        bench: { concurrency: ${IN_FLIGHT} }\n`,
  );
  const engine = await spawnTs(ENG_CLI, ['start', '-c', config, '--data-dir', join(dir, `data-${Date.now()}`)], /eng: ready (.*)\n/);
  if (DIAG) engine.child.stderr?.on('data', (d: Buffer) => process.stderr.write(d));
  const busUrl = (JSON.parse(engine.match[1] as string) as { bus: { url: string } }).bus.url;
  const worker = connect(busUrl, { name: 'bench-queue-worker', logger: quiet });
  const producer = connect(busUrl, { name: 'bench-queue-producer', logger: quiet });
  await Promise.all([worker.ready({ timeoutMs: 10_000 }), producer.ready({ timeoutMs: 10_000 })]);
  const call: Target = {
    pid: engine.child.pid,
    onHandle: () => {},
    enqueue: (data) => producer.trigger({ function_id: 'bench::call', payload: data }),
    async close() {},
  };
  const target: Target & { pid: number | undefined; call: Target } = {
    pid: engine.child.pid,
    call,
    onHandle: () => {},
    enqueue: (data) => producer.trigger({ function_id: 'bench::queue', payload: data, action: TriggerAction.Enqueue({ queue: 'bench' }) }),
    async close() {
      await producer.close();
      await worker.close();
      await stopChild(engine.child);
    },
  };
  worker.registerFunction('bench::queue', async (data: Payload) => {
    target.onHandle(data);
    return null;
  });
  worker.registerFunction('bench::call', async (data: Payload) => {
    call.onHandle(data);
    return null;
  });
  // registered: a first message comes back
  await new Promise<void>((resolve) => {
    target.onHandle = () => resolve();
    void target.enqueue(payload(performance.now(), -1));
  });
  return target;
}

// ── run ────────────────────────────────────────────────────────────────

const dir = mkdtempSync(join(tmpdir(), 'eng-bench-queue-'));
const redis = ADAPTERS.includes('redis') ? await startRedis() : null;
const brokerPid: number | undefined = redis?.process.pid;
const rabbit = ADAPTERS.includes('rabbitmq') ? await startRabbit() : null;
const results = new Map<string, Figures[]>();
const rows: Array<Record<string, string>> = [];
let missed = 0;
try {
  for (const adapter of ADAPTERS) {
    const floor =
      adapter === 'sqlite'
        ? sqliteFloor(join(dir, 'floor.db'))
        : adapter === 'redis'
          ? await redisFloor((redis as { url: string }).url)
          : await rabbitFloor((rabbit as { url: string }).url);
    const adapterYaml =
      adapter === 'sqlite'
        ? `{ name: sqlite }`
        : adapter === 'redis'
          ? `{ name: redis, config: { redis_url: "${redis?.url}" } }`
          : `{ name: rabbitmq, config: { amqp_url: "${rabbit?.url}" } }`;
    const engine = await engineTarget(adapterYaml, dir);
    try {
      // warm up both paths
      await measure(floor);
      await measure(engine);
      for (let round = 0; round < ROUNDS; round++) {
        process.stderr.write(`${adapter} round ${round + 1}/${ROUNDS}… `);
        const order: Array<['floor' | 'engine' | 'call', Target]> = [
          ['floor', floor],
          ['engine', engine],
          ['call', engine.call],
        ];
        for (const [name, target] of round % 2 ? order.reverse() : order) {
          const key = `${adapter} ${name}`;
          results.set(key, [...(results.get(key) ?? []), await measure(target)]);
        }
      }
      process.stderr.write('\n');
    } finally {
      await engine.close();
      await floor.close();
    }
    const med = (name: string, k: keyof Figures) => median((results.get(`${adapter} ${name}`) ?? []).map((f) => f[k]));
    const thr = med('engine', 'rate') / med('floor', 'rate');
    const lat = med('engine', 'p50') / med('floor', 'p50');
    // the same broker flow with the engine's two WebSocket hops in series (see the header)
    const composedRate = 1 / (1 / med('floor', 'rate') + 1 / med('call', 'rate'));
    const composedP50 = med('floor', 'p50') + med('call', 'p50');
    const ok = thr >= 0.7 && lat <= 1.5;
    if (!ok) missed++;
    for (const name of ['floor', 'composed', 'engine', 'call']) {
      const engine = name === 'engine';
      rows.push({
        adapter,
        path:
          name === 'floor'
            ? `floor (bare ${adapter === 'sqlite' ? 'better-sqlite3' : adapter === 'redis' ? 'ioredis streams' : 'amqplib'})`
            : name === 'composed'
              ? 'floor + engine call in series'
              : engine
                ? 'engine: enqueue → handler'
                : 'info: engine call, no queue',
        'msgs/s': fmt(name === 'composed' ? composedRate : med(name, 'rate'), 0),
        'p50 ms': fmt(name === 'composed' ? composedP50 : med(name, 'p50'), 2),
        'p99 ms': name === 'composed' ? '' : fmt(med(name, 'p99'), 2),
        'throughput vs floor': engine ? `${fmt(thr * 100, 0)}% (≥ 70%)` : '',
        'p50 vs floor': engine ? `${fmt(lat, 2)}× (≤ 1.5×)` : '',
        budget: engine ? (ok ? 'met' : 'MISSED') : '',
        'vs floor + call': engine
          ? `${fmt((med('engine', 'rate') / composedRate) * 100, 0)}%, ${fmt(med('engine', 'p50') / composedP50, 2)}×`
          : '',
      });
    }
  }
} finally {
  await redis?.stop();
  await rabbit?.stop();
}
console.log(
  `\nqueue: enqueue → handler, ${ROUNDS} rounds, medians; load average ${loadavg()
    .map((l) => fmt(l, 1))
    .join(
      ' ',
    )} on ${cpus().length} cores; latency: ${LATENCY_N} messages one at a time; throughput: ${IN_FLIGHT} enqueues in flight for ${SECONDS} s\n`,
);
console.log(table(rows));
process.exit(missed ? 1 : 0);
