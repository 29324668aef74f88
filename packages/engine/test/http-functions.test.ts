/**
 * eng-http-functions (spec §3.4) against real engines and a real node:http server on loopback:
 * iii-sdk 0.22.1 and 0.11.6 workers register HTTP-invoked functions; calls, queue deliveries,
 * listing, unregister and disconnect, error mapping, timeouts, the three auth types (checked by
 * the receiving server), every URL security rule, redirects, and the client span of each call.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { registerWorker as registerWorker11 } from 'iii-sdk-0.11.6';
import { registerWorker as registerWorker22 } from 'iii-sdk-0.22.1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import { RawClient } from '../../../test/raw-client.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Captured {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  raw: Buffer;
  body: unknown;
}

interface Reply {
  status?: number;
  headers?: Record<string, string>;
  body?: string | object;
  delayMs?: number;
}

/** A webhook receiver: records every request; routes answer by path. */
class Receiver {
  readonly requests: Captured[] = [];
  private readonly waiters: Array<{ path: string; resolve: (c: Captured) => void }> = [];
  readonly routes = new Map<string, (req: Captured) => Reply>();
  private server: Server;

  constructor(private readonly host = '127.0.0.1') {
    this.server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const raw = Buffer.concat(chunks);
      let body: unknown = null;
      try {
        body = raw.length ? JSON.parse(raw.toString('utf8')) : null;
      } catch {
        body = raw.toString('utf8');
      }
      const path = (req.url ?? '/').split('?')[0] as string;
      const captured: Captured = { method: req.method ?? '', path, headers: req.headers, raw, body };
      this.requests.push(captured);
      const waiter = this.waiters.find((w) => w.path === path);
      if (waiter) {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        waiter.resolve(captured);
      }
      const reply: Reply = (this.routes.get(path) ?? (() => ({ body: { ok: true, echo: body } })))(captured);
      if (reply.delayMs) await sleep(reply.delayMs);
      if (res.destroyed) return;
      const text = reply.body === undefined ? '' : typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
      res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
      res.end(text);
    });
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, this.host, () => resolve()));
  }
  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }
  url(path: string, host = this.host): string {
    return `http://${host}:${this.port}${path}`;
  }
  next(path: string, timeoutMs = 7000): Promise<Captured> {
    const seen = this.requests.find((r) => r.path === path && !this.taken.has(r));
    if (seen) {
      this.taken.add(seen);
      return Promise.resolve(seen);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no request to ${path} within ${timeoutMs} ms`)), timeoutMs);
      this.waiters.push({
        path,
        resolve: (c) => {
          clearTimeout(timer);
          this.taken.add(c);
          resolve(c);
        },
      });
    });
  }
  private readonly taken = new Set<Captured>();
  count(path: string): number {
    return this.requests.filter((r) => r.path === path).length;
  }
  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

type Sdk = ReturnType<typeof registerWorker22>;
const SDKS: Array<[string, (url: string, name: string) => Sdk]> = [
  [
    'iii-sdk 0.22.1',
    (url, name) => registerWorker22(url, { workerName: name, otel: { enabled: false }, reconnectionConfig: { maxRetries: 0 } }),
  ],
  [
    'iii-sdk 0.11.6',
    (url, name) =>
      registerWorker11(url, { workerName: name, otel: { enabled: false }, reconnectionConfig: { maxRetries: 0 } }) as unknown as Sdk,
  ],
];

async function failure(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (err) {
    return { code: (err as { code: string }).code, message: (err as Error).message };
  }
  throw new Error('expected the call to fail, it succeeded');
}

async function listed(client: Sdk, id: string): Promise<Record<string, unknown> | undefined> {
  const { functions } = (await client.trigger({ function_id: 'engine::functions::list', payload: {} })) as {
    functions: Array<Record<string, unknown>>;
  };
  return functions.find((f) => f.function_id === id);
}

/** Registration is asynchronous (the URL is checked first): wait until the engine lists it. */
async function registered(client: Sdk, id: string): Promise<void> {
  await waitFor(() => listed(client, id), 5000);
}

const ENV = { WEBHOOK_SECRET: 'hmac-secret-value', WEBHOOK_TOKEN: 'bearer-token-value', WEBHOOK_KEY: 'api-key-value' };

const OPEN_CONFIG = `  - name: eng-queue
  - name: eng-http-functions
    config:
      security:
        url_allowlist: ["127.0.0.1", "localhost"]
        block_private_ips: false
        require_https: false
`;

describe.each(SDKS)('HTTP-invoked functions with %s', (_label, sdk) => {
  let engine: EngineProcess;
  let receiver: Receiver;
  let owner: Sdk;
  let caller: Sdk;

  beforeAll(async () => {
    receiver = new Receiver();
    await receiver.start();
    engine = await startEngine({ workersYaml: OPEN_CONFIG, env: ENV, readyTimeoutMs: 60_000 });
    owner = sdk(engine.busUrl, 'webhook-owner');
    caller = sdk(engine.busUrl, 'webhook-caller');
    await caller.trigger({ function_id: 'engine::functions::list', payload: {} });
  }, 90_000);
  afterAll(async () => {
    await owner?.shutdown();
    await caller?.shutdown();
    await engine?.stop();
    await receiver?.close();
  });

  it('calls the URL with the JSON payload, the custom headers and the engine headers, and returns its JSON', async () => {
    receiver.routes.set('/echo', (req) => ({ body: { received: req.body, greeting: 'hello' } }));
    const id = `ext::echo::${randomUUID().slice(0, 8)}`;
    owner.registerFunction(id, {
      url: receiver.url('/echo'),
      method: 'POST',
      timeout_ms: 3000,
      headers: { 'X-Custom-Header': 'test-value', 'X-Another': '123' },
    });
    await registered(caller, id);
    const before = Math.floor(Date.now() / 1000);
    const result = await caller.trigger({ function_id: id, payload: { order: 7, items: ['a'] } });
    expect(result).toEqual({ received: { order: 7, items: ['a'] }, greeting: 'hello' });

    const req = await receiver.next('/echo');
    expect(req.method).toBe('POST');
    // the engine's own bookkeeping (which worker called) is not sent to a third party
    expect(req.body).toEqual({ order: 7, items: ['a'] });
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['x-custom-header']).toBe('test-value');
    expect(req.headers['x-another']).toBe('123');
    for (const prefix of ['x-eng-', 'x-iii-']) {
      expect(req.headers[`${prefix}function-path`]).toBe(id);
      expect(req.headers[`${prefix}invocation-id`]).toMatch(/^[0-9a-f-]{36}$/);
      expect(Number(req.headers[`${prefix}timestamp`])).toBeGreaterThanOrEqual(before - 1);
      expect(Number(req.headers[`${prefix}timestamp`])).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000));
    }
    expect(req.headers['x-eng-signature']).toBeUndefined();
  });

  it('delivers queue messages to several external functions at once, with their own methods', async () => {
    const idA = `ext::multi_a::${randomUUID().slice(0, 8)}`;
    const idB = `ext::multi_b::${randomUUID().slice(0, 8)}`;
    const topicA = `ext.a.${randomUUID().slice(0, 8)}`;
    const topicB = `ext.b.${randomUUID().slice(0, 8)}`;
    owner.registerFunction(idA, { url: receiver.url('/multi-a'), method: 'POST', timeout_ms: 3000 });
    owner.registerFunction(idB, { url: receiver.url('/multi-b'), method: 'PUT', timeout_ms: 3000 });
    await registered(caller, idA);
    await registered(caller, idB);
    const triggerA = owner.registerTrigger({ type: 'durable:subscriber', function_id: idA, config: { topic: topicA } });
    const triggerB = owner.registerTrigger({ type: 'durable:subscriber', function_id: idB, config: { topic: topicB } });
    // both subscribers are bound before anything is published
    await waitFor(async () => {
      const { registered_triggers } = (await caller.trigger({ function_id: 'engine::registered-triggers::list', payload: {} })) as {
        registered_triggers: Array<{ function_id: string; status?: string }>;
      };
      return [idA, idB].every((id) => registered_triggers.some((t) => t.function_id === id && t.status === 'active'));
    }, 30_000);
    await caller.trigger({ function_id: 'iii::durable::publish', payload: { topic: topicA, data: { source: 'topic-a', value: 1 } } });
    await caller.trigger({ function_id: 'iii::durable::publish', payload: { topic: topicB, data: { source: 'topic-b', value: 2 } } });
    const [a, b] = await Promise.all([receiver.next('/multi-a'), receiver.next('/multi-b')]);
    expect(a.method).toBe('POST');
    expect(a.body).toMatchObject({ source: 'topic-a', value: 1 });
    expect(b.method).toBe('PUT');
    expect(b.body).toMatchObject({ source: 'topic-b', value: 2 });
    triggerA.unregister();
    triggerB.unregister();
  });

  it('is listed as an HTTP function while registered, and unregister or the worker leaving removes it', async () => {
    const id = `ext::listed::${randomUUID().slice(0, 8)}`;
    const ref = owner.registerFunction(id, { url: receiver.url('/listed'), method: 'PATCH', timeout_ms: 3000 });
    await registered(caller, id);
    expect(await listed(caller, id)).toMatchObject({
      function_id: id,
      kind: 'http',
      invocation: { url: receiver.url('/listed'), method: 'PATCH', timeout_ms: 3000 },
    });
    ref.unregister();
    await waitFor(async () => !(await listed(caller, id)), 5000);
    const gone = await failure(caller.trigger({ function_id: id, payload: {} }));
    expect(gone.code).toBe('function_not_found');
    expect(receiver.count('/listed')).toBe(0);

    const leaver = sdk(engine.busUrl, 'webhook-leaver');
    const leaving = `ext::leaving::${randomUUID().slice(0, 8)}`;
    leaver.registerFunction(leaving, { url: receiver.url('/leaving'), method: 'POST', timeout_ms: 3000 });
    await registered(caller, leaving);
    await leaver.shutdown();
    await waitFor(async () => !(await listed(caller, leaving)), 5000);
    expect((await failure(caller.trigger({ function_id: leaving, payload: {} }))).code).toBe('function_not_found');
  });

  it('turns 4xx and 5xx answers into errors: the body error when there is one, else HTTP <status>', async () => {
    receiver.routes.set('/out-of-stock', () => ({
      status: 422,
      body: { error: { code: 'out_of_stock', message: 'sku A-1 is sold out' } },
    }));
    receiver.routes.set('/unavailable', () => ({ status: 503, body: '' }));
    receiver.routes.set('/missing', () => ({ status: 404, headers: { 'content-type': 'text/plain' }, body: 'not here' }));
    receiver.routes.set('/not-json', () => ({ status: 200, headers: { 'content-type': 'text/html' }, body: '<html>hi</html>' }));
    receiver.routes.set('/empty', () => ({ status: 204 }));
    const ids = Object.fromEntries(
      ['out-of-stock', 'unavailable', 'missing', 'not-json', 'empty'].map((p) => [p, `ext::err::${p}::${randomUUID().slice(0, 6)}`]),
    );
    for (const [path, id] of Object.entries(ids))
      owner.registerFunction(id, { url: receiver.url(`/${path}`), method: 'POST', timeout_ms: 3000 });
    for (const id of Object.values(ids)) await registered(caller, id);

    expect(await failure(caller.trigger({ function_id: ids['out-of-stock'] as string, payload: {} }))).toMatchObject({
      code: 'out_of_stock',
      message: expect.stringContaining('sku A-1 is sold out'),
    });
    const unavailable = await failure(caller.trigger({ function_id: ids.unavailable as string, payload: {} }));
    expect(unavailable.code).toBe('http_error');
    expect(unavailable.message).toContain('HTTP 503');
    const missing = await failure(caller.trigger({ function_id: ids.missing as string, payload: {} }));
    expect(missing.code).toBe('http_error');
    expect(missing.message).toContain('HTTP 404');
    const notJson = await failure(caller.trigger({ function_id: ids['not-json'] as string, payload: {} }));
    expect(notJson.code).toBe('invalid_response');
    expect(await caller.trigger({ function_id: ids.empty as string, payload: {} })).toBeUndefined();
  });

  it('ends a call that takes longer than timeout_ms with a timeout error', async () => {
    receiver.routes.set('/slow', () => ({ delayMs: 3000, body: { late: true } }));
    const id = `ext::slow::${randomUUID().slice(0, 8)}`;
    owner.registerFunction(id, { url: receiver.url('/slow'), method: 'POST', timeout_ms: 300 });
    await registered(caller, id);
    const started = Date.now();
    const error = await failure(caller.trigger({ function_id: id, payload: {} }));
    expect(error.code).toBe('TIMEOUT');
    expect(error.message).toContain('timed out after 300ms');
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('authenticates with hmac, bearer and api_key from the engine environment, verified by the server', async () => {
    const ids = {
      hmac: `ext::auth::hmac::${randomUUID().slice(0, 6)}`,
      bearer: `ext::auth::bearer::${randomUUID().slice(0, 6)}`,
      apiKey: `ext::auth::key::${randomUUID().slice(0, 6)}`,
    };
    owner.registerFunction(ids.hmac, {
      url: receiver.url('/signed'),
      method: 'POST',
      timeout_ms: 3000,
      auth: { type: 'hmac', secret_key: 'WEBHOOK_SECRET' },
    });
    owner.registerFunction(ids.bearer, {
      url: receiver.url('/bearer'),
      method: 'POST',
      timeout_ms: 3000,
      auth: { type: 'bearer', token_key: 'WEBHOOK_TOKEN' },
    });
    owner.registerFunction(ids.apiKey, {
      url: receiver.url('/keyed'),
      method: 'POST',
      timeout_ms: 3000,
      auth: { type: 'api_key', header: 'X-Api-Key', value_key: 'WEBHOOK_KEY' },
    });
    for (const id of Object.values(ids)) await registered(caller, id);

    await caller.trigger({ function_id: ids.hmac, payload: { amount: 42 } });
    const signed = await receiver.next('/signed');
    const timestamp = signed.headers['x-eng-timestamp'] as string;
    const expected = `sha256=${createHmac('sha256', ENV.WEBHOOK_SECRET)
      .update(`${timestamp}:${signed.raw.toString('base64')}`)
      .digest('hex')}`;
    expect(signed.headers['x-eng-signature']).toBe(expected);
    expect(signed.headers['x-iii-signature']).toBe(expected);
    expect(signed.headers.authorization).toBeUndefined();
    // a tampered body would not verify
    const tampered = createHmac('sha256', ENV.WEBHOOK_SECRET).update(`${timestamp}:${Buffer.from('{"amount":43}').toString('base64')}`);
    expect(signed.headers['x-eng-signature']).not.toBe(`sha256=${tampered.digest('hex')}`);

    await caller.trigger({ function_id: ids.bearer, payload: {} });
    expect((await receiver.next('/bearer')).headers.authorization).toBe(`Bearer ${ENV.WEBHOOK_TOKEN}`);
    await caller.trigger({ function_id: ids.apiKey, payload: {} });
    const keyed = await receiver.next('/keyed');
    expect(keyed.headers['x-api-key']).toBe(ENV.WEBHOOK_KEY);
    expect(keyed.headers.authorization).toBeUndefined();
  });
});

describe('HTTP-invoked functions: registration refusals, redirects and the client span', () => {
  let open: EngineProcess;
  let strict: EngineProcess;
  let guarded: EngineProcess;
  let without: EngineProcess;
  let receiver: Receiver;
  let other: Receiver;

  beforeAll(async () => {
    receiver = new Receiver('127.0.0.2');
    other = new Receiver('127.0.0.1');
    await receiver.start();
    await other.start();
    // one after another: four engines starting at once on a loaded machine can miss the ready deadline
    const readyTimeoutMs = 60_000;
    open = await startEngine({ workersYaml: OPEN_CONFIG, env: ENV, readyTimeoutMs });
    // the defaults: require_https and block_private_ips on, any host
    strict = await startEngine({ workersYaml: '  - name: eng-http-functions\n', readyTimeoutMs });
    guarded = await startEngine({
      workersYaml: `  - name: eng-http-functions
    config:
      security:
        url_allowlist: ["127.0.0.2", "localhost", "169.254.169.254", "*.example.test"]
        block_private_ips: true
        private_ip_exceptions: ["127.0.0.2"]
        require_https: false
`,
      readyTimeoutMs,
    });
    without = await startEngine({ readyTimeoutMs });
  }, 240_000);
  afterAll(async () => {
    await Promise.all([open?.stop(), strict?.stop(), guarded?.stop(), without?.stop()]);
    await receiver?.close();
    await other?.close();
  });

  /** Register over a raw connection and return the engine's refusal (or null once the function is listed). */
  async function register(engine: EngineProcess, invocation: Record<string, unknown>): Promise<{ code: string; message: string } | null> {
    const client = await RawClient.worker(engine.busUrl);
    const id = `ext::refusal::${randomUUID().slice(0, 8)}`;
    try {
      client.send({ type: 'registerfunction', id, invocation });
      const outcome = await Promise.race([
        client
          .next((f) => f.type === 'registrationrejected' && f.function_id === id, 5000)
          .then((f) => f as unknown as { code: string; message: string }),
        waitFor(async () => {
          const { functions } = await client.result('engine::functions::list', {});
          return (functions as Array<{ function_id: string }>).some((f) => f.function_id === id);
        }, 5000).then(() => null),
      ]);
      return outcome ? { code: outcome.code, message: outcome.message } : null;
    } finally {
      await client.close();
    }
  }

  it('without eng-http-functions the registration is refused, naming the module to add', async () => {
    const refusal = await register(without, { url: 'https://api.example.com/hook', method: 'POST' });
    expect(refusal?.message).toContain('eng worker add eng-http-functions');
    expect(without.logs()).toContain('needs the eng-http-functions module');
  });

  it('refuses http: URLs under require_https and private addresses under block_private_ips (the defaults)', async () => {
    const https = await register(strict, { url: 'http://api.example.com/hook' });
    expect(https?.code).toBe('url_validation_failed');
    expect(https?.message).toContain('require_https');
    const literal = await register(strict, { url: 'https://127.0.0.1:8443/hook' });
    expect(literal?.message).toContain('block_private_ips');
    // a name is resolved: localhost is loopback
    const named = await register(strict, { url: 'https://localhost/hook' });
    expect(named?.message).toMatch(/block_private_ips.*localhost \(127\.0\.0\.1\)/);
    const metadata = await register(strict, { url: 'https://[::ffff:169.254.169.254]/latest' });
    expect(metadata?.message).toContain('block_private_ips');
  });

  it('refuses a host outside url_allowlist and allows the listed ones', async () => {
    const refused = await register(guarded, { url: other.url('/hook', '127.0.0.1') });
    expect(refused?.code).toBe('url_validation_failed');
    expect(refused?.message).toContain('url_allowlist');
    expect(refused?.message).toContain('"127.0.0.1"');
    expect(await register(guarded, { url: receiver.url('/ok') })).toBeNull();
    expect(await register(open, { url: other.url('/ok') })).toBeNull();
  });

  it('refuses bad invocations with the field named: method, reserved headers, unset or disallowed auth variables', async () => {
    expect((await register(open, { url: other.url('/x'), method: 'TRACE' }))?.message).toContain('invocation.method');
    expect((await register(open, { url: other.url('/x'), headers: { Host: 'evil' } }))?.message).toContain('"Host" is set by the engine');
    expect((await register(open, { url: other.url('/x'), headers: { 'x-eng-signature': 'forged' } }))?.message).toContain(
      'set by the engine',
    );
    const unset = await register(open, { url: other.url('/x'), auth: { type: 'bearer', token_key: 'NOT_SET_ANYWHERE' } });
    expect(unset?.message).toContain('NOT_SET_ANYWHERE, which is not set');
    expect(unset?.message).not.toContain('bearer-token-value');
  });

  it('follows a redirect to an allowed URL but not to a refused host or a private address', async () => {
    const client = registerWorker22(guarded.busUrl, { workerName: 'redirects', otel: { enabled: false } });
    try {
      receiver.routes.set('/to-ok', () => ({ status: 307, headers: { location: '/final' } }));
      receiver.routes.set('/final', (req) => ({ body: { final: true, body: req.body } }));
      receiver.routes.set('/to-loopback-name', () => ({ status: 302, headers: { location: other.url('/stolen', 'localhost') } }));
      receiver.routes.set('/to-metadata', () => ({ status: 301, headers: { location: 'http://169.254.169.254/latest/meta-data/' } }));
      receiver.routes.set('/to-elsewhere', () => ({ status: 308, headers: { location: 'http://attacker.invalid/collect' } }));
      const ids: Record<string, string> = {};
      for (const path of ['to-ok', 'to-loopback-name', 'to-metadata', 'to-elsewhere']) {
        ids[path] = `ext::redirect::${path}::${randomUUID().slice(0, 6)}`;
        client.registerFunction(ids[path] as string, { url: receiver.url(`/${path}`), method: 'POST', timeout_ms: 3000 });
      }
      for (const id of Object.values(ids)) await registered(client, id);

      expect(await client.trigger({ function_id: ids['to-ok'] as string, payload: { n: 1 } })).toEqual({ final: true, body: { n: 1 } });
      const loopback = await failure(client.trigger({ function_id: ids['to-loopback-name'] as string, payload: {} }));
      expect(loopback.code).toBe('url_validation_failed');
      expect(loopback.message).toMatch(/block_private_ips.*localhost \(127\.0\.0\.1\)/);
      const metadata = await failure(client.trigger({ function_id: ids['to-metadata'] as string, payload: {} }));
      expect(metadata.message).toContain('block_private_ips');
      expect(metadata.message).toContain('169.254.169.254');
      const elsewhere = await failure(client.trigger({ function_id: ids['to-elsewhere'] as string, payload: {} }));
      expect(elsewhere.message).toContain('url_allowlist');
      // the private service behind the redirect never saw a request
      expect(other.count('/stolen')).toBe(0);
    } finally {
      await client.shutdown();
    }
  });

  it('records each call as a client span under the caller, with method, redacted URL and status', async () => {
    other.routes.set('/traced', () => ({ body: { traced: true } }));
    other.routes.set('/traced-fail', () => ({ status: 500 }));
    const owner = await RawClient.worker(open.busUrl);
    const caller = await RawClient.worker(open.busUrl);
    try {
      const id = `ext::traced::${randomUUID().slice(0, 8)}`;
      const failing = `${id}::fail`;
      const secretUrl = other.url('/traced?token=s3cr3t&page=2').replace('http://', 'http://user:pa55@');
      owner.send({ type: 'registerfunction', id, invocation: { url: secretUrl, method: 'POST' } });
      owner.send({ type: 'registerfunction', id: failing, invocation: { url: other.url('/traced-fail'), method: 'POST' } });
      await waitFor(async () => {
        const { functions } = await caller.result('engine::functions::list', {});
        return (functions as Array<{ function_id: string }>).filter((f) => f.function_id.startsWith(id)).length === 2;
      });
      const { functions } = await caller.result('engine::functions::list', {});
      const record = (functions as Array<{ function_id: string; invocation?: { url: string } }>).find((f) => f.function_id === id);
      expect(record?.invocation?.url).toBe(`http://***@127.0.0.1:${other.port}/traced?token=***&page=***`);
      const traceId = randomUUID().replace(/-/g, '');
      const parentSpan = '1234567890abcdef';
      const frame = await caller.call(id, { q: 1 }, { traceparent: `00-${traceId}-${parentSpan}-01` });
      expect(frame.result).toEqual({ traced: true });
      const received = await other.next('/traced');
      expect(received.headers.authorization).toBe(`Basic ${Buffer.from('user:pa55').toString('base64')}`);

      const span = await waitFor(async () => {
        const { spans } = await caller.result('engine::traces::spans', { trace_id: traceId });
        return (spans as Array<Record<string, any>>).find((s) => s.kind === 'client' && !s.pending);
      });
      const attributes = Object.fromEntries(span.attributes as [string, string][]);
      expect(span.parent_span_id).toBe(parentSpan);
      expect(span.status).toBe('ok');
      expect(attributes['http.request.method']).toBe('POST');
      expect(attributes['http.response.status_code']).toBe('200');
      expect(attributes['url.full']).toBe(`http://***@127.0.0.1:${other.port}/traced?token=***&page=***`);
      expect(JSON.stringify(span)).not.toContain('s3cr3t');
      expect(JSON.stringify(span)).not.toContain('pa55');
      // the server can continue the trace: it got the client span's context
      expect(received.headers.traceparent).toBe(`00-${traceId}-${span.span_id}-01`);

      const failTrace = randomUUID().replace(/-/g, '');
      const failed = await caller.call(failing, {}, { traceparent: `00-${failTrace}-${parentSpan}-01` });
      expect((failed.error as { message: string }).message).toBe('HTTP 500');
      const failedSpan = await waitFor(async () => {
        const { spans } = await caller.result('engine::traces::spans', { trace_id: failTrace });
        return (spans as Array<Record<string, any>>).find((s) => s.kind === 'client' && !s.pending);
      });
      expect(failedSpan.status).toBe('error');
      expect(Object.fromEntries(failedSpan.attributes as [string, string][])['http.response.status_code']).toBe('500');
    } finally {
      await owner.close();
      await caller.close();
    }
  });
});
