import type { Page } from '@playwright/test';
import { call, createOrder, randomTag, reloadInTheme } from './fixtures/engine-client.ts';
import type { Stack } from './fixtures/stack.ts';
import { ARTIFACTS, expect, gotoPage, test } from './fixtures/test.ts';

/**
 * Queues & dead letters (issue 6) with the orders demo: `orders::create` enqueues every order on
 * the function queue `fulfilment`, and `fulfilment::ship` throws for SKUs starting with FAIL, so
 * such an order lands in the DLQ after its retries (1 + 3 attempts, ~7 s of backoff).
 */
test.describe.configure({ timeout: 120_000 });

interface DeadLetterPage {
  total: number;
  messages: Array<{ id: string; payload: unknown; error: string }>;
}

const deadLetters = (stack: Stack, offset = 0, limit = 1000) =>
  call<DeadLetterPage>(stack, 'engine::queue::dlq_messages', { paged: true, topic: 'fulfilment', offset, limit });

async function waitForDeadLetters(stack: Stack, orderIds: string[]): Promise<Map<string, string>> {
  const byOrder = new Map<string, string>();
  await expect
    .poll(
      async () => {
        for (const m of (await deadLetters(stack)).messages) {
          const id = (m.payload as { id?: string }).id;
          if (id && orderIds.includes(id)) byOrder.set(id, m.id);
        }
        return byOrder.size;
      },
      { timeout: 60_000, intervals: [1000] },
    )
    .toBe(orderIds.length);
  return byOrder;
}

const stat = (page: Page, name: string) => page.getByTestId(`stat-${name}`);

test('publish to the topic and enqueue for a function: the deliveries are counted', async ({ page, consoleUrl, stack }) => {
  const order = await createOrder(stack, { sku: `OK-${randomTag()}`, qty: 1 });
  await gotoPage(page, consoleUrl, '/queues?topic=fulfilment');
  await expect(page.getByTestId('queue-title')).toHaveText('fulfilment');
  await expect(page.locator('[data-testid="queue-row"][data-name="fulfilment"]')).toContainText('queue');
  await expect(page.locator('[data-testid="queue-row"][data-name="fulfilment"]')).toContainText('topic');
  await expect(stat(page, 'delivered')).not.toHaveAttribute('data-value', '');
  const delivered = Number(await stat(page, 'delivered').getAttribute('data-value'));

  // durable topic: the demo's durable:subscriber fulfilment::ship gets the copy and ships the order
  const form = page.getByTestId('publish-form');
  await form.getByLabel('Message data').fill(JSON.stringify({ id: order.id }));
  await page.getByTestId('publish').click();
  await expect(form.getByRole('status')).toHaveText(/Published/);
  await expect.poll(async () => Number(await stat(page, 'delivered').getAttribute('data-value'))).toBeGreaterThan(delivered);
  const afterTopic = Number(await stat(page, 'delivered').getAttribute('data-value'));

  // function queue: the enqueue action answers a receipt
  await form.getByRole('tab', { name: 'Function queue' }).click();
  await form.getByLabel('Function').fill('fulfilment::ship');
  await form.getByLabel('Message data').fill(JSON.stringify({ id: order.id }));
  await page.getByTestId('publish').click();
  await expect(form.getByRole('status')).toContainText('receipt');
  await expect.poll(async () => Number(await stat(page, 'delivered').getAttribute('data-value'))).toBeGreaterThan(afterTopic);
  expect(await call(stack, 'state::get', { scope: 'orders', key: order.id })).toMatchObject({ status: 'shipped' });
  await page.screenshot({ path: `${ARTIFACTS}queues-dark.png` });
});

