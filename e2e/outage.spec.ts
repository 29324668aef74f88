import { test as base, type Locator, type Page } from '@playwright/test';
import { ensureEmbeddedBundle } from '../packages/console-worker/scripts/build-bundle.ts';
import { type WorkerProcess as ConsoleWorker, startWorker as startConsoleWorker } from '../packages/console-worker/test/helpers.ts';
import { type EngineProcess, startEngine } from '../test/harness.ts';
import { createOrder, randomTag } from './fixtures/engine-client.ts';
import { startLaunchedStack } from './fixtures/launched-stack.ts';
import {
  type ConsoleProcess,
  consoleArgsFor,
  ENGINE_MODULES_YAML,
  type Stack,
  startConsole,
  startWorker,
  type WorkerProcess,
} from './fixtures/stack.ts';
import { ARTIFACTS, counterValue, expect, gotoPage } from './fixtures/test.ts';

/**
 * Issue 19 §5 on both servers (the console worker first): with the engine down, every page keeps
 * the last data it had, marked "as of hh:mm:ss, engine unreachable", and says the engine is
 * unreachable — no zeros, no "nothing registered yet", no "add the module" — and everything comes
 * back without a reload when the engine does. A page loaded during the outage waits for it.
 */
interface OutageStack {
  engine: EngineProcess;
  orders: WorkerProcess;
  worker: ConsoleWorker;
  eng: ConsoleProcess;
  asStack: Stack;
}

const test = base.extend<object, { os: OutageStack }>({
  os: [
    // biome-ignore lint/correctness/noEmptyPattern: Playwright fixture signature
    async ({}, use) => {
      ensureEmbeddedBundle({ env: { ...process.env, SKIP_WEB_BUILD: '1' }, log: (l) => process.stdout.write(`[e2e] ${l}\n`) });
      const engine = await startEngine({ workersYaml: ENGINE_MODULES_YAML, env: { ENG_LOG_LEVEL: 'warn' } });
      const orders = await startWorker('examples/orders/src/main.ts', { ENG_URL: engine.busUrl }, /orders demo worker connected/);
      const worker = await startConsoleWorker([
        '--http-port',
        '0',
        '--url',
        engine.busUrl,
        '--engine-http-url',
        `http://127.0.0.1:${engine.ports.HTTP}`,
        '--engine-streams-url',
        `ws://127.0.0.1:${engine.ports.STREAMS}`,
      ]);
      const eng = await startConsole([...consoleArgsFor(engine), '--no-otel']);
      await use({ engine, orders, worker, eng, asStack: { engine } as unknown as Stack });
      await eng.stop();
      await worker.stop();
      await orders.stop();
      await engine.stop();
    },
    { scope: 'worker', timeout: 90_000 },
  ],
});
test.describe.configure({ timeout: 150_000 });

/** Each page, and what of its data must still be on screen while the engine is down. */
const PAGES: Array<{ label: string; path: string; data: (page: Page) => Locator }> = [
  { label: 'Dashboard', path: '/', data: (p) => p.getByTestId('counter-functions').locator('[data-value]') },
  { label: 'Functions', path: '/functions', data: (p) => p.locator('[data-function-id="orders::create"]') },
  { label: 'Triggers', path: '/triggers', data: (p) => p.locator('[data-trigger-id]', { hasText: 'POST /orders' }) },
  {
    label: 'Workers',
    path: '/workers',
    data: (p) => p.getByRole('list', { name: 'Workers', exact: true }).getByText('orders', { exact: true }),
  },
  { label: 'States', path: '/states', data: (p) => p.getByTestId('state-group').filter({ hasText: 'orders' }).first() },
  { label: 'Streams', path: '/streams', data: (p) => p.locator('[data-testid="stream-row"][data-stream="orders"]').first() },
  { label: 'Queues', path: '/queues', data: (p) => p.locator('[data-testid="queue-row"][data-name="fulfilment"]') },
  { label: 'Traces', path: '/traces', data: (p) => p.getByTestId('trace-row').first() },
  { label: 'Logs', path: '/logs', data: (p) => p.getByTestId('log-row').first() },
  { label: 'Config', path: '/config', data: (p) => p.getByTestId('config-ports') },
];

