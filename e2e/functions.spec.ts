import { expect, gotoPage, test } from './fixtures/test.ts';

// seed 2.2 and 4.1 op 1: the function list and Invoke, against the orders demo

test.describe('Functions page', () => {
  test('lists the orders functions grouped by namespace, with triggers, worker and status', async ({ page, consoleUrl }) => {
    await gotoPage(page, consoleUrl, '/functions');
    const row = page.locator('[data-function-id="orders::create"]');
    await expect(row).toBeVisible();
    await expect(row).toContainText('http');
    await expect(row).toContainText('orders');
    await expect(row).toContainText('Ready');
    await expect(page.getByTestId('ns-orders')).toContainText('6');
    await expect(page.getByTestId('ns-reports')).toBeVisible();
    // engine built-ins stay behind the System toggle
    await expect(page.locator('[data-function-id="state::set"]')).toHaveCount(0);
    await page.getByRole('switch', { name: 'System' }).click();
    await page.getByRole('searchbox').fill('state::set');
    await expect(page.locator('[data-function-id="state::set"]')).toBeVisible();
  });

  test('search filters by id and description, and the URL keeps it', async ({ page, consoleUrl }) => {
    await gotoPage(page, consoleUrl, '/functions');
    await page.getByRole('searchbox').fill('summar');
    await expect(page.locator('[data-function-id]')).toHaveCount(1);
    await expect(page.locator('[data-function-id="reports::hourly_summary"]')).toBeVisible();
    await expect(page).toHaveURL(/q=summar/);
    await page.reload();
    await expect(page.locator('[data-function-id]')).toHaveCount(1);
    await page.getByRole('searchbox').fill('nothing-like-this');
    await expect(page.getByText('No function matches')).toBeVisible();
  });

  test('Invoke shows the result, the duration and a link to the trace', async ({ page, consoleUrl, engineClient }) => {
    await gotoPage(page, consoleUrl, '/functions');
    await page.locator('[data-function-id="orders::create"]').click();
    const detail = page.getByTestId('function-detail');
    await expect(detail).toContainText('Create an order');
    const editor = detail.getByRole('textbox', { name: 'Input for orders::create' });
    // prefilled from the request schema
    await expect(editor).toHaveValue(/"sku": ""/);
    await editor.fill('{"sku": "E2E-INVOKE", "qty": 3, "customer": "playwright"}');
    await detail.getByRole('button', { name: 'Invoke' }).click();
    const result = page.getByTestId('invoke-result');
    await expect(result).toHaveAttribute('data-ok', 'true');
    await expect(result).toContainText('Success');
    await expect(result).toContainText('"sku": "E2E-INVOKE"');
    await expect(page.getByTestId('invoke-duration')).toHaveText(/\d+(\.\d+)? (ms|s|µs)/);
    const id = /"id": "(ord_[a-z0-9]+)"/.exec((await result.textContent()) ?? '')?.[1];
    expect(id).toBeTruthy();
    // the order really exists in the engine's state
    expect(await engineClient.call('state::get', { scope: 'orders', key: id })).toMatchObject({ sku: 'E2E-INVOKE', qty: 3 });
    const trace = page.getByTestId('invoke-trace-link');
    await expect(trace).toBeVisible();
    await expect(trace).toHaveAttribute('href', /#\/traces\?trace_id=[0-9a-f]{32}/);
  });

  test('the trace link of an Invoke result opens the trace of that very call', async ({ page, consoleUrl }) => {
    await gotoPage(page, consoleUrl, '/functions?fn=orders::create');
    const detail = page.getByTestId('function-detail');
    const editor = detail.getByRole('textbox', { name: 'Input for orders::create' });
    const invoke = async (sku: string) => {
      await editor.fill(JSON.stringify({ sku, qty: 1, customer: 'trace-link' }));
      await detail.getByRole('button', { name: 'Invoke' }).click();
      const result = page.getByTestId('invoke-result');
      await expect(result).toContainText(`"sku": "${sku}"`);
      const orderId = /"id": "(ord_[a-z0-9]+)"/.exec((await result.textContent()) ?? '')?.[1] as string;
      expect(orderId).toBeTruthy();
      const href = (await page.getByTestId('invoke-trace-link').getAttribute('href')) ?? '';
      const traceId = /trace_id=([0-9a-f]{32})/.exec(href)?.[1] as string;
      expect(traceId).toBeTruthy();
      return { orderId, traceId };
    };
    // two calls of the same function: each result links to its own trace
    const first = await invoke('E2E-TRACE-1');
    const second = await invoke('E2E-TRACE-2');
    expect(second.traceId).not.toBe(first.traceId);

    await page.getByTestId('invoke-trace-link').click();
    await expect(page).toHaveURL(new RegExp(`#/traces\\?.*trace_id=${second.traceId}`));
    const trace = page.getByTestId('trace-detail');
    await expect(trace).toHaveAttribute('data-trace-id', second.traceId);
    // the root is the engine's span of the console's call, the worker's execute span under it
    const rows = page.getByTestId('waterfall-row');
    await expect(rows.first()).toContainText('call orders::create');
    await expect(rows.filter({ hasText: 'execute orders::create' })).toHaveCount(1);
    await rows.first().click();
    const panel = page.getByTestId('span-panel');
    await panel
      .getByRole('tablist', { name: 'Span detail tabs' })
      .getByRole('tab', { name: /Attributes/ })
      .click();
    await expect(panel.getByTestId('span-tab-attributes')).toContainText('orders::create');
    // and it is this call: the state write of the order it created is in it, not the first call's
    await rows.filter({ hasText: 'state_triggers' }).first().click();
    await panel
      .getByRole('tablist', { name: 'Span detail tabs' })
      .getByRole('tab', { name: /Attributes/ })
      .click();
    await expect(panel.getByTestId('span-tab-attributes')).toContainText(second.orderId);
    await expect(trace).not.toContainText(first.orderId);
  });

  test('Invoke shows a failing call inline with its error', async ({ page, consoleUrl }) => {
    await gotoPage(page, consoleUrl, '/functions?fn=orders::get');
    const detail = page.getByTestId('function-detail');
    await detail.getByRole('textbox', { name: 'Input for orders::get' }).fill('{"id": "no-such-order"}');
    await detail.getByRole('button', { name: 'Invoke' }).click();
    const result = page.getByTestId('invoke-result');
    await expect(result).toHaveAttribute('data-ok', 'false');
    await expect(result).toContainText('order no-such-order not found');
  });

  test('shows the request schema and the bound triggers', async ({ page, consoleUrl }) => {
    await gotoPage(page, consoleUrl, '/functions?fn=orders::create');
    const detail = page.getByTestId('function-detail');
    await detail.getByRole('tab', { name: 'Schema' }).click();
    await expect(detail.getByRole('cell', { name: 'product SKU' })).toBeVisible();
    await detail.getByRole('tab', { name: /Triggers/ }).click();
    await expect(detail.getByText('POST /orders')).toBeVisible();
    await detail.getByRole('tab', { name: 'Metadata' }).click();
    await expect(detail).toContainText('mcp.expose');
  });
});
