import { connect, type EngClient } from '@eng/sdk';
import type { Page } from '@playwright/test';
import { DIST_DIR } from '../packages/web/scripts/build.ts';
import { call, createOrder, randomTag } from './fixtures/engine-client.ts';
import { startLaunchedStack } from './fixtures/launched-stack.ts';
import { consoleArgsFor, type Stack, startConsole, startStack } from './fixtures/stack.ts';
import { ARTIFACTS, test as base, expect, gotoPage } from './fixtures/test.ts';

/**
 * Issue 25 items 14 and 15, as a person on their first day sees them: the dashboard's counters are
 * one snapshot (never "Functions 77, Triggers 0, Workers 0" while the engine shuts down), nothing on
 * it is cut off, the Streams tab and its Total agree, no search box cuts its placeholder, cron's
 * next runs are all ahead, the span panel leaves the timeline readable, cron traces name their
 * function, the live trace list holds still under the pointer and says how many traces wait, and
 * the Functions list shows the application before the platform's own workers.
 *
 * `E2E_WEB_DIR` serves another build of the UI (e.g. one made from an older commit, to see these
 * tests fail there); by default the one the global setup built.
 */
const WEB_DIR = process.env.E2E_WEB_DIR ?? DIST_DIR;

const test = base.extend<object, { stack: Stack }>({
  stack: [
    // biome-ignore lint/correctness/noEmptyPattern: Playwright fixture signature
    async ({}, use) => {
      const stack = await startStack({ consoleEnv: { ENG_CONSOLE_WEB_DIR: WEB_DIR } });
      await use(stack);
      await stack.stop();
    },
    { scope: 'worker', timeout: 90_000 },
  ],
});
test.describe.configure({ timeout: 120_000 });

const SHOTS = `${ARTIFACTS}first-day/`;
const THEMES = ['light', 'dark'] as const;
const WIDTHS = [1440, 390] as const;

async function shoot(page: Page, name: string, width: number): Promise<void> {
  for (const theme of THEMES) {
    await page.evaluate((t) => document.documentElement.setAttribute('data-theme', t), theme);
    await page.waitForTimeout(400); // colours ease over 150 ms: shoot the settled theme
    await page.screenshot({ path: `${SHOTS}${name}-${theme}-${width}.png` });
  }
  await page.evaluate(() => document.documentElement.setAttribute('data-theme', 'dark'));
}

/** Elements (by description) whose text is cut: wider than their box, or reaching past it. */
function cutText(page: Page, selector: string): Promise<string[]> {
  return page.evaluate((sel) => {
    const out: string[] = [];
    for (const el of document.querySelectorAll<HTMLElement>(sel)) {
      if (!el.offsetParent) continue;
      const box = el.getBoundingClientRect();
      const parent = el.parentElement?.getBoundingClientRect();
      const outside = parent ? box.right > parent.right + 0.5 || box.left < parent.left - 0.5 : false;
      if (el.scrollWidth > el.clientWidth + 0.5 || outside) out.push(`${el.textContent} (${el.scrollWidth} > ${el.clientWidth})`);
    }
    return out;
  }, selector);
}

/**
 * Inputs whose visible placeholder does not fit: `"text" needs 179 px, has 178`. What is visible is
 * the native placeholder, or the short form a narrow search box draws over the field instead
 * (`[data-placeholder-fit]`, the native one then transparent).
 */
