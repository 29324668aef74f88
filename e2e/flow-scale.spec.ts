import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EngClient } from '@eng/sdk';
import type { Page } from '@playwright/test';
import { bigFunctionId, registerBigApp } from './fixtures/big-app.ts';
import { type LaunchedStack, launchedStackFixture } from './fixtures/launched-stack.ts';
import { type ConsoleProcess, consoleArgsFor, startConsole } from './fixtures/stack.ts';
import { ARTIFACTS, test as base, expect, gotoPage } from './fixtures/test.ts';

/**
 * Issue 19 §9 on both servers (the console worker `npm start` runs first, then eng-console
 * --enable-flow): the Dashboard's application flow has readable labels, lets the wheel scroll the
 * page until the graph is focused, and lists a flow too big to draw; the Flow page with 2,000
 * functions shows its first nodes in under a second and searches and filters them. Figures go to
 * e2e/artifacts/flow-scale.json.
 */
const test = base.extend<object, { ls: LaunchedStack }>({ ls: launchedStackFixture });
test.describe.configure({ timeout: 180_000 });

let flowConsole: ConsoleProcess | undefined;
test.afterAll(async () => {
  await flowConsole?.stop();
});

const figures: Record<string, unknown> = {};
test.afterAll(() => {
  writeFileSync(join(ARTIFACTS, 'flow-scale.json'), `${JSON.stringify(figures, null, 2)}\n`);
});

interface Server {
  name: string;
  url: string;
  bus: string;
}

async function servers(ls: LaunchedStack, stack: { engine: Parameters<typeof consoleArgsFor>[0] }): Promise<Server[]> {
  flowConsole ??= await startConsole([...consoleArgsFor(stack.engine), '--no-otel', '--enable-flow']);
  return [
    { name: 'console worker', url: ls.consoleUrl, bus: ls.engine.busUrl },
    { name: 'eng-console', url: flowConsole.url, bus: stack.engine.busUrl },
  ];
}

const scrollTop = (page: Page) => page.locator('main').evaluate((el) => el.scrollTop);
const transform = (page: Page) => page.getByTestId('app-flow').locator('.react-flow__viewport').getAttribute('style');

for (const serverName of ['console worker', 'eng-console']) {
  test(`Dashboard flow: readable labels, the wheel scrolls the page until the graph is focused (${serverName})`, async ({
    page,
    ls,
    stack,
  }) => {
    const server = (await servers(ls, stack)).find((s) => s.name === serverName) as Server;
    for (const theme of ['dark', 'light'] as const) {
      await gotoPage(page, server.url, '/', theme);
      const flow = page.getByTestId('app-flow');
      await expect(flow).toHaveAttribute('data-view', 'graph');
      await expect(flow.getByText('POST /orders')).toBeVisible();
      // every label at 11 px or more on screen: its font size times the graph's zoom
      const sizes = await flow.evaluate((el) => {
        const viewport = el.querySelector('.react-flow__viewport') as HTMLElement;
        const scale = Number(/scale\(([\d.]+)\)/.exec(viewport.style.transform)?.[1] ?? 1);
        return [...el.querySelectorAll('[data-testid="app-flow-node"] .truncate')].map(
          (t) => Number.parseFloat(getComputedStyle(t).fontSize) * scale,
        );
      });
      expect(sizes.length).toBeGreaterThanOrEqual(20);
      expect(Math.min(...sizes)).toBeGreaterThanOrEqual(11);
      await page.screenshot({ path: `${ARTIFACTS}dashboard-flow-${serverName.replace(' ', '-')}-${theme}.png`, fullPage: true });
    }

    // the wheel over an unfocused graph scrolls the page and leaves the graph alone
    const graph = page.getByTestId('app-flow-graph');
    await graph.scrollIntoViewIfNeeded();
    await page.locator('main').evaluate((el) => el.scrollTo(0, el.scrollHeight / 4));
    const box = await graph.boundingBox();
    if (!box) throw new Error('graph not laid out');
    const before = { scroll: await scrollTop(page), view: await transform(page) };
    await page.mouse.move(box.x + box.width / 2, box.y + Math.min(box.height / 2, 200));
    await page.mouse.wheel(0, 240);
    await expect.poll(() => scrollTop(page)).toBeGreaterThan(before.scroll);
    expect(await transform(page)).toBe(before.view);
    await expect(graph).toHaveAttribute('data-active', 'false');
    await expect(graph).toContainText('Click the graph to zoom and pan');

    // focused (a click on its background, left of the centred nodes), the wheel zooms it and the page stays put
    await graph.evaluate((el) => el.scrollIntoView({ block: 'start' }));
    const pane = await graph.boundingBox();
    if (!pane) throw new Error('graph not laid out');
    await page.mouse.click(pane.x + 12, pane.y + 40);
    await expect(graph).toHaveAttribute('data-active', 'true');
    await expect(graph).toContainText('Wheel zooms');
    const focused = { scroll: await scrollTop(page), view: await transform(page) };
    await page.mouse.move(pane.x + pane.width / 2, pane.y + Math.min(pane.height / 2, 200));
    await page.mouse.wheel(0, -240);
    await expect.poll(() => transform(page)).not.toBe(focused.view);
    expect(await scrollTop(page)).toBe(focused.scroll);
    // Esc gives the wheel back to the page
    await page.keyboard.press('Escape');
    await expect(graph).toHaveAttribute('data-active', 'false');
    const released = await scrollTop(page);
    await page.mouse.wheel(0, 240);
    await expect.poll(() => scrollTop(page)).toBeGreaterThan(released);
  });
}

