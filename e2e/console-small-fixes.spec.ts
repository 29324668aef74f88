import { connect, type EngClient } from '@eng/sdk';
import type { Page } from '@playwright/test';
import { ensureEmbeddedBundle } from '../packages/console-worker/scripts/build-bundle.ts';
import { startWorker as startConsoleWorker, type WorkerProcess } from '../packages/console-worker/test/helpers.ts';
import { call, createOrder, randomTag } from './fixtures/engine-client.ts';
import type { Stack } from './fixtures/stack.ts';
import { ARTIFACTS, test as base, expect, gotoPage } from './fixtures/test.ts';

/**
 * Issue 19 §11 on both servers (the console worker first): Queues shows subscribers and
 * concurrency apart; the dead-letter badge, tab and list agree, in singular and plural; a stream
 * row's badge selects the row; subscriptions survive a reload; ⌘K finds queues, state groups and
 * trace ids; ⌘/Ctrl + 1…9 jump and the `?` overlay lists them.
 */
const test = base.extend<object, { cw: WorkerProcess }>({
  cw: [
    async ({ stack }, use) => {
      ensureEmbeddedBundle({ env: { ...process.env, SKIP_WEB_BUILD: '1' }, log: (l) => process.stdout.write(`[e2e] ${l}\n`) });
      const cw = await startConsoleWorker([
        '--http-port',
        '0',
        '--url',
        stack.engine.busUrl,
        '--engine-http-url',
        `http://127.0.0.1:${stack.engine.ports.HTTP}`,
        '--engine-streams-url',
        `ws://127.0.0.1:${stack.engine.ports.STREAMS}`,
      ]);
      await use(cw);
      await cw.stop();
    },
    { scope: 'worker', timeout: 60_000 },
  ],
});
test.describe.configure({ timeout: 90_000 });

const stat = (page: Page, name: string) => page.getByTestId(`stat-${name}`);
const streamRow = (page: Page, stream: string, group: string) =>
  page.locator(`[data-testid="stream-row"][data-stream="${stream}"][data-group="${group}"]`);

/** A topic whose one subscriber always fails with no retries: each publish is one dead letter at once. */
/** The trace of the newest orders::create call (the engine records it shortly after the call). */
async function newestOrderTrace(stack: Stack): Promise<string> {
  let traceId: string | undefined;
  await expect
    .poll(async () => {
      const { spans } = await call<{ spans: Array<{ trace_id: string }> }>(stack, 'engine::traces::list', {
        attributes: [['function_id', 'orders::create']],
        search_all_spans: true,
        sort_by: 'start_time',
        sort_order: 'desc',
        limit: 1,
      });
      traceId = spans[0]?.trace_id;
      return traceId;
    })
    .toBeTruthy();
  return traceId as string;
}

async function deadLetterTopic(stack: Stack): Promise<{ topic: string; worker: EngClient; publish: () => Promise<void> }> {
  const topic = `e2e.dlq.${randomTag()}`;
  const fn = `e2e::reject_${randomTag()}`;
  const worker = connect(stack.engine.busUrl, { name: 'e2e-rejecting-subscriber' });
  worker.registerFunction(fn, () => {
    throw new Error('rejected on purpose');
  });
  worker.registerTrigger({ type: 'durable:subscriber', function_id: fn, config: { topic, queue_config: { maxRetries: 0 } } });
  await worker.ready({ timeoutMs: 10_000 });
  await expect
    .poll(async () => (await call<{ consumer_count: number }>(stack, 'engine::queue::topic_stats', { topic })).consumer_count)
    .toBe(1);
  return {
    topic,
    worker,
    publish: async () => {
      const before = (await call<{ total: number }>(stack, 'engine::queue::dlq_messages', { paged: true, topic, offset: 0, limit: 1 }))
        .total;
      await call(stack, 'eng::durable::publish', { topic, data: { at: Date.now() } });
      await expect
        .poll(
          async () =>
            (await call<{ total: number }>(stack, 'engine::queue::dlq_messages', { paged: true, topic, offset: 0, limit: 1 })).total,
        )
        .toBe(before + 1);
    },
  };
}

