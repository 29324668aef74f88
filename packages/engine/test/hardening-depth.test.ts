/**
 * Issue 12 items 1 and 13: one hostile frame, body or id must never kill the engine, and nothing
 * it receives may be held or printed without bound.
 *
 * - JSON nested deeper than 128 levels is refused where it enters, unread (a bus frame may have 8
 *   more, for the envelopes around the data): a bus frame gets an
 *   error answer under its invocation id (or a registrationrejected / triggerregistrationresult),
 *   an HTTP trigger body a 400, an OTLP body a 400; all naming the limit. The engine stays up,
 *   also past the introspection debounce that used to overflow the stack on deep metadata.
 * - A value the engine cannot write back out (read from its own store after another process wrote
 *   it there) answers the caller with an error instead of taking the process down.
 * - Ids (function, trigger, trigger type) over 256 bytes and worker names over 4096 characters (shorter ones are cut to 280, as iii does) are refused naming the
 *   limit; log lines print foreign strings with their control characters escaped, one line each.
 * - Frames being received count against a global budget (`max_inflight_frame_bytes`): past it a
 *   connection receiving a large frame is closed with 1009 and a log line; the others go on.
 */
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import { RawClient, type RawFrame } from '../../../test/raw-client.ts';

type Worker = RawClient & { workerId: string; token: string };

const KiB = 1024;
const MiB = 1024 * KiB;
/** Arrays nested `n` deep, as JSON text (never built as a value: the test process could not write it either). */
const deepArrays = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
const deepObjects = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
const uuid = () => crypto.randomUUID();

let engine: EngineProcess;
let httpUrl: string;
let observer: Worker;
const open: RawClient[] = [];

async function worker(name?: string): Promise<Worker> {
  const client = await RawClient.worker(engine.busUrl);
  open.push(client);
  if (name) client.registerWorker(name);
  return client;
}

const alive = (e: EngineProcess = engine) => e.process.exitCode === null && e.process.signalCode === null;

/** A raw worker serving `id` with `answer(data)`; `seen` records the calls it received. */
async function server(id: string, answer: (data: unknown) => string): Promise<Worker & { seen: RawFrame[] }> {
  const client = Object.assign(await worker(`server-${id}`), { seen: [] as RawFrame[] });
  client.socket.on('message', (raw) => {
    const frame = JSON.parse(raw.toString()) as RawFrame;
    if (frame.type !== 'invokefunction' || frame.function_id !== id) return;
    client.seen.push(frame);
    client.send(
      `{"type":"invocationresult","invocation_id":"${frame.invocation_id}","function_id":"${id}","result":${answer(frame.data)}}`,
    );
  });
  client.send({ type: 'registerfunction', id });
  await waitFor(async () => (await observer.call('engine::functions::info', { function_id: id })).result, 10_000);
  return client;
}

async function functionIds(): Promise<string[]> {
  const { functions } = await observer.result('engine::functions::list', { include_internal: true });
  return functions.map((f: { function_id: string }) => f.function_id);
}

/** The engine is up and its introspection answers (the calls that used to overflow the stack). */
async function stillServing(): Promise<void> {
  expect(alive(), `engine exited; log tail:\n${engine.logs().slice(-3000)}`).toBe(true);
  expect((await functionIds()).length).toBeGreaterThan(10);
  const { trigger_types } = await observer.result('engine::trigger-types::list', { include_internal: true });
  expect(trigger_types.length).toBeGreaterThan(3);
  expect(alive()).toBe(true);
}

function post(path: string, body: string | Uint8Array, headers: Record<string, string> = { 'content-type': 'application/json' }) {
  return fetch(`${httpUrl}${path}`, { method: 'POST', headers, body: body as BodyInit, signal: AbortSignal.timeout(15_000) });
}

