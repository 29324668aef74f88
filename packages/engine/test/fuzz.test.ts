/**
 * Fuzz: thousands of random and mutated frames at the bus, random bodies at HTTP triggers and the
 * OTLP/HTTP receiver, random binary telemetry frames. Whatever arrives, the engine stays up, never
 * prints an uncaught error, and answers health calls afterwards with its stores intact.
 *
 * Seeded: FUZZ_SEED=<n> replays a run; the seed is printed on every run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import { RawClient } from '../../../test/raw-client.ts';

const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const BUS_FRAMES = Number(process.env.FUZZ_BUS_FRAMES ?? 3000);
const HTTP_BODIES = Number(process.env.FUZZ_HTTP_BODIES ?? 600);
const OTLP_BODIES = Number(process.env.FUZZ_OTLP_BODIES ?? 400);

/** mulberry32: small, fast, good enough to reproduce a run from its seed. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)] as T;
  return { next, int, pick, chance: (p: number) => next() < p };
}
type Rng = ReturnType<typeof prng>;
const asBody = (value: string | Buffer): string | Uint8Array<ArrayBuffer> => (typeof value === 'string' ? value : new Uint8Array(value));

const FRAME_TYPES = [
  'registerfunction',
  'unregisterfunction',
  'registertriggertype',
  'unregistertriggertype',
  'registertrigger',
  'unregistertrigger',
  'triggerregistrationresult',
  'invokefunction',
  'invocationresult',
  'registerservice',
  'reattach',
  'ping',
  'pong',
  'workerregistered',
  'error',
  'nonsense',
] as const;

const BUILTINS = [
  'state::set',
  'state::get',
  'state::list',
  'state::delete',
  'state::update',
  'stream::set',
  'stream::get',
  'stream::list',
  'publish',
  'enqueue',
  'engine::functions::list',
  'engine::workers::register',
  'engine::workers::list',
  'engine::traces::list',
  'engine::logs::list',
  'engine::log::info',
  'engine::log::error',
  'engine::queue::list_topics',
  'engine::registered-triggers::list',
  'eng::cron::next_runs',
  'fuzz::echo',
  'does::not::exist',
];

/**
 * Deep nesting stands in a value as a marker string and becomes real JSON text in `serialize`:
 * the test process itself could not stringify 6,000 levels (vitest's worker stack).
 */