/** From a click on the Flow entry to the first node on screen, measured in the page. */
async function openFlowMs(page: Page): Promise<number> {
  return page.evaluate(async () => {
    const t0 = performance.now();
    (document.querySelector('nav a[href$="#/flow"]') as HTMLAnchorElement).click();
    await new Promise<void>((resolve) => {
      const check = () => (document.querySelector('[data-testid="flow-node"]') ? resolve() : requestAnimationFrame(check));
      check();
    });
    return performance.now() - t0;
  });
}

for (const serverName of ['console worker', 'eng-console']) {
  test(`2,000 functions: the Dashboard lists the flow, Flow opens in under a second and searches (${serverName})`, async ({
    page,
    ls,
    stack,
  }) => {
    const server = (await servers(ls, stack)).find((s) => s.name === serverName) as Server;
    let worker: EngClient | undefined;
    try {
      worker = await registerBigApp(server.bus, { functions: 2000 });
      await gotoPage(page, server.url, '/', 'dark');
      await expect(page.getByTestId('counter-functions').locator('[data-value]')).toHaveAttribute('data-value', /^20\d\d$/, {
        timeout: 30_000,
      });

      // Dashboard: 1,800 triggers are a list, grouped, 25 rows a group until "Show all", filterable
      const flow = page.getByTestId('app-flow');
      // the Dashboard has just heard 2,000 registrations arrive: give it time to settle
      await expect(flow).toHaveAttribute('data-view', 'list', { timeout: 30_000 });
      await expect(page.getByTestId('app-flow-list-reason')).toBeVisible();
      const http = page.getByTestId('app-flow-group-http');
      await expect(http.getByTestId('app-flow-row')).toHaveCount(25);
      await expect(http.getByRole('button', { name: 'Show all 1003' })).toBeVisible();
      await flow.getByRole('searchbox').fill(bigFunctionId(1234));
      await expect(flow.getByTestId('app-flow-row')).toHaveCount(1);
      await expect(flow.getByTestId('app-flow-row')).toContainText('/bulk/1234');
      await page.screenshot({ path: `${ARTIFACTS}dashboard-flow-list-${serverName.replace(' ', '-')}.png`, fullPage: true });
      await flow.getByRole('searchbox').fill('');

      // Flow: three visits from the Dashboard, median time to the first nodes
      const runs: number[] = [];
      for (let i = 0; i < 3; i++) {
        if (i > 0) {
          await page.getByRole('navigation', { name: 'Main navigation' }).getByRole('link', { name: 'Dashboard' }).click();
          await expect(page.getByTestId('app-flow')).toBeVisible();
        }
        runs.push(await openFlowMs(page));
      }
      const median = [...runs].sort((a, b) => a - b)[1] as number;
      const dom = await page.evaluate(() => ({
        nodes: document.querySelectorAll('[data-testid="flow-node"]').length,
        edges: document.querySelectorAll('.react-flow__edge').length,
        heapMb: Math.round(((performance as unknown as { memory?: { usedJSHeapSize: number } }).memory?.usedJSHeapSize ?? 0) / 1e6),
      }));
      // the overview: one node per namespace, routes and schedules grouped
      await expect(page.getByTestId('flow-counts')).toContainText('a large graph, shown by namespace');
      await expect(page.locator('[data-testid="flow-node"][data-group]').first()).toBeVisible();
      await page.screenshot({ path: `${ARTIFACTS}flow-2000-overview-${serverName.replace(' ', '-')}.png` });

      // search: from typing to the narrowed graph on screen (300 ms of it is the typing debounce)
      const t0 = Date.now();
      await page.getByRole('searchbox', { name: /Search nodes/ }).fill(bigFunctionId(1234));
      await expect(page.locator(`.react-flow__node[data-id="fn:${bigFunctionId(1234)}"]`)).toBeVisible();
      const searchMs = Date.now() - t0;
      await expect(page.getByTestId('flow-counts')).toContainText('showing');
      await expect(page).toHaveURL(/q=bulk24/);
      // its route, its topic or schedule and its scope come with it
      await expect(page.locator('[data-testid="flow-node"][data-kind="http"]')).toHaveCount(1);
      await page.screenshot({ path: `${ARTIFACTS}flow-2000-search-${serverName.replace(' ', '-')}.png` });

      // a kind chip: every queue with what feeds it and what it calls
      await page.getByRole('searchbox', { name: /Search nodes/ }).fill('');
      await page.getByTestId('flow-kind-filter').getByRole('button', { name: 'Queue' }).click();
      await expect(page).toHaveURL(/kinds=.*queue/);
      await expect(page.getByTestId('flow-counts')).toContainText('21 matches');

      // a group of the overview opens its namespace
      await page.getByTestId('flow-kind-filter').getByRole('button', { name: 'Queue' }).click();
      await expect(page.getByTestId('flow-counts')).toContainText('shown by namespace');
      // a namespace's group counts its connected functions; the ones called directly with no
      // store declared (a tenth, less a third of those) are in the worker's pack (issue 25 item 8)
      await expect(page.getByRole('switch', { name: 'Show unconnected (133)' })).toBeVisible();
      const group = page.locator('[data-testid="flow-node"][data-kind="function"][data-node-id^="ns:bulk"]').first();
      const ns = ((await group.getAttribute('data-node-id')) ?? '').replace(/^ns:/, '');
      expect(ns).toMatch(/^bulk\d\d$/);
      expect(Number(await group.getAttribute('data-group'))).toBeGreaterThanOrEqual(45);
      await group.click();
      await expect(page).toHaveURL(new RegExp(`q=${ns}(%3A%3A|::)`));
      // all its 50 functions, packed ones too, with their 25 routes and 5 schedules (which carry the function id) match
      await expect(page.getByTestId('flow-counts')).toContainText('80 matches');
      await expect(page.locator('[data-testid="flow-node"][data-kind="function"]')).toHaveCount(50);
      await expect(
        page.locator(`.react-flow__node[data-id="fn:${ns}::fn${String(Number(ns.slice(4)) * 50).padStart(5, '0')}"]`),
      ).toBeAttached();

      figures[serverName] = { flow_first_nodes_ms: runs.map(Math.round), median_ms: Math.round(median), ...dom, search_ms: searchMs };
      test.info().annotations.push({
        type: `Flow with 2,000 functions (${serverName})`,
        description: `first nodes ${runs.map(Math.round).join(' / ')} ms (median ${Math.round(median)}), ${dom.nodes} nodes and ${dom.edges} edges in the DOM, JS heap ${dom.heapMb} MB; search ${searchMs} ms`,
      });
      // under a second (issue 19 §9) once the page's code is loaded; the first visit also fetches
      // and compiles it. The median bound catches a regression (it was 10 s) without failing on a
      // busy 2-core machine; the figures above are what the report quotes.
      expect(Math.min(...runs)).toBeLessThan(1000);
      expect(median).toBeLessThan(2000);
      expect(searchMs).toBeLessThan(2500);
    } finally {
      await worker?.close();
    }
  });
}
