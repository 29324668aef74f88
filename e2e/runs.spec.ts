import type { Page } from '@playwright/test';
import { call, createOrder, randomTag } from './fixtures/engine-client.ts';
import { type LaunchedStack, startLaunchedStack } from './fixtures/launched-stack.ts';
import type { Stack } from './fixtures/stack.ts';
import { ARTIFACTS, test as base, expect, gotoPage } from './fixtures/test.ts';

/**
 * Issue 19 §13, run history and rerun, on the console worker `npm start` runs and on eng-console:
 * a function's recent runs from the trace store (status, how it was called, input, output or
 * error, trace link, status filter), Rerun with the recorded input and with an edited one from the
 * Runs tab, from a trace and from a dead letter — each checked by what the engine did.
 */
const test = base.extend<object, { ls: LaunchedStack }>({
  ls: [
    // biome-ignore lint/correctness/noEmptyPattern: Playwright fixture signature
    async ({}, use) => {
      const stack = await startLaunchedStack();
      await use(stack);
      await stack.stop();
    },
    { scope: 'worker', timeout: 120_000 },
  ],
});
test.describe.configure({ timeout: 150_000 });

interface Order {
  id: string;
  sku: string;
  status: string;
}

const orders = async (stack: Stack) => (await call<{ orders: Order[] }>(stack, 'orders::list', {})).orders;
const dialog = (page: Page) => page.getByTestId('rerun-dialog');

async function waitForDeadLetter(stack: Stack, orderId: string): Promise<string> {
  let found = '';
  await expect
    .poll(
      async () => {
        const page = await call<{ messages: Array<{ id: string; payload: { id?: string } }> }>(stack, 'engine::queue::dlq_messages', {
          paged: true,
          topic: 'fulfilment',
          offset: 0,
          limit: 1000,
        });
        found = page.messages.find((m) => m.payload.id === orderId)?.id ?? '';
        return found;
      },
      { timeout: 60_000, intervals: [1000] },
    )
    .not.toBe('');
  return found;
}

/** Type into the dialog's JSON editor, replacing what is there. */
async function editInput(page: Page, value: unknown): Promise<void> {
  const editor = dialog(page).getByRole('textbox', { name: /Input for/ });
  await editor.fill(JSON.stringify(value, null, 2));
}