function cutPlaceholders(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const ctx = document.createElement('canvas').getContext('2d') as CanvasRenderingContext2D;
    const out: string[] = [];
    for (const el of document.querySelectorAll<HTMLInputElement>('input[placeholder]')) {
      if (!el.offsetParent || !el.placeholder || el.value) continue;
      const drawn = el.parentElement?.querySelector<HTMLElement>('[data-placeholder-fit]');
      const cs = getComputedStyle(el);
      ctx.font = `${cs.fontStyle} ${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
      const text = drawn ? (drawn.textContent ?? '') : el.placeholder;
      const needs = ctx.measureText(text).width;
      const has = drawn ? drawn.clientWidth : el.clientWidth - Number.parseFloat(cs.paddingLeft) - Number.parseFloat(cs.paddingRight);
      if (needs > has + 0.5) out.push(`"${text}" needs ${needs.toFixed(0)} px, has ${has.toFixed(0)}`);
      // the native text hidden under a drawn one must really be hidden
      if (drawn && getComputedStyle(el, '::placeholder').color !== 'rgba(0, 0, 0, 0)')
        out.push(`"${el.placeholder}" shows under "${text}"`);
    }
    return out;
  });
}

test('Dashboard: the trigger breakdown and the chart labels are never cut, at 1440 and 390 px', async ({ page, consoleUrl, stack }) => {
  const triggers = await call<{ registered_triggers: Array<{ trigger_type: string; function_id: string }> }>(
    stack,
    'engine::registered-triggers::list',
    {},
  );
  expect(triggers.registered_triggers.length).toBeGreaterThanOrEqual(8);
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    await gotoPage(page, consoleUrl, '/');
    const card = page.getByTestId('counter-triggers');
    await expect(card.locator('[data-value]')).not.toHaveAttribute('data-value', '');
    // every kind the orders demo binds is named in full
    for (const kind of ['HTTP', 'Cron', 'Event', 'Queue', 'State', 'Stream']) await expect(card).toContainText(kind);
    // each card's line under its number
    expect(await cutText(page, '[data-testid^="counter-"] > div:last-child')).toEqual([]);
    // the time axis: no label reaches past the chart
    for (const chart of ['chart-invocations', 'chart-errors']) {
      await expect(page.getByTestId(chart).getByRole('img')).toHaveAttribute('data-clipped-labels', '0');
    }
    await shoot(page, 'dashboard', width);
  }
});

test('Dashboard: while an engine that launched its workers shuts down, the cards never mix two moments', async ({ page }) => {
  // `npm start`'s shape: the engine launches the orders demo and the console worker and stops them
  // first when it stops; eng-console keeps the page connected to watch the whole shutdown
  const ls = await startLaunchedStack();
  const eng = await startConsole([...consoleArgsFor(ls.engine), '--no-otel'], { ENG_CONSOLE_WEB_DIR: WEB_DIR });
  try {
    // every moment the shutdown can pass through: the counts without any subset of the worker processes
    const lists = {
      functions: (
        await call<{ functions: Array<{ function_id: string; kind: string; worker_id: string | null; metadata: unknown }> }>(
          ls.asStack,
          'engine::functions::list',
          { include_internal: true },
        )
      ).functions,
      triggers: (
        await call<{ registered_triggers: Array<{ function_id: string; trigger_type: string; worker_id: string | null }> }>(
          ls.asStack,
          'engine::registered-triggers::list',
          { include_internal: true },
        )
      ).registered_triggers,
      workers: (
        await call<{ workers: Array<{ id: string; name: string; runtime: string | null }> }>(ls.asStack, 'engine::workers::list', {})
      ).workers,
    };
    const processes = lists.workers.filter((w) => w.runtime !== 'engine');
    const isSystemFn = (f: (typeof lists.functions)[number]) =>
      f.kind === 'internal' || (f.metadata as { internal?: boolean } | null)?.internal === true || f.function_id.startsWith('engine::');
    const isSystemTrigger = (t: (typeof lists.triggers)[number]) =>
      t.function_id.startsWith('engine::') || t.trigger_type.startsWith('engine::');
    const isUi = (id: string) => id.startsWith('eng.ui::') || id.startsWith('eng.ui.');
    const moments = new Set<string>();
    for (let mask = 0; mask < 1 << processes.length; mask++) {
      const gone = new Set(processes.filter((_, i) => mask & (1 << i)).map((w) => w.id));
      const f = lists.functions.filter((x) => !isSystemFn(x) && !isUi(x.function_id) && !(x.worker_id && gone.has(x.worker_id))).length;
      const t = lists.triggers.filter((x) => !isSystemTrigger(x) && !isUi(x.function_id) && !(x.worker_id && gone.has(x.worker_id))).length;
      moments.add(`${f}/${t}/${processes.length - gone.size}`);
    }

    await gotoPage(page, eng.url, '/');
    const counters = page.getByTestId('dashboard-counters');
    await expect(page.getByTestId('counter-workers').locator('[data-value]')).toHaveAttribute('data-value', String(processes.length));
    // every state the cards are drawn in, from now on, recorded in the page (no sampling gaps)
    await page.evaluate(() => {
      const seen: string[] = [];
      const value = (name: string) =>
        document.querySelector(`[data-testid="counter-${name}"] [data-value]`)?.getAttribute('data-value') ?? '';
      const record = () => {
        const tuple = `${value('functions')}/${value('triggers')}/${value('workers')}`;
        if (seen.at(-1) !== tuple) seen.push(tuple);
      };
      record();
      new MutationObserver(record).observe(document.body, { subtree: true, attributes: true, childList: true, characterData: true });
      (window as unknown as { seenCounters: string[] }).seenCounters = seen;
    });
    const initial = await page.evaluate(() => (window as unknown as { seenCounters: string[] }).seenCounters[0]);
    expect(moments.has(initial as string)).toBe(true);

    await ls.engine.stop();
    await expect(page.getByTestId('stale-marker')).toBeVisible({ timeout: 20_000 });
    await page.waitForTimeout(1500); // past any refetch the shutdown set off
    const seen = await page.evaluate(() => (window as unknown as { seenCounters: string[] }).seenCounters);
    // each drawn state is one the engine was in; a mix (functions of one moment, workers of another) is not
    expect(
      seen.filter((tuple) => !moments.has(tuple)),
      `drawn: ${seen.join(' → ')}; possible: ${[...moments].join(', ')}`,
    ).toEqual([]);
    // and the outage keeps the set from before the shutdown on screen, marked stale
    await expect(counters).toHaveAttribute('data-stale', 'true');
    expect(seen.at(-1)).toBe(initial);
    await shoot(page, 'dashboard-outage', 1440);
  } finally {
    await eng.stop();
    await ls.stop();
  }
});

test('Streams: the Live monitor tab counts what Total counts, and the subscriptions are counted by name', async ({
  page,
  consoleUrl,
  stack,
}) => {
  await createOrder(stack, { sku: `STREAM-${randomTag()}` }); // orders/live exists
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    await gotoPage(page, consoleUrl, '/streams');
    const total = page.getByTestId('counter-total');
    const tab = page.getByRole('tab', { name: /Live monitor/ });
    // the monitor's own "connected" message is one, with no subscription yet
    await expect(total).not.toHaveAttribute('data-value', '0');
    const agree = async () => (await tab.textContent())?.replace(/\D/g, '') === (await total.getAttribute('data-value'));
    await expect.poll(agree).toBe(true);
    await expect(page.getByTestId('subscription-count')).toHaveText('No subscriptions');
    if (width === 1440) {
      await page.locator('[data-testid="stream-row"][data-stream="orders"][data-group="live"]').getByTestId('stream-subscribe').click();
      await expect(page.getByTestId('subscription-count')).toHaveText('1 subscription:');
      await createOrder(stack, { sku: `STREAM-${randomTag()}` });
      await expect(page.locator('[data-testid="monitor-message"][data-event="create"]').first()).toBeVisible();
      await expect.poll(agree).toBe(true);
    }
    await shoot(page, 'streams', width);
    if (width === 1440)
      await page.locator('[data-testid="stream-row"][data-stream="orders"][data-group="live"]').getByTestId('stream-subscribe').click();
  }
});

test('every search box shows its whole placeholder (or a shorter one that fits), on every page at 1440 and 390 px', async ({
  page,
  consoleUrl,
}) => {
  const routes = ['/', '/functions', '/triggers', '/workers', '/states', '/streams', '/queues', '/traces', '/logs'];
  const cut: string[] = [];
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    await gotoPage(page, consoleUrl, '/');
    for (const route of routes) {
      await page.goto(`${consoleUrl}/#${route}`);
      await expect(page.locator('main h1')).toBeVisible();
      await page.evaluate(() => document.fonts.ready);
      await page.waitForTimeout(500); // lists and their toolbars render
      for (const problem of await cutPlaceholders(page)) cut.push(`${width} ${route}: ${problem}`);
    }
  }
  expect(cut).toEqual([]);
  // a narrowed box keeps the full text as its name
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.goto(`${consoleUrl}/#/streams`);
  await expect(page.getByRole('searchbox', { name: 'Search messages…' })).toBeVisible();
});

