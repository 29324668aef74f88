import { test as base, type Locator, type Page } from '@playwright/test';
import { call, createOrder, randomTag } from './fixtures/engine-client.ts';
import { BROKEN_WORKERS, type LaunchedStack, launchedStackFixture, startLaunchedStack } from './fixtures/launched-stack.ts';
import { consoleArgsFor, startConsole } from './fixtures/stack.ts';
import { ARTIFACTS, expect, gotoPage } from './fixtures/test.ts';

/**
 * Issue 19 §1 and §8 on the console `npm start` opens: the console worker launched by the engine.
 * Every eng-console feature works over its one port — Config with its own version, ports and
 * engine (from `/_console/config` and `console::status`) and live probes, the HTTP trigger test,
 * Flow, the streams socket — with nothing failing in the browser; and the Workers page shows what
 * the engine's supervisor launched, including a failed launch and a crash loop.
 */
const test = base.extend<object, { ls: LaunchedStack }>({ ls: launchedStackFixture });
test.describe.configure({ timeout: 90_000 });

interface WorkerConfig {
  server: string;
  version: string;
  port: number;
  engine_urls: { http: string; streams: string; bridge: string };
  sources: Record<string, string>;
  launched_by_engine: boolean;
  bus: string;
}

interface Supervised {
  name: string;
  pid: number | null;
  restarts: number;
  status: string;
  error: string | null;
  logFile: string | null;
  lastExit: { code: number | null } | null;
}

const value = (list: Locator, label: string) =>
  list
    .locator(':scope > div', { has: list.page().locator('dt', { hasText: new RegExp(`^${label.replace(/[()]/g, '\\$&')}$`) }) })
    .locator('dd');

/** Console errors and failed same-origin requests (a 404 for /ws/streams or /_console/* logs an error in the console). */
function watchProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()} ${r.url()}`);
  });
  page.on('websocket', (ws) => ws.on('socketerror', (e) => problems.push(`websocket ${ws.url()}: ${e}`)));
  return problems;
}

for (const theme of ['dark', 'light'] as const) {
  test(`Config shows the worker's own version, ports and engine, every probe passes, nothing fails to load (${theme})`, async ({
    page,
    ls,
  }) => {
    const problems = watchProblems(page);
    await gotoPage(page, ls.consoleUrl, '/config', theme);
    const config = (await page.evaluate(async () => (await fetch('/_console/config')).json())) as WorkerConfig;
    expect(config).toMatchObject({
      server: 'console-worker',
      port: ls.engine.ports.CONSOLE,
      engine_urls: {
        http: `http://127.0.0.1:${ls.engine.ports.HTTP}`,
        streams: `ws://127.0.0.1:${ls.engine.ports.STREAMS}`,
        bridge: ls.engine.busUrl,
      },
      // the engine that launched it said where its HTTP and streams ports are
      sources: { engine_http_url: 'engine', engine_streams_url: 'engine', enable_flow: 'supervisor config' },
      launched_by_engine: true,
      bus: 'handoff',
    });
    const status = await call<{ version: string; http_port: number; engine_url: string }>(ls.asStack, 'console::status', {});

    for (const id of ['bus', 'streams', 'engine_http', 'streams_ws', 'bridge_ws']) {
      await expect(page.getByTestId(`probe-${id}`)).toHaveAttribute('data-ok', 'true');
    }
    await expect(page.getByTestId('probe-streams')).toContainText(`127.0.0.1:${ls.engine.ports.CONSOLE}/ws/streams`);

    const ports = page.getByTestId('config-ports');
    await expect(value(ports, 'Console UI')).toHaveText(`http://127.0.0.1:${ls.engine.ports.CONSOLE}`);
    await expect(value(ports, 'Engine HTTP API')).toHaveText(`http://127.0.0.1:${ls.engine.ports.HTTP}`);
    await expect(value(ports, 'Engine HTTP API')).toHaveAttribute('title', /--engine-http-url .*announced by the engine/);
    await expect(value(ports, 'Engine streams WebSocket')).toHaveText(`ws://127.0.0.1:${ls.engine.ports.STREAMS}`);
    await expect(value(ports, 'Engine SDK bridge')).toHaveText(ls.engine.busUrl);
    await expect(value(ports, 'Browser bus (handed to the engine)')).toHaveText(`ws://127.0.0.1:${ls.engine.ports.CONSOLE}/ws`);
    await expect(value(ports, 'Flow page')).toHaveText('enabled');
    await expect(value(ports, 'Launched')).toHaveText('by the engine (console entry of its config)');
    // the command line is the worker's own, never eng-console's
    const command = page.getByTestId('config-command-line');
    await expect(command).toContainText(`eng-console-worker --http-port ${ls.engine.ports.CONSOLE} --url ${ls.engine.busUrl}`);
    await expect(command).not.toContainText('--engine-host');
    await expect(command).not.toContainText('--bridge-port');

    const versions = page.getByTestId('config-versions');
    await expect(value(versions, 'Console worker')).toHaveText(`v${status.version}`);
    await expect(value(versions, 'console::status')).toHaveText(`v${status.version} · port ${status.http_port} · ${status.engine_url}`);
    expect(status.http_port).toBe(ls.engine.ports.CONSOLE);
    await expect(page.getByTestId('config-versions')).not.toContainText('not served by eng-console');
    await expect(page.locator('main')).not.toContainText('Not available');
    await page.screenshot({ path: `${ARTIFACTS}console-worker/config-${theme}.png`, fullPage: true });

    // the other pages load without a single failed request either (the streams monitor opens /ws/streams)
    for (const route of ['/', '/streams', '/triggers', '/flow', '/workers']) {
      await page.goto(`${ls.consoleUrl}/#${route}`);
      await expect(page.locator('main h1').first()).toBeVisible();
    }
    await page.waitForTimeout(1000);
    expect(problems).toEqual([]);
  });
}

