import { randomBytes } from 'node:crypto';
import { connect } from '@eng/sdk';
import type { Page } from '@playwright/test';
import { otlpTraces } from './fixtures/otlp-traces.ts';
import { type ConsoleProcess, consoleArgsFor, startConsole } from './fixtures/stack.ts';
import { ARTIFACTS, expect, gotoPage, test } from './fixtures/test.ts';

/**
 * The Flow page (seed 2.8) on a console started with --enable-flow against the engine running
 * examples/orders: node types and visuals, edges from triggers, metadata.uses and traces, node
 * details, and a dragged layout kept in the engine's state store across a reload.
 */

let flowConsole: ConsoleProcess;
let httpBase: string;
let busUrl: string;

test.beforeAll(async ({ stack }) => {
  httpBase = `http://127.0.0.1:${stack.engine.ports.HTTP}`;
  busUrl = stack.engine.busUrl;
  flowConsole = await startConsole([...consoleArgsFor(stack.engine), '--no-otel', '--enable-flow']);
});

test.afterAll(async () => {
  await flowConsole?.stop();
});

/** Switch the theme of the open page with the app's own toggle (a hash-only navigation does not rerun gotoPage's init script). */
async function applyTheme(page: Page, theme: 'light' | 'dark'): Promise<void> {
  const current = await page.locator('html').getAttribute('data-theme');
  if (current !== theme) await page.getByTestId('theme-toggle').first().click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', theme);
}

const node = (page: Page, id: string) => page.locator(`.react-flow__node[data-id="${id}"]`);

async function readLayout(): Promise<unknown> {
  const client = connect(busUrl, { name: 'flow-e2e', registerWorker: false });
  try {
    await client.ready();
    return await client.call('state::get', { scope: 'eng:console:flow', key: 'layout' });
  } finally {
    await client.close();
  }
}

test('the Flow entry exists only with --enable-flow', async ({ page, consoleUrl }) => {
  await gotoPage(page, consoleUrl, '/');
  const nav = page.getByRole('navigation', { name: 'Main navigation' });
  await expect(nav.getByRole('link', { name: 'Functions', exact: true })).toBeVisible();
  await expect(nav.getByRole('link', { name: /^Flow/ })).toHaveCount(0);
  await gotoPage(page, consoleUrl, '/flow');
  await expect(page.getByText('The Flow page is off')).toBeVisible();
  await expect(page.getByText('ENG_ENABLE_FLOW=1')).toBeVisible();

  await gotoPage(page, flowConsole.url, '/');
  await page.getByRole('navigation', { name: 'Main navigation' }).getByRole('link', { name: /^Flow/ }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Flow' })).toBeVisible();
  await expect(page.getByTestId('flow-node').first()).toBeVisible();
});

test('triggers, functions, state stores and queues with the seed 2.8 visuals, in both themes', async ({ page }) => {
  for (const theme of ['dark', 'light'] as const) {
    await gotoPage(page, flowConsole.url, '/flow', theme);
    await applyTheme(page, theme);
    const kinds = async (kind: string) => page.locator(`[data-testid="flow-node"][data-kind="${kind}"]`).allInnerTexts();
    await expect(node(page, 'fn:orders::create')).toBeVisible();
    const functions = (await kinds('function')).join();
    for (const fn of ['orders::create', 'orders::get', 'orders::list', 'fulfilment::ship', 'orders::audit', 'reports::hourly_summary']) {
      expect(functions).toContain(fn);
    }
    const http = await kinds('http');
    expect(http.some((t) => t.includes('POST') && t.includes('/orders'))).toBe(true);
    expect(http.some((t) => t.includes('GET') && t.includes('/orders/:id'))).toBe(true);
    expect((await kinds('cron')).join()).toContain('*/30 * * * * *');
    expect((await kinds('event')).join()).toContain('order.created');
    expect((await kinds('queue')).join()).toContain('fulfilment');
    const state = (await kinds('state')).join();
    for (const scope of ['orders', 'stats', 'reports']) expect(state).toContain(scope);
    // HTTP triggers are coloured by method: POST and GET differ
    const post = page.locator('[data-testid="flow-node"][data-kind="http"]').filter({ hasText: 'POST' }).first();
    const get = page.locator('[data-testid="flow-node"][data-kind="http"]').filter({ hasText: 'GET' }).first();
    const colour = (l: typeof post) => l.evaluate((el) => getComputedStyle(el).borderLeftColor);
    expect(await colour(post)).not.toBe(await colour(get));
    // edges: trigger → function, function → state (metadata.uses), state → function (state trigger)
    for (const id of [
      'cron:',
      'fn:orders::create->state:orders',
      'fn:orders::create->queue:fulfilment',
      'queue:fulfilment->fn:fulfilment::ship',
      'event:order.created->fn:notifications::on_order_created',
      'state:orders->fn:orders::audit',
    ]) {
      await expect(page.locator(`.react-flow__edge[data-id*="${id}"]`).first()).toBeAttached();
    }
    await page.waitForTimeout(300);
    await page.screenshot({ path: `${ARTIFACTS}flow-graph-${theme}.png` });

    // click a node for details
    await node(page, 'fn:orders::create').click();
    const detail = page.getByTestId('flow-detail');
    await expect(detail).toContainText('orders::create');
    await expect(detail).toContainText('POST /orders');
    await expect(detail).toContainText('fulfilment');
    await expect(page).toHaveURL(/node=fn/);
    await page.screenshot({ path: `${ARTIFACTS}flow-detail-${theme}.png` });
    await detail.getByRole('button', { name: 'fulfilment' }).click();
    await expect(detail).toContainText('Queue');
    await expect(detail.getByRole('link', { name: 'Open in Queues' })).toHaveAttribute('href', '#/queues?topic=fulfilment');
  }
});

test('zoom and pan move the viewport', async ({ page }) => {
  await gotoPage(page, flowConsole.url, '/flow');
  await expect(page.getByTestId('flow-node').first()).toBeVisible();
  const viewport = page.locator('.react-flow__viewport');
  const before = await viewport.getAttribute('style');
  await page.getByRole('button', { name: 'Zoom In' }).click();
  await expect.poll(() => viewport.getAttribute('style')).not.toBe(before);
  const pane = page.locator('.react-flow__pane');
  const box = await pane.boundingBox();
  if (!box) throw new Error('no pane');
  const zoomed = await viewport.getAttribute('style');
  // bottom middle: clear of the controls (left), the minimap (right) and the graph
  await page.mouse.move(box.x + box.width / 2, box.y + box.height - 30);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width / 2 + 120, box.y + box.height - 90, { steps: 6 });
  await page.mouse.up();
  await expect.poll(() => viewport.getAttribute('style')).not.toBe(zoomed);
});