for (const server of ['console worker', 'eng-console'] as const) {
  test.describe(`served by the ${server}`, () => {
    const urlOf = (cw: WorkerProcess, consoleUrl: string) => (server === 'console worker' ? cw.base : consoleUrl);

    test('Queues: subscribers and concurrency apart; badge, tab and list agree on the dead letters, in the singular too', async ({
      page,
      cw,
      consoleUrl,
      stack,
    }) => {
      const url = urlOf(cw, consoleUrl);
      // the orders demo's fulfilment is a function queue (once an order was enqueued) and a topic with one subscriber
      await createOrder(stack, { sku: `QUEUE-${randomTag()}` });
      await expect
        .poll(async () => (await call<{ config: unknown }>(stack, 'engine::queue::topic_stats', { topic: 'fulfilment' })).config)
        .toBeTruthy();
      const stats = await call<{ consumer_count: number; config: { concurrency: number } }>(stack, 'engine::queue::topic_stats', {
        topic: 'fulfilment',
      });
      await gotoPage(page, url, '/queues?topic=fulfilment');
      await expect(stat(page, 'subscribers')).toHaveAttribute('data-value', '1');
      await expect(stat(page, 'concurrency')).toHaveAttribute('data-value', String(stats.config.concurrency));
      expect(stats.consumer_count).toBe(stats.config.concurrency + 1);
      await expect(page.getByTestId('queue-stats')).not.toContainText('Consumers');

      const { topic, worker, publish } = await deadLetterTopic(stack);
      try {
        await publish();
        await page.goto(`${url}/#/queues?topic=${encodeURIComponent(topic)}&tab=dead-letters`);
        const tab = page.getByRole('tab', { name: /Dead letters/ });
        await expect(page.getByTestId('dlq-total')).toHaveText('1 dead letter');
        await expect(tab).toContainText('1');
        await expect(page.getByTestId('dead-letter')).toHaveCount(1);
        await expect(page.locator('main h1').locator('xpath=..')).toContainText('dead letter');
        await expect(page.locator('main h1').locator('xpath=..')).not.toContainText(/\b1 dead letters/);
        await expect(
          page.locator(`[data-testid="queue-row"][data-name="${topic}"]`).locator('xpath=..').getByTestId('queue-dlq-badge'),
        ).toHaveText('1');

        // a second one: the tab badge and the list never disagree, not even between two polls
        await publish();
        const seen: Array<[string | null, string | null]> = [];
        for (let i = 0; i < 40; i++) {
          seen.push(
            await page.evaluate(() => [
              document.querySelector('[role="tab"][aria-selected="true"]')?.textContent?.replace(/\D/g, '') ?? null,
              document.querySelector('[data-testid="dlq-total"]')?.getAttribute('data-total') ?? null,
            ]),
          );
          await page.waitForTimeout(100);
        }
        expect(seen.filter(([badge, list]) => list !== '' && badge !== list)).toEqual([]);
        await expect(page.getByTestId('dead-letter')).toHaveCount(2, { timeout: 10_000 });
        await expect(page.getByTestId('dlq-total')).toHaveText('2 dead letters');
        await expect(tab).toContainText('2');
        await page.getByRole('tab', { name: 'Overview' }).click();
        await expect(stat(page, 'dead-letters')).toHaveAttribute('data-value', '2');
        await tab.click();
        await page.getByTestId('dlq-redrive-all').click();
        await expect(page.getByRole('dialog')).toContainText('Redrive all 2 dead letters?');
        await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
      } finally {
        await worker.close();
      }
    });

    test('Streams: the type badge selects its row, and subscriptions survive a reload', async ({ page, cw, consoleUrl, stack }) => {
      const url = urlOf(cw, consoleUrl);
      await createOrder(stack, { sku: `SMALL-${randomTag()}` }); // orders/live exists
      await gotoPage(page, url, '/streams');
      const row = streamRow(page, 'orders', 'live');
      await row.getByText('user', { exact: true }).click();
      await expect(page).toHaveURL(/stream=orders/);
      await expect(row.getByRole('button', { name: /orders/ })).toHaveAttribute('aria-current', 'true');

      await row.getByTestId('stream-subscribe').click();
      await expect(page.getByTestId('subscription-chip')).toHaveText('orders / live');
      await page.reload();
      await expect(page.getByTestId('subscription-chip')).toHaveText('orders / live');
      await expect(row.getByTestId('stream-subscribe')).toHaveAttribute('aria-pressed', 'true');
      // still live after the reload: a new order arrives on the restored subscription
      await expect(page.getByTestId('monitor-transport')).toHaveAttribute('data-transport', 'socket');
      await expect(page.locator('[data-testid="monitor-message"][data-event="join"]')).toHaveCount(1);
      const order = await createOrder(stack, { sku: `RELOAD-${randomTag()}` });
      await expect(page.locator('[data-testid="monitor-message"][data-event="create"]').filter({ hasText: order.id })).toHaveCount(1);
      // unsubscribing is remembered too
      await row.getByTestId('stream-subscribe').click();
      await page.reload();
      await expect(page.getByTestId('monitor-transport')).toHaveAttribute('data-transport', 'socket');
      await expect(page.getByTestId('subscription-chip')).toHaveCount(0);
    });

    test('⌘K finds queues, state groups and trace ids', async ({ page, cw, consoleUrl, stack }) => {
      const url = urlOf(cw, consoleUrl);
      const scope = `e2e-palette-${randomTag()}`;
      await call(stack, 'state::set', { scope, key: 'k', value: 1 });
      await createOrder(stack, { sku: `PALETTE-${randomTag()}` });
      const traceId = await newestOrderTrace(stack);
      await gotoPage(page, url, '/');
      const input = page.getByRole('combobox', { name: 'Command palette search' });

      await page.keyboard.press('Control+k');
      await input.fill('fulfil');
      // the queue, not the function fulfilment::ship nor its trigger
      await page.getByRole('option', { name: /^fulfilment\s*(queue|topic)/ }).click();
      await expect(page.getByTestId('queue-title')).toHaveText('fulfilment');

      await page.keyboard.press('Control+k');
      await input.fill(scope);
      await page.getByRole('option', { name: new RegExp(`^${scope}`) }).click();
      await expect(page).toHaveURL(new RegExp(`#/states\\?scope=${scope}`));

      await page.keyboard.press('Control+k');
      await input.fill(traceId.slice(0, 10));
      await page.getByRole('option', { name: new RegExp(`^${traceId}`) }).click();
      await expect(page).toHaveURL(new RegExp(`trace_id=${traceId}`));
    });

    test('⌘/Ctrl + 1…9 jump to Workers … Logs, and the ? overlay lists every shortcut', async ({ page, cw, consoleUrl }) => {
      const url = urlOf(cw, consoleUrl);
      await gotoPage(page, url, '/');
      const expected: Array<[string, string]> = [
        ['1', 'Workers'],
        ['2', 'Functions'],
        ['3', 'Triggers'],
        ['4', 'States'],
        ['5', 'Streams'],
        ['6', 'Queues'],
        ['8', 'Traces'],
        ['9', 'Logs'],
      ];
      for (const [digit, heading] of expected) {
        await page.keyboard.press(`Control+${digit}`);
        await expect(page.getByRole('heading', { level: 1, name: heading })).toBeVisible();
      }
      await page.keyboard.press('Control+7');
      await expect(page).toHaveURL(/#\/queues\?.*tab=dead-letters/);
      await expect(page.getByRole('tab', { name: /Dead letters/ })).toHaveAttribute('aria-selected', 'true');

      await page.keyboard.press('?');
      const dialog = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
      const jumps = dialog.getByRole('region', { name: 'Jump (⌘/Ctrl + number)' });
      await expect(jumps.getByTestId('shortcut')).toHaveCount(9);
      await expect(jumps).toContainText('Jump to Workers');
      await expect(jumps).toContainText('Jump to Dead letters');
      await expect(jumps.getByTestId('shortcut').first()).toContainText('Ctrl+1');
      const pages = dialog.getByRole('region', { name: 'Go to a page (g, then a letter)' });
      await expect(pages).toContainText('Go to Workers');
      await page.screenshot({ path: `${ARTIFACTS}shortcuts-${server.replace(' ', '-')}.png` });
    });
  });
}
