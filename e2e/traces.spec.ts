import { randomBytes } from 'node:crypto';
import type { Page } from '@playwright/test';
import { startEngine } from '../test/harness.ts';
import { call } from './fixtures/engine-client.ts';
import { type CheckoutStory, otlpTraces, type SpanSpec, sendCheckoutStory } from './fixtures/otlp-traces.ts';
import { consoleArgsFor, ENGINE_MODULES_YAML, startConsole } from './fixtures/stack.ts';
import { ARTIFACTS, expect, gotoPage, test } from './fixtures/test.ts';

/**
 * The trace explorer (issue 6 Traces, issue 7 item 7) against a real engine running
 * examples/orders, with the checkout story exported over OTLP/HTTP: several services, a session,
 * baggage, an exception, span logs and a consumer trace linked to its producer.
 */

let story: CheckoutStory;
let httpBase: string;

test.beforeAll(async ({ stack }) => {
  httpBase = `http://127.0.0.1:${stack.engine.ports.HTTP}`;
  // the stack is shared by every spec and trace-explorer.spec sends the same checkout story: start
  // from an empty trace store so the filter counts below are this file's own
  await call(stack, 'engine::traces::clear', {});
  for (const sku of ['TRACE-1', 'TRACE-2']) {
    const res = await fetch(`${httpBase}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sku, qty: 1 }),
    });
    expect(res.status).toBe(201);
  }
  story = await sendCheckoutStory(httpBase);
});

const rows = (page: Page) => page.getByTestId('trace-row');
const row = (page: Page, traceId: string) => page.locator(`[data-testid="trace-row"][data-trace-id="${traceId}"]`);
const detail = (page: Page) => page.getByTestId('trace-detail');

/** Switch the theme of the open page with the app's own toggle (a hash-only navigation does not rerun gotoPage's init script). */
async function applyTheme(page: Page, theme: 'light' | 'dark'): Promise<void> {
  const current = await page.locator('html').getAttribute('data-theme');
  if (current !== theme) await page.getByTestId('theme-toggle').first().click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', theme);
}

async function shot(page: Page, name: string): Promise<void> {
  await page.waitForTimeout(250); // let the theme transition and lazy chunks settle
  await page.screenshot({ path: `${ARTIFACTS}traces-${name}.png` });
}

test('a POST /orders trace is listed with the seed columns and opens in the waterfall', async ({ page, consoleUrl }) => {
  await gotoPage(page, consoleUrl, '/traces?q=orders::create');
  const header = page.getByTestId('trace-table').locator('thead');
  for (const column of ['Status', 'Trace ID', 'Service', 'Root span', 'Duration', 'Spans', 'Timestamp']) {
    await expect(header.getByText(column, { exact: true })).toBeVisible();
  }
  const first = rows(page).first();
  await expect(first).toContainText('orders::create');
  await expect(first).toContainText('OK');
  const spanCount = Number((await first.locator('td').nth(5).innerText()).trim().split(/\s/)[0]);
  expect(spanCount).toBeGreaterThanOrEqual(1);
  await first.click();
  await expect(detail(page)).toBeVisible();
  await expect(page).toHaveURL(/trace_id=[0-9a-f]{32}/);
  // the root is the HTTP module's server span; the worker's execute span sits under it
  await expect(page.getByTestId('waterfall-row').first()).toContainText('POST /orders');
  await expect(page.getByTestId('waterfall-row').filter({ hasText: 'execute orders::create' })).toHaveCount(1);
  expect(await page.getByTestId('waterfall-row').count()).toBe(spanCount);
});

test('every view of a trace renders, in both themes', async ({ page, consoleUrl }) => {
  const views: Array<[string, string, string]> = [
    ['Waterfall', 'waterfall', 'waterfall'],
    ['Flame graph', 'flame-graph', 'flame'],
    ['Service breakdown', 'service-breakdown', 'services'],
    ['Trace map', 'service-map', 'map'],
    ['Flow', 'trace-flow', 'flow'],
  ];
  for (const theme of ['light', 'dark'] as const) {
    await gotoPage(page, consoleUrl, `/traces?trace_id=${story.producer.traceId}`, theme);
    await applyTheme(page, theme);
    await expect(detail(page)).toContainText('POST /checkout');
    for (const [tab, testId, slug] of views) {
      await page.getByRole('tablist', { name: 'Trace views' }).getByRole('tab', { name: tab }).click();
      const view = page.getByTestId(testId);
      await expect(view).toBeVisible();
      if (slug === 'waterfall') await expect(page.getByTestId('waterfall-row')).toHaveCount(4);
      if (slug === 'flame') await expect(page.getByTestId('flame-frame')).toHaveCount(4);
      if (slug === 'services') {
        await expect(page.getByTestId('service-row')).toHaveCount(2);
        await expect(page.getByTestId('service-row').filter({ hasText: 'cart' })).toContainText('2');
      }
      if (slug === 'map') {
        await expect(page.getByTestId('service-node')).toHaveCount(2);
        await expect(view).toContainText('1 call');
      }
      if (slug === 'flow') await expect(page.getByTestId('flow-span-node')).toHaveCount(4);
      await shot(page, `view-${slug}-${theme}`);
    }
    // the span panel with the failing span of the consumer trace
    await gotoPage(page, consoleUrl, `/traces?trace_id=${story.consumer.traceId}&span=${story.consumer.chargeId}&tab=errors`, theme);
    await applyTheme(page, theme);
    await expect(page.getByTestId('span-errors')).toContainText('CardDeclined');
    await shot(page, `span-errors-${theme}`);
    await gotoPage(page, consoleUrl, '/traces', theme);
    await applyTheme(page, theme);
    await expect(rows(page).first()).toBeVisible();
    await shot(page, `list-${theme}`);
    await gotoPage(page, consoleUrl, `/traces?group=session`, theme);
    await applyTheme(page, theme);
    await page.locator(`[data-testid="trace-group"][data-group="${story.session}"] > button`).click();
    await expect(page.getByTestId('group-trace-row')).toHaveCount(2);
    await shot(page, `groups-${theme}`);
  }
});

test('group by message gathers the delivery of each queued order, and a group expands to its trace', async ({
  page,
  consoleUrl,
  stack,
}) => {
  // each POST /orders enqueues one fulfilment message; its delivery span carries eng.message.id
  const grouped = await call<{ groups: Array<{ value: string; trace_ids: string[] }> }>(stack, 'engine::traces::group_by', {
    attribute: 'eng.message.id',
  });
  const message = grouped.groups[0];
  expect(message?.trace_ids.length).toBeGreaterThanOrEqual(1);
  await gotoPage(page, consoleUrl, '/traces?group=message');
  const group = page.locator(`[data-testid="trace-group"][data-group="${message?.value}"]`);
  await expect(group).toBeVisible();
  await group.locator('> button').click();
  const traceRow = group.getByTestId('group-trace-row').first();
  await expect(traceRow).toHaveAttribute('data-trace-id', message?.trace_ids[0] as string);
  await traceRow.click();
  await expect(detail(page)).toBeVisible();
  await expect(page.getByTestId('waterfall-row').filter({ hasText: 'call fulfilment::ship' })).toHaveCount(1);
});

test('span detail tabs: info, attributes, events, logs, errors, baggage, links', async ({ page, consoleUrl }) => {
  await gotoPage(page, consoleUrl, `/traces?trace_id=${story.consumer.traceId}&span=${story.consumer.chargeId}`);
  const panel = page.getByTestId('span-panel');
  const tabs = panel.getByRole('tablist', { name: 'Span detail tabs' });
  await expect(panel.getByTestId('span-tab-info')).toContainText(story.consumer.chargeId);
  await expect(panel.getByTestId('span-tab-info')).toContainText('payments::charge');
  await tabs.getByRole('tab', { name: /Attributes/ }).click();
  await expect(panel.getByTestId('span-tab-attributes')).toContainText('function_id');
  await tabs.getByRole('tab', { name: /Events/ }).click();
  await expect(panel.getByTestId('span-tab-events')).toContainText('exception');
  await tabs.getByRole('tab', { name: /Logs/ }).click();
  // OTel log records of this span, read with engine::logs::list {trace_id, span_id}
  await expect(panel.getByTestId('span-logs')).toContainText('issuer declined the card');
  await expect(panel.getByTestId('span-logs')).toContainText('charging card 4242');
  await tabs.getByRole('tab', { name: /Errors/ }).click();
  await expect(panel.getByTestId('span-errors')).toContainText('card 4242 declined by issuer');
  await expect(panel.getByTestId('span-errors')).toContainText('at charge (payments.ts:41:11)');
  await expect(page).toHaveURL(/tab=errors/);

  // baggage of the producer's root span
  await gotoPage(page, consoleUrl, `/traces?trace_id=${story.producer.traceId}&span=${story.producer.rootId}&tab=baggage`);
  await expect(page.getByTestId('span-baggage')).toContainText('tenant');
  await expect(page.getByTestId('span-baggage')).toContainText('acme');
  await expect(page.getByTestId('span-tab-baggage')).toContainText(`00-${story.producer.traceId}-${story.producer.rootId}-01`);
  await expect(page.getByTestId('span-tab-baggage')).toContainText(story.session);
});

test('filters narrow the list, live in the URL and survive a reload', async ({ page, consoleUrl }) => {
  await gotoPage(page, consoleUrl, '/traces');
  await expect(rows(page).first()).toBeVisible();
  expect(await rows(page).count()).toBeGreaterThanOrEqual(5);
  // earlier specs (queues) leave many failing traces, so compare totals, not the rows of one page
  const totalOf = async () => Number((await page.getByTestId('trace-total').innerText()).replace(/[^0-9]/g, ''));
  const all = await totalOf();

  // status: only the failing consumer trace is an error
  await page.getByRole('tablist', { name: 'Status' }).getByRole('tab', { name: 'Error' }).click();
  await expect(page).toHaveURL(/status=error/);
  await expect(row(page, story.consumer.traceId)).toBeVisible();
  await expect.poll(async () => (await rows(page).allInnerTexts()).every((text) => text.includes('Error'))).toBe(true);
  await expect(row(page, story.producer.traceId)).toHaveCount(0);
  expect(await totalOf()).toBeLessThan(all);
  await page.getByRole('tablist', { name: 'Status' }).getByRole('tab', { name: 'All' }).click();

  // service substring (matches any span of the trace), then survive a reload
  await page.getByRole('button', { name: 'Filters' }).click();
  await page.getByLabel('Service', { exact: true }).fill('gatew');
  await expect(page).toHaveURL(/service=gatew/);
  await expect(rows(page)).toHaveCount(2);
  await expect(row(page, story.producer.traceId)).toBeVisible();
  await expect(row(page, story.health.traceId)).toBeVisible();
  await page.reload();
  await expect(page.getByLabel('Service', { exact: true })).toHaveValue('gatew');
  await expect(rows(page)).toHaveCount(2);

  // + attribute pair (AND)
  await page.getByLabel('Attribute key').fill('http.route');
  await page.getByLabel('Attribute value').fill('/checkout');
  await page.getByRole('button', { name: 'Add', exact: true }).click();
  await expect(page.getByTestId('active-filters')).toContainText('http.route = /checkout');
  await expect(rows(page)).toHaveCount(1);
  await expect(row(page, story.producer.traceId)).toBeVisible();
  await page.reload();
  await expect(rows(page)).toHaveCount(1);
  await page.getByRole('button', { name: 'Remove filter http.route = /checkout' }).click();
  await expect(rows(page)).toHaveCount(2);

  // + duration bounds: the 3 ms health check is below 50 ms
  await page.getByLabel('Min duration (ms)').fill('50');
  await expect(rows(page)).toHaveCount(1);
  await expect(row(page, story.producer.traceId)).toBeVisible();
  await page.getByLabel('Min duration (ms)').fill('');
  await page.getByLabel('Max duration (ms)').fill('10');
  // both edits are committed after the input debounce (the one row left before could pass for it)
  await expect(page).toHaveURL(/max=10/);
  await expect(page).not.toHaveURL(/min=/);
  await expect(rows(page)).toHaveCount(1);
  await expect(row(page, story.health.traceId)).toBeVisible();
  await page.getByText('Clear all').click();
  await expect(page).not.toHaveURL(/service=|max=/);

  // Clear all also drops what was typed but not committed yet: it does not come back after the debounce
  await page.getByLabel('Min duration (ms)').fill('50');
  await expect(page).toHaveURL(/min=50/);
  await page.getByLabel('Max duration (ms)').fill('20');
  await page.getByText('Clear all').click();
  await page.waitForTimeout(800);
  await expect(page).not.toHaveURL(/min=|max=/);
  await expect(page.getByLabel('Max duration (ms)')).toHaveValue('');
  await expect(row(page, story.producer.traceId)).toBeVisible();

  // span name (operation) substring and exact trace id
  await page.getByLabel('Span name', { exact: true }).fill('cart::pri');
  await expect(rows(page)).toHaveCount(1);
  await expect(row(page, story.producer.traceId)).toBeVisible();
  await page.getByLabel('Span name', { exact: true }).fill('');
  await page.getByLabel('Trace ID', { exact: true }).fill(story.consumer.traceId);
  await expect(rows(page)).toHaveCount(1);
  await expect(row(page, story.consumer.traceId)).toBeVisible();
  await page.getByLabel('Trace ID', { exact: true }).fill('');

  // debounced free-text search over span names, services and ids
  await page.getByPlaceholder('Search spans, services, ids…').fill('payments::charge');
  await expect(page).toHaveURL(/q=payments/);
  await expect(row(page, story.consumer.traceId)).toBeVisible();
  await expect(row(page, story.health.traceId)).toHaveCount(0);

  // a time range that ends before the story (custom, in the URL) leaves nothing
  await gotoPage(page, consoleUrl, `/traces?range=custom&from=${Date.now() - 3_600_000}&to=${Date.now() - 1_800_000}`);
  await expect(page.getByText('No traces match these filters')).toBeVisible();
  await gotoPage(page, consoleUrl, '/traces?range=15m&sort=duration&order=desc');
  await expect(page.getByLabel('Time range')).toHaveValue('15m');
  // longest first: the consumer (260 ms) before the producer (180 ms), once the list has loaded
  await expect(row(page, story.consumer.traceId)).toBeVisible();
  await expect(row(page, story.producer.traceId)).toBeVisible();
  const ids = await rows(page).evaluateAll((els) => els.map((el) => el.getAttribute('data-trace-id')));
  expect(ids.indexOf(story.consumer.traceId)).toBeLessThan(ids.indexOf(story.producer.traceId));
});

test('group by session lists groups and loads a group only when it opens', async ({ page, consoleUrl }) => {
  const groupCalls: string[] = [];
  page.on('websocket', (ws) =>
    ws.on('framesent', (frame) => {
      const text = String(frame.payload);
      if (text.includes('engine::traces::list') && text.includes('trace_ids')) groupCalls.push(text);
    }),
  );
  await gotoPage(page, consoleUrl, '/traces');
  await page.getByLabel('Group by').selectOption('session');
  await expect(page).toHaveURL(/group=session/);
  const group = page.locator(`[data-testid="trace-group"][data-group="${story.session}"]`);
  await expect(group).toContainText('2 traces');
  await expect(group).toContainText('1 error');
  await expect(page.getByTestId('trace-group').filter({ hasText: 'sess-beta' }).first()).toBeVisible();
  expect(groupCalls).toHaveLength(0);
  await expect(page.getByTestId('group-traces')).toHaveCount(0);
  await group.locator('> button').click();
  await expect(group.getByTestId('group-trace-row')).toHaveCount(2);
  expect(groupCalls.length).toBeGreaterThan(0);
  // the span tree of one trace, fetched when asked for
  await group
    .locator(`[data-trace-id="${story.producer.traceId}"]`)
    .locator('xpath=..')
    .getByRole('button', { name: 'Show span tree' })
    .click();
  await expect(group.getByTestId('group-span-tree')).toContainText('call cart::price');
  await group.getByTestId('group-span-tree').getByText('call state::get').click();
  await expect(detail(page)).toHaveAttribute('data-trace-id', story.producer.traceId);
  await expect(page.getByTestId('span-panel')).toContainText('call state::get');
});

test('the critical-path breadcrumb selects spans and jumps to the parent in another trace', async ({ page, consoleUrl }) => {
  await gotoPage(page, consoleUrl, `/traces?trace_id=${story.producer.traceId}`);
  const crumbs = page.getByTestId('critical-path').getByTestId('crumb');
  await expect(crumbs).toHaveText([/POST \/checkout/, /call cart::price/, /call state::get/]);
  await crumbs.nth(2).click();
  await expect(page.getByTestId('span-panel')).toContainText('call state::get');
  await expect(page).toHaveURL(/span=[0-9a-f]{16}/);

  // the consumer's root links to the producer's enqueue span: the origin crumb opens that trace
  await gotoPage(page, consoleUrl, `/traces?trace_id=${story.consumer.traceId}`);
  const origin = page.getByTestId('crumb-origin');
  await expect(origin).toContainText('enqueue payments');
  await origin.click();
  await expect(detail(page)).toHaveAttribute('data-trace-id', story.producer.traceId);
  await expect(page).toHaveURL(new RegExp(`span=${story.producer.enqueueId}`));
  await expect(page.getByTestId('span-panel')).toContainText('enqueue payments');
  // back returns to the consumer trace
  await page.goBack();
  await expect(detail(page)).toHaveAttribute('data-trace-id', story.consumer.traceId);
});

test('a span link to another trace opens that trace', async ({ page, consoleUrl }) => {
  await gotoPage(page, consoleUrl, `/traces?trace_id=${story.consumer.traceId}&span=${story.consumer.rootId}&tab=links`);
  const link = page.getByTestId('span-links').getByTestId('span-link');
  await expect(link).toContainText(`Open trace ${story.producer.traceId.slice(0, 12)}`);
  await link.click();
  await expect(detail(page)).toHaveAttribute('data-trace-id', story.producer.traceId);
  await expect(page.getByTestId('span-panel')).toHaveAttribute('data-span-id', story.producer.enqueueId);
});

test('live updates: new traces appear, held while hovering and while paused', async ({ page, consoleUrl }) => {
  await gotoPage(page, consoleUrl, '/traces?q=live-probe');
  await expect(page.getByText(/No traces match/)).toBeVisible();
  const send = async (name: string) => {
    const traceId = randomBytes(16).toString('hex');
    await postTrace(traceId, name);
    return traceId;
  };
  // pushed by the engine's `trace` trigger: no reload, no click
  const first = await send('live-probe one');
  await expect(row(page, first)).toBeVisible({ timeout: 8000 });

  // while the pointer is over the list the new row waits, then shows on leave
  await page.getByTestId('trace-table').hover();
  const second = await send('live-probe two');
  await expect(page.getByTestId('held-updates')).toBeVisible({ timeout: 8000 });
  await expect(row(page, second)).toHaveCount(0);
  await page.getByRole('heading', { name: 'Traces' }).hover();
  await expect(row(page, second)).toBeVisible();

  // paused: nothing moves until Resume
  await page.getByTestId('live-toggle').click();
  await expect(page.getByTestId('trace-summary')).toContainText('Paused');
  const third = await send('live-probe three');
  await expect(page.getByTestId('held-updates')).toHaveText('Paused — 1 new', { timeout: 8000 });
  await expect(row(page, third)).toHaveCount(0);
  await page.getByTestId('live-toggle').click();
  await expect(row(page, third)).toBeVisible({ timeout: 8000 });
});

test('page sizes 25/50/100 page through the list', async ({ page, consoleUrl }) => {
  for (let i = 0; i < 30; i++) await postTrace(randomBytes(16).toString('hex'), `paging-probe ${i}`);
  await gotoPage(page, consoleUrl, '/traces?q=paging-probe');
  await expect(rows(page)).toHaveCount(30);
  await page.getByLabel('Page size').selectOption('25');
  await expect(page).toHaveURL(/size=25/);
  await expect(rows(page)).toHaveCount(25);
  await expect(page.getByTestId('trace-pagination')).toContainText('1–25 of 30');
  await page.getByRole('button', { name: 'Next page' }).click();
  await expect(rows(page)).toHaveCount(5);
  await expect(page.getByTestId('trace-pagination')).toContainText('26–30 of 30');
  await page.reload();
  await expect(rows(page)).toHaveCount(5);
});

test('panels resize by dragging and reset on double-click', async ({ page, consoleUrl }) => {
  await gotoPage(page, consoleUrl, `/traces?trace_id=${story.producer.traceId}&span=${story.producer.rootId}`);
  const listPane = page.getByRole('region', { name: 'Trace list' });
  const handle = page.getByRole('separator', { name: 'Trace list panel' });
  const before = (await listPane.boundingBox())?.width ?? 0;
  const box = await handle.boundingBox();
  if (!box) throw new Error('no resize handle');
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + 120, box.y + box.height / 2, { steps: 5 });
  await page.mouse.up();
  const after = (await listPane.boundingBox())?.width ?? 0;
  expect(after).toBeGreaterThan(before + 80);
  await page.reload();
  expect((await listPane.boundingBox())?.width ?? 0).toBeCloseTo(after, -1);
  await handle.dblclick();
  expect((await listPane.boundingBox())?.width ?? 0).toBeCloseTo(before, -1);
  // the span panel has its own handle (beside the waterfall where both fit: a wide window)
  await page.setViewportSize({ width: 1920, height: 1000 });
  const panelHandle = page.getByRole('separator', { name: 'Span detail panel' });
  await expect(panelHandle).toHaveAttribute('aria-orientation', 'vertical');
  await expect(panelHandle).toBeVisible();
  const panel = page.getByTestId('span-panel');
  const w0 = (await panel.boundingBox())?.width ?? 0;
  await panelHandle.focus();
  await page.keyboard.press('ArrowLeft');
  await page.keyboard.press('ArrowLeft');
  expect((await panel.boundingBox())?.width ?? 0).toBeGreaterThan(w0 + 20);
  await panelHandle.dblclick();
  expect((await panel.boundingBox())?.width ?? 0).toBeCloseTo(w0, -1);
});

test('a 3,000-span trace opens in the virtualised waterfall and scrolls to its last span', async ({ page, consoleUrl }) => {
  const traceId = randomBytes(16).toString('hex');
  const rootId = randomBytes(8).toString('hex');
  const t0 = Date.now() - 10_000;
  const spans: SpanSpec[] = [{ service: 'bulk', name: 'bulk root', spanId: rootId, startMs: t0, durationMs: 6000, kind: 2 }];
  for (let i = 0; i < 30; i++) {
    const parent = randomBytes(8).toString('hex');
    spans.push({ service: `svc-${i % 5}`, name: `batch ${i}`, spanId: parent, parent: rootId, startMs: t0 + i * 150, durationMs: 140 });
    for (let j = 0; j < 99; j++) {
      spans.push({
        service: `svc-${j % 7}`,
        name: `item ${i}.${j}`,
        spanId: randomBytes(8).toString('hex'),
        parent,
        startMs: t0 + i * 150 + j,
        durationMs: 1,
      });
    }
  }
  expect(spans).toHaveLength(3001);
  const res = await fetch(`${httpBase}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(otlpTraces(traceId, spans)),
  });
  expect(res.status).toBe(200);

  await gotoPage(page, consoleUrl, '/traces');
  const started = Date.now();
  await page.goto(`${consoleUrl}/#/traces?trace_id=${traceId}`);
  await expect(page.getByTestId('waterfall-row').first()).toContainText('bulk root');
  const openMs = Date.now() - started;
  await expect(detail(page)).toContainText('3001 spans');
  // only the rows in view are in the DOM
  expect(await page.getByTestId('waterfall-row').count()).toBeLessThan(120);
  const scrollStarted = Date.now();
  await page.getByRole('tree', { name: 'Spans' }).evaluate((el) => el.scrollTo({ top: el.scrollHeight }));
  await expect(page.getByTestId('waterfall-row').filter({ hasText: 'item 29.98' })).toBeVisible();
  const scrollMs = Date.now() - scrollStarted;
  test
    .info()
    .annotations.push({ type: 'perf', description: `3001-span trace: opened in ${openMs} ms, scrolled to the end in ${scrollMs} ms` });
  console.log(`[traces perf] 3001-span trace: opened in ${openMs} ms, scrolled to the end in ${scrollMs} ms`);
  expect(openMs).toBeLessThan(8000);
});