/** What a page must never say while the engine is merely unreachable. */
const MISLEADING = [
  'No functions registered yet',
  'No worker process is connected',
  'No streams yet',
  'No queues yet',
  'Add the eng-observability module',
  'module not loaded',
  'Could not list',
];

const nav = (page: Page) => page.getByRole('navigation', { name: 'Main navigation' });
const STALE = /^as of \d{2}:\d{2}:\d{2}, engine unreachable$/;

for (const server of ['console worker', 'eng-console'] as const) {
  const urlOf = (os: OutageStack) => (server === 'console worker' ? os.worker.base : os.eng.url);
  const flag = server === 'console worker' ? '--url' : '--engine-host';

  test(`${server}: during an outage every page keeps its data marked stale, then recovers without a reload`, async ({ page, os }) => {
    await createOrder(os.asStack, { sku: `OUTAGE-${randomTag()}` });
    await gotoPage(page, urlOf(os), '/');
    await expect.poll(() => counterValue(page, 'functions')).toBeGreaterThanOrEqual(7);
    // visit every page with the engine up: what each one received is what it keeps
    for (const p of PAGES) {
      await nav(page).getByRole('link', { name: p.label, exact: true }).click();
      await expect(p.data(page)).toBeVisible();
      await expect(page.getByTestId('stale-marker')).toHaveCount(0);
    }
    await page.evaluate(() => {
      (window as unknown as { sameDocument: boolean }).sameDocument = true;
    });

    await os.engine.stop();
    const banner = page.getByTestId('engine-banner');
    await expect(banner).toBeVisible({ timeout: 15_000 });
    await expect(banner).toContainText('Engine unreachable');
    // the banner names this server's own flag
    await expect(banner).toContainText(flag);
    await expect(banner).not.toContainText(server === 'console worker' ? '--engine-host' : 'ENG_URL');

    for (const p of PAGES) {
      await nav(page).getByRole('link', { name: p.label, exact: true }).click();
      await expect(page.getByRole('heading', { level: 1, name: p.label })).toBeVisible();
      await expect(page.getByTestId('stale-marker')).toHaveText(STALE);
      await expect(p.data(page)).toBeVisible();
      for (const text of MISLEADING) await expect(page.locator('main')).not.toContainText(text);
    }
    await nav(page).getByRole('link', { name: 'Dashboard', exact: true }).click();
    // the counters keep their last values instead of dropping to zero
    expect(await counterValue(page, 'functions')).toBeGreaterThanOrEqual(7);
    expect(await counterValue(page, 'workers')).toBeGreaterThanOrEqual(1);
    for (const theme of ['dark', 'light'] as const) {
      await page.evaluate((t) => document.documentElement.setAttribute('data-theme', t), theme);
      await page.screenshot({ path: `${ARTIFACTS}outage/${server.replace(' ', '-')}-dashboard-${theme}.png` });
    }
    await nav(page).getByRole('link', { name: 'Functions', exact: true }).click();
    for (const theme of ['dark', 'light'] as const) {
      await page.evaluate((t) => document.documentElement.setAttribute('data-theme', t), theme);
      await page.screenshot({ path: `${ARTIFACTS}outage/${server.replace(' ', '-')}-functions-${theme}.png` });
    }
    // Config reports the outage as it is: the bus probe fails now
    await nav(page).getByRole('link', { name: 'Config', exact: true }).click();
    await expect(page.getByTestId('probe-bus')).toHaveAttribute('data-ok', 'false', { timeout: 15_000 });

    await os.engine.restart();
    await expect(page.getByTestId('connection-pill').first()).toHaveAttribute('data-connection', 'open', { timeout: 20_000 });
    await expect(banner).toBeHidden();
    await expect(page.getByTestId('stale-marker')).toHaveCount(0);
    await expect(page.getByTestId('probe-bus')).toHaveAttribute('data-ok', 'true', { timeout: 15_000 });
    // fresh data from the restarted engine (its worker came back too), in the same document; the
    // orders worker retries with backoff capped at 30 s (engine-protocol §2.9): after an outage that
    // long, its next attempt may be up to 30 s away
    await nav(page).getByRole('link', { name: 'Functions', exact: true }).click();
    await expect(PAGES[1]?.data(page) as Locator).toBeVisible({ timeout: 45_000 });
    await nav(page).getByRole('link', { name: 'Dashboard', exact: true }).click();
    await expect.poll(() => counterValue(page, 'functions'), { timeout: 20_000 }).toBeGreaterThanOrEqual(7);
    expect(await page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument)).toBe(true);
  });

  test(`${server}: a page loaded during the outage waits for the engine, then fills in by itself`, async ({ page, os }) => {
    await gotoPage(page, urlOf(os), '/functions');
    await expect(PAGES[1]?.data(page) as Locator).toBeVisible();
    await os.engine.stop();
    await expect(page.getByTestId('engine-banner')).toBeVisible({ timeout: 15_000 });
    await page.reload();
    await expect(page.getByRole('heading', { level: 1, name: 'Functions' })).toBeVisible();
    await expect(page.getByTestId('stale-marker')).toHaveText('engine unreachable, no data yet', { timeout: 15_000 });
    await expect(page.getByTestId('waiting-for-engine')).toContainText('Engine unreachable: functions will load when the engine is back');
    await expect(page.locator('main')).not.toContainText('No functions registered yet');
    await nav(page).getByRole('link', { name: 'Dashboard', exact: true }).click();
    // no endless spinners and no zeros: the counters say they have nothing yet
    await expect(page.getByTestId('counter-functions').locator('[data-value]')).toHaveAttribute('data-value', '');
    await expect(page.getByTestId('counter-functions')).toContainText('—');
    await page.screenshot({ path: `${ARTIFACTS}outage/${server.replace(' ', '-')}-fresh-load-dark.png` });

    await os.engine.restart();
    await expect(page.getByTestId('stale-marker')).toHaveCount(0, { timeout: 20_000 });
    await expect.poll(() => counterValue(page, 'functions'), { timeout: 20_000 }).toBeGreaterThanOrEqual(7);
    await nav(page).getByRole('link', { name: 'Functions', exact: true }).click();
    await expect(PAGES[1]?.data(page) as Locator).toBeVisible();
  });
}