test('Cron: the next runs are always ahead of now, also after the first one passed', async ({ page, consoleUrl, stack }) => {
  const tag = randomTag();
  const worker: EngClient = connect(stack.engine.busUrl, { name: 'e2e-cron-clock' });
  worker.registerFunction(`e2e::tick_${tag}`, () => null);
  worker.registerTrigger({ type: 'cron', function_id: `e2e::tick_${tag}`, config: { expression: '*/4 * * * * *' } });
  await worker.ready();
  try {
    await gotoPage(page, consoleUrl, '/triggers?type=cron');
    await page.locator('[data-trigger-id]', { hasText: `e2e::tick_${tag}` }).click();
    const runs = page.getByTestId('cron-next-runs').locator('li');
    await expect(runs).toHaveCount(5);
    // for 10 s, through at least two firings: five runs, every one still ahead (give or take the
    // moment a render takes), none "now"
    const until = Date.now() + 10_000;
    while (Date.now() < until) {
      const texts = await runs.allTextContents();
      expect(texts).toHaveLength(5);
      expect(texts.filter((t) => !/in \d+s$/.test(t))).toEqual([]);
      const ahead = await page
        .getByTestId('cron-next-run')
        .evaluateAll((items) => items.map((li) => Number(li.getAttribute('data-at')) - Date.now()));
      expect(ahead.filter((ms) => ms < -100)).toEqual([]);
      await page.waitForTimeout(400);
    }
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      await shoot(page, 'cron-panel', width);
    }
  } finally {
    await worker.close();
  }
});

