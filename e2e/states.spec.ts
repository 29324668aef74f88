import type { Page } from '@playwright/test';
import { call, randomTag, reloadInTheme } from './fixtures/engine-client.ts';
import type { Stack } from './fixtures/stack.ts';
import { ARTIFACTS, expect, gotoPage, test } from './fixtures/test.ts';

/**
 * States page (seed 2.4, §3): real keys from the keyed listing, Add / Edit / confirmed Delete
 * through state::set / state::delete so `state` triggers fire (the orders demo's orders::audit
 * counts every change of scope `orders` in state `stats/orders`), and a 500-key group.
 */

type Audit = { created?: number; updated?: number; deleted?: number };
const audit = async (stack: Stack) => ((await call<Audit | null>(stack, 'state::get', { scope: 'stats', key: 'orders' })) ?? {}) as Audit;
const item = (page: Page, key: string) => page.locator(`[data-testid="state-item"][data-key="${key}"]`);

test('items show their real keys; Add, Edit and a confirmed Delete fire the state trigger', async ({ page, consoleUrl, stack }) => {
  const tag = randomTag();
  const key = `ord_e2e_${tag}`;
  const order = { id: key, sku: 'E2E-1', qty: 1, customer: 'e2e', status: 'created', created_at: new Date().toISOString() };
  const initial = (await audit(stack)).created ?? 0;
  await call(stack, 'state::set', { scope: 'orders', key: `ord_seed_${tag}`, value: { ...order, id: `ord_seed_${tag}` } });
  // the trigger runs after the write is acknowledged: start counting once it has seen the seed
  await expect.poll(async () => (await audit(stack)).created ?? 0).toBeGreaterThan(initial);
  const before = await audit(stack);

  await gotoPage(page, consoleUrl, '/states?scope=orders');
  const listing = await call<{ items: Array<{ key: string }>; total: number }>(stack, 'state::list', {
    scope: 'orders',
    with_keys: true,
    limit: 10,
  });
  // the rows are keyed by the store's keys, in its order (never item-0, item-1 …)
  const rows = page.getByTestId('state-item');
  await expect(rows.first()).toBeVisible();
  const shown = await rows.evaluateAll((els) =>
    els.slice(0, 10).map((el) => [el.getAttribute('data-key'), el.querySelector('span')?.textContent]),
  );
  expect(shown.map(([k]) => k)).toEqual(listing.items.map((i) => i.key));
  for (const [k, text] of shown) expect(text).toBe(k);
  await expect(page.locator('[data-testid="state-group"][data-scope="orders"] [data-testid="state-group-count"]')).toHaveText(
    String(listing.total),
  );

  // Add
  await page.getByTestId('state-add').click();
  const dialog = page.getByRole('dialog');
  await expect(dialog.getByLabel('Scope')).toHaveValue('orders');
  await dialog.getByLabel('Key').fill(key);
  await dialog.getByLabel('Value').fill('{"broken": ');
  await expect(dialog.getByText(/Invalid JSON/)).toBeVisible();
  await expect(page.getByTestId('state-save')).toBeDisabled();
  await dialog.getByLabel('Value').fill(JSON.stringify(order, null, 2));
  await page.getByTestId('state-save').click();
  await expect(dialog).toBeHidden();
  await expect(page.getByTestId('state-detail-key')).toHaveText(key);
  await expect(page.getByTestId('state-detail')).toContainText('"E2E-1"');
  await expect(item(page, key)).toBeVisible();
  expect(await call(stack, 'state::get', { scope: 'orders', key })).toEqual(order);
  await expect.poll(async () => (await audit(stack)).created ?? 0).toBe((before.created ?? 0) + 1);

  // Edit
  await page.getByTestId('state-detail').getByRole('button', { name: 'Edit' }).click();
  await dialog.getByLabel('Value').fill(JSON.stringify({ ...order, qty: 7, status: 'shipped' }));
  await page.getByTestId('state-save').click();
  await expect(dialog).toBeHidden();
  await expect(page.getByTestId('state-detail')).toContainText('"shipped"');
  expect(await call(stack, 'state::get', { scope: 'orders', key })).toMatchObject({ qty: 7, status: 'shipped' });
  await expect.poll(async () => (await audit(stack)).updated ?? 0).toBe((before.updated ?? 0) + 1);

  await page.screenshot({ path: `${ARTIFACTS}states-dark.png` });

  // Delete asks first: Cancel keeps the key
  await page.getByTestId('state-detail').getByRole('button', { name: 'Delete' }).click();
  await expect(page.getByRole('dialog')).toContainText(key);
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
  await expect(page.getByRole('dialog')).toBeHidden();
  expect(await call(stack, 'state::get', { scope: 'orders', key })).toBeTruthy();
  await page.getByTestId('state-detail').getByRole('button', { name: 'Delete' }).click();
  await page.getByTestId('confirm-action').click();
  await expect(page.getByTestId('state-detail')).toBeHidden();
  await expect(item(page, key)).toHaveCount(0);
  expect(await call(stack, 'state::get', { scope: 'orders', key })).toBeFalsy();
  await expect.poll(async () => (await audit(stack)).deleted ?? 0).toBe((before.deleted ?? 0) + 1);

  // the trigger's own write shows up live in the stats group
  await page.locator('[data-testid="state-group"][data-scope="stats"]').click();
  await item(page, 'orders').click();
  await expect(page.getByTestId('state-detail')).toContainText(`"deleted": ${(before.deleted ?? 0) + 1}`);
});

