/**
 * Issue 12 items 5 and 8: nobody can exhaust the engine's memory with telemetry or its file
 * descriptors with idle sockets.
 *
 * - OTLP/HTTP floods of spans and log records with huge attributes: the engine's RSS stays bounded,
 *   values are cut with a `…[truncated N bytes]` marker, the stores evict oldest first by bytes and
 *   the newest records stay queryable.
 * - OTLP from browser pages is refused unless `cors.allowed_origins` of eng-http lists them.
 * - Sockets that never send a byte are closed on the HTTP, bus and streams ports; WebSockets that
 *   stop answering pings are closed, idle workers that answer them are not; a connection cap
 *   refuses the excess with a log line, and the ports serve again once the idle sockets are gone.
 */
import { readFileSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import { RawClient } from '../../../test/raw-client.ts';
import { StreamsClient } from './kv-clients.ts';
import { hex } from './observability-helpers.ts';

const KiB = 1024;
const MiB = 1024 * KiB;

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One HTTP request by hand (fetch would not let us set `Origin`). */
function http(port: number, method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1',
      port,
      method,
      path,
      headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
    });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => {
        text += chunk.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    // a refusal may close the socket while the body is still going out
    req.on('error', reject);
    req.end(body);
  });
}

const ns = (ms: number) => String(BigInt(Math.round(ms)) * 1_000_000n);
const str = (key: string, value: string) => ({ key, value: { stringValue: value } });

/** One trace of `spans` spans (a root and children), each with a `payload` attribute of `payloadBytes`. */
function bigTrace(traceId: string, spans: number, payloadBytes: number, label: string): string {
  const rootId = hex(8);
  const now = Date.now();
  const payload = 'p'.repeat(payloadBytes);
  const list = Array.from({ length: spans }, (_, i) => ({
    traceId,
    spanId: i === 0 ? rootId : hex(8),
    ...(i === 0 ? {} : { parentSpanId: rootId }),
    name: i === 0 ? `flood ${label}` : `child ${i}`,
    kind: 1,
    startTimeUnixNano: ns(now + i),
    endTimeUnixNano: ns(now + i + 1),
    attributes: [str('label', label), str('payload', payload)],
    status: { code: 1 },
  }));
  return JSON.stringify({
    resourceSpans: [
      { resource: { attributes: [str('service.name', 'flooder')] }, scopeSpans: [{ scope: { name: 'flood' }, spans: list }] },
    ],
  });
}

/** `records` log records with a body and a `payload` attribute of `payloadBytes` each. */
function bigLogs(traceId: string, records: number, payloadBytes: number, label: string): string {
  const payload = 'q'.repeat(payloadBytes);
  const now = Date.now();
  const logRecords = Array.from({ length: records }, (_, i) => ({
    timeUnixNano: ns(now + i),
    severityNumber: 9,
    body: { stringValue: `${label} ${payload}` },
    attributes: [str('label', label), str('payload', payload)],
    traceId,
    spanId: hex(8),
  }));
  return JSON.stringify({
    resourceLogs: [{ resource: { attributes: [str('service.name', 'flooder')] }, scopeLogs: [{ scope: { name: 'flood' }, logRecords }] }],
  });
}

/** Samples the engine's RSS every 50 ms while `work` runs; returns the peak. */
async function peakRss(pid: number, work: () => Promise<void>): Promise<number> {
  let peak = rssMb(pid);
  const timer = setInterval(() => {
    peak = Math.max(peak, rssMb(pid));
  }, 50);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return Math.max(peak, rssMb(pid));
}

