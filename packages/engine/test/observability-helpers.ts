/**
 * Helpers for the observability tests: OTLP/JSON payloads shaped as
 * `@opentelemetry/otlp-transformer` 0.57 serializes them, a raw `/otel` telemetry socket, and
 * iii-sdk worker processes (observability-worker.ts).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { join } from 'node:path';
import WebSocket from 'ws';
import { NODE_TS, REPO_ROOT, waitFor } from '../../../test/harness.ts';
import { RawClient, type RawFrame } from '../../../test/raw-client.ts';

/** Random hex ids, cut from a pool refilled 64 KiB at a time (one crypto call per id was most of the 1M-span test's generator). */
let pool = Buffer.alloc(0);
let poolAt = 0;
export function hex(bytes: number): string {
  if (poolAt + bytes > pool.length) {
    pool = randomBytes(Math.max(65_536, bytes));
    poolAt = 0;
  }
  poolAt += bytes;
  return pool.toString('hex', poolAt - bytes, poolAt);
}

export interface SpanSpec {
  traceId: string;
  spanId?: string;
  parentSpanId?: string;
  name: string;
  service: string;
  startMs: number;
  durationMs: number;
  /** 0 unset, 1 ok, 2 error */
  status?: 0 | 1 | 2;
  attributes?: Record<string, string | number | boolean>;
}

const ns = (ms: number) => String(BigInt(Math.round(ms * 1000)) * 1000n);

function anyValue(value: string | number | boolean) {
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  return Number.isInteger(value) ? { intValue: value } : { doubleValue: value };
}

export function otlpSpan(spec: SpanSpec) {
  return {
    traceId: spec.traceId,
    spanId: spec.spanId ?? hex(8),
    ...(spec.parentSpanId ? { parentSpanId: spec.parentSpanId } : {}),
    name: spec.name,
    kind: 1,
    startTimeUnixNano: ns(spec.startMs),
    endTimeUnixNano: ns(spec.startMs + spec.durationMs),
    attributes: Object.entries(spec.attributes ?? {}).map(([key, value]) => ({ key, value: anyValue(value) })),
    droppedAttributesCount: 0,
    events: [],
    droppedEventsCount: 0,
    status: { code: spec.status ?? 0 },
    links: [],
    droppedLinksCount: 0,
  };
}

/** An ExportTraceServiceRequest with one resource per service. */
export function tracesRequest(specs: SpanSpec[]) {
  const byService = new Map<string, SpanSpec[]>();
  for (const spec of specs) {
    const list = byService.get(spec.service);
    if (list) list.push(spec);
    else byService.set(spec.service, [spec]);
  }
  return {
    resourceSpans: [...byService].map(([service, list]) => ({
      resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }], droppedAttributesCount: 0 },
      scopeSpans: [{ scope: { name: 'test', version: '1.0' }, spans: list.map(otlpSpan) }],
    })),
  };
}

export interface LogSpec {
  timeMs: number;
  severity: number;
  text?: string;
  body: string;
  service: string;
  traceId?: string;
  spanId?: string;
  attributes?: Record<string, string | number | boolean>;
}

export function logsRequest(specs: LogSpec[]) {
  const byService = new Map<string, LogSpec[]>();
  for (const spec of specs) {
    const list = byService.get(spec.service);
    if (list) list.push(spec);
    else byService.set(spec.service, [spec]);
  }
  return {
    resourceLogs: [...byService].map(([service, list]) => ({
      resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] },
      scopeLogs: [
        {
          scope: { name: 'test' },
          logRecords: list.map((l) => ({
            timeUnixNano: ns(l.timeMs),
            observedTimeUnixNano: ns(l.timeMs),
            severityNumber: l.severity,
            ...(l.text ? { severityText: l.text } : {}),
            body: { stringValue: l.body },
            attributes: Object.entries(l.attributes ?? {}).map(([key, value]) => ({ key, value: anyValue(value) })),
            droppedAttributesCount: 0,
            ...(l.traceId ? { traceId: l.traceId } : {}),
            ...(l.spanId ? { spanId: l.spanId } : {}),
          })),
        },
      ],
    })),
  };
}