test('Triggers → HTTP trigger → Send request answers through the console worker', async ({ page, ls }) => {
  await gotoPage(page, ls.consoleUrl, '/triggers?type=http');
  await page.locator('[data-trigger-id]', { hasText: 'POST /orders' }).click();
  const panel = page.getByTestId('http-test-panel');
  const sku = `CW-HTTP-${randomTag()}`;
  await panel.getByRole('textbox', { name: 'Request body' }).fill(JSON.stringify({ sku, qty: 1, customer: 'cw' }));
  await panel.getByRole('button', { name: 'Send request' }).click();
  await expect(page.getByTestId('http-test-status')).toHaveText('201');
  const response = page.getByTestId('http-test-response');
  await expect(response).toContainText(`"sku": "${sku}"`);
  await expect(panel).not.toContainText('does not forward');
  const id = /"id": "(ord_[a-z0-9]+)"/.exec((await response.textContent()) ?? '')?.[1] as string;
  expect(id).toBeTruthy();
  await response.getByRole('tab', { name: /Headers/ }).click();
  await expect(page.getByTestId('http-test-headers')).toContainText('application/json');
  expect(await call(ls.asStack, 'state::get', { scope: 'orders', key: id })).toMatchObject({ sku, customer: 'cw' });
});

test('Flow draws the graph on the console worker (enable_flow in its config entry)', async ({ page, ls }) => {
  await gotoPage(page, ls.consoleUrl, '/');
  await page.getByRole('navigation', { name: 'Main navigation' }).getByRole('link', { name: /^Flow/ }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Flow' })).toBeVisible();
  await expect(page.locator('.react-flow__node[data-id="fn:orders::create"]')).toBeVisible();
  await expect(page.getByText('The Flow page is off')).toHaveCount(0);
});

test('the Streams monitor hears an event over the streams socket the worker proxies', async ({ page, ls }) => {
  await createOrder(ls.asStack, { sku: `CW-STREAM-${randomTag()}` }); // orders/live exists
  await gotoPage(page, ls.consoleUrl, '/streams');
  await expect(page.getByTestId('monitor-transport')).toHaveAttribute('data-transport', 'socket');
  await page.locator('[data-testid="stream-row"][data-stream="orders"][data-group="live"]').getByTestId('stream-subscribe').click();
  await expect(page.locator('[data-testid="monitor-message"][data-event="sync"]')).toHaveCount(1);
  const order = await createOrder(ls.asStack, { sku: `CW-LIVE-${randomTag()}` });
  await expect(page.locator('[data-testid="monitor-message"][data-event="create"]').filter({ hasText: order.id })).toHaveCount(1);
});

test('Workers shows every worker the engine launches: a failed launch, a crash loop, restarts, last exit, log path', async ({
  page,
  ls,
}) => {
  const row = (name: string) => page.locator(`[data-testid="supervised-row"][data-name="${name}"]`);
  // the crash loop needs three quick exits (0.5 s + 1 s + 2 s of backoff)
  await expect
    .poll(
      async () =>
        (await call<{ workers: Supervised[] }>(ls.asStack, 'engine::supervisor::list', {})).workers.find(
          (w) => w.name === BROKEN_WORKERS.crashing.name,
        )?.status,
      { timeout: 20_000 },
    )
    .toBe('crash_loop');
  for (const theme of ['dark', 'light'] as const) {
    await gotoPage(page, ls.consoleUrl, '/workers', theme);
    const { workers } = await call<{ workers: Supervised[] }>(ls.asStack, 'engine::supervisor::list', {});
    const byName = new Map(workers.map((w) => [w.name, w]));
    await expect(page.getByTestId('supervised-row')).toHaveCount(workers.length);

    for (const name of ['orders', 'console']) {
      await expect(row(name)).toHaveAttribute('data-status', 'running');
      await expect(row(name)).toContainText(String(byName.get(name)?.pid));
      await expect(row(name)).toContainText('connected');
      await expect(row(name).getByTestId('supervised-log')).toHaveText(byName.get(name)?.logFile as string);
    }

    const missing = row(BROKEN_WORKERS.missing.name);
    await expect(missing).toHaveAttribute('data-status', 'failed_to_launch');
    await expect(missing.getByTestId('supervised-error')).toContainText(`failed to launch ${BROKEN_WORKERS.missing.command}: ENOENT`);
    await expect(missing.getByTestId('supervised-exit')).toContainText('could not start');
    await expect(missing.getByTestId('supervised-log')).toHaveText(`${ls.engine.dataDir}/logs/${BROKEN_WORKERS.missing.name}.log`);

    const crashing = row(BROKEN_WORKERS.crashing.name);
    await expect(crashing).toHaveAttribute('data-status', 'crash_loop');
    await expect(crashing).toContainText('crash loop');
    await expect(crashing.getByTestId('supervised-exit')).toContainText(`code ${BROKEN_WORKERS.crashing.exitCode}`);
    await expect.poll(async () => Number(await crashing.getByTestId('supervised-restarts').innerText())).toBeGreaterThanOrEqual(3);
    await expect(crashing.getByTestId('supervised-log')).toHaveText(`${ls.engine.dataDir}/logs/${BROKEN_WORKERS.crashing.name}.log`);

    const unknown = row(BROKEN_WORKERS.unknown.name);
    await expect(unknown).toHaveAttribute('data-status', 'failed_to_launch');
    await expect(unknown.getByTestId('supervised-error')).toContainText('is not a known worker');
    await expect(unknown).toContainText('none (never started)');

    await expect(page.getByTestId('supervised-workers')).toContainText('3 not running');
    await page.screenshot({ path: `${ARTIFACTS}console-worker/workers-${theme}.png` });
  }
  // "connected" opens the worker's own detail
  await row('orders').getByRole('button', { name: 'connected' }).click();
  await expect(page).toHaveURL(/worker=/);
  await expect(page.locator('aside').filter({ has: page.getByRole('heading', { name: 'orders' }) })).toBeVisible();
});

test('eng-console in front of the same engine shows the same launched workers', async ({ page, ls }) => {
  const console_ = await startConsole([...consoleArgsFor(ls.engine), '--no-otel']);
  try {
    await gotoPage(page, console_.url, '/workers');
    const { workers } = await call<{ workers: Supervised[] }>(ls.asStack, 'engine::supervisor::list', {});
    await expect(page.getByTestId('supervised-row')).toHaveCount(workers.length);
    for (const w of workers) {
      await expect(page.locator(`[data-testid="supervised-row"][data-name="${w.name}"]`)).toHaveAttribute('data-status', w.status);
    }
    await expect(page.locator(`[data-testid="supervised-row"][data-name="${BROKEN_WORKERS.missing.name}"]`)).toContainText('ENOENT');
  } finally {
    await console_.stop();
  }
});