describe('OTLP floods stay within the byte budgets', () => {
  let engine: EngineProcess;
  let client: RawClient;
  let httpPort: number;

  beforeAll(async () => {
    engine = await startEngine({
      workersYaml: `  - name: eng-http
    config: { port: {{HTTP_PORT}} }
  - name: eng-observability
    config:
      memory_max_bytes: ${8 * MiB}
      logs_max_bytes: ${4 * MiB}
      logs_console_output: false
`,
    });
    httpPort = engine.ports.HTTP as number;
    client = await RawClient.worker(engine.busUrl);
  });
  afterAll(async () => {
    await client?.terminate();
    await engine?.stop();
  });

  const health = async () =>
    (await client.result<{ components: { spans: { details: any }; logs: { details: any } } }>('engine::health::check', {})).components;

  it('keeps RSS bounded under 750 MB of 512 KiB span attributes, truncates them and evicts the oldest spans', async () => {
    const pid = engine.process.pid as number;
    // warm up (JIT, first allocations) so the baseline is the engine at work
    for (let i = 0; i < 3; i++)
      expect((await http(httpPort, 'POST', '/v1/traces', bigTrace(hex(16), 9, 512 * KiB, 'warm'))).status).toBe(200);
    const baseline = rssMb(pid);
    const traceIds: string[] = [];
    const REQUESTS = 160; // 9 spans × 512 KiB each: ~4.7 MB a request, ~750 MB in all
    const peak = await peakRss(pid, async () => {
      for (let i = 0; i < REQUESTS; i++) {
        const traceId = hex(16);
        traceIds.push(traceId);
        const answer = await http(httpPort, 'POST', '/v1/traces', bigTrace(traceId, 9, 512 * KiB, `r${i}`));
        expect(answer.status).toBe(200);
      }
    });
    console.log(`engine RSS: baseline ${Math.round(baseline)} MB, peak ${Math.round(peak)} MB during the span flood`);
    // unbounded, the store alone would hold ~750 MB of attribute strings
    expect(peak - baseline).toBeLessThan(350);

    const spans = (await health()).spans;
    expect(spans.details.max_bytes).toBe(8 * MiB);
    expect(spans.details.stored_bytes).toBeLessThanOrEqual(8 * MiB);
    expect(spans.details.evicted_spans).toBeGreaterThan(0);
    expect(spans.details.stored_spans).toBeLessThan(REQUESTS * 9);

    // the oldest traces are gone, the newest is whole and queryable, its payload cut with the marker
    const oldest = await client.result<{ total: number }>('engine::traces::list', { trace_id: traceIds[0] });
    expect(oldest.total).toBe(0);
    const newestId = traceIds[REQUESTS - 1] as string;
    const newest = await client.result<{ spans: Array<{ span_count: number; attributes: [string, string][] }>; total: number }>(
      'engine::traces::list',
      { trace_id: newestId },
    );
    expect(newest.total).toBe(1);
    expect(newest.spans[0]?.span_count).toBe(9);
    const payload = Object.fromEntries(newest.spans[0]?.attributes ?? []).payload as string;
    expect(payload.startsWith('p'.repeat(16 * KiB))).toBe(true);
    expect(payload.slice(16 * KiB)).toBe(`…[truncated ${512 * KiB - 16 * KiB} bytes]`);
    const all = await client.result<{ spans: Array<{ attributes: [string, string][] }> }>('engine::traces::spans', { trace_id: newestId });
    expect(all.spans).toHaveLength(9);
    for (const span of all.spans)
      expect(Object.fromEntries(span.attributes).payload).toHaveLength(16 * KiB + `…[truncated ${496 * KiB} bytes]`.length);
  }, 300_000);

  it('keeps RSS bounded under a log flood, cuts bodies and attributes, evicts the oldest records', async () => {
    const pid = engine.process.pid as number;
    const baseline = rssMb(pid);
    const traceIds: string[] = [];
    const REQUESTS = 160; // 9 records × (256 KiB body + 256 KiB attribute): ~4.7 MB a request, ~750 MB in all
    const peak = await peakRss(pid, async () => {
      for (let i = 0; i < REQUESTS; i++) {
        const traceId = hex(16);
        traceIds.push(traceId);
        const answer = await http(httpPort, 'POST', '/v1/logs', bigLogs(traceId, 9, 256 * KiB, `l${i}`));
        expect(answer.status).toBe(200);
      }
    });
    console.log(`engine RSS: baseline ${Math.round(baseline)} MB, peak ${Math.round(peak)} MB during the log flood`);
    expect(peak - baseline).toBeLessThan(350);

    const logs = (await health()).logs;
    expect(logs.details.max_bytes).toBe(4 * MiB);
    expect(logs.details.stored_bytes).toBeLessThanOrEqual(4 * MiB);
    expect(logs.details.evicted_logs).toBeGreaterThan(0);
    expect(logs.details.stored_logs).toBeLessThan(REQUESTS * 9);

    const oldest = await client.result<{ total: number }>('engine::logs::list', { trace_id: traceIds[0] });
    expect(oldest.total).toBe(0);
    const newest = await client.result<{ logs: Array<{ body: string; attributes: Record<string, unknown> }>; total: number }>(
      'engine::logs::list',
      { trace_id: traceIds[REQUESTS - 1] },
    );
    expect(newest.total).toBe(9);
    const record = newest.logs[0] as { body: string; attributes: Record<string, unknown> };
    // the body (`l79 ` and 256 KiB) keeps its first 64 KiB
    const sent = `l${REQUESTS - 1} `.length + 256 * KiB;
    expect(record.body.startsWith(`l${REQUESTS - 1} qqq`)).toBe(true);
    expect(record.body.slice(64 * KiB)).toBe(`…[truncated ${sent - 64 * KiB} bytes]`);
    expect(record.attributes.payload).toBe(`${'q'.repeat(16 * KiB)}…[truncated ${240 * KiB} bytes]`);
  }, 300_000);

  it('caps attributes and events per span, noting how many were dropped', async () => {
    const traceId = hex(16);
    const now = Date.now();
    const span = {
      traceId,
      spanId: hex(8),
      name: 'many',
      kind: 1,
      startTimeUnixNano: ns(now),
      endTimeUnixNano: ns(now + 1),
      attributes: Array.from({ length: 500 }, (_, i) => str(`k${i}`, 'v')),
      events: Array.from({ length: 300 }, (_, i) => ({ name: `e${i}`, timeUnixNano: ns(now), attributes: [] })),
      status: { code: 1 },
    };
    const body = JSON.stringify({ resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ spans: [span] }] }] });
    expect((await http(httpPort, 'POST', '/v1/traces', body)).status).toBe(200);
    const stored = await client.result<{ spans: Array<{ attributes: [string, string][]; events: unknown[] }> }>('engine::traces::spans', {
      trace_id: traceId,
    });
    const attributes = Object.fromEntries(stored.spans[0]?.attributes ?? []);
    expect(attributes.k127).toBe('v');
    expect(attributes.k128).toBeUndefined();
    expect(attributes['eng.dropped_attributes_count']).toBe('372');
    expect(stored.spans[0]?.events).toHaveLength(128);
    expect(attributes['eng.dropped_events_count']).toBe('172');
  });
});

