/**
 * Fuzzing `POST /mcp` (issue 12): a few thousand random and mutated bodies — random bytes,
 * truncated JSON, deep nesting, every field of initialize / tools/call / resources/read / … given
 * the wrong type, huge strings within the body limit, batches, odd headers — each must get an HTTP
 * answer (no hang, no reset, no 5xx from a crash), eng-mcp must stay up, and a real MCP client must
 * still initialize and list tools afterwards. Seeded: FUZZ_SEED=<n> replays a run.
 */

import { connect } from '@eng/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, waitFor } from '../../../test/harness.ts';
import { demoWorker, type HttpMcp, httpClient, httpMcp, startMcpEngine } from './helpers.ts';

const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 32));
const CASES = Number(process.env.FUZZ_CASES ?? 3000);
const CONCURRENCY = 8;
const REQUEST_TIMEOUT_MS = 20_000;
const MAX_BODY_BYTES = 1024 * 1024;
/** What eng-mcp (and eng-http in front of it) may answer; a 5xx would be a crash or a hang (504). */
const ANSWERS = new Set([200, 202, 400, 404, 405, 406, 409, 413, 415, 503]);

/** mulberry32: small, fast, good enough to pick cases, and reproducible from the seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const rand = prng(SEED);
const int = (n: number) => Math.floor(rand() * n);
const pick = <T>(items: readonly T[]): T => items[int(items.length)] as T;
const chance = (p: number) => rand() < p;

const STRING_POOL = [
  '',
  ' ',
  'a',
  '\u0000',
  '\ud800',
  '💥',
  '__proto__',
  'constructor',
  'eng://functions',
  'eng://function/demo::echo',
  'eng://function/%',
  'eng://worker/',
  'eng://trigger/../../etc/passwd',
  'file:///etc/passwd',
  'demo__echo',
  'demo::echo',
  'iii__queue__redrive',
  'engine__functions__list',
  'eng_trigger_void',
  'eng_worker_register',
  '2025-11-25',
  '2025-03-26',
  '1999-01-01',
  'tools/call',
  'initialize',
  '%00%ff',
  '\u0024{jndi:ldap://x}',
  "'; DROP TABLE x; --",
];

function randomString(): string {
  if (chance(0.5)) return pick(STRING_POOL);
  const length = chance(0.9) ? int(40) : int(5000);
  let out = '';
  for (let i = 0; i < length; i++) out += String.fromCharCode(chance(0.8) ? 32 + int(95) : int(0x10000));
  return out;
}

function randomNumber(): number {
  return pick([0, -0, 1, -1, 0.5, 2 ** 31, 2 ** 53 + 1, -(2 ** 63), 1e308, -1e308, 5e-324, int(1000)]);
}

/** A random JSON value, `depth` levels at most. */
function randomValue(depth = 3): unknown {
  const kind = int(depth > 0 ? 7 : 5);
  switch (kind) {
    case 0:
      return null;
    case 1:
      return chance(0.5);
    case 2:
      return randomNumber();
    case 3:
    case 4:
      return randomString();
    case 5:
      return Array.from({ length: int(5) }, () => randomValue(depth - 1));
    default: {
      const obj: Record<string, unknown> = {};
      for (let i = int(5); i > 0; i--) obj[randomString()] = randomValue(depth - 1);
      return obj;
    }
  }
}

/** Well-formed requests of each method, the material mutations start from. */
function template(): Record<string, unknown> {
  const id = chance(0.5) ? int(1e6) : `r-${int(1e6)}`;
  const templates: Array<() => Record<string, unknown>> = [
    () => ({
      jsonrpc: '2.0',
      id,
      method: 'initialize',
      params: {
        protocolVersion: pick(['2025-11-25', '2025-06-18', '2025-03-26']),
        capabilities: {},
        clientInfo: { name: 'fuzz', version: '1' },
      },
    }),
    () => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: {
        name: pick([
          'demo__echo',
          'demo__typed',
          'demo__scalar',
          'demo__fail',
          'demo__text',
          'nope__x',
          'iii__queue__redrive',
          'eng_trigger_void',
        ]),
        arguments: pick([{ message: 'hi' }, { n: 2 }, { input: 'x' }, {}]),
        ...(chance(0.2) ? { _meta: { progressToken: pick([1, 'tok', null, {}]) } } : {}),
      },
    }),
    () => ({ jsonrpc: '2.0', id, method: 'resources/read', params: { uri: pick(STRING_POOL.filter((s) => s.includes('://'))) } }),
    () => ({ jsonrpc: '2.0', id, method: 'resources/subscribe', params: { uri: 'eng://functions' } }),
    () => ({ jsonrpc: '2.0', id, method: 'tools/list', params: chance(0.5) ? {} : { cursor: randomString() } }),
    () => ({
      jsonrpc: '2.0',
      id,
      method: 'prompts/get',
      params: { name: 'register-function', arguments: { language: 'node', function_id: 'a::b' } },
    }),
    () => ({
      jsonrpc: '2.0',
      id,
      method: 'completion/complete',
      params: { ref: { type: 'ref/resource', uri: 'eng://function/{id}' }, argument: { name: 'id', value: 'd' } },
    }),
    () => ({ jsonrpc: '2.0', id, method: 'logging/setLevel', params: { level: 'debug' } }),
    () => ({ jsonrpc: '2.0', id, method: 'ping' }),
    () => ({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    () => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id } }),
    () => ({ jsonrpc: '2.0', id, result: {} }),
  ];
  return pick(templates)();
}

