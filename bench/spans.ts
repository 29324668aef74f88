/**
 * bench/spans — what one engine span costs in CPU, in one process, against the least any
 * in-memory span store can spend (measured in the same run, rounds alternating, medians).
 *
 * - engine: the HTTP server span exactly as eng-http opens it (four attributes, the status code set
 *   at the end), through the engine's tracer, the collector's limits and the span store, with the
 *   store full (100,000 spans, the default) so that every span stored evicts the oldest.
 * - floor: bench/floor-spans.ts — per span, fresh random trace and span ids, the W3C traceparent
 *   string handed to the call, one record holding the same fields and the attributes as a flat
 *   array, kept in a ring of 100,000 and in a Map by trace id (the least a store answering "the
 *   spans of trace X" keeps), the oldest dropped from both.
 *
 * The figure the budget speaks of (ARCHITECTURE.md: the engine's spans for one HTTP request cost
 * ≤ 5 µs of engine CPU) is measured end to end by bench/http (observability on − off); this bench
 * says how much of it is the span itself and how far that is from the floor. CPU time of this
 * process (user + system) per span, garbage collection included.
 *
 *   node --import tsx bench/spans.ts [--rounds 5] [--spans 200000]
 */
import { availableParallelism, loadavg } from 'node:os';
import { Collector } from '../packages/engine/src/modules/observability/collector.ts';
import { ObservabilityConfig } from '../packages/engine/src/modules/observability/config.ts';
import { SpanStore } from '../packages/engine/src/modules/observability/span-store.ts';
import { Tracer } from '../packages/engine/src/modules/observability/tracer.ts';
import { FloorSpanStore } from './floor-spans.ts';
import { fmt, median, table } from './lib.ts';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set((process.argv[i] as string).replace(/^--/, ''), process.argv[i + 1] ?? '');
const ROUNDS = Number(args.get('rounds') ?? 5);
const SPANS = Number(args.get('spans') ?? 200_000);
const CAPACITY = 100_000;

const config = ObservabilityConfig.parse({});
const store = new SpanStore(CAPACITY, Number.POSITIVE_INFINITY);
const collector = new Collector(store, null, () => {});
const tracer = new Tracer(config, (span) => collector.addSpan(span));

let sink = 0;
function engineSpan(i: number): void {
  const span = tracer.startSpan('GET /bench/items/:id', {
    kind: 'server',
    pairs: [
      ['http.request.method', 'GET'],
      ['http.route', '/bench/items/:id'],
      ['url.path', `/bench/items/${i}`],
      ['function_id', 'bench::item'],
    ],
  });
  sink += span.traceparent.length;
  span.setAttribute('http.response.status_code', 200);
  span.end({ status: 'ok' });
}

const floorStore = new FloorSpanStore(CAPACITY);
function floorSpan(i: number): void {
  const { record, traceparent } = floorStore.open('GET /bench/items/:id', [
    'http.request.method',
    'GET',
    'http.route',
    '/bench/items/:id',
    'url.path',
    `/bench/items/${i}`,
    'function_id',
    'bench::item',
  ]);
  sink += traceparent.length;
  record.attrs.push('http.response.status_code', String(200));
  floorStore.close(record, 1);
}

function run(make: (i: number) => void, n: number): number {
  const before = process.cpuUsage();
  for (let i = 0; i < n; i++) make(i);
  const spent = process.cpuUsage(before);
  return (spent.user + spent.system) / n;
}

// fill both stores first, so every measured span evicts one, as in a long-running engine
run(engineSpan, CAPACITY + 20_000);
run(floorSpan, CAPACITY + 20_000);
if (store.size !== CAPACITY || floorStore.size !== CAPACITY)
  throw new Error(`the span store holds ${store.size} spans, expected ${CAPACITY}`);

const engine: number[] = [];
const floor: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  const order = Math.random() < 0.5 ? ['engine', 'floor'] : ['floor', 'engine'];
  for (const which of order) {
    if (which === 'engine') engine.push(run(engineSpan, SPANS));
    else floor.push(run(floorSpan, SPANS));
  }
}
const e = median(engine);
const f = median(floor);
console.log(
  `\nbench/spans — CPU per span with ${CAPACITY.toLocaleString('en')} spans stored (medians of ${ROUNDS} rounds × ${SPANS.toLocaleString('en')} spans)\n`,
);
console.log(
  table([
    { what: 'floor: ids, traceparent, one record, ring + Map by trace id', 'µs/span': fmt(f, 2), ratio: '1.00×' },
    { what: 'engine: HTTP server span (tracer → limits → span store)', 'µs/span': fmt(e, 2), ratio: `${fmt(e / f, 2)}×` },
  ]),
);
console.log(
  `\nload average: ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')} on ${availableParallelism()} cores${sink < 0 ? '' : ''}`,
);