describe('metric points', () => {
  let engine: EngineProcess;
  let client: RawClient;

  beforeAll(async () => {
    engine = await startEngine({ workersYaml: '  - name: eng-http\n    config: { port: {{HTTP_PORT}} }\n' });
    client = await RawClient.worker(engine.busUrl);
  });
  afterAll(async () => {
    await client?.terminate();
    await engine?.stop();
  });

  it('keeps a point within 4 KiB: a huge label is cut with the marker', async () => {
    const point = { asDouble: 1.5, timeUnixNano: ns(Date.now()), attributes: [str('tenant', 't'.repeat(512 * KiB))] };
    const body = JSON.stringify({
      resourceMetrics: [
        { resource: { attributes: [] }, scopeMetrics: [{ metrics: [{ name: 'flood.gauge', gauge: { dataPoints: [point] } }] }] },
      ],
    });
    expect((await http(engine.ports.HTTP as number, 'POST', '/v1/metrics', body)).status).toBe(200);
    const listed = await client.result<{ sdk_metrics: Array<{ name: string; attributes: Record<string, string> }> }>(
      'engine::metrics::list',
      {
        metric_name: 'flood.gauge',
      },
    );
    const tenant = listed.sdk_metrics[0]?.attributes.tenant as string;
    expect(tenant.length).toBeLessThan(4 * KiB + 40);
    expect(tenant).toMatch(/^t+…\[truncated \d+ bytes\]$/);
  });
});