const deep = (depth: number, kind: 'a' | 'o') => `\u0000DEEP:${depth}:${kind}`;
function serialize(value: unknown): string {
  const text = JSON.stringify(value) ?? 'null';
  return text.replace(/"\\u0000DEEP:(\d+):([ao])"/g, (_m, depth: string, kind: string) => {
    const n = Number(depth);
    return kind === 'a' ? `${'['.repeat(n)}1${']'.repeat(n)}` : `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
  });
}

/** A random JSON-ish value: scalars, odd strings, wrong types, deep nesting, big strings. */
function randomValue(rng: Rng, budget = 3): unknown {
  switch (rng.int(14)) {
    case 0:
      return null;
    case 1:
      return rng.chance(0.5);
    case 2:
      return rng.pick([0, -1, 1.5, 2 ** 53 + 1, -1e308, 1e-300, Number.MAX_SAFE_INTEGER]);
    case 3:
      return rng.pick(['', ' ', 'a\nforged line\r\n[ERROR] x', '\u0000\u0001\u001b[31m', '💥'.repeat(50), '../../etc/passwd']);
    case 4:
      return 'x'.repeat(rng.pick([256, 257, 4096, 70_000]));
    case 5:
      return deep(rng.pick([50, 500, 6000, 20_000]), rng.pick(['a', 'o'] as const));
    case 6:
      return rng.pick(BUILTINS);
    case 7:
      return crypto.randomUUID();
    case 8:
      return { __proto__: { polluted: true }, constructor: { prototype: { polluted: true } } };
    default:
      if (budget <= 0) return rng.int(100);
      if (rng.chance(0.5)) return Array.from({ length: rng.int(4) }, () => randomValue(rng, budget - 1));
      return Object.fromEntries(Array.from({ length: rng.int(5) }, () => [randomKey(rng), randomValue(rng, budget - 1)]));
  }
}

const FIELD_NAMES = [
  'id',
  'function_id',
  'invocation_id',
  'trigger_type',
  'type',
  'data',
  'result',
  'error',
  'metadata',
  'config',
  'request_format',
  'response_format',
  'trigger_request_format',
  'action',
  'traceparent',
  'baggage',
  'worker_id',
  'reattach_token',
  'scope',
  'key',
  'value',
  'topic',
  'queue',
  'invocation',
  'name',
  'description',
  '_caller_worker_id',
];
const randomKey = (rng: Rng) => (rng.chance(0.85) ? rng.pick(FIELD_NAMES) : `k${rng.int(1000)}`);

/** A frame that is nearly valid: the right type with some fields wrong, missing or hostile. */
function mutatedFrame(rng: Rng): object {
  const type = rng.pick(FRAME_TYPES);
  const base: Record<string, unknown> = { type };
  const fid = rng.chance(0.7) ? rng.pick(BUILTINS) : randomValue(rng);
  switch (type) {
    case 'registerfunction':
      Object.assign(base, { id: rng.chance(0.5) ? `fuzz::f${rng.int(50)}` : fid, metadata: randomValue(rng) });
      break;
    case 'invokefunction':
      Object.assign(base, {
        invocation_id: rng.chance(0.8) ? crypto.randomUUID() : randomValue(rng),
        function_id: fid,
        data: randomValue(rng),
      });
      if (rng.chance(0.3)) base.action = rng.pick([{ type: 'void' }, { type: 'enqueue', queue: 'default' }, randomValue(rng)]);
      break;
    case 'invocationresult':
      Object.assign(base, { invocation_id: crypto.randomUUID(), result: randomValue(rng) });
      break;
    case 'registertriggertype':
      Object.assign(base, {
        id: rng.chance(0.5) ? `fuzz-type-${rng.int(20)}` : randomValue(rng),
        trigger_request_format: randomValue(rng),
      });
      break;
    case 'registertrigger':
      Object.assign(base, {
        id: `fuzz-trigger-${rng.int(100)}`,
        trigger_type: rng.pick(['http', 'cron', 'state', 'stream', 'subscribe', 'queue', 'nope', randomValue(rng)]),
        function_id: fid,
        config: randomValue(rng),
      });
      break;
    default:
      break;
  }
  const extra = rng.int(4);
  for (let i = 0; i < extra; i++) base[randomKey(rng)] = randomValue(rng);
  if (rng.chance(0.2)) delete base[rng.pick(Object.keys(base))];
  return base;
}

/** Text that is not JSON, JSON that is not a frame, or JSON cut short. */
function brokenText(rng: Rng): string | Buffer {
  switch (rng.int(7)) {
    case 0:
      return '{"type": "invokefunction", "function_id": "state::get", "data": {';
    case 1:
      return rng.pick(['null', '[]', '"str"', '42', 'true', '{}', '{"type": null}', '{"type": 7}']);
    case 2:
      return Buffer.from(Array.from({ length: rng.int(512) }, () => rng.int(256)));
    case 3:
      return `${'['.repeat(rng.pick([1000, 100_000]))}`;
    case 4:
      return serialize(mutatedFrame(rng)).slice(0, rng.int(200));
    case 5:
      return `{"type":"invokefunction","invocation_id":"${crypto.randomUUID()}","function_id":"state::set","data":${'{"a":'.repeat(30_000)}1${'}'.repeat(30_000)}}`;
    default:
      return '\ud800\udfff\uffff';
  }
}

function otlpBody(rng: Rng): { body: string | Buffer; type: string } {
  const type = rng.pick(['application/json', 'application/x-protobuf', 'text/plain', 'application/json; charset=utf-8']);
  if (type === 'application/x-protobuf' || rng.chance(0.15))
    return { type, body: Buffer.from(Array.from({ length: rng.int(2048) }, () => rng.int(256))) };
  const span = {
    traceId: rng.chance(0.8) ? '0af7651916cd43dd8448eb211c80319c' : randomValue(rng),
    spanId: rng.chance(0.8) ? 'b7ad6b7169203331' : randomValue(rng),
    name: rng.chance(0.7) ? 'fuzz-span' : randomValue(rng),
    startTimeUnixNano: rng.chance(0.7) ? String(Date.now() * 1e6) : randomValue(rng),
    endTimeUnixNano: rng.chance(0.7) ? String(Date.now() * 1e6 + 1000) : randomValue(rng),
    attributes: rng.chance(0.5) ? [{ key: 'k', value: { stringValue: 'v'.repeat(rng.pick([1, 10_000, 600_000])) } }] : randomValue(rng),
    status: randomValue(rng),
  };
  const doc = rng.chance(0.8)
    ? {
        resourceSpans: [
          { resource: { attributes: randomValue(rng) }, scopeSpans: [{ spans: rng.chance(0.9) ? [span] : randomValue(rng) }] },
        ],
      }
    : randomValue(rng);
  const text = serialize(doc);
  return { type, body: rng.chance(0.1) ? text.slice(0, rng.int(text.length)) : text };
}

describe('fuzz: the engine survives random and hostile input on every port', () => {
  let engine: EngineProcess;
  let httpUrl: string;
  let health: RawClient;

  beforeAll(async () => {
    // eslint-disable-next-line no-console
    console.log(`fuzz seed ${SEED} (replay with FUZZ_SEED=${SEED})`);
    engine = await startEngine({
      workersYaml: [
        '  - name: eng-http',
        '    config:',
        '      port: {{HTTP_PORT}}',
        '  - name: eng-stream',
        '    config:',
        '      port: {{STREAMS_PORT}}',
        '  - name: eng-state',
        '  - name: eng-queue',
        '  - name: eng-pubsub',
        '  - name: eng-cron',
        '  - name: eng-observability',
        '    config:',
        '      logs_console_output: false',
        '',
      ].join('\n'),
    });
    httpUrl = (engine.addresses.http as { url: string }).url;
    // a real worker with an HTTP route and a function, so fuzzed calls reach worker code paths too
    health = await RawClient.worker(engine.busUrl);
    health.send({ type: 'registerfunction', id: 'fuzz::echo' });
    health.send({
      type: 'registertrigger',
      id: 'fuzz-route',
      trigger_type: 'http',
      function_id: 'fuzz::echo',
      config: { api_path: 'fuzz/echo', http_method: 'POST' },
    });
    health.socket.on('message', (raw) => {
      let frame: { type?: string; invocation_id?: string; data?: unknown };
      try {
        frame = JSON.parse(raw.toString());
      } catch {
        return;
      }
      if (frame.type === 'invokefunction' && frame.invocation_id)
        health.send({
          type: 'invocationresult',
          invocation_id: frame.invocation_id,
          function_id: 'fuzz::echo',
          result: { status_code: 200, body: { ok: true } },
        });
    });
    await health.result('state::set', { scope: 'fuzz-canary', key: 'k', value: { kept: true } });
  }, 60_000);

  afterAll(async () => {
    await health?.close();
    await engine?.stop();
  });

  const alive = () => engine.process.exitCode === null && engine.process.signalCode === null;
  /**
   * A connection that only ever gets well-formed UTF-8, so the engine has no reason to close it:
   * what it registers stays registered until the health calls at the end have listed it all
   * (a connection that closes takes its registrations, and their hostile metadata, with it).
   */
  let steady: WebSocket | undefined;

  const open = async (path = '') => {
    const ws = new WebSocket(`${engine.busUrl}${path}`);
    ws.on('error', () => {});
    await new Promise<void>((resolve) => {
      ws.once('open', () => resolve());
      ws.once('close', () => resolve());
    });
    return ws;
  };

  /** Known attacks, mixed into every run whatever the seed (issue 12 items 1 and 13). */
  const hostile = [
    `{"type":"registerfunction","id":"fuzz::deep-meta","metadata":{"d":${'['.repeat(8000)}${']'.repeat(8000)}}}`,
    `{"type":"registertriggertype","id":"fuzz-deep-type","trigger_request_format":${'{"a":'.repeat(8000)}1${'}'.repeat(8000)}}`,
    `{"type":"registertrigger","id":"fuzz-deep-binding","trigger_type":"subscribe","function_id":"fuzz::echo","config":{"topic":"x","d":${'['.repeat(8000)}${']'.repeat(8000)}}}`,
    JSON.stringify({ type: 'registerfunction', id: `fuzz::${'L'.repeat(1024 * 1024)}` }),
    JSON.stringify({ type: 'registerfunction', id: 'engine::fuzz\n2030-01-01T00:00:00.000Z ERROR forged' }),
  ];

  it(`bus: ${BUS_FRAMES} random, mutated and broken frames leave the engine up`, async () => {
    const rng = prng(SEED);
    let socket: WebSocket | undefined;
    let reconnects = 0;
    steady = await open();
    const hostileAt = new Map(hostile.map((frame) => [rng.int(BUS_FRAMES), frame]));
    for (let i = 0; i < BUS_FRAMES; i++) {
      if (!socket || socket.readyState !== WebSocket.OPEN) {
        socket = await open();
        reconnects++;
        expect(alive(), `engine died (seed ${SEED}, frame ${i})`).toBe(true);
        if (socket.readyState !== WebSocket.OPEN) continue;
      }
      const attack = hostileAt.get(i);
      if (attack) steady.send(attack);
      const roll = rng.next();
      if (roll < 0.6) {
        // well-formed text: half of it on the connection that stays
        const frame = mutatedFrame(rng) as { type: string; id?: unknown };
        const target: WebSocket | undefined = rng.chance(0.5) ? steady : socket;
        // the staying connection must not take fuzz::echo from the health worker for good (the
        // later registration serves an id): the HTTP phase and the health check call it
        if (target === steady && frame.type === 'registerfunction' && frame.id === 'fuzz::echo') frame.id = 'fuzz::steady-echo';
        target.send(serialize(frame));
      } else {
        const payload = brokenText(rng);
        socket.send(payload, { binary: Buffer.isBuffer(payload) && rng.chance(0.5) });
      }
      // let the engine breathe every few frames so the run exercises its handlers, not just the socket buffer
      if (i % 25 === 0) await new Promise((r) => setTimeout(r, 1));
    }
    socket?.terminate();
    // past the introspection module's functions_changed debounce (250 ms), which serialises every registration
    await new Promise((r) => setTimeout(r, 1000));
    expect(alive(), `engine died (seed ${SEED}); log tail:\n${engine.logs().slice(-3000)}`).toBe(true);
    expect(reconnects).toBeGreaterThan(0);
    expect(steady.readyState, 'the engine closed a connection that sent only well-formed text').toBe(WebSocket.OPEN);
  }, 240_000);

  it(`/otel: random binary telemetry frames leave the engine up`, async () => {
    const rng = prng(SEED + 1);
    expect(alive(), `engine died (seed ${SEED})`).toBe(true);
    const ws = await open('/otel');
    expect(ws.readyState).toBe(WebSocket.OPEN);
    for (let i = 0; i < 500 && ws.readyState === WebSocket.OPEN; i++) {
      const prefix = rng.pick(['OTLP', 'LOGS', 'MTRC', 'XXXX', 'OT']);
      const body = rng.chance(0.5) ? otlpBody(rng).body : serialize(randomValue(rng));
      ws.send(Buffer.concat([Buffer.from(prefix), Buffer.isBuffer(body) ? body : Buffer.from(body)]));
    }
    ws.terminate();
    await new Promise((r) => setTimeout(r, 300));
    expect(alive(), `engine died (seed ${SEED})`).toBe(true);
  }, 120_000);

  it(`HTTP: ${HTTP_BODIES} random requests on trigger routes each get an answer`, async () => {
    const rng = prng(SEED + 2);
    const paths = ['/fuzz/echo', '/fuzz/echo?x=%ZZ', '/nothing', '/%2e%2e/%2e%2e/etc', `/${'a/'.repeat(300)}`, '/fuzz/echo#frag'];
    let answered = 0;
    for (let i = 0; i < HTTP_BODIES; i++) {
      const method = rng.pick(['POST', 'GET', 'PUT', 'DELETE', 'OPTIONS', 'PATCH']);
      const value = rng.chance(0.3) ? brokenText(rng) : serialize(randomValue(rng));
      const headers: Record<string, string> = {
        'content-type': rng.pick([
          'application/json',
          'text/plain',
          'application/x-www-form-urlencoded',
          'multipart/form-data; boundary=x',
          'application/json; charset=latin1',
        ]),
      };
      if (rng.chance(0.2)) headers.origin = 'http://evil.example';
      const res = await fetch(`${httpUrl}${rng.pick(paths)}`, {
        method,
        headers,
        body: method === 'GET' ? undefined : asBody(value),
        signal: AbortSignal.timeout(15_000),
      }).catch((err: Error) => err);
      expect(res instanceof Error ? `request ${i} failed: ${res.message} (seed ${SEED})` : 'answered').toBe('answered');
      if (!(res instanceof Error)) {
        expect(res.status, `status for request ${i} (seed ${SEED})`).toBeLessThan(600);
        await res.arrayBuffer();
        answered++;
      }
    }
    expect(answered).toBe(HTTP_BODIES);
    expect(alive()).toBe(true);
  }, 240_000);

  it(`OTLP/HTTP: ${OTLP_BODIES} random bodies each get an answer`, async () => {
    const rng = prng(SEED + 3);
    for (let i = 0; i < OTLP_BODIES; i++) {
      const { body, type } = otlpBody(rng);
      const path = rng.pick(['/v1/traces', '/v1/logs', '/v1/metrics']);
      const res = await fetch(`${httpUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': type },
        body: asBody(body),
        signal: AbortSignal.timeout(15_000),
      }).catch((err: Error) => err);
      expect(res instanceof Error ? `OTLP request ${i} failed: ${res.message} (seed ${SEED})` : 'answered').toBe('answered');
      if (!(res instanceof Error)) {
        expect(res.status).toBeLessThan(600);
        await res.arrayBuffer();
      }
    }
    expect(alive()).toBe(true);
  }, 240_000);

  it('afterwards: health calls answer, stored data is intact, nothing was uncaught', async () => {
    expect(alive()).toBe(true);
    const client = await RawClient.worker(engine.busUrl);
    // every listing writes out what the fuzzed (still connected) worker registered
    for (const id of [
      'engine::workers::list',
      'engine::trigger-types::list',
      'engine::registered-triggers::list',
      'engine::logs::list',
      'engine::traces::list',
    ]) {
      const frame = await client.call(id, { include_internal: true });
      expect(frame.error, `${id} (seed ${SEED})`).toBeUndefined();
    }
    const { functions } = await client.result<{ functions: Array<{ function_id: string }> }>('engine::functions::list', {
      include_internal: true,
    });
    const ids = functions.map((f) => f.function_id);
    // built-ins still belong to the engine: no fuzzed registration replaced or removed them
    expect(ids).toEqual(expect.arrayContaining(['state::set', 'state::get', 'engine::functions::list', 'publish']));
    expect(await client.result('state::get', { scope: 'fuzz-canary', key: 'k' })).toEqual({ kept: true });
    // the fuzzed connection leaves, and its registrations with it: among them may be triggers a
    // user could make too, such as a state trigger bound to state::delete, which would delete
    // every key the moment it is set (seed 1210042842 made one)
    steady?.terminate();
    await waitFor(async () => {
      const { registered_triggers: triggers } = await client.result<{ registered_triggers: Array<{ function_id: string }> }>(
        'engine::registered-triggers::list',
        { include_internal: true },
      );
      return triggers.every((t) => !t.function_id.startsWith('state::')) ? true : null;
    }, 10_000);
    await client.result('state::set', { scope: 'fuzz-canary', key: 'after', value: 1 });
    expect(await client.result('state::get', { scope: 'fuzz-canary', key: 'after' })).toBe(1);
    const res = await waitFor(async () => {
      const r = await fetch(`${httpUrl}/fuzz/echo`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
      return r.status === 200 ? r : null;
    }, 10_000);
    expect(await res.json()).toEqual({ ok: true });
    await client.close();
    steady?.terminate();
    const logs = engine.logs();
    expect(logs).not.toMatch(/uncaught|unhandled|FATAL ERROR|RangeError: Maximum call stack/i);
    // foreign ids and bodies with newlines forge no line, and none is megabytes long
    const lines = logs.split('\n');
    expect(lines.filter((l) => /^(2030-01-01|forged line|\[ERROR\] x)/.test(l))).toEqual([]);
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThan(16 * 1024);
  }, 60_000);
});