// `npm start`: the engine stops the workers it launched before it closes its bus, so the UI hears
// them leave first; the lists it keeps for the outage must still be the ones from before
for (const server of ['console worker', 'eng-console'] as const) {
  test(`${server}: an engine that stops its own workers first still leaves every list as it was`, async ({ page }) => {
    const ls = await startLaunchedStack();
    const eng = server === 'eng-console' ? await startConsole([...consoleArgsFor(ls.engine), '--no-otel']) : undefined;
    try {
      const url = eng?.url ?? ls.consoleUrl;
      await gotoPage(page, url, '/');
      await expect.poll(() => counterValue(page, 'functions')).toBeGreaterThanOrEqual(7);
      for (const label of ['Functions', 'Workers']) {
        await nav(page).getByRole('link', { name: label, exact: true }).click();
        await expect(PAGES.find((p) => p.label === label)?.data(page) as Locator).toBeVisible();
      }
      await ls.engine.stop();
      await expect(page.getByTestId('stale-marker')).toHaveText(STALE, { timeout: 15_000 });
      await page.waitForTimeout(1000); // past any refetch the shutdown set off
      for (const label of ['Functions', 'Workers', 'Dashboard']) {
        await nav(page).getByRole('link', { name: label, exact: true }).click();
        await expect(page.getByTestId('stale-marker')).toHaveText(STALE);
        for (const text of MISLEADING) await expect(page.locator('main')).not.toContainText(text);
        const data = PAGES.find((p) => p.label === label)?.data(page) as Locator;
        await expect(data).toBeVisible();
      }
      expect(await counterValue(page, 'functions')).toBeGreaterThanOrEqual(7);
      expect(await counterValue(page, 'workers')).toBeGreaterThanOrEqual(1);

      // the engine comes back (and relaunches the console worker on the same port): no reload needed
      await ls.engine.restart();
      await expect(page.getByTestId('stale-marker')).toHaveCount(0, { timeout: 30_000 });
      await expect.poll(() => counterValue(page, 'functions'), { timeout: 30_000 }).toBeGreaterThanOrEqual(7);
    } finally {
      await eng?.stop();
      await ls.stop();
    }
  });
}