describe('persist: true keeps observability.db within the byte budget too', () => {
  let engine: EngineProcess;

  beforeAll(async () => {
    engine = await startEngine({
      workersYaml: `  - name: eng-http
    config: { port: {{HTTP_PORT}} }
  - name: eng-observability
    config:
      persist: true
      memory_max_bytes: ${2 * MiB}
      logs_console_output: false
      limits: { attribute_value_bytes: ${256 * KiB}, record_bytes: ${512 * KiB} }
`,
    });
  });
  afterAll(async () => {
    await engine?.stop();
  });

  it('trims the spans table by bytes, not only by count, as large spans arrive', async () => {
    const port = engine.ports.HTTP as number;
    const REQUESTS = 40; // 9 spans × 200 KiB: ~72 MB written in all
    for (let i = 0; i < REQUESTS; i++) {
      expect((await http(port, 'POST', '/v1/traces', bigTrace(hex(16), 9, 200 * KiB, `p${i}`))).status).toBe(200);
      await new Promise((r) => setTimeout(r, 100));
    }
    // the last one over the value limit (256 KiB here): cut, and it must come back from disk as cut
    const last = hex(16);
    expect((await http(port, 'POST', '/v1/traces', bigTrace(last, 1, 300 * KiB, 'last'))).status).toBe(200);
    const size = () =>
      ['observability.db', 'observability.db-wal']
        .map((name) => {
          try {
            return statSync(join(engine.dataDir, name)).size;
          } catch {
            return 0;
          }
        })
        .reduce((a, b) => a + b, 0);
    // the last batch is written and trimmed within a few flushes (every 500 ms)
    await new Promise((r) => setTimeout(r, 2000));
    console.log(`observability.db + wal: ${(size() / MiB).toFixed(1)} MiB after ~72 MB of spans`);
    expect(size()).toBeLessThan(40 * MiB);
    // the newest trace survives a restart
    await engine.restart();
    const client = await RawClient.worker(engine.busUrl);
    const newest = await client.result<{ spans: Array<{ attributes: [string, string][] }>; total: number }>('engine::traces::list', {
      trace_id: last,
    });
    expect(newest.total).toBe(1);
    const payload = Object.fromEntries(newest.spans[0]?.attributes ?? []).payload as string;
    expect(payload.slice(256 * KiB)).toBe(`…[truncated ${44 * KiB} bytes]`);
    await client.terminate();
  }, 120_000);
});

