/**
 * Issue 12 item 9: HTTP sessions are bounded by count and approximate memory, expire when idle,
 * and a flood of anonymous `initialize` requests cannot evict a session that was active in the
 * last minutes: the excess gets 503 + Retry-After with a JSON-RPC error body, the live session
 * keeps working and eng-mcp's memory stays flat. Real engine, real eng-mcp, real MCP SDK client.
 */
import { readFileSync } from 'node:fs';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineProcess } from '../../../test/harness.ts';
import { demoWorker, type HttpMcp, httpClient, httpMcp, sleep, startMcpEngine, textOf } from './helpers.ts';

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
let engine: EngineProcess;

beforeAll(async () => {
  engine = await startMcpEngine();
  await demoWorker(engine);
});
afterAll(async () => {
  await engine?.stop();
});

/** eng-mcp --no-stdio with session settings from ENG_WORKER_CONFIG. */
const start = (config: Record<string, unknown>, args: string[] = []) =>
  httpMcp(engine, args, { ENG_WORKER_CONFIG: JSON.stringify(config) });

function initBody(id: number | string, pad = 0) {
  return JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: `flood-${id}${'x'.repeat(pad)}`, version: '1' } },
  });
}

async function initialize(url: string, id: number | string = 1, pad = 0): Promise<{ res: Response; body: any; session: string | null }> {
  const res = await fetch(url, { method: 'POST', headers: HEADERS, body: initBody(id, pad) });
  const body = await res.json();
  const session = res.headers.get('mcp-session-id');
  if (res.status === 200 && session) {
    const note = await fetch(url, {
      method: 'POST',
      headers: { ...HEADERS, 'mcp-session-id': session },
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    await note.text();
  }
  return { res, body, session };
}

/** A `ping` on a session: its HTTP status (200 alive, 404 gone). */
async function ping(url: string, session: string): Promise<number> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { ...HEADERS, 'mcp-session-id': session },
    body: JSON.stringify({ jsonrpc: '2.0', id: 'p', method: 'ping' }),
  });
  await res.text();
  return res.status;
}

function expectRefusal(status: number, retryAfter: string | null, body: any, id: number | string, maxRetryS: number): void {
  expect(status).toBe(503);
  expect(retryAfter).toMatch(/^\d+$/);
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
  expect(Number(retryAfter)).toBeLessThanOrEqual(maxRetryS);
  expect(body).toMatchObject({ jsonrpc: '2.0', id, error: { code: -32000 } });
  expect(body.error.message).toMatch(/session limit is reached/);
}

const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;

describe('a flood of anonymous initialize requests', () => {
  let server: HttpMcp;
  let live: Client;
  beforeAll(async () => {
    server = await start({ max_sessions: 50 });
    live = await httpClient(server.url);
  });
  afterAll(async () => {
    await live?.close().catch(() => undefined);
    await server?.stop();
  });

  it('fills the cap, refuses the rest with 503 + Retry-After, never evicts the live session, and memory stays flat', async () => {
    expect((await live.listTools()).tools.map((t) => t.name)).toContain('demo__echo');
    const pid = server.process.pid as number;
    const FLOOD = 3000;
    const PAD = 8000; // clientInfo the SDK keeps per session: 3000 held sessions would be > 70 MiB
    const statuses = new Map<number, number>();
    const refusals: Array<{ status: number; retryAfter: string | null; body: any; id: number }> = [];
    let next = 0;
    const flood = async (count: number) => {
      const end = next + count;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (next < end) {
            const id = next++;
            const res = await fetch(server.url, { method: 'POST', headers: HEADERS, body: initBody(id, PAD) });
            const body = await res.json();
            statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
            if (res.status !== 200) refusals.push({ status: res.status, retryAfter: res.headers.get('retry-after'), body, id });
          }
        }),
      );
    };
    await flood(200); // warm-up: the cap is reached here already
    await sleep(500);
    const before = rssMiB(pid);
    await flood(FLOOD);
    await sleep(1000);
    const after = rssMiB(pid);
    console.log(`flood of ${FLOOD}: eng-mcp RSS ${before.toFixed(1)} → ${after.toFixed(1)} MiB`);

    // 50 sessions: the live one and 49 from the flood; everything else refused, none evicted
    expect(statuses.get(200)).toBe(49);
    expect(statuses.get(503)).toBe(200 + FLOOD - 49);
    for (const r of refusals) expectRefusal(r.status, r.retryAfter, r.body, r.id, 300);
    // the live session still works, with the same id (the SDK would re-initialize on a 404)
    const sessionBefore = (live as any)._transport?.sessionId;
    expect(textOf(await live.callTool({ name: 'demo__echo', arguments: { message: 'still here' } }))).toContain('still here');
    expect((await live.listTools()).tools.map((t) => t.name)).toContain('demo__echo');
    expect((live as any)._transport?.sessionId).toBe(sessionBefore);
    // bounded memory: a few MiB of garbage between collections, not one session per request
    expect(after - before, `RSS ${before.toFixed(1)} → ${after.toFixed(1)} MiB`).toBeLessThan(48);
    expect(server.process.exitCode).toBeNull();
    // and a bounded log: one warning per minute, not one line per refused request
    expect(server.output().match(/refused \d+ MCP initialize/g)?.length ?? 0).toBeLessThanOrEqual(2);
  }, 180_000);
});