beforeAll(async () => {
  engine = await startEngine({
    configYaml: `workers:
  - name: eng-worker-manager
    config:
      port: {{BUS_PORT}}
      max_frame_bytes: ${4 * MiB}
      max_inflight_frame_bytes: ${8 * MiB}
  - name: eng-state
  - name: eng-pubsub
  - name: eng-http
    config:
      port: {{HTTP_PORT}}
  - name: eng-observability
    config:
      logs_console_output: true
`,
  });
  httpUrl = (engine.addresses.http as { url: string }).url;
  observer = await worker('observer');
}, 30_000);

afterAll(async () => {
  await Promise.all(open.map((c) => c.close()));
  await engine?.stop();
});

describe('deep JSON is refused where it enters (item 1)', () => {
  it('registerfunction with metadata nested 6,000 arrays deep: refused naming the limit, the engine up after the functions_changed debounce', async () => {
    const intruder = await worker('deep-metadata');
    intruder.send(`{"type":"registerfunction","id":"depth::meta","metadata":{"deep":${deepArrays(6000)}}}`);
    const rejected = await intruder.next((f) => f.type === 'registrationrejected' && f.function_id === 'depth::meta', 10_000);
    expect(rejected.code).toBe('JSON_TOO_DEEP');
    expect(rejected.message).toMatch(/more than 136 levels deep.*max_frame_depth of eng-worker-manager/);
    // the introspection module's signature runs 250 ms after a registration: that is where it died
    await new Promise((r) => setTimeout(r, 1200));
    await stillServing();
    expect(await functionIds()).not.toContain('depth::meta');
    expect(engine.logs()).toMatch(
      /refused a frame from worker [0-9a-f-]+: "registerfunction" frame nests arrays\/objects more than 136 levels/,
    );

    // within the limit the same registration is taken, and lists fine
    intruder.send(`{"type":"registerfunction","id":"depth::meta","metadata":{"deep":${deepArrays(100)}}}`);
    await waitFor(async () => (await functionIds()).includes('depth::meta'), 10_000);
    await new Promise((r) => setTimeout(r, 600));
    await stillServing();
  });

  it('engine::log::info with data nested 6,000 levels: the caller gets JSON_TOO_DEEP, nothing is stored', async () => {
    const caller = await worker('deep-logger');
    const id = uuid();
    caller.send(
      `{"type":"invokefunction","invocation_id":"${id}","function_id":"engine::log::info","data":{"message":"deep-log-marker","data":${deepObjects(6000)}}}`,
    );
    const answer = await caller.next((f) => f.type === 'invocationresult' && f.invocation_id === id, 10_000);
    expect(answer.error).toMatchObject({ code: 'JSON_TOO_DEEP', message: expect.stringContaining('136 levels') });
    const { logs } = await observer.result('engine::logs::list', {});
    expect(logs.some((l: { body: string }) => l.body === 'deep-log-marker')).toBe(false);
    await stillServing();
  });

  it('registertriggertype with a trigger_request_format nested 6,000 levels: refused, trigger types still list', async () => {
    const provider = await worker('deep-trigger-type');
    provider.send(`{"type":"registertriggertype","id":"depth-type","description":"deep","trigger_request_format":${deepArrays(6000)}}`);
    const rejected = await provider.next((f) => f.type === 'registrationrejected' && f.trigger_type === 'depth-type', 10_000);
    expect(rejected.code).toBe('JSON_TOO_DEEP');
    await stillServing();
    const { trigger_types } = await observer.result('engine::trigger-types::list', { include_internal: true });
    expect(trigger_types.some((t: { id: string }) => t.id === 'depth-type')).toBe(false);
  });

  it('registertrigger with a deep config gets a triggerregistrationresult error', async () => {
    const client = await worker('deep-binding');
    client.send(
      `{"type":"registertrigger","id":"depth-binding","trigger_type":"subscribe","function_id":"depth::x","config":{"topic":"t","extra":${deepArrays(6000)}}}`,
    );
    const result = await client.next((f) => f.type === 'triggerregistrationresult' && f.id === 'depth-binding', 10_000);
    expect(result).toMatchObject({ trigger_type: 'subscribe', function_id: 'depth::x', error: { code: 'JSON_TOO_DEEP' } });
    await stillServing();
  });

  it('publish with data nested 6,000 levels: the publisher gets JSON_TOO_DEEP and no subscriber is called; shallow data goes through', async () => {
    const subscriber = await server('depth::subscriber', () => 'null');
    subscriber.send({
      type: 'registertrigger',
      id: 'depth-sub',
      trigger_type: 'subscribe',
      function_id: 'depth::subscriber',
      config: { topic: 'depth-topic' },
    });
    const publisher = await worker('deep-publisher');
    // the subscription is live once a shallow publish reaches it
    await waitFor(async () => {
      await publisher.result('publish', { topic: 'depth-topic', data: { probe: true } });
      return subscriber.seen.length > 0;
    }, 10_000);
    const before = subscriber.seen.length;

    const id = uuid();
    publisher.send(
      `{"type":"invokefunction","invocation_id":"${id}","function_id":"publish","data":{"topic":"depth-topic","data":${deepArrays(6000)}}}`,
    );
    const answer = await publisher.next((f) => f.type === 'invocationresult' && f.invocation_id === id, 10_000);
    expect(answer.error).toMatchObject({ code: 'JSON_TOO_DEEP' });
    await new Promise((r) => setTimeout(r, 300));
    expect(subscriber.seen.length).toBe(before);
    await stillServing();
  });

  it('an HTTP trigger body nested 5,000 levels gets 400 naming the limit; the handler is not called', async () => {
    const handler = await server('depth::http', (data) =>
      JSON.stringify({ status_code: 200, body: { kind: typeof (data as { body: unknown }).body } }),
    );
    handler.send({
      type: 'registertrigger',
      id: 'depth-route',
      trigger_type: 'http',
      function_id: 'depth::http',
      config: { api_path: 'depth/echo', http_method: 'POST' },
    });
    await waitFor(async () => (await post('/depth/echo', '{}')).status === 200, 10_000);
    const calls = handler.seen.length;

    const res = await post('/depth/echo', deepArrays(5000));
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.error.code).toBe('JSON_TOO_DEEP');
    expect(body.error.message).toMatch(/request body nests arrays\/objects more than 128 levels deep/);
    expect(handler.seen.length).toBe(calls);

    // 128 levels are fine, also echoed back inside a worker's result (the frame adds its envelopes),
    // and a deep body that is not JSON is not parsed, so it passes as bytes
    expect((await post('/depth/echo', deepArrays(128))).status).toBe(200);
    const echo = await server('depth::echo-body', (data) => JSON.stringify({ status_code: 200, body: (data as { body: unknown }).body }));
    echo.send({
      type: 'registertrigger',
      id: 'depth-echo-route',
      trigger_type: 'http',
      function_id: 'depth::echo-body',
      config: { api_path: 'depth/echo-body', http_method: 'POST' },
    });
    const echoed = await waitFor(async () => {
      const r = await post('/depth/echo-body', deepArrays(128));
      return r.status === 404 ? null : r;
    }, 10_000);
    expect(echoed.status).toBe(200);
    expect(await echoed.text()).toBe(deepArrays(128));
    expect((await post('/depth/echo-body', deepArrays(129))).status).toBe(400);
    const text = await post('/depth/echo', deepArrays(5000), { 'content-type': 'text/plain' });
    expect(text.status).toBe(200);
    expect(await text.json()).toEqual({ kind: 'object' }); // body null: only JSON bodies are parsed
    await stillServing();
  });

  it('OTLP/HTTP: a body nested 5,000 levels gets 400; a gzip body inflating past body_limit_bytes gets 413', async () => {
    const nested = `{"resourceSpans":[{"resource":{"attributes":[{"key":"a","value":${'{"arrayValue":{"values":['.repeat(2500)}${']}}'.repeat(2500)}}]}}]}`;
    const res = await post('/v1/traces', nested);
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatchObject({ code: 'JSON_TOO_DEEP', message: expect.stringContaining('OTLP/JSON body') });

    // 16 KiB of gzip that inflates to 16 MiB (eng-http's body_limit_bytes is 10 MiB)
    const bomb = gzipSync(Buffer.alloc(16 * MiB, 0x20));
    expect(bomb.length).toBeLessThan(64 * KiB);
    const inflated = await post('/v1/logs', new Uint8Array(bomb), { 'content-type': 'application/json', 'content-encoding': 'gzip' });
    expect(inflated.status).toBe(413);
    expect((await inflated.json()).error.message).toMatch(/inflates to more than 10485760 bytes \(body_limit_bytes of eng-http\)/);
    await stillServing();
  });

  it('a worker result nested 6,000 levels: the caller (bus or HTTP) gets JSON_TOO_DEEP, the worker is idle again', async () => {
    const executor = await server('depth::result', () => deepArrays(6000));
    const caller = await worker('deep-result-caller');
    const frame = await caller.call('depth::result', { q: 1 });
    expect(frame.result).toBeUndefined();
    expect(frame.error).toMatchObject({ code: 'JSON_TOO_DEEP', message: expect.stringContaining('"invocationresult" frame') });
    const { workers } = await observer.result('engine::workers::list', { worker_id: executor.workerId });
    expect(workers.find((w: { id: string }) => w.id === executor.workerId)?.active_invocations).toBe(0);

    executor.send({
      type: 'registertrigger',
      id: 'depth-result-route',
      trigger_type: 'http',
      function_id: 'depth::result',
      config: { api_path: 'depth/result', http_method: 'POST' },
    });
    const res = await waitFor(async () => {
      const r = await post('/depth/result', '{}');
      return r.status === 404 ? null : r;
    }, 10_000);
    expect(res.status).toBe(500);
    expect((await res.json()).error).toMatchObject({ code: 'JSON_TOO_DEEP' });
    await stillServing();
  });
});