export function frame(prefix: string, payload: unknown): Buffer {
  return Buffer.concat([Buffer.from(prefix, 'latin1'), Buffer.from(typeof payload === 'string' ? payload : JSON.stringify(payload))]);
}

/** A telemetry-only connection to `<bus>/otel`, as the SDKs open it (§8.1). */
export async function otelSocket(busUrl: string): Promise<WebSocket> {
  const ws = new WebSocket(`${busUrl}/otel`);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return ws;
}

/** Send binary frames and wait until the socket has written them. */
export async function sendFrames(ws: WebSocket, frames: Buffer[]): Promise<void> {
  await Promise.all(
    frames.map((f) => new Promise<void>((resolve, reject) => ws.send(f, { binary: true }, (err) => (err ? reject(err) : resolve())))),
  );
}

const children = new Set<ChildProcess>();

export interface WorkerProcess {
  process: ChildProcess;
  workerId: string;
  output(): string;
  kill(): Promise<void>;
}

/** Start observability-worker.ts with ROLE and OTEL_SERVICE_NAME; resolves once it is registered. */
export async function spawnChainWorker(busUrl: string, role: 'a' | 'b' | 'b-eng' | 'legacy', service: string): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [...NODE_TS, join(REPO_ROOT, 'packages/engine/test/observability-worker.ts')], {
    cwd: REPO_ROOT,
    env: { ...process.env, ENG_URL: busUrl, ROLE: role, OTEL_SERVICE_NAME: service },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.add(child);
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker ${role} not ready; output:\n${output}`)), 20_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /\{"event":"ready","worker_id":"([^"]+)"\}/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1] as string);
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('exit', (code) => reject(new Error(`worker ${role} exited with ${code}; output:\n${output}`)));
  });
  const workerId = await ready;
  return {
    process: child,
    workerId,
    output: () => output,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) {
        child.stdin?.end();
        child.kill('SIGKILL');
      }
      await exited;
      children.delete(child);
    },
  };
}

export async function killAllWorkers(): Promise<void> {
  await Promise.all(
    [...children].map(async (child) => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        child.kill('SIGKILL');
        await exited;
      }
      children.delete(child);
    }),
  );
}

/** Raw bus clients a test file opens, closed together in its `afterAll`. */
export function rawClients(): { open(busUrl: string): Promise<RawClient & { workerId: string }>; closeAll(): Promise<void> } {
  const open: RawClient[] = [];
  return {
    async open(busUrl) {
      const client = await RawClient.worker(busUrl);
      open.push(client);
      return client;
    },
    async closeAll() {
      await Promise.all(open.splice(0).map((c) => c.terminate()));
    },
  };
}

/** A real HTTP server standing in for an OpenTelemetry collector: records every OTLP/JSON request. */
export interface FakeCollector {
  server: Server;
  url: string;
  requests: Array<{ path: string; body: any }>;
  close(): Promise<void>;
}

export async function fakeCollector(port = 0): Promise<FakeCollector> {
  const requests: FakeCollector['requests'] = [];
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({ path: req.url ?? '', body: JSON.parse(Buffer.concat(chunks).toString() || '{}') });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return {
    server,
    url: `http://127.0.0.1:${address.port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A raw worker (opened with `open`) owning `functionId`: records each call and answers it with
 * `null`, after `before` when given. Resolves once the engine lists the function.
 */
export async function autoExecutor(
  open: () => Promise<RawClient>,
  caller: RawClient,
  functionId: string,
  before?: (invoke: RawFrame, worker: RawClient) => Promise<void>,
): Promise<{ worker: RawClient; invokes: RawFrame[] }> {
  const worker = await open();
  const invokes: RawFrame[] = [];
  worker.socket.on('message', (data) => {
    const f = JSON.parse(data.toString()) as RawFrame;
    if (f.type !== 'invokefunction' || f.function_id !== functionId) return;
    invokes.push(f);
    void (before ? before(f, worker) : Promise.resolve()).then(() =>
      worker.send({ type: 'invocationresult', invocation_id: f.invocation_id, function_id: functionId, result: null }),
    );
  });
  worker.send({ type: 'registerfunction', id: functionId });
  await waitFor(async () => (await caller.call('engine::functions::info', { function_id: functionId })).result);
  return { worker, invokes };
}