describe('eviction and idle expiry', () => {
  let server: HttpMcp;
  beforeAll(async () => {
    server = await start({ max_sessions: 3, session_protect_ms: 1500, session_idle_ms: 4500 });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('evicts the least recently active session idle past the protection window, never a recently active one', async () => {
    const url = server.url;
    const [s1, s2, s3] = await Promise.all([initialize(url, 1), initialize(url, 2), initialize(url, 3)]).then((r) =>
      r.map((x) => x.session as string),
    );
    expect([s1, s2, s3].every(Boolean)).toBe(true);
    // full, and every session is recent: refused, retry once the oldest leaves the window (≤ 2 s)
    const full = await initialize(url, 4);
    expectRefusal(full.res.status, full.res.headers.get('retry-after'), full.body, 4, 2);
    expect(full.session).toBeNull();

    // the three started together, in an order only the server knows: s2 active once more makes s1
    // the least recently active for certain
    expect(await ping(url, s2 as string)).toBe(200);
    await sleep(1700);
    expect(await ping(url, s3 as string)).toBe(200); // s3 active again; s1 and s2 idle past 1.5 s
    const s4 = await initialize(url, 5);
    expect(s4.res.status).toBe(200);
    expect(await ping(url, s1 as string)).toBe(404); // the least recently active went
    expect(await ping(url, s2 as string)).toBe(200); // only as many as needed
    expect(await ping(url, s3 as string)).toBe(200);
    // s2, s3 and s4 are all recent now: no room
    const again = await initialize(url, 6);
    expect(again.res.status).toBe(503);
  }, 30_000);

  it('ends sessions idle for session_idle_ms, keeps the active one, and frees their room', async () => {
    const url = server.url;
    // the previous test left three sessions; start from one we keep busy
    await sleep(1600);
    const keep = await initialize(url, 10); // evicts one idle session
    expect(keep.res.status).toBe(200);
    const idle = await initialize(url, 11);
    expect(idle.res.status).toBe(200);
    const started = Date.now();
    while (Date.now() - started < 5500) {
      expect(await ping(url, keep.session as string)).toBe(200);
      await sleep(400);
    }
    expect(await ping(url, idle.session as string)).toBe(404);
    expect(await ping(url, keep.session as string)).toBe(200);
    // the expired sessions' places are free: two new sessions fit next to the busy one at once
    const [a, b] = await Promise.all([initialize(url, 12), initialize(url, 13)]);
    expect([a.res.status, b.res.status]).toEqual([200, 200]);
  }, 30_000);
});

describe('the memory budget', () => {
  let server: HttpMcp;
  beforeAll(async () => {
    server = await start({ max_sessions: 100, max_session_bytes: 256 * 1024 });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('counts what clients send: big initialize params fill it long before the count cap', async () => {
    const url = server.url;
    const PAD = 40_000; // ~16 KiB fixed + 2 × 40 KB retained ≈ 96 KiB per session
    expect((await initialize(url, 1, PAD)).res.status).toBe(200);
    expect((await initialize(url, 2, PAD)).res.status).toBe(200);
    const third = await initialize(url, 3, PAD);
    expectRefusal(third.res.status, third.res.headers.get('retry-after'), third.body, 3, 300);
    // a small session still fits in what is left
    expect((await initialize(url, 4)).res.status).toBe(200);
    // one that could never fit is a client error, not a "retry later"
    const huge = await initialize(url, 5, 200_000);
    expect(huge.res.status).toBe(413);
    expect(huge.body).toMatchObject({ jsonrpc: '2.0', id: 5, error: { code: -32000 } });
    expect(huge.body.error.message).toContain('session memory budget');
  });

  it('bounds what one session holds through subscriptions', async () => {
    const client = await httpClient(server.url);
    try {
      for (let i = 0; i < 256; i++) await client.subscribeResource({ uri: `eng://function/sub${i}` });
      await client.subscribeResource({ uri: 'eng://function/sub0' }); // already held: no new room needed
      const over = await client.subscribeResource({ uri: 'eng://function/one-too-many' }).catch((e: unknown) => e);
      expect(over).toMatchObject({ code: -32602 });
      expect(String((over as Error).message)).toContain('256 subscriptions');
      await client.unsubscribeResource({ uri: 'eng://function/sub1' });
      await client.subscribeResource({ uri: 'eng://function/one-too-many' }); // room again
      const long = await client.subscribeResource({ uri: `eng://function/${'x'.repeat(2100)}` }).catch((e: unknown) => e);
      expect(long).toMatchObject({ code: -32602 });
      expect(String((long as Error).message)).toContain('longer than 2048');
    } finally {
      await client.close();
    }
  });

  it('refuses bad session settings by name', async () => {
    const { spawnSync } = await import('node:child_process');
    const { MCP_BIN } = await import('./helpers.ts');
    for (const [args, text] of [
      [['--max-sessions', '0'], '--max-sessions must be at least 1'],
      [['--max-sessions', 'lots'], '--max-sessions must be a whole number'],
      [['--session-idle-ms', '10'], '--session-idle-ms must be at least 1000'],
      [['--max-session-bytes', '1000'], '--max-session-bytes must be at least 65536'],
    ] as const) {
      const res = spawnSync(process.execPath, [MCP_BIN, ...args], { env: { ...process.env, ENG_WORKER_CONFIG: '' }, encoding: 'utf8' });
      expect(res.status, args.join(' ')).toBe(2);
      expect(res.stderr).toContain(text);
    }
    const res = spawnSync(process.execPath, [MCP_BIN], {
      env: { ...process.env, ENG_WORKER_CONFIG: '{"session_protect_ms": -1}' },
      encoding: 'utf8',
    });
    expect(res.status).toBe(2);
    expect(res.stderr).toContain('session_protect_ms');
  });
});