/** Every path of an object (`['params', 'clientInfo', 'name']`, …), the root included. */
function paths(value: unknown, prefix: string[] = []): string[][] {
  const out: string[][] = [prefix];
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    for (const key of Object.keys(value)) out.push(...paths((value as Record<string, unknown>)[key], [...prefix, key]));
  }
  return out;
}

function setAt(root: Record<string, unknown>, path: string[], value: unknown, remove = false): unknown {
  if (path.length === 0) return value;
  let node = root as Record<string, unknown>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string, unknown>;
  const last = path[path.length - 1] as string;
  if (remove) delete node[last];
  else node[last] = value;
  return root;
}

/** One field (any depth, the root too) replaced by a value of another type, or removed. */
function wrongType(): unknown {
  const base = template();
  let out: unknown = base;
  for (let n = 1 + int(2); n > 0; n--) {
    if (!out || typeof out !== 'object' || Array.isArray(out)) break; // the root itself was replaced
    const path = pick(paths(out));
    out = setAt(out as Record<string, unknown>, path, randomValue(2), chance(0.15) && path.length > 0);
  }
  return out;
}

function deepNesting(): string {
  const depth = pick([16, 64, 500, 1500]);
  const open = chance(0.5) ? '[' : '{"a":';
  const close = open === '[' ? ']' : '}';
  const nested = open.repeat(depth) + (chance(0.9) ? '1' : '') + close.repeat(chance(0.8) ? depth : int(depth));
  if (chance(0.5)) return nested;
  // nested inside a request that otherwise looks right
  const where = pick(['params', 'arguments', 'clientInfo']);
  if (where === 'params') return `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":${nested}}`;
  if (where === 'arguments')
    return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"demo__echo","arguments":{"x":${nested}}}}`;
  return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":${nested},"clientInfo":{"name":"x","version":"1"}}}`;
}

function hugeString(): string {
  const size = pick([64 * 1024, 256 * 1024, MAX_BODY_BYTES - 512, MAX_BODY_BYTES + 1024]);
  const filler = pick(['x', 'é', '\\u0000', '"']) === '"' ? '\\"' : 'x';
  const big = filler.repeat(Math.floor(size / filler.length));
  const body = template();
  const path = pick(paths(body).filter((p) => p.length > 0));
  return JSON.stringify(setAt(body, path, '__BIG__')).replace('"__BIG__"', `"${big}"`);
}

interface Case {
  label: string;
  body: string | Uint8Array;
  headers: Record<string, string>;
}

function headersFor(session: string): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': chance(0.95)
      ? pick(['application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON'])
      : pick(['text/plain', '', 'application/jsonx']),
    accept: chance(0.9)
      ? pick(['application/json, text/event-stream', 'application/json', 'text/event-stream', '*/*'])
      : pick(['text/html', '']),
  };
  if (chance(0.85)) headers['mcp-session-id'] = chance(0.9) ? session : randomString().replace(/[^\x21-\x7e]/g, '') || 'x';
  if (chance(0.1)) headers['mcp-protocol-version'] = pick(['2025-11-25', '2025-03-26', 'bogus', '']);
  for (const [name, value] of Object.entries(headers)) if (value === '') delete headers[name];
  return headers;
}

function nextCase(session: string): Case {
  const c = bodyCase(headersFor(session));
  // an initialize only reaches its handler without a session header: mostly leave it out
  if (typeof c.body === 'string' && c.body.includes('"method":"initialize"') && chance(0.8)) delete c.headers['mcp-session-id'];
  return c;
}

