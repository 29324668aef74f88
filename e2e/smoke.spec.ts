import { expect, gotoPage, test } from './fixtures/test.ts';

test('the console serves the UI, connects to the engine and shows live counters', async ({ page, consoleUrl }) => {
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  await gotoPage(page, consoleUrl, '/');
  await expect(page.getByRole('heading', { name: 'Dashboard' })).toBeVisible();
  // the orders demo registers 7 functions: the counter reads them over the /ws proxy
  await expect(page.getByTestId('counter-functions')).not.toHaveText(/—/);
  const functions = Number(await page.getByTestId('counter-functions').locator('[data-value]').getAttribute('data-value'));
  expect(functions).toBeGreaterThanOrEqual(7);
  // every page of the navigation renders
  for (const label of ['Functions', 'Triggers', 'States', 'Streams', 'Queues', 'Traces', 'Logs', 'Config']) {
    await page.getByRole('navigation', { name: 'Main navigation' }).getByRole('link', { name: label, exact: true }).click();
    await expect(page.getByRole('heading', { level: 1, name: label })).toBeVisible();
  }
  expect(errors).toEqual([]);
});