for (const server of ['console worker', 'eng-console'] as const) {
  test(`Runs tab: recent runs with input and output, rerun as recorded and edited (${server})`, async ({ page, ls, stack }) => {
    const target: Stack = server === 'console worker' ? ls.asStack : stack;
    const url = server === 'console worker' ? ls.consoleUrl : stack.console.url;
    const sku = `RUN-${randomTag()}`;
    const order = await createOrder(target, { sku, qty: 3 });

    await gotoPage(page, url, '/functions?fn=orders::create&tab=runs');
    const runs = page.getByTestId('run-history');
    const first = runs.getByTestId('run-row').first();
    await expect(first).toHaveAttribute('data-status', 'ok', { timeout: 15_000 });
    await expect(first).toContainText('HTTP POST /orders');
    await first.getByRole('button', { expanded: false }).click();
    const detail = first.getByTestId('run-detail');
    // the input the handler got (the HTTP request) and what it returned
    await expect(detail).toContainText(sku);
    await expect(detail).toContainText(order.id);
    await page.screenshot({ path: `${ARTIFACTS}runs-${server.replace(' ', '-')}-dark.png` });

    // Rerun with the same input: a second order with the same SKU
    await first.getByTestId('run-rerun').click();
    await expect(dialog(page)).toContainText('Input of the run');
    await expect(dialog(page).getByRole('textbox', { name: /Input for/ })).toHaveValue(new RegExp(sku));
    await dialog(page).getByRole('button', { name: 'Rerun with the same input' }).click();
    await expect(dialog(page).getByTestId('invoke-result')).toHaveAttribute('data-ok', 'true');
    await expect.poll(async () => (await orders(target)).filter((o) => o.sku === sku).length).toBe(2);

    // …and with an edited input: the function gets exactly what was typed
    const edited = `${sku}-EDITED`;
    await editInput(page, { sku: edited, qty: 7 });
    await dialog(page).getByRole('button', { name: 'Run with this input' }).click();
    await expect(dialog(page).getByTestId('invoke-result')).toContainText(edited);
    await expect.poll(async () => (await orders(target)).find((o) => o.sku === edited)?.id ?? '').not.toBe('');
    await page.screenshot({ path: `${ARTIFACTS}runs-rerun-dialog-${server.replace(' ', '-')}.png` });
    await page.keyboard.press('Escape');

    // the reruns are runs too, and the status filter narrows the list
    await expect(runs.getByTestId('run-row').filter({ hasText: 'call' })).toHaveCount(2, { timeout: 15_000 });
    await runs.getByRole('tab', { name: 'Failed' }).click();
    await expect(runs.locator('[data-testid="run-row"][data-status="ok"]')).toHaveCount(0);
    await runs.getByRole('tab', { name: 'All' }).click();

    // Edit in Invoke: the Invoke tab opens on the recorded input
    // the oldest run is the HTTP request, still open from the start of the test
    const oldest = runs.getByTestId('run-row').last();
    await expect(oldest).toContainText('HTTP POST /orders');
    await oldest.getByTestId('run-edit').click();
    await expect(page).not.toHaveURL(/tab=runs/);
    await expect(page.getByRole('textbox', { name: 'Input for orders::create' })).toHaveValue(new RegExp(sku));
  });

  test(`Rerun from a trace and from a dead letter (${server})`, async ({ page, ls, stack }) => {
    const target: Stack = server === 'console worker' ? ls.asStack : stack;
    const url = server === 'console worker' ? ls.consoleUrl : stack.console.url;

    // a failing order: its shipping fails every attempt and lands in the DLQ
    const failing = await createOrder(target, { sku: `FAIL-rerun-${randomTag()}` });
    const deadLetter = await waitForDeadLetter(target, failing.id);

    // the failed runs of fulfilment::ship say why, and link to their traces
    await gotoPage(page, url, '/functions?fn=fulfilment::ship&tab=runs');
    const runs = page.getByTestId('run-history');
    await runs.getByRole('tab', { name: 'Failed' }).click();
    const failedRun = runs.locator('[data-testid="run-row"][data-status="error"]').first();
    await expect(failedRun).toContainText(`warehouse rejected ${failing.sku}`);
    await expect(failedRun).toContainText('queue fulfilment');

    // from the trace: the header offers to rerun the function the trace ran
    await failedRun.getByTestId('run-trace-link').click();
    await expect(page).toHaveURL(/#\/traces\?.*trace_id=/);
    const rerunFromTrace = page.getByTestId('trace-detail').getByTestId('trace-rerun').first();
    await expect(rerunFromTrace).toBeVisible();
    const traced = await rerunFromTrace.getAttribute('data-function-id');
    expect(traced).toBeTruthy();
    await rerunFromTrace.click();
    await expect(dialog(page)).toContainText('Input recorded by span');
    await dialog(page).getByTestId('rerun-run').click();
    await expect(dialog(page).getByTestId('invoke-result')).toBeVisible({ timeout: 15_000 });
    // the result links to the new call's trace
    const link = dialog(page).getByTestId('invoke-trace-link');
    await expect(link).toBeVisible();
    await page.screenshot({ path: `${ARTIFACTS}runs-trace-rerun-${server.replace(' ', '-')}.png` });
    await link.click();
    await expect(dialog(page)).toHaveCount(0);
    await expect(page.getByTestId('trace-detail')).toBeVisible();

    // from the dead letter, after fixing what made it fail: it ships, and the dead letter stays
    const stored = await call<Record<string, unknown>>(target, 'state::get', { scope: 'orders', key: failing.id });
    await call(target, 'state::set', { scope: 'orders', key: failing.id, value: { ...stored, sku: 'FIXED-RERUN' } });
    await gotoPage(page, url, '/queues?topic=fulfilment&tab=dead-letters&size=250');
    const row = page.locator(`[data-testid="dead-letter"][data-id="${deadLetter}"]`);
    await row.getByTestId('dead-letter-rerun').click();
    await expect(dialog(page)).toContainText(deadLetter);
    await expect(dialog(page).getByRole('textbox', { name: /Input for fulfilment::ship/ })).toHaveValue(new RegExp(failing.id));
    await dialog(page).getByRole('button', { name: 'Rerun with the same input' }).click();
    await expect(dialog(page).getByTestId('invoke-result')).toHaveAttribute('data-ok', 'true');
    await expect(dialog(page).getByTestId('invoke-result')).toContainText(failing.id);
    await expect
      .poll(async () => ((await call(target, 'state::get', { scope: 'orders', key: failing.id })) as { status?: string }).status)
      .toBe('shipped');
    await page.screenshot({ path: `${ARTIFACTS}runs-dead-letter-rerun-${server.replace(' ', '-')}.png` });
    await page.keyboard.press('Escape');
    await expect(row).toBeVisible();
  });
}