test('Traces: a cron trace names its function; with a span open at 1440 px the timeline keeps a readable width', async ({
  page,
  consoleUrl,
  stack,
}) => {
  const { registered_triggers } = await call<{ registered_triggers: Array<{ id: string; trigger_type: string; function_id: string }> }>(
    stack,
    'engine::registered-triggers::list',
    {},
  );
  const cron = registered_triggers.find((t) => t.trigger_type === 'cron' && t.function_id === 'reports::hourly_summary');
  expect(cron).toBeTruthy();
  await call(stack, 'eng::cron::trigger_now', { trigger_id: cron?.id });

  await gotoPage(page, consoleUrl, '/traces?q=cron_trigger');
  const row = page.getByTestId('trace-row').filter({ hasText: 'cron_trigger' }).first();
  await expect(row).toContainText('reports::hourly_summary');
  await row.click();
  await expect(page.getByTestId('trace-detail').getByRole('heading', { level: 2 })).toHaveText('cron_trigger · reports::hourly_summary');
  // the root span open in the panel
  await page.getByTestId('waterfall-row').first().click();
  await expect(page.getByTestId('span-panel')).toBeVisible();
  const timeline = async () =>
    page.evaluate(() => {
      const waterfall = document.querySelector('[data-testid="waterfall"]')?.getBoundingClientRect();
      const nameEdge = document.querySelector('[role="separator"][aria-label="Span name column"]')?.getBoundingClientRect();
      // the bars run from the name column's handle to the duration gutter (3.5rem) at the right
      return waterfall && nameEdge ? Math.round(waterfall.right - 56 - nameEdge.right) : 0;
    });
  expect(await timeline()).toBeGreaterThanOrEqual(360);
  // the panel itself stays usable, and its handle resizes it
  const panelBox = await page.getByTestId('span-panel').boundingBox();
  expect(panelBox?.width ?? 0).toBeGreaterThanOrEqual(400);
  expect(panelBox?.height ?? 0).toBeGreaterThanOrEqual(200);
  const handle = page.getByRole('separator', { name: 'Span detail panel' });
  await handle.focus();
  await page.keyboard.press('ArrowUp');
  await page.keyboard.press('ArrowUp');
  await expect
    .poll(async () => (await page.getByTestId('span-panel').boundingBox())?.height ?? 0)
    .toBeGreaterThan((panelBox?.height ?? 0) + 20);
  await handle.dblclick();
  await expect
    .poll(async () => Math.round((await page.getByTestId('span-panel').boundingBox())?.height ?? 0))
    .toBe(Math.round(panelBox?.height ?? 0));
  await shoot(page, 'trace-span-panel', 1440);
  // a phone: the panel covers the trace, the timeline is not squeezed beside it
  await page.setViewportSize({ width: 390, height: 844 });
  await expect(page.getByTestId('span-panel')).toBeVisible();
  await shoot(page, 'trace-span-panel', 390);
});

