import { request } from 'node:http';
import type { Browser } from '@playwright/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../../../test/browser.ts';
import { type EngineProcess, startEngine, waitFor } from '../../../test/harness.ts';
import { RawClient } from '../../../test/raw-client.ts';
import { ensureBundle, startEngineWithConsole, startWorker, type WorkerProcess } from './helpers.ts';

// Issue 12 item 4: DNS rebinding. A page on evil.example rebound to 127.0.0.1 is same-origin with
// itself, so the console worker answers only to loopback Host names on a loopback bind (every
// route, /ws included, proxied or handed to the engine), and /ws also needs Origin = Host.

beforeAll(() => ensureBundle(), 180_000);

interface Reply {
  status: number;
  body: string;
}

/** One HTTP request with the Host header a rebound page would send. */
function get(port: number, path: string, host: string, headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host, ...headers } });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, body: '' });
    });
    req.on('error', reject);
    req.end();
  });
}

/** A `/ws` upgrade with the given Host and Origin: 101, or the refusal. */
function upgrade(port: number, host: string, origin?: string): Promise<Reply> {
  return get(port, '/ws', host, {
    connection: 'Upgrade',
    upgrade: 'websocket',
    'sec-websocket-version': '13',
    'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
    ...(origin ? { origin } : {}),
  });
}

/** Every route of the worker refuses a foreign Host with 403 and says why. */
async function expectHostRefused(port: number): Promise<void> {
  const evil = `evil.example:${port}`;
  for (const path of ['/', '/index.html', '/assets/missing.js', '/ws', '/anything']) {
    const reply = await get(port, path, evil);
    expect(reply.status, path).toBe(403);
    expect(reply.body).toContain('DNS rebinding');
  }
  // the rebinding attack itself: Host and Origin agree, both name the attacker's domain
  const ws = await upgrade(port, evil, `http://${evil}`);
  expect(ws.status).toBe(403);
  expect(ws.body).toContain('DNS rebinding');
  // the loopback names the user opens are served
  expect((await get(port, '/', `127.0.0.1:${port}`)).status).toBe(200);
  expect((await get(port, '/', `localhost:${port}`)).status).toBe(200);
}

describe('console worker with --url (the /ws byte proxy)', () => {
  let engine: EngineProcess;
  let worker: WorkerProcess;
  let port: number;

  beforeAll(async () => {
    // the engine refuses browser origins on its bus (no allowed_origins): the proxy must not pass one on
    engine = await startEngine();
    worker = await startWorker(['--http-port', '0', '--url', engine.busUrl]);
    port = worker.ready.http_port;
  }, 60_000);
  afterAll(async () => {
    await worker?.stop();
    await engine?.stop();
  });

  it('answers 403 on every route for Host evil.example, and serves loopback names', async () => {
    await expectHostRefused(port);
    expect(worker.logs()).toContain('refused a request for Host evil.example');
  });

  it('refuses a /ws upgrade whose Origin is not the page it serves, with 403', async () => {
    for (const origin of ['http://evil.example', `http://localhost:${port}`, 'null']) {
      const reply = await upgrade(port, `127.0.0.1:${port}`, origin);
      expect(reply.status, origin).toBe(403);
      expect(reply.body).toContain('cross-origin WebSocket denied');
    }
  });

  it("serves its own page's /ws: the engine sees a worker connection, not the browser's Origin", async () => {
    const echo = await RawClient.worker(engine.busUrl);
    echo.socket.on('message', (raw) => {
      const frame = JSON.parse(raw.toString());
      if (frame.type !== 'invokefunction') return;
      echo.send({ type: 'invocationresult', invocation_id: frame.invocation_id, function_id: frame.function_id, result: frame.data });
    });
    echo.send({ type: 'registerfunction', id: 'origins::echo' });
    const page = await RawClient.connect(`ws://127.0.0.1:${port}/ws`, { headers: { origin: `http://127.0.0.1:${port}` } });
    await page.next((f) => f.type === 'workerregistered');
    const echoed = await waitFor(async () => {
      const frame = await page.call('origins::echo', { n: 7 });
      return frame.error ? undefined : frame.result;
    }, 5000);
    expect(echoed).toMatchObject({ n: 7 });
    await page.close();
    await echo.close();
    // the same Origin straight to the bus is refused: it is the console that vouches for the page
    const direct = await RawClient.connect(engine.busUrl, { headers: { origin: `http://127.0.0.1:${port}` } }).then(
      () => 'opened',
      (err: Error) => err.message,
    );
    expect(direct).toMatch(/403/);
  });
});

describe('console worker launched by the engine (/ws handed to the bus)', () => {
  let engine: EngineProcess;
  let control: RawClient;
  let browser: Browser;
  let port: number;

  beforeAll(async () => {
    engine = await startEngineWithConsole();
    port = engine.ports.CONSOLE as number;
    control = await RawClient.worker(engine.busUrl);
    await waitFor(async () => {
      const { workers } = await control.result('engine::supervisor::list', {});
      const state = workers.find((w: { name: string }) => w.name === 'console');
      return state?.running && state.url;
    }, 30_000);
    // something for the dashboard to count, served by a worker on the bus
    control.send({ type: 'registerfunction', id: 'origins::probe' });
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await control?.terminate();
    await engine?.stop();
  });

  it('answers 403 for Host evil.example on every route, /ws included, before any handoff', async () => {
    await expectHostRefused(port);
    expect((await upgrade(port, `127.0.0.1:${port}`, 'http://evil.example')).status).toBe(403);
    // nothing the refused upgrades carried reached the bus as a worker
    const { workers } = await control.result('engine::workers::list', {});
    expect(JSON.stringify(workers)).not.toContain('evil.example');
  });

  it('its own page in Chromium connects through the handoff and works, while the bus refuses that page directly', async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    await page.goto(`http://127.0.0.1:${port}/`);
    await page.waitForSelector('[data-testid="connection-pill"][data-connection="open"]', { timeout: 20_000 });
    // the dashboard's counters come from engine::functions::list over /ws
    await page.waitForFunction(
      () => Number(document.querySelector('[data-testid="counter-functions"] [data-value]')?.getAttribute('data-value')) > 0,
      undefined,
      { timeout: 20_000 },
    );
    // the same page dialling the bus itself: refused by the engine's Origin rule
    const direct = await page.evaluate(
      (url) =>
        new Promise<string>((resolve) => {
          const ws = new WebSocket(url);
          ws.onopen = () => resolve('opened');
          ws.onclose = (event) => resolve(`closed ${event.code}`);
        }),
      engine.busUrl,
    );
    expect(direct).toBe('closed 1006');
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);
});

describe('hostAllowed: the rule shared with eng-console', () => {
  it('on a loopback bind serves loopback names only; bound elsewhere by the user, any name', async () => {
    const { hostAllowed } = await import('@eng/console/host-check');
    for (const bind of ['127.0.0.1', 'localhost', '::1']) {
      for (const host of ['127.0.0.1:3113', 'localhost:3113', '[::1]:3113', 'app.localhost:3113'])
        expect(hostAllowed(bind, host), host).toBe(true);
      for (const host of ['evil.example:3113', 'evil.example', '127.0.0.1.evil.example:3113', undefined])
        expect(hostAllowed(bind, host), String(host)).toBe(false);
    }
    // a LAN address or every interface: the user chose to be reached under names this process cannot know
    for (const bind of ['0.0.0.0', '192.168.1.5', 'console.lan']) expect(hostAllowed(bind, 'console.lan:3113')).toBe(true);
  });
});