describe('OTLP/HTTP and browser origins', () => {
  let open: EngineProcess;
  let listed: EngineProcess;
  let client: RawClient;

  beforeAll(async () => {
    [open, listed] = await Promise.all([
      startEngine({ workersYaml: '  - name: eng-http\n    config: { port: {{HTTP_PORT}} }\n' }),
      startEngine({
        workersYaml: `  - name: eng-http
    config:
      port: {{HTTP_PORT}}
      cors: { allowed_origins: ["http://good.example"] }
`,
      }),
    ]);
    client = await RawClient.worker(open.busUrl);
  });
  afterAll(async () => {
    await client?.terminate();
    await Promise.all([open?.stop(), listed?.stop()]);
  });

  const tinyTrace = (traceId: string) => bigTrace(traceId, 1, 10, 'origin');

  it('refuses OTLP from a page whose origin no cors block lists: 403, nothing stored, a preflight gets no *', async () => {
    const port = open.ports.HTTP as number;
    const traceId = hex(16);
    for (const path of ['/v1/traces', '/v1/logs', '/v1/metrics']) {
      const refused = await http(port, 'POST', path, path === '/v1/traces' ? tinyTrace(traceId) : '{}', { origin: 'http://evil.example' });
      expect(refused.status).toBe(403);
      expect(refused.headers['access-control-allow-origin']).toBeUndefined();
      expect(JSON.parse(refused.body).error.message).toContain('cors.allowed_origins of eng-http');
    }
    const preflight = await http(port, 'OPTIONS', '/v1/traces', undefined, {
      origin: 'http://evil.example',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type',
    });
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    expect(preflight.status).toBe(403);
    expect((await client.result<{ total: number }>('engine::traces::list', { trace_id: traceId })).total).toBe(0);
    expect(open.logs()).toContain('refused a request to /v1/traces from a browser page at http://evil.example');

    // SDKs and collectors send no Origin: served as before
    expect((await http(port, 'POST', '/v1/traces', tinyTrace(traceId))).status).toBe(200);
    expect((await client.result<{ total: number }>('engine::traces::list', { trace_id: traceId })).total).toBe(1);
    // trigger routes keep iii's permissive default (§6.1): the CORS layer still answers with *
    const userPreflight = await http(port, 'OPTIONS', '/orders', undefined, {
      origin: 'http://evil.example',
      'access-control-request-method': 'POST',
    });
    expect(userPreflight.headers['access-control-allow-origin']).toBe('*');
  });

  it('accepts OTLP from a page whose origin cors.allowed_origins lists, and only from it', async () => {
    const port = listed.ports.HTTP as number;
    const preflight = await http(port, 'OPTIONS', '/v1/traces', undefined, {
      origin: 'http://good.example',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type',
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('http://good.example');
    const accepted = await http(port, 'POST', '/v1/traces', tinyTrace(hex(16)), { origin: 'http://good.example' });
    expect(accepted.status).toBe(200);
    expect(accepted.headers['access-control-allow-origin']).toBe('http://good.example');
    expect((await http(port, 'POST', '/v1/traces', tinyTrace(hex(16)), { origin: 'http://evil.example' })).status).toBe(403);
  });
});

/** A TCP connection that never sends a byte (or only `greeting`); resolves when the engine closes it. */
interface Idle {
  socket: Socket;
  connectedAt: number;
  closed: boolean;
  received: string;
  closedAfter: Promise<number>;
}
function idleSocket(port: number, greeting?: string): Promise<Idle> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const idle: Idle = { socket, connectedAt: 0, closed: false, received: '', closedAfter: Promise.resolve(0) };
    idle.closedAfter = new Promise((done) =>
      socket.on('close', () => {
        idle.closed = true;
        done(Date.now() - idle.connectedAt);
      }),
    );
    socket.on('data', (chunk) => {
      idle.received += chunk.toString('latin1');
    });
    socket.on('error', () => undefined);
    socket.once('connect', () => {
      idle.connectedAt = Date.now();
      if (greeting) socket.write(greeting);
      resolve(idle);
    });
    socket.once('error', reject);
  });
}

/** A WebSocket upgrade done by hand that then never reads a frame nor answers a ping. */
async function deafWebSocket(port: number): Promise<Idle> {
  const idle = await idleSocket(
    port,
    'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
  );
  await waitFor(() => idle.received.startsWith('HTTP/1.1 101'), 10_000);
  idle.connectedAt = Date.now();
  return idle;
}

const streamsYaml = (extra: string) => `  - name: eng-stream
    config:
      port: {{STREAMS_PORT}}
      adapter: { name: kv, config: { store_method: in_memory } }
${extra}`;