test('a 500-key group pages through the server, virtualised, with prefix and contains search', async ({ page, consoleUrl, stack }) => {
  const scope = `e2e-big-${randomTag()}`;
  const keys = Array.from({ length: 500 }, (_, i) => `k-${String(i).padStart(3, '0')}`);
  const client = await import('./fixtures/engine-client.ts').then((m) => m.engineClient(stack));
  await Promise.all(keys.map((key, i) => client.call('state::set', { scope, key, value: { i, label: `item ${i}` } })));

  await gotoPage(page, consoleUrl, `/states?scope=${scope}`);
  await expect(page.locator(`[data-testid="state-group"][data-scope="${scope}"] [data-testid="state-group-count"]`)).toHaveText('500');
  await expect(item(page, 'k-000')).toBeVisible();
  // only the rows on screen exist
  expect(await page.getByTestId('state-item').count()).toBeLessThan(80);
  await expect(item(page, 'k-499')).toHaveCount(0);

  const scroller = page.getByTestId('state-items-scroll');
  await scroller.evaluate((el) => {
    el.scrollTop = el.scrollHeight;
  });
  await expect(item(page, 'k-499')).toBeVisible();
  await expect(item(page, 'k-000')).toHaveCount(0);
  await scroller.evaluate((el) => {
    el.scrollTop = el.scrollHeight / 2;
  });
  await expect(item(page, 'k-250')).toBeVisible();
  await item(page, 'k-250').click();
  await expect(page.getByTestId('state-detail')).toContainText('"item 250"');
  await expect(page).toHaveURL(/key=k-250/);
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('state-detail')).toBeHidden();
  await expect(page).not.toHaveURL(/key=/);

  // prefix search runs on the server
  await page.getByPlaceholder(/Search keys/).fill('k-49');
  await expect(page.getByTestId('state-match-count')).toHaveText('10 matching');
  await expect(page.getByTestId('state-item')).toHaveCount(10);
  // contains search runs in the browser over every key
  await page.getByRole('switch', { name: 'Contains' }).click();
  await page.getByPlaceholder(/Search keys/).fill('99');
  await expect(page.getByTestId('state-match-count')).toHaveText('5 matching');
  expect(await page.getByTestId('state-item').evaluateAll((els) => els.map((e) => e.getAttribute('data-key')))).toEqual([
    'k-099',
    'k-199',
    'k-299',
    'k-399',
    'k-499',
  ]);
  await expect(page).toHaveURL(/contains=true/);

  // the light theme, same view (search, selection and Contains come back from the URL)
  await item(page, 'k-299').click();
  await reloadInTheme(page, 'light');
  await expect(page.getByTestId('state-detail')).toContainText('"item 299"');
  await expect(page.getByTestId('state-match-count')).toHaveText('5 matching');
  await page.screenshot({ path: `${ARTIFACTS}states-light.png` });
});

test('an empty value or a missing key cannot be saved, and nothing is written', async ({ page, consoleUrl, stack }) => {
  const scope = `e2e-guard-${randomTag()}`;
  await gotoPage(page, consoleUrl, '/states');
  await page.getByTestId('state-add').click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('Scope').fill(scope);
  await dialog.getByLabel('Value').fill('{"a": 1}');
  await expect(page.getByTestId('state-save')).toBeDisabled();
  await dialog.getByLabel('Key').fill('k');
  await dialog.getByLabel('Value').fill('');
  await expect(page.getByTestId('state-save')).toBeDisabled();
  await dialog.getByLabel('Value').fill('"text needs quotes"');
  await expect(page.getByTestId('state-save')).toBeEnabled();
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
  const groups = await call<{ groups: string[] }>(stack, 'state::list_groups', {});
  expect(groups.groups).not.toContain(scope);
});