describe('ids are capped at 256 bytes and logged on one line (item 13)', () => {
  const huge = 'x'.repeat(MiB);

  it('refuses a function id, trigger type id, trigger id, worker name and call target of 1 MiB, naming the limit', async () => {
    const client = await worker('long-ids');
    client.send({ type: 'registerfunction', id: huge });
    const fn = await client.next((f) => f.type === 'registrationrejected' && f.function_id === huge, 10_000);
    expect(fn.code).toBe('ID_TOO_LONG');
    expect(fn.message).toMatch(/^the function id is 1048576 bytes long; the engine accepts ids of at most 256 bytes/);

    client.send({ type: 'registertriggertype', id: huge, description: 'long' });
    const type = await client.next((f) => f.type === 'registrationrejected' && f.trigger_type === huge, 10_000);
    expect(type.code).toBe('ID_TOO_LONG');

    client.send({ type: 'registertrigger', id: huge, trigger_type: 'subscribe', function_id: 'depth::x', config: { topic: 't' } });
    const binding = await client.next((f) => f.type === 'triggerregistrationresult' && f.id === huge, 10_000);
    expect(binding.error).toMatchObject({ code: 'ID_TOO_LONG', message: expect.stringMatching(/^the trigger id is 1048576 bytes long/) });

    const named = await client.call('engine::workers::register', { runtime: 'node', name: huge, pid: 1 });
    expect(named.error).toMatchObject({
      code: 'ID_TOO_LONG',
      message: expect.stringMatching(/^the worker name is 1048576 bytes long; the engine accepts names of at most 4096 characters/),
    });

    const call = await client.call(huge, {});
    expect(call.error).toMatchObject({ code: 'ID_TOO_LONG' });
    expect(JSON.stringify(call.error).length).toBeLessThan(1000); // the message does not repeat the id

    expect((await functionIds()).some((id) => id.length > 256)).toBe(false);
    const { registered_triggers } = await observer.result('engine::registered-triggers::list', { include_internal: true });
    expect(registered_triggers.some((t: { id: string }) => t.id === huge)).toBe(false);
    // no log line carries the megabyte
    await new Promise((r) => setTimeout(r, 300));
    const longest = Math.max(
      ...engine
        .logs()
        .split('\n')
        .map((line) => line.length),
    );
    expect(longest).toBeLessThan(16 * KiB);
  });

  it('takes an id of exactly 256 bytes and refuses 257 (bytes, not characters)', async () => {
    const client = await worker('edge-ids');
    const fits = `edge::${'a'.repeat(250)}`;
    const over = `edge::${'é'.repeat(125)}a`; // 125 two-byte characters: 257 bytes, 132 characters
    client.send({ type: 'registerfunction', id: fits });
    client.send({ type: 'registerfunction', id: over });
    const rejected = await client.next((f) => f.type === 'registrationrejected', 10_000);
    expect(rejected).toMatchObject({ function_id: over, code: 'ID_TOO_LONG' });
    expect(rejected.message).toContain('is 257 bytes long');
    await waitFor(async () => (await functionIds()).includes(fits), 10_000);
  });

  it('escapes newlines and escape sequences of foreign ids and worker log bodies in the engine log', async () => {
    const client = await worker('newline-ids');
    const other = await worker('newline-ids-2');
    const forged = '2030-01-01T00:00:00.000Z ERROR [engine] forged line';
    // a second worker taking over an id is logged with the id in the line (built-ins are reserved by
    // exact id now, so a made-up engine:: id is no longer refused: a takeover is the logged case)
    const evil = `dup::evil\n${forged}\u001b[31m`;
    client.send({ type: 'registerfunction', id: evil });
    await waitFor(async () => (await functionIds()).includes(evil), 10_000);
    other.send({ type: 'registerfunction', id: evil });
    // a worker's log record (OTLP) printed by logs_console_output: body and service name are foreign
    const record = {
      resourceLogs: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'svc\nFORGED-BY-SERVICE' } }] },
          scopeLogs: [
            {
              logRecords: [
                {
                  timeUnixNano: String(Date.now() * 1e6),
                  severityText: 'WARN',
                  body: { stringValue: `worker says\nFORGED-BY-BODY ${forged}` },
                },
              ],
            },
          ],
        },
      ],
    };
    expect((await post('/v1/logs', JSON.stringify(record))).status).toBe(200);
    await waitFor(() => engine.logs().includes('worker says\\nFORGED-BY-BODY'), 10_000);
    await waitFor(() => engine.logs().includes(`dup::evil\\n${forged}\\u001b[31m`), 10_000);

    const lines = engine.logs().split('\n');
    expect(lines.some((line) => line.startsWith(forged))).toBe(false);
    expect(lines.some((line) => line.startsWith('FORGED-BY-BODY') || line.startsWith('FORGED-BY-SERVICE'))).toBe(false);
    expect(engine.logs()).toContain('[svc\\nFORGED-BY-SERVICE]');
    expect(engine.logs()).not.toContain('\u001b[31m');
  });
});

