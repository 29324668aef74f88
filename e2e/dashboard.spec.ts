import { connect } from '@eng/sdk';
import { counterValue, expect, gotoPage, test } from './fixtures/test.ts';

// seed 2.1: live counters linking to their pages, mini-charts, application flow, last update

test.describe('Dashboard', () => {
  test('counters change live when a worker connects and disconnects', async ({ page, consoleUrl, stack }) => {
    await gotoPage(page, consoleUrl, '/');
    await expect(page.getByTestId('counter-functions').locator('[data-value]')).not.toHaveAttribute('data-value', '');
    await expect(page.getByTestId('counter-workers').locator('[data-value]')).not.toHaveAttribute('data-value', '');
    const functions = await counterValue(page, 'functions');
    const workers = await counterValue(page, 'workers');
    const triggers = await counterValue(page, 'triggers');
    expect(functions).toBeGreaterThanOrEqual(7);

    const extra = connect(stack.engine.busUrl, { name: 'e2e-extra-worker' });
    extra.registerFunction('extra::one', () => 1);
    extra.registerFunction('extra::two', () => 2);
    extra.registerTrigger({ type: 'subscribe', function_id: 'extra::one', config: { topic: 'extra.topic' } });
    await extra.ready();
    // no reload: the engine::workers-available / functions-available triggers push the change
    await expect.poll(() => counterValue(page, 'workers'), { timeout: 5000 }).toBe(workers + 1);
    await expect.poll(() => counterValue(page, 'functions'), { timeout: 5000 }).toBe(functions + 2);
    await expect.poll(() => counterValue(page, 'triggers'), { timeout: 8000 }).toBe(triggers + 1);

    await extra.close();
    await expect.poll(() => counterValue(page, 'workers'), { timeout: 5000 }).toBe(workers);
    await expect.poll(() => counterValue(page, 'functions'), { timeout: 5000 }).toBe(functions);
    await expect.poll(() => counterValue(page, 'triggers'), { timeout: 8000 }).toBe(triggers);
  });

  test('shows activity charts, the application flow and the last update time', async ({ page, consoleUrl }) => {
    await gotoPage(page, consoleUrl, '/');
    await expect(page.getByTestId('chart-invocations').locator('canvas')).toBeVisible();
    await expect(page.getByTestId('chart-errors').locator('canvas')).toBeVisible();
    const flow = page.getByTestId('app-flow');
    await expect(flow).toBeVisible();
    await expect(flow.getByText('POST /orders')).toBeVisible();
    await expect(flow.getByText('orders::create')).toBeVisible();
    await expect(page.getByTestId('dashboard-updated')).toHaveText(/Last update \d\d:\d\d:\d\d/);
    // a node opens its page
    await flow.getByText('reports::hourly_summary').click();
    await expect(page).toHaveURL(/#\/functions\?fn=reports/);
  });

  test('each counter links to its page', async ({ page, consoleUrl }) => {
    for (const [name, heading] of [
      ['functions', 'Functions'],
      ['triggers', 'Triggers'],
      ['workers', 'Workers'],
      ['streams', 'Streams'],
    ] as const) {
      await gotoPage(page, consoleUrl, '/');
      await page.getByTestId(`counter-${name}`).click();
      await expect(page.getByRole('heading', { level: 1, name: heading })).toBeVisible();
    }
  });
});