function bodyCase(headers: Record<string, string>): Case {
  const kind = int(100);
  if (kind < 8) return { label: 'random bytes', body: Uint8Array.from({ length: int(600) }, () => int(256)), headers };
  if (kind < 18) {
    const text = JSON.stringify(template());
    return { label: 'truncated JSON', body: text.slice(0, int(text.length)), headers };
  }
  if (kind < 24) return { label: 'deep nesting', body: deepNesting(), headers };
  if (kind < 27) return { label: 'huge string', body: hugeString(), headers };
  if (kind < 35) return { label: 'random JSON', body: JSON.stringify(randomValue(4)), headers };
  if (kind < 42) {
    const batch = Array.from({ length: int(6) }, () => (chance(0.5) ? template() : wrongType()));
    return { label: 'batch', body: JSON.stringify(batch), headers };
  }
  if (kind < 47) {
    // byte-level mutation of a valid request: flip, insert or delete characters
    const chars = [...JSON.stringify(template())];
    for (let n = 1 + int(4); n > 0; n--) {
      const at = int(chars.length);
      const op = int(3);
      if (op === 0) chars[at] = String.fromCharCode(int(128));
      else if (op === 1) chars.splice(at, 0, pick(['{', '}', '[', ']', '"', ',', ':', '\\', 'null']));
      else chars.splice(at, 1);
    }
    return { label: 'mutated bytes', body: chars.join(''), headers };
  }
  if (kind < 52) return { label: 'valid', body: JSON.stringify(template()), headers };
  return { label: 'wrong type', body: JSON.stringify(wrongType()), headers };
}

let engine: EngineProcess;
let server: HttpMcp;

beforeAll(async () => {
  engine = await startMcpEngine();
  await demoWorker(engine);
  server = await httpMcp(engine, [], { ENG_WORKER_CONFIG: JSON.stringify({ max_body_bytes: MAX_BODY_BYTES }) });
});
afterAll(async () => {
  await server?.stop();
  await engine?.stop();
});