describe('idle sockets: first-byte deadline and heartbeat', () => {
  let engine: EngineProcess;
  const TIMEOUT = 2000;

  beforeAll(async () => {
    engine = await startEngine({
      configYaml: `workers:
  - name: eng-worker-manager
    config:
      port: {{BUS_PORT}}
      handshake_timeout_ms: ${TIMEOUT}
      heartbeat_interval_ms: 300
      heartbeat_timeout_ms: 1500
  - name: eng-http
    config: { port: {{HTTP_PORT}}, headers_timeout_ms: ${TIMEOUT}, keep_alive_timeout_ms: ${TIMEOUT} }
${streamsYaml(`      handshake_timeout_ms: ${TIMEOUT}
      heartbeat_interval_ms: 300
      heartbeat_timeout_ms: 1500
`)}`,
    });
  });
  afterAll(async () => {
    await engine?.stop();
  });

  it('closes a connection that sends nothing on the HTTP, bus and streams ports within the deadline', async () => {
    const ports = { http: engine.ports.HTTP as number, bus: engine.busPort, streams: engine.ports.STREAMS as number };
    const sockets = await Promise.all(Object.values(ports).map((port) => idleSocket(port)));
    // a head that never ends (slowloris) gets the same deadline
    sockets.push(await idleSocket(ports.http, 'POST /v1/traces HTTP/1.1\r\nHost: x\r\n'));
    // a kept-alive connection idle after its answer goes after keep_alive_timeout_ms
    const kept = await idleSocket(ports.http, 'GET /nothing HTTP/1.1\r\nHost: x\r\n\r\n');
    sockets.push(kept);
    const after = await Promise.all(
      sockets.map((s) => Promise.race([s.closedAfter, new Promise<number>((r) => setTimeout(() => r(-1), 15_000))])),
    );
    for (const ms of after) {
      // closed by the deadline: not at once, and not the 30 s node checks by default
      expect(ms).toBeGreaterThanOrEqual(TIMEOUT - 100);
      expect(ms).toBeLessThan(TIMEOUT + 5000);
    }
    expect(kept.received).toMatch(/^HTTP\/1\.1 404/);
  }, 30_000);

  it('closes a WebSocket that stops answering pings, on the bus and the streams port', async () => {
    const deaf = await Promise.all([deafWebSocket(engine.busPort), deafWebSocket(engine.ports.STREAMS as number)]);
    const after = await Promise.all(
      deaf.map((s) => Promise.race([s.closedAfter, new Promise<number>((r) => setTimeout(() => r(-1), 15_000))])),
    );
    for (const [i, ms] of after.entries()) {
      expect(ms).toBeGreaterThanOrEqual(1400);
      expect(ms).toBeLessThan(8000);
      // the engine did ping it (an opcode 0x9 frame) before giving up
      expect(deaf[i]?.received.includes('\x89')).toBe(true);
    }
  }, 30_000);

  it('keeps idle workers and streams clients that answer pings, far past the heartbeat timeout', async () => {
    const worker = await RawClient.worker(engine.busUrl);
    const streams = await StreamsClient.connect(`ws://127.0.0.1:${engine.ports.STREAMS}/`);
    await new Promise((r) => setTimeout(r, 5000));
    expect(worker.isOpen).toBe(true);
    expect(streams.raw.isOpen).toBe(true);
    const health = await worker.result<{ status: string }>('engine::health::check', {});
    expect(health.status).toBe('healthy');
    streams.join('s1', 'room', 'g');
    expect((await streams.next('sync')).event.type).toBe('sync');
    streams.close();
    await worker.close();
  }, 30_000);
});