test('a failing order lands in the DLQ with its last error; Redrive delivers it once fixed, Discard deletes', async ({
  page,
  consoleUrl,
  stack,
}) => {
  const fixable = await createOrder(stack, { sku: `FAIL-fix-${randomTag()}` });
  const doomed = await createOrder(stack, { sku: `FAIL-gone-${randomTag()}` });
  const ids = await waitForDeadLetters(stack, [fixable.id, doomed.id]);

  await gotoPage(page, consoleUrl, '/queues?topic=fulfilment&tab=dead-letters&size=250');
  const row = (orderId: string) => page.locator(`[data-testid="dead-letter"][data-id="${ids.get(orderId)}"]`);
  await expect(row(fixable.id)).toBeVisible();
  await expect(row(fixable.id).getByTestId('dead-letter-error')).toHaveText(`invocation_failed: warehouse rejected ${fixable.sku}`);
  await row(fixable.id).getByRole('button', { name: 'Show details' }).click();
  const detail = row(fixable.id).getByTestId('dead-letter-detail');
  await expect(detail).toContainText(`warehouse rejected ${fixable.sku}`);
  await expect(detail).toContainText(fixable.id);
  await expect(detail).toContainText('fulfilment::ship');
  await page.screenshot({ path: `${ARTIFACTS}dead-letters-dark.png` });

  // fix the order the handler reads, then redrive: this time it ships
  const stored = await call<Record<string, unknown>>(stack, 'state::get', { scope: 'orders', key: fixable.id });
  await call(stack, 'state::set', { scope: 'orders', key: fixable.id, value: { ...stored, sku: 'FIXED-1' } });
  await row(fixable.id).getByTestId('dead-letter-redrive').click();
  await expect(row(fixable.id)).toHaveCount(0);
  await expect
    .poll(async () => ((await call(stack, 'state::get', { scope: 'orders', key: fixable.id })) as { status?: string }).status, {
      timeout: 15_000,
    })
    .toBe('shipped');

  // Discard takes two clicks
  await row(doomed.id).getByTestId('dead-letter-discard').click();
  await expect(row(doomed.id).getByTestId('dead-letter-discard')).toHaveText('Confirm discard');
  expect((await deadLetters(stack)).messages.some((m) => m.id === ids.get(doomed.id))).toBe(true);
  await row(doomed.id).getByTestId('dead-letter-discard').click();
  await expect(row(doomed.id)).toHaveCount(0);
  expect((await deadLetters(stack)).messages.some((m) => m.id === ids.get(doomed.id))).toBe(false);
});

test('dead letters page past 50 with the total, and Redrive all asks first', async ({ page, consoleUrl, stack }) => {
  const tag = randomTag();
  const orders = await Promise.all(Array.from({ length: 62 }, (_, i) => createOrder(stack, { sku: `FAIL-bulk-${tag}-${i}` })));
  await waitForDeadLetters(
    stack,
    orders.map((o) => o.id),
  );
  const total = (await deadLetters(stack, 0, 1)).total;
  expect(total).toBeGreaterThan(60);

  await gotoPage(page, consoleUrl, '/queues?topic=fulfilment&tab=dead-letters');
  await expect(page.getByTestId('dlq-total')).toHaveAttribute('data-total', String(total));
  await expect(page.getByTestId('dlq-range')).toHaveText(`1–50 of ${total}`);
  await expect(page.getByTestId('dead-letter')).toHaveCount(50);
  const firstPage = await page.getByTestId('dead-letter').evaluateAll((els) => els.map((e) => e.getAttribute('data-id')));
  await page.getByRole('button', { name: 'Next page' }).click();
  await expect(page).toHaveURL(/page=2/);
  await expect(page.getByTestId('dlq-range')).toHaveText(`51–${Math.min(100, total)} of ${total}`);
  await expect(page.getByTestId('dead-letter')).toHaveCount(Math.min(50, total - 50));
  const secondPage = await page.getByTestId('dead-letter').evaluateAll((els) => els.map((e) => e.getAttribute('data-id')));
  expect(secondPage.filter((id) => firstPage.includes(id))).toEqual([]);
  const expected = (await deadLetters(stack, 50, 50)).messages.map((m) => m.id);
  expect(secondPage).toEqual(expected);

  // the light theme of the same page
  await reloadInTheme(page, 'light');
  await expect(page.getByTestId('dead-letter').first()).toBeVisible();
  await page.screenshot({ path: `${ARTIFACTS}dead-letters-light.png` });

  await page.getByTestId('dlq-redrive-all').click();
  const dialog = page.getByRole('dialog');
  await expect(dialog).toContainText(`Redrive all ${total} dead letters?`);
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  expect((await deadLetters(stack, 0, 1)).total).toBe(total);
  await page.getByTestId('dlq-redrive-all').click();
  await page.getByTestId('confirm-action').click();
  await expect(page.getByText(/^Redriven \d+$/)).toBeVisible();
  expect(Number((await page.getByText(/^Redriven \d+$/).innerText()).split(' ')[1])).toBeGreaterThanOrEqual(total);
  // they all left the DLQ (and, still failing, come back after their retries)
  expect((await deadLetters(stack, 0, 1)).total).toBeLessThan(total);

  await page.getByRole('tab', { name: 'Overview' }).click();
  await expect(page.getByTestId('queue-stats')).toBeVisible();
  await page.screenshot({ path: `${ARTIFACTS}queues-light.png` });
});

