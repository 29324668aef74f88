import { connect, type EngClient } from '@eng/sdk';
import { test as base, type Page } from '@playwright/test';
import { ensureEmbeddedBundle } from '../packages/console-worker/scripts/build-bundle.ts';
import { type WorkerProcess as ConsoleWorker, startWorker as startConsoleWorker } from '../packages/console-worker/test/helpers.ts';
import type { EngineProcess } from '../test/harness.ts';
import { startEngine } from '../test/harness.ts';
import { ENGINE_MODULES_YAML, startWorker, type WorkerProcess } from './fixtures/stack.ts';
import { ARTIFACTS, counterValue, expect, gotoPage } from './fixtures/test.ts';

/**
 * The console worker (issue 7) in Chromium: the embedded UI over its one port with the engine
 * behind `/ws`, the browser reconnecting by itself across an engine restart, and the presence-
 * gated Chat and Worktrees entries coming and going with their workers.
 */
interface WorkerStack {
  engine: EngineProcess;
  orders: WorkerProcess;
  console: ConsoleWorker;
}

const test = base.extend<{ url: string }, { cw: WorkerStack }>({
  cw: [
    // biome-ignore lint/correctness/noEmptyPattern: Playwright fixture signature
    async ({}, use) => {
      // the global setup built packages/web/dist; embed that build without another JS build
      ensureEmbeddedBundle({ env: { ...process.env, SKIP_WEB_BUILD: '1' }, log: (l) => process.stdout.write(`[e2e] ${l}\n`) });
      const engine = await startEngine({ workersYaml: ENGINE_MODULES_YAML, env: { ENG_LOG_LEVEL: 'warn' } });
      const orders = await startWorker('examples/orders/src/main.ts', { ENG_URL: engine.busUrl }, /orders demo worker connected/);
      const console_ = await startConsoleWorker(['--http-port', '0', '--url', engine.busUrl]);
      await use({ engine, orders, console: console_ });
      await console_.stop();
      await orders.stop();
      await engine.stop();
    },
    { scope: 'worker', timeout: 90_000 },
  ],
  url: async ({ cw }, use) => {
    await use(cw.console.base);
  },
});

const nav = (page: Page) => page.getByRole('navigation', { name: 'Main navigation' });

test('serves the UI on its one port and reaches the engine through /ws', async ({ page, url }) => {
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  await gotoPage(page, url, '/');
  await expect(page.getByRole('heading', { name: 'Dashboard' })).toBeVisible();
  await expect.poll(() => counterValue(page, 'functions')).toBeGreaterThanOrEqual(7);
  await expect(page.getByTestId('connection-pill').first()).toHaveAttribute('title', `Connected through ${url.replace('http', 'ws')}/ws`);
  // the trace explorer is one of the pages this server serves (hash routing)
  await nav(page).getByRole('link', { name: 'Traces', exact: true }).click();
  await expect(page).toHaveURL(/#\/traces/);
  await expect(page.getByRole('heading', { level: 1, name: 'Traces' })).toBeVisible();
  expect(errors).toEqual([]);
});

test('the browser reconnects by itself when the engine restarts', async ({ page, url, cw }) => {
  await gotoPage(page, url, '/');
  await expect.poll(() => counterValue(page, 'functions')).toBeGreaterThanOrEqual(7);
  await cw.engine.stop();
  await expect(page.getByTestId('connection-pill').first()).not.toHaveAttribute('data-connection', 'open', { timeout: 15_000 });
  await expect(page.getByTestId('engine-banner')).toBeVisible({ timeout: 15_000 });
  await cw.engine.restart();
  await expect(page.getByTestId('connection-pill').first()).toHaveAttribute('data-connection', 'open', { timeout: 20_000 });
  await expect(page.getByTestId('engine-banner')).toBeHidden();
  // the orders worker came back too, and the counters read through the proxy again
  await expect.poll(() => counterValue(page, 'functions'), { timeout: 20_000 }).toBeGreaterThanOrEqual(7);
});

test.describe('presence-gated Chat and Worktrees', () => {
  let fake: EngClient | undefined;
  test.afterEach(async () => {
    await fake?.close();
    fake = undefined;
  });

  for (const theme of ['dark', 'light'] as const) {
    test(`without their workers: no nav entries, and direct visits show the install command (${theme})`, async ({ page, url }) => {
      await gotoPage(page, url, '/worktrees', theme);
      await expect(page.getByTestId('gated-worktrees')).toHaveAttribute('data-present', 'false');
      await expect(page.getByText('Worktrees needs the worktree worker')).toBeVisible();
      await expect(page.getByTestId('install-command')).toHaveText('eng worker add worktree');
      await page.screenshot({ path: `${ARTIFACTS}console-worker/worktrees-install-${theme}.png` });
      await expect(nav(page).getByRole('link', { name: 'Worktrees' })).toHaveCount(0);
      await expect(nav(page).getByRole('link', { name: 'Chat' })).toHaveCount(0);

      await page.goto(`${url}/#/chat`);
      await expect(page.getByTestId('gated-chat')).toHaveAttribute('data-present', 'false');
      await expect(page.getByTestId('install-command')).toHaveText('eng worker add harness');
      await page.screenshot({ path: `${ARTIFACTS}console-worker/chat-install-${theme}.png` });
    });
  }

  for (const [surface, label, functionId] of [
    ['worktrees', 'Worktrees', 'worktree::list'],
    ['chat', 'Chat', 'session::list'],
  ] as const) {
    test(`${label} appears while its worker is connected and goes away with it`, async ({ page, url, cw }) => {
      await gotoPage(page, url, `/${surface}`);
      await expect(page.getByTestId(`gated-${surface}`)).toHaveAttribute('data-present', 'false');
      // a worker registering a function of that surface, connected while the page is open
      fake = connect(cw.engine.busUrl, { name: `${surface}-worker`, tracing: false });
      fake.registerFunction(functionId, () => ({ items: [] }));
      await fake.ready({ timeoutMs: 10_000 });
      await expect(nav(page).getByRole('link', { name: label })).toBeVisible({ timeout: 10_000 });
      await expect(page.getByTestId(`gated-${surface}`)).toHaveAttribute('data-present', 'true');
      await expect(page.getByTestId('install-command')).toHaveCount(0);
      await expect(page.getByText(functionId)).toBeVisible();
      // the palette offers it too, only while present
      await page.keyboard.press('Control+k');
      await page.getByRole('combobox', { name: 'Command palette search' }).fill(label);
      await expect(page.getByRole('option', { name: new RegExp(`^${label}`) })).toBeVisible();
      await page.keyboard.press('Escape');

      await fake.close();
      fake = undefined;
      await expect(nav(page).getByRole('link', { name: label })).toHaveCount(0, { timeout: 10_000 });
      await expect(page.getByTestId(`gated-${surface}`)).toHaveAttribute('data-present', 'false');
      await expect(page.getByTestId('install-command')).toBeVisible();
    });
  }
});