describe('connection cap', () => {
  let engine: EngineProcess;
  const CAP = 50;
  const TIMEOUT = 4000;

  beforeAll(async () => {
    engine = await startEngine({
      configYaml: `workers:
  - name: eng-worker-manager
    config: { port: {{BUS_PORT}}, handshake_timeout_ms: ${TIMEOUT}, max_connections: ${CAP} }
  - name: eng-http
    config: { port: {{HTTP_PORT}}, headers_timeout_ms: ${TIMEOUT}, max_connections: ${CAP} }
${streamsYaml(`      handshake_timeout_ms: ${TIMEOUT}
      max_connections: ${CAP}
`)}`,
    });
  });
  afterAll(async () => {
    await engine?.stop();
  });

  it('refuses the 51st connection on each port with one log line, and serves again once the idle ones are closed', async () => {
    const ports: Array<[string, number, string]> = [
      ['HTTP port', engine.ports.HTTP as number, 'max_connections of eng-http'],
      ['worker bus', engine.busPort, 'max_connections of eng-worker-manager'],
      ['streams socket', engine.ports.STREAMS as number, 'max_connections of eng-stream'],
    ];
    const held: Idle[] = [];
    for (const [where, port, key] of ports) {
      const idle: Idle[] = [];
      for (let i = 0; i < CAP; i++) idle.push(await idleSocket(port));
      held.push(...idle);
      const extra = await idleSocket(port);
      const closedAfter = await Promise.race([extra.closedAfter, new Promise<number>((r) => setTimeout(() => r(-1), 10_000))]);
      expect(closedAfter).toBeGreaterThanOrEqual(0);
      expect(extra.received).toBe('');
      // refused by the cap, not by the deadline: the fifty are still open
      expect(idle.filter((s) => s.closed)).toHaveLength(0);
      await waitFor(
        () => engine.logs().includes(`refused 1 connection(s) to the ${where} on 127.0.0.1:${port}: max_connections (${CAP}) are open`),
        5000,
      );
      expect(engine.logs()).toContain(key);
      // more refusals within 10 s do not add a line each
      for (let i = 0; i < 5; i++) await (await idleSocket(port)).closedAfter;
      expect(engine.logs().split(`connection(s) to the ${where}`).length - 1).toBe(1);
    }

    // the deadline frees the slots; then every port serves again
    await Promise.all(held.map((s) => s.closedAfter));
    const worker = await RawClient.worker(engine.busUrl);
    expect((await worker.result<{ status: string }>('engine::health::check', {})).status).toBe('healthy');
    const otlp = await http(engine.ports.HTTP as number, 'POST', '/v1/traces', JSON.stringify({ resourceSpans: [] }));
    expect(otlp.status).toBe(200);
    const streams = await StreamsClient.connect(`ws://127.0.0.1:${engine.ports.STREAMS}/`);
    streams.join('s1', 'room', 'g');
    expect((await streams.next('sync')).event.type).toBe('sync');
    streams.close();
    await worker.close();
  }, 120_000);
});

describe('limit settings', () => {
  const refusal = (configYaml: string) =>
    startEngine({ configYaml }).then(
      async (e) => {
        await e.stop();
        return 'started';
      },
      (err: Error) => err.message,
    );

  it('refuses a heartbeat timeout not longer than its interval, and limits that are not positive, naming the key', async () => {
    const bus = await refusal(`workers:
  - name: eng-worker-manager
    config: { port: {{BUS_PORT}}, heartbeat_interval_ms: 5000, heartbeat_timeout_ms: 5000 }
`);
    expect(bus).toMatch(/heartbeat_timeout_ms: must be longer than heartbeat_interval_ms/);
    const http = await refusal(`workers:
  - name: eng-worker-manager
    config: { port: {{BUS_PORT}} }
  - name: eng-http
    config: { port: {{HTTP_PORT}}, max_connections: 0 }
`);
    expect(http).toMatch(/\(eng-http\): config.max_connections: Too small/);
    const observability = await refusal(`workers:
  - name: eng-worker-manager
    config: { port: {{BUS_PORT}} }
  - name: eng-observability
    config: { limits: { attribute_value_bytes: -1 } }
`);
    expect(observability).toMatch(/limits\.attribute_value_bytes/);
  }, 60_000);
});
