import { readFileSync } from 'node:fs';
import type { Page } from '@playwright/test';
import { ensureBundle, startWorker as startConsoleWorker } from '../packages/console-worker/test/helpers.ts';
import { call, createOrder, randomTag, reloadInTheme } from './fixtures/engine-client.ts';
import { ARTIFACTS, expect, gotoPage, test } from './fixtures/test.ts';

/**
 * Streams page (seed 2.5): the orders demo writes every new order to stream `orders`, group
 * `live`, so an order created during the test is an event the monitor must show.
 */

const message = (page: Page, event: string, text?: string) => {
  const rows = page.locator(`[data-testid="monitor-message"][data-event="${event}"]`);
  return text ? rows.filter({ hasText: text }) : rows;
};
const streamRow = (page: Page, stream: string, group: string) =>
  page.locator(`[data-testid="stream-row"][data-stream="${stream}"][data-group="${group}"]`);
const counter = async (page: Page, name: string) => Number(await page.getByTestId(`counter-${name}`).getAttribute('data-value'));

test.beforeAll(async ({ stack }) => {
  await createOrder(stack, { sku: `STREAM-${randomTag()}` }); // the orders/live group exists from here on
});

test('the monitor shows an event published during the test over /ws/streams; tabs, pause, export, unsubscribe', async ({
  page,
  consoleUrl,
  stack,
}) => {
  await gotoPage(page, consoleUrl, '/streams');
  await expect(page.getByTestId('monitor-transport')).toHaveAttribute('data-transport', 'socket');
  await streamRow(page, 'orders', 'live').getByTestId('stream-subscribe').click();
  await expect(page.getByTestId('subscription-chip')).toHaveText('orders / live');
  await expect(message(page, 'join')).toHaveCount(1);
  await expect(message(page, 'sync')).toHaveCount(1);

  const order = await createOrder(stack, { sku: `LIVE-${randomTag()}`, customer: 'monitor' });
  await expect(message(page, 'create', order.id)).toHaveCount(1);
  await expect(message(page, 'create', order.id)).toHaveAttribute('data-stream', 'orders');
  expect(await counter(page, 'inbound')).toBeGreaterThanOrEqual(2);
  expect(await counter(page, 'outbound')).toBe(1);
  expect(await counter(page, 'total')).toBeGreaterThanOrEqual(3);
  await message(page, 'create', order.id).click();
  await expect(page.getByRole('complementary', { name: 'Message detail' })).toContainText(order.id);
  await page.screenshot({ path: `${ARTIFACTS}streams-dark.png` });

  // direction tabs
  await page.getByRole('tab', { name: /Outbound/ }).click();
  await expect(page).toHaveURL(/dir=outbound/);
  const directions = await page.getByTestId('monitor-message').evaluateAll((els) => els.map((e) => e.getAttribute('data-direction')));
  expect(directions).toEqual(['outbound']);
  await page.getByRole('tab', { name: /All/ }).click();

  // pause holds new lines back; resume shows them
  await page.getByTestId('monitor-pause').click();
  const held = await createOrder(stack, { sku: `HELD-${randomTag()}` });
  await expect(page.getByTestId('monitor-pause')).toHaveText(/Resume \(1\)/);
  await expect(message(page, 'create', held.id)).toHaveCount(0);
  await page.getByTestId('monitor-pause').click();
  await expect(message(page, 'create', held.id)).toHaveCount(1);

  // export downloads what the list shows
  const download = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Export' }).click();
  const file = await (await download).path();
  const exported = JSON.parse(readFileSync(file, 'utf8')) as Array<{ event: string; data: { id?: string } }>;
  expect(exported.some((m) => m.event === 'create' && m.data?.id === order.id)).toBe(true);

  // unsubscribe sends leave; later orders are not heard
  await streamRow(page, 'orders', 'live').getByTestId('stream-subscribe').click();
  await expect(message(page, 'leave')).toHaveCount(1);
  await expect(page.getByTestId('subscription-chip')).toHaveCount(0);
  const after = await createOrder(stack, { sku: `AFTER-${randomTag()}` });
  await page.waitForTimeout(1000);
  await expect(message(page, 'create', after.id)).toHaveCount(0);

  await page.getByRole('button', { name: 'Clear' }).click();
  await expect(page.getByTestId('monitor-message')).toHaveCount(0);
  expect(await counter(page, 'total')).toBe(0);
});