describe('POST /mcp under fuzzing', () => {
  it(`answers every random or mutated body and stays up (seed ${SEED})`, async () => {
    console.log(`http-fuzz: seed ${SEED}, ${CASES} cases (replay with FUZZ_SEED=${SEED})`);
    const init = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } },
      }),
    });
    expect(init.status).toBe(200);
    await init.text();
    const session = init.headers.get('mcp-session-id') as string;

    const cases = Array.from({ length: CASES }, () => nextCase(session));
    const statuses = new Map<number, number>();
    const failures: string[] = [];
    let next = 0;
    const started = Date.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < cases.length) {
          const index = next++;
          const c = cases[index] as Case;
          const explain = () => {
            const text = typeof c.body === 'string' ? c.body : Buffer.from(c.body).toString('hex');
            return `case ${index} (${c.label}, ${text.length} chars: ${text.slice(0, 160)}…, headers ${JSON.stringify(c.headers)})`;
          };
          try {
            const res = await fetch(server.url, {
              method: 'POST',
              headers: c.headers,
              body: typeof c.body === 'string' ? c.body : Buffer.from(c.body),
              signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
            });
            const text = await res.text();
            statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
            if (!ANSWERS.has(res.status)) failures.push(`HTTP ${res.status} for ${explain()}`);
            // a JSON answer is JSON: a JSON-RPC message (or batch) from eng-mcp, an error object from eng-http
            if ((res.headers.get('content-type') ?? '').startsWith('application/json') && text !== '') {
              try {
                const body = JSON.parse(text);
                const first = Array.isArray(body) ? body[0] : body;
                if (first?.jsonrpc !== '2.0' && first?.error === undefined)
                  failures.push(`unexpected JSON ${text.slice(0, 200)} for ${explain()}`);
              } catch {
                failures.push(`invalid JSON ${text.slice(0, 200)} for ${explain()}`);
              }
            }
          } catch (err) {
            const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name;
            failures.push(`no answer (${cause}) for ${explain()}`);
          }
        }
      }),
    );
    console.log(
      `http-fuzz: ${CASES} cases in ${((Date.now() - started) / 1000).toFixed(1)} s, statuses ${JSON.stringify(Object.fromEntries(statuses))}`,
    );
    expect(failures, `seed ${SEED}`).toEqual([]);
    expect(server.process.exitCode, `eng-mcp exited (seed ${SEED})\n${server.output().slice(-3000)}`).toBeNull();
    expect(server.output()).not.toMatch(/Maximum call stack|Unhandled|TypeError|RangeError/);

    // a real client still gets in and sees the tools
    const client = await httpClient(server.url);
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('demo__echo');
    } finally {
      await client.close();
    }
  }, 300_000);

  it('regressions it found: messages the SDK would drop unanswered are refused at once', async () => {
    const headers = { 'content-type': 'application/json', accept: 'application/json' };
    const init = await fetch(server.url, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'regress', version: '1' } },
      }),
    });
    await init.text();
    const session = { ...headers, 'mcp-session-id': init.headers.get('mcp-session-id') as string };
    const post = async (body: unknown) => {
      const res = await fetch(server.url, {
        method: 'POST',
        headers: session,
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
      return { status: res.status, body: await res.json() };
    };
    // ids the SDK's schema rejects (not a safe integer): they used to hang until eng-http's timeout
    for (const id of [1e308, -1e308, 2 ** 53 + 1, 0.5]) {
      const { status, body } = await post({ jsonrpc: '2.0', id, method: 'ping' });
      expect(status, String(id)).toBe(400);
      expect(body).toMatchObject({ id: null, error: { code: -32600 } });
    }
    for (const progressToken of [null, false, {}, 1.5]) {
      const { status, body } = await post({
        jsonrpc: '2.0',
        id: `p-${JSON.stringify(progressToken)}`,
        method: 'tools/call',
        params: { name: 'demo__echo', arguments: {}, _meta: { progressToken } },
      });
      expect(status, JSON.stringify(progressToken)).toBe(400);
      expect(body.error.code).toBe(-32600);
      expect(body.error.message).toContain('progressToken');
    }
    // an id still pending in the session: the second request is refused, the first still answered.
    // The first call is held in its handler until the second is answered (no race with a sleep)
    let started!: () => void;
    const running = new Promise<void>((r) => {
      started = r;
    });
    let release!: () => void;
    const released = new Promise<void>((r) => {
      release = r;
    });
    const gate = connect(engine.busUrl, { name: 'fuzz-gate', logger: { debug() {}, info() {}, warn() {}, error() {} } });
    gate.registerFunction(
      'fuzz::gated',
      async () => {
        started();
        await released;
        return { released: true };
      },
      { metadata: { 'mcp.expose': true } },
    );
    try {
      await gate.ready({ timeoutMs: 30_000 });
      let listId = 0;
      await waitFor(async () => {
        const listed = await post({ jsonrpc: '2.0', id: `list-${listId++}`, method: 'tools/list' });
        return listed.body.result?.tools.some((t: { name: string }) => t.name === 'fuzz__gated');
      }, 30_000);
      const slow = post({ jsonrpc: '2.0', id: 'dup', method: 'tools/call', params: { name: 'fuzz__gated', arguments: {} } });
      await running;
      const dup = await post({ jsonrpc: '2.0', id: 'dup', method: 'ping' });
      expect(dup.status).toBe(400);
      expect(dup.body).toMatchObject({ id: 'dup', error: { code: -32600, message: expect.stringContaining('already in use') } });
      release();
      const first = await slow;
      expect(first.status).toBe(200);
      expect(first.body.result.content[0].text).toContain('released');
    } finally {
      release();
      await gate.close();
    }
    // once answered, the id may be used again
    expect((await post({ jsonrpc: '2.0', id: 'dup', method: 'ping' })).status).toBe(200);
  });

  it('answers bodies nested deeper than the engine relays, and stays up', async () => {
    // eng-http parses these but cannot forward them to the worker (its frame serialiser recurses):
    // it answers by itself (an engine issue, reported). What matters here: an answer, no hang, and
    // eng-mcp untouched and still serving.
    const session = await httpClient(server.url);
    try {
      for (const depth of [5000, 50_000]) {
        for (const [open, close] of [
          ['[', ']'],
          ['{"a":', '}'],
        ] as const) {
          const nested = `${open.repeat(depth)}1${close.repeat(depth)}`;
          for (const body of [
            nested,
            `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"demo__echo","arguments":{"x":${nested}}}}`,
          ]) {
            const res = await fetch(server.url, {
              method: 'POST',
              headers: { 'content-type': 'application/json', accept: 'application/json' },
              body,
              signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
            });
            await res.text();
            expect(res.status).toBeGreaterThanOrEqual(400);
          }
        }
      }
      expect(server.process.exitCode).toBeNull();
      expect((await session.listTools()).tools.map((t) => t.name)).toContain('demo__echo');
    } finally {
      await session.close();
    }
  }, 120_000);
});
