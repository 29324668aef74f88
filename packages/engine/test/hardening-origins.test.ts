/**
 * Issue 12 item 3: web pages must not drive the engine. The bus and the streams socket refuse a
 * WebSocket upgrade whose `Origin` is present and not listed under `allowed_origins` (browsers
 * always send one; workers send none), checked with raw upgrades, both SDKs' connections and a
 * real Chromium page served from another local origin.
 */
import { request } from 'node:http';
import type { Browser } from '@playwright/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, startPageServer } from '../../../test/browser.ts';
import { type EngineProcess, startEngine } from '../../../test/harness.ts';
import { RawClient } from '../../../test/raw-client.ts';
import { iiiSdk, type KvClient, StreamsClient } from './kv-clients.ts';

const modulesYaml = (extra: { bus?: string; streams?: string } = {}) => `workers:
  - name: eng-worker-manager
    config:
      port: {{BUS_PORT}}
${extra.bus ?? ''}  - name: eng-state
    config:
      adapter: { name: kv, config: { store_method: in_memory } }
  - name: eng-stream
    config:
      port: {{STREAMS_PORT}}
      adapter: { name: kv, config: { store_method: in_memory } }
${extra.streams ?? ''}`;

/** A WebSocket upgrade by hand: the status it gets (101 when accepted) and the body of a refusal. */
function upgrade(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  const target = new URL(url.replace(/^ws/, 'http'));
  return new Promise((resolve, reject) => {
    const req = request({
      host: target.hostname,
      port: target.port,
      path: target.pathname + target.search,
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
        ...headers,
      },
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, body: '' });
    });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const streamsUrl = (engine: EngineProcess) => `ws://127.0.0.1:${engine.ports.STREAMS}`;

describe('default: no browser origin may open the bus or the streams socket', () => {
  let engine: EngineProcess;
  let worker: KvClient;

  beforeAll(async () => {
    engine = await startEngine({ configYaml: modulesYaml() });
    worker = await iiiSdk(engine.busUrl, 'origins-worker');
  });
  afterAll(async () => {
    await worker?.close();
    await engine?.stop();
  });

  it('refuses a bus upgrade from http://evil.example with 403 naming the rule and the config key', async () => {
    for (const path of ['/', '/otel', '/ws/channels/x?key=y&dir=read']) {
      const refused = await upgrade(`${engine.busUrl}${path}`, { origin: 'http://evil.example' });
      expect(refused.status).toBe(403);
      expect(refused.body).toContain('cross-origin WebSocket refused');
      expect(refused.body).toContain('allowed_origins of eng-worker-manager');
    }
    // a DNS-rebinding page names itself in Host too: still refused by its Origin
    const rebound = await upgrade(engine.busUrl, { origin: 'http://evil.example:1234', host: 'evil.example:1234' });
    expect(rebound.status).toBe(403);
    // pages that report an opaque origin (sandboxed frames, file://) send "null"
    expect((await upgrade(engine.busUrl, { origin: 'null' })).status).toBe(403);
    // the version-8 handshake's spelling of the header
    const legacy = await upgrade(engine.busUrl, { 'sec-websocket-version': '8', 'sec-websocket-origin': 'http://evil.example' });
    expect(legacy.status).toBe(403);
    expect(engine.logs()).toContain('refused a WebSocket upgrade from a browser page at http://evil.example');
  });

  it('accepts workers, which send no Origin: an iii-sdk worker serves and calls', async () => {
    expect((await upgrade(engine.busUrl)).status).toBe(101);
    worker.register('origins::double', (input: { n: number }) => ({ n: input.n * 2 }));
    await worker.sync();
    expect(await worker.call('origins::double', { n: 21 })).toEqual({ n: 42 });
    await worker.call('state::set', { scope: 'origins', key: 'k', value: 'by-worker' });
    expect(await worker.call('state::get', { scope: 'origins', key: 'k' })).toBe('by-worker');
  });

  it('refuses a streams upgrade from http://evil.example with 403 naming eng-stream', async () => {
    const refused = await upgrade(streamsUrl(engine), { origin: 'http://evil.example' });
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('allowed_origins of eng-stream');
  });

  it('serves a streams client that sends no Origin', async () => {
    await worker.call('stream::set', { stream_name: 'room', group_id: 'g', item_id: 'm1', data: { text: 'hi' } });
    const client = await StreamsClient.connect(`${streamsUrl(engine)}/`);
    client.join('s1', 'room', 'g');
    const sync = await client.next('sync');
    expect(JSON.stringify(sync.event)).toContain('hi');
    client.close();
  });
});