test('without /ws/streams the monitor falls back to stream triggers bound from the browser', async ({ page, consoleUrl, stack }) => {
  // a server that does not proxy the streams socket (another console in front of the engine)
  await page.routeWebSocket(
    (url) => url.pathname.endsWith('/ws/streams'),
    (ws) => ws.close({ code: 1011, reason: 'no streams socket on this server' }),
  );
  await gotoPage(page, consoleUrl, '/streams');
  await expect(page.getByTestId('monitor-transport')).toHaveAttribute('data-transport', 'triggers');
  await expect(message(page, 'fallback')).toHaveCount(1);
  await streamRow(page, 'orders', 'live').getByTestId('stream-subscribe').click();
  await expect(message(page, 'bind')).toHaveCount(1);
  await page.waitForTimeout(300); // the binding reaches the engine
  const order = await createOrder(stack, { sku: `TRIG-${randomTag()}` });
  await expect(message(page, 'create', order.id)).toHaveCount(1);
  // the hidden function is not a user function
  const fns = await call<{ functions: Array<{ function_id: string; metadata?: { internal?: boolean } }> }>(
    stack,
    'engine::functions::list',
    {
      include_internal: true,
    },
  );
  const hidden = fns.functions.find((f) => f.function_id.startsWith('eng.ui::') && f.function_id.endsWith('::stream'));
  expect(hidden?.metadata?.internal).toBe(true);
  await streamRow(page, 'orders', 'live').getByTestId('stream-subscribe').click();
  await expect(message(page, 'unbind')).toHaveCount(1);
  await reloadInTheme(page, 'light');
  await streamRow(page, 'orders', 'live').getByTestId('stream-subscribe').click();
  await createOrder(stack, { sku: `LIGHT-${randomTag()}` });
  await expect(message(page, 'create').first()).toBeVisible();
  await page.screenshot({ path: `${ARTIFACTS}streams-light.png` });
});

test('served by the console worker, the monitor hears stream events over the streams socket it proxies', async ({ page, stack }) => {
  ensureBundle();
  const cw = await startConsoleWorker([
    '--http-port',
    '0',
    '--url',
    stack.engine.busUrl,
    '--engine-streams-url',
    `ws://127.0.0.1:${stack.engine.ports.STREAMS}`,
  ]);
  try {
    await gotoPage(page, cw.base, '/streams');
    await expect(page.getByTestId('monitor-transport')).toHaveAttribute('data-transport', 'socket');
    await streamRow(page, 'orders', 'live').getByTestId('stream-subscribe').click();
    await expect(message(page, 'join')).toHaveCount(1);
    await expect(message(page, 'sync')).toHaveCount(1);
    const order = await createOrder(stack, { sku: `CW-${randomTag()}` });
    await expect(message(page, 'create', order.id)).toHaveCount(1);
  } finally {
    await cw.stop();
  }
});

test('stored items of a group, lookup by id, and system streams behind the toggle', async ({ page, consoleUrl, stack }) => {
  const order = await createOrder(stack, { sku: `ITEM-${randomTag()}` });
  await call(stack, 'stream::set', { stream_name: 'eng:e2e-system', group_id: 'g1', item_id: 'x', data: { n: 1 } });

  await gotoPage(page, consoleUrl, '/streams');
  await expect(streamRow(page, 'orders', 'live')).toContainText('user');
  await expect(streamRow(page, 'eng:e2e-system', 'g1')).toHaveCount(0);
  await page.getByRole('switch', { name: 'System streams' }).click();
  await expect(page).toHaveURL(/system=true/);
  await expect(streamRow(page, 'eng:e2e-system', 'g1')).toContainText('system');

  await streamRow(page, 'orders', 'live')
    .getByRole('button', { name: /orders/ })
    .click();
  await page.getByRole('tab', { name: 'Stored items' }).click();
  await expect(page).toHaveURL(/view=items/);
  const item = page.getByTestId('stream-item').filter({ hasText: order.id });
  await expect(item).toHaveCount(1);
  const stored = await call<unknown[]>(stack, 'stream::list', { stream_name: 'orders', group_id: 'live' });
  await expect(page.getByTestId('stream-items-count')).toHaveText(`${stored.length} items`);
  await item.click();
  await expect(page.getByRole('complementary', { name: 'Item detail' })).toContainText(order.sku);

  await page.getByLabel('Item id').fill(order.id);
  await page.getByRole('button', { name: 'Get' }).click();
  await expect(page.getByTestId('stream-item-lookup')).toContainText(order.sku);
  await page.getByLabel('Item id').fill('no-such-item');
  await page.getByRole('button', { name: 'Get' }).click();
  await expect(page.getByTestId('stream-item-lookup')).toContainText('No item no-such-item');
  await page.screenshot({ path: `${ARTIFACTS}streams-items-dark.png` });
  await reloadInTheme(page, 'light');
  await expect(page.getByTestId('stream-item').first()).toBeVisible();
  await page.screenshot({ path: `${ARTIFACTS}streams-items-light.png` });
});