test('empty states: no traces yet, and an engine that keeps none; Clear really clears', async ({ page }) => {
  const withMemory = await startEngine({ workersYaml: ENGINE_MODULES_YAML, env: { ENG_LOG_LEVEL: 'warn' } });
  const otlpOnly = await startEngine({
    workersYaml: ENGINE_MODULES_YAML.replace(
      '      logs_console_output: false',
      '      logs_console_output: false\n      exporter: otlp\n      endpoint: http://127.0.0.1:9',
    ),
    env: { ENG_LOG_LEVEL: 'warn' },
  });
  const consoleA = await startConsole([...consoleArgsFor(withMemory), '--no-otel']);
  const consoleB = await startConsole([...consoleArgsFor(otlpOnly), '--no-otel']);
  try {
    await gotoPage(page, consoleA.url, '/traces');
    await expect(page.getByText('No traces yet')).toBeVisible();
    await expect(page.getByText(/No traces — enable the observability exporter\s+memory/)).toBeVisible();
    await page.screenshot({ path: `${ARTIFACTS}traces-empty-dark.png` });

    const traceId = randomBytes(16).toString('hex');
    await postTrace(traceId, 'to be cleared', `http://127.0.0.1:${withMemory.ports.HTTP}`);
    await expect(row(page, traceId)).toBeVisible({ timeout: 8000 });
    await page.getByRole('button', { name: 'Clear', exact: true }).click();
    await page.getByRole('button', { name: 'Clear traces' }).click();
    await expect(page.getByText('No traces yet')).toBeVisible();
    await page.reload();
    await expect(page.getByText('No traces yet')).toBeVisible();

    await gotoPage(page, consoleB.url, '/traces');
    await expect(page.getByText('The engine keeps no traces')).toBeVisible();
  } finally {
    await consoleA.stop();
    await consoleB.stop();
    await withMemory.stop();
    await otlpOnly.stop();
  }
});

async function postTrace(traceId: string, name: string, base = httpBase): Promise<void> {
  const body = otlpTraces(traceId, [
    { service: 'probe', name, spanId: randomBytes(8).toString('hex'), startMs: Date.now() - 20, durationMs: 12, kind: 2 },
  ]);
  const res = await fetch(`${base}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
}