test('function → state edges observed in traces, named and unnamed', async ({ page }) => {
  const traceId = randomBytes(16).toString('hex');
  const listSpan = randomBytes(8).toString('hex');
  const notifySpan = randomBytes(8).toString('hex');
  const now = Date.now();
  const body = otlpTraces(traceId, [
    {
      service: 'orders',
      name: 'execute orders::list',
      spanId: listSpan,
      startMs: now - 50,
      durationMs: 30,
      attributes: { function_id: 'orders::list' },
    },
    {
      service: 'eng',
      name: 'call state::get',
      spanId: randomBytes(8).toString('hex'),
      parent: listSpan,
      startMs: now - 45,
      durationMs: 5,
      attributes: { function_id: 'state::get', 'eng.state.scope': 'carts' },
    },
    {
      service: 'orders',
      name: 'execute notifications::on_order_created',
      spanId: notifySpan,
      startMs: now - 40,
      durationMs: 20,
      attributes: { function_id: 'notifications::on_order_created' },
    },
    {
      service: 'eng',
      name: 'call state::set',
      spanId: randomBytes(8).toString('hex'),
      parent: notifySpan,
      startMs: now - 35,
      durationMs: 4,
      attributes: { function_id: 'state::set' },
    },
  ]);
  const res = await fetch(`${httpBase}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);

  await gotoPage(page, flowConsole.url, '/flow');
  await expect(node(page, 'state:carts')).toBeVisible();
  await expect(page.locator('.react-flow__edge[data-id="fn:orders::list->state:carts"]')).toBeAttached();
  // the unnamed observation: a dashed edge to a "State store" whose scope the span did not record
  await expect(node(page, 'state:*')).toContainText('State store');
  await expect(page.locator('.react-flow__edge[data-id="fn:notifications::on_order_created->state:*"] path').first()).toHaveAttribute(
    'style',
    /stroke-dasharray/,
  );
  await node(page, 'state:*').click();
  await expect(page.getByTestId('flow-detail')).toContainText('metadata.uses');
});

test('a dragged layout is saved in the state store and survives a reload; Auto-organize forgets it', async ({ page }) => {
  await gotoPage(page, flowConsole.url, '/flow');
  const target = node(page, 'fn:orders::create');
  await expect(target).toBeVisible();
  const start = await target.getAttribute('style');
  const box = await target.boundingBox();
  if (!box) throw new Error('node not laid out');
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width / 2 + 60, box.y + box.height / 2 + 140, { steps: 8 });
  await page.mouse.up();
  const moved = await target.getAttribute('style');
  expect(moved).not.toBe(start);
  await expect(page.getByTestId('flow-layout-status')).toContainText('Layout saved');

  const stored = (await readLayout()) as { version: number; positions: Record<string, { x: number; y: number }> };
  expect(stored.version).toBe(1);
  const transform = /translate\(([-\d.]+)px, ([-\d.]+)px\)/.exec(moved ?? '');
  expect(transform).not.toBeNull();
  expect(stored.positions['fn:orders::create']?.x).toBeCloseTo(Number(transform?.[1]), 0);
  expect(stored.positions['fn:orders::create']?.y).toBeCloseTo(Number(transform?.[2]), 0);

  await page.reload();
  await expect(node(page, 'fn:orders::create')).toBeVisible();
  expect(await node(page, 'fn:orders::create').getAttribute('style')).toContain(transform?.[0] as string);
  await page.screenshot({ path: `${ARTIFACTS}flow-dragged-dark.png` });

  await page.getByRole('button', { name: 'Auto-organize' }).click();
  await expect(page.getByTestId('flow-layout-status')).toContainText('Automatic layout');
  await expect.poll(readLayout).toBeUndefined();
  await expect.poll(() => node(page, 'fn:orders::create').getAttribute('style')).not.toContain(transform?.[0] as string);
});
