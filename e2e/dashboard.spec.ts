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

  test('the mini-charts count the invocations and errors made during the test', async ({ page, consoleUrl, stack }) => {
    const worker = connect(stack.engine.busUrl, { name: 'e2e-chart-worker' });
    worker.registerFunction('e2e::chart_ok', (input) => input);
    worker.registerFunction('e2e::chart_fail', () => {
      throw new Error('chart failure on purpose');
    });
    await worker.ready();
    try {
      await gotoPage(page, consoleUrl, '/');
      const invocations = page.getByTestId('chart-invocations');
      const errors = page.getByTestId('chart-errors');
      await expect(invocations).toHaveAttribute('data-total', /^\d+$/);
      const invBefore = Number(await invocations.getAttribute('data-total'));
      const errBefore = Number(await errors.getAttribute('data-total'));
      const since = Date.now();
      const OK = 60;
      const FAIL = 9;
      await Promise.all(Array.from({ length: OK }, (_, i) => worker.call('e2e::chart_ok', { i })));
      for (let i = 0; i < FAIL; i++) await expect(worker.call('e2e::chart_fail', { i })).rejects.toThrow(/on purpose/);

      // what the charts draw: the buckets from the one holding `since` on (values of the invocation chart are calls per second over 10 s buckets)
      const drawnSince = async (chart: typeof invocations, perSecond: boolean) => {
        const host = chart.getByRole('img');
        const times = ((await host.getAttribute('data-times')) ?? '').split(',').map(Number);
        const values = ((await host.getAttribute('data-values')) ?? '').split(',').map(Number);
        let sum = 0;
        times.forEach((t, i) => {
          if (t + 10_000 > since) sum += Math.round((values[i] ?? 0) * (perSecond ? 10 : 1));
        });
        return sum;
      };
      // the dashboard polls the metrics every 5 s: no reload
      await expect.poll(() => drawnSince(invocations, true), { timeout: 15_000 }).toBeGreaterThanOrEqual(OK + FAIL);
      await expect.poll(() => drawnSince(errors, false), { timeout: 15_000 }).toBeGreaterThanOrEqual(FAIL);
      // the totals beside the charts, their accessible summaries and the card text agree with what is drawn
      const summary = (chart: typeof invocations, scale: number) =>
        chart.evaluate(
          (el, k) => ({
            total: Number(el.getAttribute('data-total')),
            drawn: (el.querySelector('[role="img"]')?.getAttribute('data-values') ?? '')
              .split(',')
              .reduce((a, v) => a + Math.round(Number(v) * k), 0),
            label: el.querySelector('[role="img"]')?.getAttribute('aria-label') ?? '',
            card: el.parentElement?.textContent ?? '',
          }),
          scale,
        );
      const inv = await summary(invocations, 10);
      const err = await summary(errors, 1);
      expect(inv.drawn).toBe(inv.total);
      expect(err.drawn).toBe(err.total);
      expect(inv.total - invBefore).toBeGreaterThanOrEqual(OK + FAIL);
      expect(err.total - errBefore).toBeGreaterThanOrEqual(FAIL);
      expect(inv.label).toContain(`: ${inv.total} calls,`);
      expect(err.label).toContain(`: ${err.total} failed,`);
      expect(err.card).toContain(`· ${err.total} failed`);
    } finally {
      await worker.close();
    }
  });

  test('the Streams counter goes up when an item is written to a new stream', async ({ page, consoleUrl, engineClient }) => {
    await gotoPage(page, consoleUrl, '/');
    await expect(page.getByTestId('counter-streams').locator('[data-value]')).not.toHaveAttribute('data-value', '');
    const before = await counterValue(page, 'streams');
    const stream = `e2e-dash-${Date.now().toString(36)}`;
    await engineClient.call('stream::set', { stream_name: stream, group_id: 'g', item_id: 'first', data: { n: 1 } });
    // stream::list_all fires no trigger; the counter polls (10 s) without a reload
    await expect.poll(() => counterValue(page, 'streams'), { timeout: 15_000 }).toBe(before + 1);
    await engineClient.call('stream::set', { stream_name: stream, group_id: 'g2', item_id: 'second', data: { n: 2 } });
    // a second group of the same stream is not another stream (a reload reads the list afresh)
    await page.reload();
    await expect(page.getByTestId('counter-streams').locator('[data-value]')).not.toHaveAttribute('data-value', '');
    expect(await counterValue(page, 'streams')).toBe(before + 1);
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