describe('a global budget for frames being received (item 13)', () => {
  /** A worker socket that starts a text frame of `total` bytes with a first fragment of `first` bytes. */
  async function startFrame(
    first: number,
    confirm = true,
  ): Promise<{ ws: WebSocket; closed: Promise<{ code: number; reason: string }>; finish(): void; frames: string[] }> {
    const ws = new WebSocket(engine.busUrl);
    const frames: string[] = [];
    ws.on('message', (data) => frames.push(data.toString()));
    const closed = new Promise<{ code: number; reason: string }>((resolve) =>
      ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    ws.on('error', () => {});
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    ws.send(`{"type":"ping","pad":"${'p'.repeat(first)}`, { fin: false });
    if (confirm) {
      // a ping control frame between the fragments: its pong says the engine has read the whole
      // first fragment (frames are read in order), however slowly a loaded machine moves it. The
      // ping must not free the fragment's bytes from the budget, or the third frame below would fit.
      const read = new Promise<void>((resolve) => ws.once('pong', () => resolve()));
      ws.ping();
      // a refused connection never answers the ping: say so rather than wait for the test's timeout
      const refusedFirst = await Promise.race([read.then(() => null), closed]);
      if (refusedFirst)
        throw new Error(`the engine closed the connection (${refusedFirst.code} ${refusedFirst.reason}) before reading the first fragment`);
    }
    return { ws, closed, frames, finish: () => ws.send('"}', { fin: true }) };
  }

  it('closes the connection that takes the total over max_inflight_frame_bytes with 1009 and a log line; the others finish', async () => {
    const a = await startFrame(3 * MiB);
    const b = await startFrame(3 * MiB);
    // both first fragments are in the engine (6 MiB of 8): a third frame of 3 MiB does not fit
    const c = await startFrame(3 * MiB, false);
    await waitFor(
      () =>
        /closed a worker bus connection receiving a \d+-byte frame .* over the budget of 8388608 bytes\. Raise max_inflight_frame_bytes of eng-worker-manager/.test(
          engine.logs(),
        ),
      10_000,
    );
    // the two within the budget complete their frames at once, while the refused connection is still
    // open (it is terminated a second later): the bytes it gave up must not count against them
    a.finish();
    b.finish();
    const refused = await Promise.race([c.closed, new Promise<null>((r) => setTimeout(() => r(null), 10_000))]);
    expect(refused).toEqual({ code: 1009, reason: expect.stringContaining('max_inflight_frame_bytes') });
    await waitFor(() => a.frames.some((f) => f.includes('"pong"')) && b.frames.some((f) => f.includes('"pong"')), 30_000);
    expect(a.ws.readyState).toBe(WebSocket.OPEN);
    a.ws.close();
    b.ws.close();

    // the budget is free again: another large frame is taken
    let d: Awaited<ReturnType<typeof startFrame>> | undefined;
    await waitFor(async () => {
      d = await startFrame(3 * MiB).catch(() => undefined);
      return d !== undefined;
    }, 15_000);
    if (!d) throw new Error('no large frame was taken after the others finished');
    const last = d;
    last.finish();
    await waitFor(() => last.frames.some((f) => f.includes('"pong"')), 10_000);
    last.ws.close();
    await stillServing();
  }, 60_000);
});

describe('a stored value the engine cannot write out (item 1)', () => {
  let other: EngineProcess | undefined;
  afterAll(async () => {
    await other?.stop();
  });

  it('state::get of a value nested 20,000 levels (written to state.db by another process) answers an error; the engine stays up', async () => {
    other = await startEngine({ workersYaml: '  - name: eng-state\n' });
    let client = await RawClient.worker(other.busUrl);
    await client.result('state::set', { scope: 'deep', key: 'ok', value: { fine: true } });
    await client.close();
    await other.stop();
    const db = new Database(join(other.dataDir, 'state.db'));
    db.prepare("INSERT INTO state_kv (scope, key, value) VALUES ('deep', 'bad', ?)").run(deepArrays(20_000));
    db.close();
    await other.restart();

    client = await RawClient.worker(other.busUrl);
    const frame = await client.call('state::get', { scope: 'deep', key: 'bad' });
    // the caller is answered: state::get hands back the stored JSON text as it is (no re-serialising),
    // or, where the engine has to write the value out itself, a serialization_error naming the call
    if (frame.error) {
      expect(frame.error).toMatchObject({
        code: 'serialization_error',
        message: expect.stringMatching(/the result of state::get could not be sent back/),
      });
    } else {
      expect(Array.isArray(frame.result)).toBe(true);
    }
    expect(alive(other)).toBe(true);
    expect(await client.result('state::get', { scope: 'deep', key: 'ok' })).toEqual({ fine: true });
    await client.close();
  });
});