test('the Buffer counter is the number of lines kept: it grows with each event, holds back while paused, stops at 5,000, clears to 0', async ({
  page,
  consoleUrl,
  stack,
}) => {
  test.setTimeout(120_000);
  const stream = `e2e-buf-${randomTag()}`;
  const set = (id: string) => call(stack, 'stream::set', { stream_name: stream, group_id: 'g', item_id: id, data: { id } });
  const buffer = () => page.getByTestId('counter-buffer');
  const bufferHint = () => buffer().locator('xpath=following-sibling::span');

  await gotoPage(page, consoleUrl, '/streams');
  await expect(page.getByTestId('monitor-transport')).toHaveAttribute('data-transport', 'socket');
  await page.getByRole('button', { name: 'Clear' }).click();
  await expect(buffer()).toHaveAttribute('data-value', '0');
  await page.getByLabel('Stream name').fill(stream);
  await page.getByLabel('Group id').fill('g');
  await page.getByTestId('subscriptions').getByRole('button', { name: 'Subscribe' }).click();
  await expect(page.getByTestId('subscription-chip')).toHaveText(`${stream} / g`);
  // join (outbound) and the sync of an empty group (inbound)
  await expect(message(page, 'sync')).toHaveCount(1);
  await expect(buffer()).toHaveAttribute('data-value', '2');
  await expect(bufferHint()).toHaveText('of 5.0k');

  for (let i = 0; i < 5; i++) await set(`item-${i}`);
  await expect(message(page, 'create')).toHaveCount(5);
  await expect(buffer()).toHaveAttribute('data-value', '7');
  expect(await page.getByTestId('monitor-message').count()).toBe(7);
  expect(await counter(page, 'total')).toBe(7);

  // paused: the events are heard and counted, but held back outside the buffer
  await page.getByTestId('monitor-pause').click();
  await set('held-1');
  await set('held-2');
  await expect(page.getByTestId('monitor-pause')).toHaveText(/Resume \(2\)/);
  await expect(bufferHint()).toHaveText('of 5.0k · 2 held');
  expect(await counter(page, 'buffer')).toBe(7);
  expect(await counter(page, 'total')).toBe(9);
  await page.getByTestId('monitor-pause').click();
  await expect(buffer()).toHaveAttribute('data-value', '9');
  await expect(bufferHint()).toHaveText('of 5.0k');

  // past the cap the oldest lines go: the buffer stays at 5,000 while the total keeps counting
  const burst = 5100;
  for (let start = 0; start < burst; start += 300) {
    await Promise.all(Array.from({ length: Math.min(300, burst - start) }, (_, i) => set(`burst-${start + i}`)));
  }
  await expect.poll(() => counter(page, 'total'), { timeout: 30_000 }).toBe(9 + burst);
  await expect(buffer()).toHaveAttribute('data-value', '5000');
  await expect(buffer()).toHaveText('5.0k');
  // the newest line is kept, the first ones are gone
  await page.getByPlaceholder('Search messages…').fill(`burst-${burst - 1}`);
  await expect(message(page, 'create')).toHaveCount(1);
  await page.getByPlaceholder('Search messages…').fill('item-0');
  await expect(page.getByTestId('monitor-message')).toHaveCount(0);
  await page.getByPlaceholder('Search messages…').fill('');

  await page.getByRole('button', { name: 'Clear' }).click();
  await expect(buffer()).toHaveAttribute('data-value', '0');
  await expect(page.getByTestId('monitor-message')).toHaveCount(0);
  await page.getByRole('button', { name: `Unsubscribe from ${stream} / g` }).click();
});
