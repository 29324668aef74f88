import type { BrowserContext, Page } from '@playwright/test';
import { PAGES } from '../packages/web/src/pages.ts';
import { call, createOrder, randomTag } from './fixtures/engine-client.ts';
import { consoleArgsFor, startConsole } from './fixtures/stack.ts';
import { expect, gotoPage, test } from './fixtures/test.ts';

/**
 * No network at run time (issue 6 §3 "fonts bundled"; the reference loaded fonts from a CDN):
 * every page, its detail views and lazy chunks load with requests to the serving origin only.
 * Any other request (HTTP, WebSocket, font, image) fails the test; it is also aborted, so nothing
 * reaches the internet even when the test fails.
 */

interface Watch {
  foreign: string[];
  sameOrigin: string[];
}

async function watchNetwork(context: BrowserContext, origin: string): Promise<Watch> {
  const watch: Watch = { foreign: [], sameOrigin: [] };
  const local = (url: string) => {
    const u = new URL(url);
    return u.protocol === 'data:' || u.protocol === 'blob:' || u.protocol === 'about:' || u.host === new URL(origin).host;
  };
  context.on('request', (req) => {
    if (local(req.url())) watch.sameOrigin.push(req.url());
    else watch.foreign.push(`${req.resourceType()} ${req.url()}`);
  });
  await context.route(
    (url) => !local(url.href),
    (route) => route.abort('blockedbyclient'),
  );
  return watch;
}

function watchSockets(page: Page, origin: string, watch: Watch): void {
  page.on('websocket', (ws) => {
    if (new URL(ws.url()).host !== new URL(origin).host) watch.foreign.push(`websocket ${ws.url()}`);
  });
}

test('every page and its detail views load without a request to another origin', async ({ browser, consoleUrl, stack }) => {
  test.setTimeout(120_000);
  // data for the detail views: an order (trace, state, stream item, queue traffic)
  const order = await createOrder(stack, { sku: `OFFLINE-${randomTag()}` });
  const flowConsole = await startConsole([...consoleArgsFor(stack.engine), '--no-otel', '--enable-flow']);
  const context = await browser.newContext();
  try {
    for (const [origin, withFlow] of [
      [consoleUrl, false],
      [flowConsole.url, true],
    ] as const) {
      const watch = await watchNetwork(context, origin);
      const page = await context.newPage();
      watchSockets(page, origin, watch);
      const errors: string[] = [];
      page.on('pageerror', (err) => errors.push(err.message));

      for (const theme of ['dark', 'light'] as const) {
        await gotoPage(page, origin, '/', theme);
        await page.evaluate((t) => localStorage.setItem('eng-theme', t), theme);
        for (const entry of PAGES) {
          if (entry.flowOnly && !withFlow) continue;
          await page.goto(`${origin}/#${entry.path}`);
          await expect(page.getByTestId('connection-pill').first()).toHaveAttribute('data-connection', 'open');
          await expect(page.locator('main h1').first()).toBeVisible();
          await page.waitForLoadState('networkidle');
        }
      }
      // the heavier views behind clicks and search params (their lazy chunks, charts, graphs, editors)
      const traceId = (
        await call<{ spans: Array<{ trace_id: string }> }>(stack, 'engine::traces::list', {
          attributes: [['function_id', 'orders::create']],
          search_all_spans: true,
          limit: 1,
        })
      ).spans[0]?.trace_id;
      expect(traceId).toBeTruthy();
      for (const route of [
        '/functions?fn=orders::create',
        `/traces?trace_id=${traceId}`,
        '/triggers?type=cron',
        '/queues?topic=fulfilment',
        '/queues?topic=fulfilment&tab=dead-letters',
        '/states',
        '/logs',
        '/streams',
      ]) {
        await page.goto(`${origin}/#${route}`);
        await expect(page.getByTestId('connection-pill').first()).toHaveAttribute('data-connection', 'open');
        await page.waitForLoadState('networkidle');
      }
      await page.goto(`${origin}/#/traces?trace_id=${traceId}`);
      for (const tab of ['Flame graph', 'Service breakdown', 'Trace map', 'Flow']) {
        await page.getByRole('tablist', { name: 'Trace views' }).getByRole('tab', { name: tab }).click();
        await page.waitForLoadState('networkidle');
      }
      await page.goto(`${origin}/#/functions?fn=orders::create`);
      await page.getByTestId('function-detail').getByRole('tab', { name: 'Schema' }).click();
      await page.goto(`${origin}/#/states`);
      await page.getByText('orders', { exact: true }).first().click();
      await expect(page.getByText(order.id).first()).toBeVisible();
      await page.keyboard.press('Control+k');
      await expect(page.getByRole('combobox', { name: 'Command palette search' })).toBeVisible();
      await page.keyboard.press('Escape');
      await page.waitForLoadState('networkidle');

      // the fonts in use are the bundled ones, served by this origin
      expect(watch.sameOrigin.some((u) => /\.woff2(\?|$)/.test(u))).toBe(true);
      expect(await page.evaluate(() => document.fonts.check('13px "Inter Variable"'))).toBe(true);
      expect(await page.evaluate(() => document.fonts.check('13px "JetBrains Mono Variable"'))).toBe(true);
      expect(watch.foreign).toEqual([]);
      expect(errors).toEqual([]);
      await page.close();
      await context.unrouteAll();
    }
  } finally {
    await context.close();
    await flowConsole.stop();
  }
});
