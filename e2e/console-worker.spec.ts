import { connect, type EngClient } from '@eng/sdk';
import { test as base, type Page } from '@playwright/test';
import { ensureEmbeddedBundle } from '../packages/console-worker/scripts/build-bundle.ts';
import { type WorkerProcess as ConsoleWorker, startWorker as startConsoleWorker } from '../packages/console-worker/test/helpers.ts';
import type { EngineProcess } from '../test/harness.ts';
import { startEngine } from '../test/harness.ts';
import { startChatStack } from './fixtures/chat-stack.ts';
import { ENGINE_MODULES_YAML, type Stack, startWorker, type WorkerProcess } from './fixtures/stack.ts';
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

/** The command palette offers a page (only while it is present). */
async function expectInPalette(page: Page, label: string): Promise<void> {
  await page.keyboard.press('Control+k');
  await page.getByRole('combobox', { name: 'Command palette search' }).fill(label);
  await expect(page.getByRole('option', { name: new RegExp(`^${label}`) })).toBeVisible();
  await page.keyboard.press('Escape');
}

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

  test('Worktrees appears while its worker is connected and goes away with it', async ({ page, url, cw }) => {
    await gotoPage(page, url, '/worktrees');
    await expect(page.getByTestId('gated-worktrees')).toHaveAttribute('data-present', 'false');
    // a worker registering a function of that surface, connected while the page is open
    fake = connect(cw.engine.busUrl, { name: 'worktrees-worker', tracing: false });
    fake.registerFunction('worktree::list', () => ({ worktrees: [] }));
    await fake.ready({ timeoutMs: 10_000 });
    await expect(nav(page).getByRole('link', { name: 'Worktrees' })).toBeVisible({ timeout: 10_000 });
    await expect(page.getByTestId('gated-worktrees')).toHaveAttribute('data-present', 'true');
    await expect(page.getByTestId('install-command')).toHaveCount(0);
    // the graph page itself, reading the (empty) list from that worker
    await expect(page.getByTestId('worktrees-page')).toBeVisible();
    await expect(page.getByText('No managed worktrees', { exact: true })).toBeVisible({ timeout: 20_000 });
    await expectInPalette(page, 'Worktrees');

    await fake.close();
    fake = undefined;
    await expect(nav(page).getByRole('link', { name: 'Worktrees' })).toHaveCount(0, { timeout: 10_000 });
    await expect(page.getByTestId('gated-worktrees')).toHaveAttribute('data-present', 'false');
    await expect(page.getByTestId('worktrees-page')).toHaveCount(0);
    await expect(page.getByTestId('install-command')).toHaveText('eng worker add worktree');
  });

  test('Chat appears while the chat stack is connected and goes away with it', async ({ page, url, cw }) => {
    test.setTimeout(150_000);
    await gotoPage(page, url, '/chat');
    await expect(page.getByTestId('gated-chat')).toHaveAttribute('data-present', 'false');
    await expect(page.getByTestId('chat-page')).toHaveCount(0);
    // the real chat stack (session store, router, providers against a fake API, harness) joins this engine
    const chat = await startChatStack({ engine: cw.engine } as Stack);
    try {
      await expect(nav(page).getByRole('link', { name: 'Chat' })).toBeVisible({ timeout: 20_000 });
      await expect(page.getByTestId('gated-chat')).toHaveAttribute('data-present', 'true');
      await expect(page.getByTestId('install-command')).toHaveCount(0);
      // the chat itself: sidebar, composer, the catalogue's models, no "not connected" banner
      await expect(page.getByTestId('chat-page')).toBeVisible();
      await expect(page.getByTestId('chat-sidebar')).toBeVisible();
      await expect(page.getByTestId('model-picker')).toHaveAttribute('data-model', /^openai::/, { timeout: 20_000 });
      await expect(page.getByTestId('chat-outage')).toHaveCount(0);
      await expectInPalette(page, 'Chat');
      // and it works end to end through this server's /ws
      chat.openai.turn({ text: 'Hello from the console worker.' });
      await page.getByTestId('composer-input').fill('Say hello');
      await page.getByTestId('composer-input').press('Enter');
      await expect(page.getByTestId('assistant-message')).toContainText('Hello from the console worker.', { timeout: 20_000 });
      await expect(page.getByTestId('conversation')).toHaveCount(1);
    } finally {
      await chat.stop();
    }
    // the stack left: the entry and the page go, the install notice comes back
    await expect(nav(page).getByRole('link', { name: 'Chat' })).toHaveCount(0, { timeout: 15_000 });
    await expect(page.getByTestId('gated-chat')).toHaveAttribute('data-present', 'false');
    await expect(page.getByTestId('chat-page')).toHaveCount(0);
    await expect(page.getByTestId('install-command')).toHaveText('eng worker add harness');
  });
});