test('Traces: the live list holds still under the pointer, says how many traces wait, and shows them on leave', async ({
  page,
  consoleUrl,
  stack,
}) => {
  const sku = `HOVER-${randomTag()}`;
  for (let i = 0; i < 4; i++) await createOrder(stack, { sku });
  // only the orders' own traces: the demo's cron firing every 30 s would add to the count
  await gotoPage(page, consoleUrl, `/traces?q=${encodeURIComponent('POST /orders')}`);
  const ids = () => page.getByTestId('trace-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-trace-id')));
  await expect(page.getByTestId('trace-row').nth(3)).toBeVisible();
  await page.waitForTimeout(1000); // the list settles after the first pushes
  await page.getByTestId('trace-row').nth(2).hover();
  const before = await ids();
  for (let i = 0; i < 3; i++) await createOrder(stack, { sku });
  const held = page.getByTestId('held-updates');
  await expect(held).toHaveText('Paused — 3 new', { timeout: 10_000 });
  await expect(held).toHaveAttribute('title', /while the pointer is over it/);
  // nothing moved under the pointer meanwhile
  expect(await ids()).toEqual(before);
  await shoot(page, 'traces-held', 1440);
  await page.mouse.move(page.viewportSize()?.width ?? 0, 5);
  await page.getByRole('heading', { level: 1, name: 'Traces' }).hover();
  await expect(held).toBeHidden();
  const after = await ids();
  expect(after.slice(3, 3 + before.length - 3)).toEqual(before.slice(0, before.length - 3));
});

test('Functions: the application’s functions come first, the platform workers’ wait in one collapsed section that search still reaches', async ({
  page,
  consoleUrl,
  stack,
}) => {
  // the chat stack's and console's namespaces, as their workers register them
  const platform: EngClient = connect(stack.engine.busUrl, { name: 'session-manager' });
  const ids = ['session::list', 'session::create', 'harness::send', 'router::generate', 'approval::decide', 'context::compact'];
  for (const id of ids) platform.registerFunction(id, () => null, { description: `platform ${id}` });
  await platform.ready();
  try {
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      await gotoPage(page, consoleUrl, '/functions');
      const list = page.getByTestId('function-scroller');
      await expect(list.locator('[data-function-id="orders::create"]')).toBeVisible();
      // the first rows are the application's
      expect(ids).not.toContain(await list.locator('[data-function-id]').first().getAttribute('data-function-id'));
      // the end of the (virtualised) list
      await list.evaluate((el) => el.scrollTo({ top: el.scrollHeight }));
      const section = page.getByTestId('function-section-platform');
      await expect(section).toHaveAttribute('aria-expanded', 'false');
      await expect(section).toContainText(String(ids.length));
      await expect(list.locator('[data-function-id="session::list"]')).toHaveCount(0);
      // the section sits below every application function
      const sectionTop = (await section.boundingBox())?.y ?? 0;
      const lastAppTop = (await list.locator('[data-function-id="reports::hourly_summary"]').boundingBox())?.y ?? Number.POSITIVE_INFINITY;
      expect(sectionTop).toBeGreaterThan(lastAppTop);
      await shoot(page, 'functions', width);
    }
    // search finds what the collapsed section holds
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.getByRole('searchbox', { name: 'Search functions by id or description' }).fill('session::');
    await expect(page.locator('[data-function-id="session::list"]')).toBeVisible();
    await expect(page.locator('[data-function-id="session::create"]')).toBeVisible();
    await page.getByRole('searchbox', { name: 'Search functions by id or description' }).fill('');
    // and a click opens it
    await page.getByTestId('function-section-platform').click();
    await expect(page.getByTestId('function-section-platform')).toHaveAttribute('aria-expanded', 'true');
    await page.getByTestId('function-scroller').evaluate((el) => el.scrollTo({ top: el.scrollHeight }));
    await expect(page.locator('[data-function-id="harness::send"]')).toBeVisible();
    await expect(page.locator('[data-function-id="session::list"]')).toBeVisible();
    await shoot(page, 'functions-platform-open', 1440);
  } finally {
    await platform.close();
  }
});