/** The list row's numeric columns (Depth, Flight, Subs, OK, Fail), as the page shows them. */
const rowNumbers = async (page: Page, name: string) => {
  const cells = page.locator(`[data-testid="queue-row"][data-name="${name}"]`).locator('xpath=..').locator(':scope > span');
  const texts = await cells.allInnerTexts();
  const [depth, inFlight, subscribers] = texts.map((t) => (t.trim() === '–' ? Number.NaN : Number(t.trim())));
  return { depth, inFlight, subscribers };
};

interface Stats {
  depth: number;
  in_flight: number;
  consumer_count: number;
  delivered: number;
  config: { concurrency?: number } | null;
}
interface Listed {
  name: string;
  broker_type: string;
  depth: number;
  subscriber_count: number;
}

test('depth, subscribers and concurrency match engine::queue::topic_stats and list_topics as messages wait and subscribers bind', async ({
  page,
  consoleUrl,
  stack,
}) => {
  const { connect } = await import('@eng/sdk');
  const tag = randomTag();
  const queue = `e2e-depth-${tag}`;
  const fn = `e2e::later_${tag}`;
  const topicStats = (name: string) => call<Stats>(stack, 'engine::queue::topic_stats', { topic: name });
  const listed = async (name: string, kind: string) =>
    (await call<Listed[]>(stack, 'engine::queue::list_topics', {})).find((t) => t.name === name && t.broker_type === kind);
  const shown = async (name: string) => ({
    depth: Number(await stat(page, 'depth').getAttribute('data-value')),
    subscribers: Number(await stat(page, 'subscribers').getAttribute('data-value')),
    inFlight: Number(await stat(page, 'in-flight').getAttribute('data-value')),
    row: await rowNumbers(page, name),
  });

  // a function queue whose function is not registered yet: the messages wait (depth 3)
  for (let i = 0; i < 3; i++) await call(stack, 'engine::queue::enqueue', { queue, function_id: fn, data: { i } });
  const waiting = await topicStats(queue);
  expect(waiting.depth).toBe(3);
  expect((await listed(queue, 'function_queue'))?.depth).toBe(3);
  await gotoPage(page, consoleUrl, `/queues?topic=${queue}`);
  await expect(page.getByTestId('queue-title')).toHaveText(queue);
  await expect(stat(page, 'depth')).toHaveAttribute('data-value', '3');
  // the engine counts a function queue's concurrency as consumers (as iii does): the page shows it
  // as Concurrency, and no subscribers
  expect(waiting.consumer_count).toBe(waiting.config?.concurrency);
  await expect(stat(page, 'concurrency')).toHaveAttribute('data-value', String(waiting.config?.concurrency));
  await expect(stat(page, 'subscribers')).toHaveAttribute('data-value', '0');
  await expect.poll(() => rowNumbers(page, queue)).toEqual({ depth: 3, inFlight: 0, subscribers: 0 });

  // the function registers: the queue drains, live
  const worker = connect(stack.engine.busUrl, { name: 'e2e-queue-late' });
  const got: unknown[] = [];
  worker.registerFunction(fn, (data) => {
    got.push(data);
    return null;
  });
  await worker.ready();
  try {
    await expect.poll(() => got.length, { timeout: 10_000 }).toBe(3);
    await expect(stat(page, 'depth')).toHaveAttribute('data-value', '0');
    await expect(stat(page, 'delivered')).toHaveAttribute('data-value', '3');
    expect((await topicStats(queue)).depth).toBe(0);
    await expect.poll(async () => (await rowNumbers(page, queue)).depth).toBe(0);
  } finally {
    await worker.close();
  }

  // a durable topic with two subscribers; one of them holds its copies (concurrency 1, a slow handler)
  const topic = `e2e.topic.${tag}`;
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const slow = connect(stack.engine.busUrl, { name: 'e2e-sub-slow' });
  slow.registerFunction(`e2e::slow_${tag}`, async () => {
    await gate;
    return null;
  });
  slow.registerTrigger({
    type: 'durable:subscriber',
    function_id: `e2e::slow_${tag}`,
    config: { topic, queue_config: { concurrency: 1 } },
  });
  const fast = connect(stack.engine.busUrl, { name: 'e2e-sub-fast' });
  fast.registerFunction(`e2e::fast_${tag}`, () => null);
  fast.registerTrigger({ type: 'durable:subscriber', function_id: `e2e::fast_${tag}`, config: { topic } });
  await Promise.all([slow.ready(), fast.ready()]);
  try {
    await expect.poll(async () => (await topicStats(topic)).consumer_count, { timeout: 10_000 }).toBe(2);
    await gotoPage(page, consoleUrl, `/queues?topic=${encodeURIComponent(topic)}`);
    await expect(page.getByTestId('queue-title')).toHaveText(topic);
    await expect(stat(page, 'subscribers')).toHaveAttribute('data-value', '2');
    // a topic has no concurrency of its own (each subscriber sets it)
    await expect(stat(page, 'concurrency')).toHaveAttribute('data-value', '');
    expect((await listed(topic, 'topic'))?.subscriber_count).toBe(2);
    await expect.poll(async () => (await rowNumbers(page, topic)).subscribers).toBe(2);

    for (let i = 0; i < 4; i++) await call(stack, 'eng::durable::publish', { topic, data: { i } });
    // the slow subscriber has one copy in flight and three waiting; the fast one took all of its own
    await expect.poll(async () => (await topicStats(topic)).depth, { timeout: 10_000 }).toBe(3);
    const held = await topicStats(topic);
    expect(held.in_flight).toBe(1);
    await expect(stat(page, 'depth')).toHaveAttribute('data-value', String(held.depth));
    await expect(stat(page, 'in-flight')).toHaveAttribute('data-value', '1');
    await expect.poll(() => rowNumbers(page, topic)).toEqual({ depth: 3, inFlight: 1, subscribers: 2 });
    // list_topics and topic_stats agree: depth is what is stored and not in flight
    expect((await listed(topic, 'topic'))?.depth).toBe(held.depth);
    const page1 = await shown(topic);
    expect(page1).toEqual({ depth: 3, subscribers: 2, inFlight: 1, row: { depth: 3, inFlight: 1, subscribers: 2 } });

    release();
    await expect(stat(page, 'depth')).toHaveAttribute('data-value', '0', { timeout: 10_000 });
    await expect(stat(page, 'in-flight')).toHaveAttribute('data-value', '0');
    expect((await topicStats(topic)).depth).toBe(0);
  } finally {
    release();
    await slow.close();
    await fast.close();
  }
});