describe('allowed_origins lists the pages that may connect', () => {
  let engine: EngineProcess;
  let worker: KvClient;

  beforeAll(async () => {
    engine = await startEngine({
      configYaml: modulesYaml({
        bus: '      allowed_origins: ["http://allowed.example:8080", "HTTPS://App.Example"]\n',
        streams: '      allowed_origins: ["http://allowed.example:8080"]\n',
      }),
    });
    worker = await iiiSdk(engine.busUrl, 'origins-worker');
  });
  afterAll(async () => {
    await worker?.close();
    await engine?.stop();
  });

  it('opens the bus to a listed origin, compared as browsers spell it', async () => {
    const page = await RawClient.connect(engine.busUrl, { headers: { origin: 'http://allowed.example:8080' } });
    await page.next((f) => f.type === 'workerregistered');
    expect((await page.call('state::set', { scope: 'origins', key: 'listed', value: 1 })).error).toBeUndefined();
    expect(await worker.call('state::get', { scope: 'origins', key: 'listed' })).toBe(1);
    await page.close();
    // scheme and host case-insensitive, default port implied
    expect((await upgrade(engine.busUrl, { origin: 'https://app.example:443' })).status).toBe(101);
    // another port of the same host is another origin
    expect((await upgrade(engine.busUrl, { origin: 'http://allowed.example' })).status).toBe(403);
    expect((await upgrade(engine.busUrl, { origin: 'http://evil.example' })).status).toBe(403);
    expect((await upgrade(engine.busUrl)).status).toBe(101);
  });

  it('opens the streams socket to a listed origin and still to clients without one', async () => {
    await worker.call('stream::set', { stream_name: 'room', group_id: 'g', item_id: 'm1', data: { text: 'listed' } });
    const listed = await StreamsClient.connect(`${streamsUrl(engine)}/`, { origin: 'http://allowed.example:8080' });
    listed.join('s1', 'room', 'g');
    expect(JSON.stringify((await listed.next('sync')).event)).toContain('listed');
    listed.close();
    // the bus's list is not the streams socket's
    expect((await upgrade(streamsUrl(engine), { origin: 'https://app.example' })).status).toBe(403);
    expect((await upgrade(streamsUrl(engine))).status).toBe(101);
  });

  it('refuses a config entry that is not an origin, naming the key', async () => {
    for (const bad of ['"*"', '"http://x.example/path"', '"localhost:5173"']) {
      const failed = await startEngine({ configYaml: modulesYaml({ bus: `      allowed_origins: [${bad}]\n` }) }).then(
        async (e) => {
          await e.stop();
          return 'started';
        },
        (err: Error) => err.message,
      );
      expect(failed).toMatch(/allowed_origins\[0\]: must be an origin/);
    }
  }, 60_000);
});

describe('a page from another local origin in Chromium', () => {
  let engine: EngineProcess;
  let worker: KvClient;
  let browser: Browser;
  let site: Awaited<ReturnType<typeof startPageServer>>;

  beforeAll(async () => {
    site = await startPageServer();
    // the same page is allowed as http://localhost:<port> and not as http://127.0.0.1:<port>
    engine = await startEngine({
      configYaml: modulesYaml({ bus: `      allowed_origins: ["http://localhost:${site.port}"]\n` }),
    });
    worker = await iiiSdk(engine.busUrl, 'origins-witness');
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await worker?.close();
    await engine?.stop();
    await site?.close();
  });

  /** From the page: open the bus and call state::set; what happened. */
  const attack = async (pageUrl: string, value: string) => {
    const page = await browser.newPage();
    await page.goto(pageUrl);
    const outcome = await page.evaluate(
      ([url, v]) =>
        new Promise<{ opened: boolean; result?: unknown; error?: unknown; closeCode?: number }>((resolve) => {
          let opened = false;
          const ws = new WebSocket(url as string);
          const timer = setTimeout(() => resolve({ opened, closeCode: -1 }), 10_000);
          ws.onopen = () => {
            opened = true;
            ws.send(
              JSON.stringify({
                type: 'invokefunction',
                invocation_id: '6f1c7a52-8d0e-4c4b-9a51-0d6a2f3b9e10',
                function_id: 'state::set',
                data: { scope: 'victim', key: 'k', value: v },
              }),
            );
          };
          ws.onmessage = async (event) => {
            const frame = JSON.parse(typeof event.data === 'string' ? event.data : await (event.data as Blob).text());
            if (frame.type !== 'invocationresult') return;
            clearTimeout(timer);
            ws.close();
            resolve({ opened, result: frame.result, error: frame.error });
          };
          ws.onclose = (event) => {
            clearTimeout(timer);
            resolve({ opened, closeCode: event.code });
          };
        }),
      [engine.busUrl, value],
    );
    await page.close();
    return outcome;
  };

  it('cannot open the bus or call state::set; the state is unchanged', async () => {
    await worker.call('state::set', { scope: 'victim', key: 'k', value: 'original' });
    const outcome = await attack(`http://127.0.0.1:${site.port}/`, 'pwned');
    expect(outcome.opened).toBe(false);
    expect(outcome.closeCode).toBe(1006);
    expect(await worker.call('state::get', { scope: 'victim', key: 'k' })).toBe('original');
    expect(engine.logs()).toContain(`browser page at http://127.0.0.1:${site.port}`);
  });

  it('works from the origin listed in allowed_origins (the same page code)', async () => {
    const outcome = await attack(`http://localhost:${site.port}/`, 'listed-page');
    expect(outcome.opened).toBe(true);
    expect(outcome.error).toBeUndefined();
    expect(await worker.call('state::get', { scope: 'victim', key: 'k' })).toBe('listed-page');
  });
});
