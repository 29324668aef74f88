import { connect, type EngClient } from '@eng/sdk';
import type { Locator, Page } from '@playwright/test';
import { type EngineProcess, startEngine } from '../test/harness.ts';
import { type ChatStack, startChatStack } from './fixtures/chat-stack.ts';
import { type ConsoleProcess, consoleArgsFor, ENGINE_MODULES_YAML, type Stack, startConsole, startStack } from './fixtures/stack.ts';
import { ARTIFACTS, expect, gotoPage, test } from './fixtures/test.ts';

/**
 * Issue 25 item 8, "Flow is unreadable by default": with the orders demo and the chat stack on one
 * engine (~80 nodes, most of them chat functions nothing triggers), the Flow page opens on the
 * connected graph (triggers → functions → stores) at a size a person can read; the functions with
 * no trigger and no known relation are packed by worker ("session · 20 functions without
 * triggers"), a pack opens with a click, "Show unconnected (N)" shows them all and is remembered
 * across a reload and a later visit, a search for a hidden function finds it, and an engine with
 * only unconnected functions shows its packs instead of an empty canvas.
 */

test.describe.configure({ mode: 'serial', timeout: 120_000 });

let own: Stack;
let chat: ChatStack;
let flowConsole: ConsoleProcess;
let busUrl: string;

// its own engine, not the Playwright worker's shared one: what the default view frames depends on
// what the engine has seen, and the specs that ran before on a shared engine leave traces whose
// relations connect dozens of chat functions (then the graph is too big to frame whole)
test.beforeAll(async () => {
  test.setTimeout(180_000);
  own = await startStack();
  const stack = own;
  busUrl = stack.engine.busUrl;
  chat = await startChatStack(stack);
  flowConsole = await startConsole([...consoleArgsFor(stack.engine), '--no-otel', '--enable-flow']);
  // a layout another spec dragged would decide where nodes sit: start from the automatic one
  await call(busUrl, 'state::delete', { scope: 'eng:console:flow', key: 'layout' });
});

test.afterAll(async () => {
  await flowConsole?.stop();
  await chat?.stop();
  await own?.stop();
});

async function call(url: string, fn: string, input: unknown): Promise<unknown> {
  const client = connect(url, { name: 'flow-default-e2e', registerWorker: false });
  try {
    await client.ready();
    return await client.call(fn, input);
  } finally {
    await client.close();
  }
}

const packs = (page: Page) => page.locator('[data-testid="flow-node"][data-pack]');
const functionNodes = (page: Page) => page.locator('[data-testid="flow-node"][data-kind="function"]:not([data-pack])');
const showUnconnected = (page: Page) => page.getByRole('switch', { name: /^Show unconnected \(\d+\)$/ });

/** The number in "Show unconnected (N)". */
async function unconnectedTotal(page: Page): Promise<number> {
  const name = (await showUnconnected(page).getAttribute('aria-label')) ?? '';
  return Number(/\((\d+)\)/.exec(name)?.[1] ?? Number.NaN);
}

/** The pack of a worker and the number of functions it stands for. */
async function packCount(pack: Locator): Promise<number> {
  return Number(await pack.getAttribute('data-count'));
}

/** Every node on screen, with its rendered height and whether it lies inside the canvas. */
async function renderedNodes(page: Page): Promise<Array<{ id: string; height: number; inside: boolean }>> {
  return page.evaluate(() => {
    const pane = (document.querySelector('.react-flow') as HTMLElement).getBoundingClientRect();
    return [...document.querySelectorAll('.react-flow__node')].map((el) => {
      const r = el.getBoundingClientRect();
      return {
        id: el.getAttribute('data-id') ?? '',
        height: r.height,
        inside: r.left >= pane.left - 1 && r.right <= pane.right + 1 && r.top >= pane.top - 1 && r.bottom <= pane.bottom + 1,
      };
    });
  });
}

/** Wait until the canvas stopped moving (the first view is framed after the nodes are placed). */
async function settled(page: Page): Promise<void> {
  const transform = () => page.locator('.react-flow__viewport').getAttribute('style');
  let last = await transform();
  await expect
    .poll(async () => {
      const now = await transform();
      const same = now === last;
      last = now;
      return same;
    })
    .toBe(true);
}

test('by default: the connected graph, readable after fit, and the functions without triggers packed by worker', async ({ page }) => {
  await gotoPage(page, flowConsole.url, '/flow');
  await expect(page.locator('.react-flow__node[data-id="fn:orders::create"]')).toBeVisible();
  await expect(packs(page).first()).toBeVisible();
  await settled(page);

  // the chat stack's session worker registers ~20 functions that nothing triggers: one pack
  const session = page.locator('[data-testid="flow-node"][data-pack="session"]');
  await expect(session).toBeVisible();
  await expect(session).toHaveAttribute('data-expanded', 'false');
  await expect(session).toContainText(/\d+ functions · no trigger/);
  expect(await packCount(session)).toBeGreaterThanOrEqual(10);
  await expect(page.locator('.react-flow__node[data-id="fn:session::list"]')).toHaveCount(0);

  // the control says how many are packed (once the chat stack's roles have registered: more than 20
  // functions nothing triggers; 31 to 40 have been seen, as the workers' lists change): the packs add up to it
  await expect.poll(() => unconnectedTotal(page), { timeout: 20_000 }).toBeGreaterThanOrEqual(20);
  await settled(page);
  const total = await unconnectedTotal(page);
  let packed = 0;
  for (const pack of await packs(page).all()) packed += await packCount(pack);
  expect(packed).toBe(total);
  await expect(showUnconnected(page)).toHaveAttribute('aria-checked', 'false');
  await expect(page.getByTestId('flow-counts')).toContainText(`${total} functions without triggers`);

  // readable: every node is at least 24 px tall on screen, and the connected graph is in view
  const rendered = await renderedNodes(page);
  expect(rendered.length).toBeLessThan(60);
  expect(Math.min(...rendered.map((n) => n.height))).toBeGreaterThanOrEqual(24);
  for (const id of ['fn:orders::create', 'fn:fulfilment::ship', 'fn:reports::hourly_summary', 'unconnected:session']) {
    expect(rendered.find((n) => n.id === id)?.inside, `${id} on screen`).toBe(true);
  }
  // the labels too: 12 px text at the canvas zoom is at least 6.5 px
  const scale = await page
    .locator('.react-flow__viewport')
    .evaluate((el) => Number(/scale\(([\d.]+)\)/.exec((el as HTMLElement).style.transform)?.[1] ?? 1));
  expect(12 * scale).toBeGreaterThanOrEqual(6.5);
  await page.screenshot({ path: `${ARTIFACTS}flow-default-dark-1440.png` });
});

test('a pack opens with a click; "Show unconnected" shows them all and is remembered', async ({ page }) => {
  await gotoPage(page, flowConsole.url, '/flow');
  const session = page.locator('[data-testid="flow-node"][data-pack="session"]');
  await expect(session).toBeVisible();
  const sessionCount = await packCount(session);
  const total = await unconnectedTotal(page);
  const before = await functionNodes(page).count();

  // one pack: its functions appear (in the URL, so a reload keeps it), the others stay packed
  await session.click();
  await expect(session).toHaveAttribute('data-expanded', 'true');
  await expect(page).toHaveURL(/open=/);
  await expect(page.locator('.react-flow__node[data-id="fn:session::list"]')).toBeVisible();
  await expect(functionNodes(page)).toHaveCount(before + sessionCount);
  await settled(page);
  await page.screenshot({ path: `${ARTIFACTS}flow-default-pack-open-dark-1440.png` });
  await page.reload();
  await expect(page.locator('.react-flow__node[data-id="fn:session::list"]')).toBeVisible();
  // a second click packs it again
  await page.locator('[data-testid="flow-node"][data-pack="session"]').click();
  await expect(page.locator('.react-flow__node[data-id="fn:session::list"]')).toHaveCount(0);
  await expect(functionNodes(page)).toHaveCount(before);

  // all of them
  await showUnconnected(page).click();
  await expect(showUnconnected(page)).toHaveAttribute('aria-checked', 'true');
  await expect(functionNodes(page)).toHaveCount(before + total);
  await expect(page.locator('.react-flow__node[data-id="fn:harness::send"]')).toBeVisible();
  await settled(page);
  const rendered = await renderedNodes(page);
  expect(Math.min(...rendered.map((n) => n.height))).toBeGreaterThanOrEqual(24);
  await page.screenshot({ path: `${ARTIFACTS}flow-default-all-dark-1440.png` });

  // the choice survives a reload and a later visit from the navigation (no URL parameter)
  await page.reload();
  await expect(showUnconnected(page)).toHaveAttribute('aria-checked', 'true');
  await expect(functionNodes(page)).toHaveCount(before + total);
  await page.getByRole('navigation', { name: 'Main navigation' }).getByRole('link', { name: 'Functions', exact: true }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Functions' })).toBeVisible();
  await page.getByRole('navigation', { name: 'Main navigation' }).getByRole('link', { name: /^Flow/ }).click();
  await expect(showUnconnected(page)).toHaveAttribute('aria-checked', 'true');
  await expect(page.locator('.react-flow__node[data-id="fn:harness::send"]')).toBeVisible();

  // and back to the packs
  await showUnconnected(page).click();
  await expect(page.locator('.react-flow__node[data-id="fn:harness::send"]')).toHaveCount(0);
  await expect(functionNodes(page)).toHaveCount(before);
  await page.reload();
  await expect(packs(page).first()).toBeVisible();
  await expect(showUnconnected(page)).toHaveAttribute('aria-checked', 'false');
});

test('a search or a link to a packed function shows it', async ({ page }) => {
  await gotoPage(page, flowConsole.url, '/flow');
  await expect(packs(page).first()).toBeVisible();
  await page.getByRole('searchbox', { name: /Search nodes/ }).fill('session::list');
  await expect(page.locator('.react-flow__node[data-id="fn:session::list"]')).toBeVisible();
  await expect(page.getByTestId('flow-counts')).toContainText('match');

  // a link to it (?node=) opens its pack and its details
  await gotoPage(page, flowConsole.url, '/flow?node=fn%3Aharness%3A%3Asend');
  await expect(page.locator('.react-flow__node[data-id="fn:harness::send"]')).toBeVisible();
  await expect(page.getByTestId('flow-detail')).toContainText('harness::send');
  await expect(page.locator('[data-testid="flow-node"][data-pack="harness"]')).toHaveAttribute('data-expanded', 'true');
});

test('screenshots: light and dark at 1440 and 390 px', async ({ browser }) => {
  for (const width of [1440, 390]) {
    for (const theme of ['light', 'dark'] as const) {
      const context = await browser.newContext({ viewport: { width, height: width === 390 ? 844 : 900 } });
      const page = await context.newPage();
      await gotoPage(page, flowConsole.url, '/flow', theme);
      await expect(page.locator('html')).toHaveAttribute('data-theme', theme);
      await expect(packs(page).first()).toBeAttached();
      await settled(page);
      // at 390 px the first view shows where the graph starts at a readable size, never specks
      const rendered = await renderedNodes(page);
      expect(Math.min(...rendered.map((n) => n.height))).toBeGreaterThanOrEqual(24);
      if (width === 390) await expect(page.locator('.react-flow__node[data-id^="http:"]').first()).toBeInViewport();
      await page.screenshot({ path: `${ARTIFACTS}flow-default-${theme}-${width}.png` });
      await context.close();
    }
  }
});

test('an engine whose functions have no triggers shows their packs, not an empty canvas', async ({ page }) => {
  let engine: EngineProcess | undefined;
  let console_: ConsoleProcess | undefined;
  const workers: EngClient[] = [];
  try {
    engine = await startEngine({ workersYaml: ENGINE_MODULES_YAML, env: { ENG_LOG_LEVEL: 'warn' } });
    for (const [name, count] of [
      ['inventory', 12],
      ['billing', 5],
      ['mailer', 1],
    ] as const) {
      const worker = connect(engine.busUrl, { name });
      for (let i = 0; i < count; i++) worker.registerFunction(`${name}::task_${i}`, () => i);
      await worker.ready();
      workers.push(worker);
    }
    console_ = await startConsole([...consoleArgsFor(engine), '--no-otel', '--enable-flow']);
    for (const theme of ['dark', 'light'] as const) {
      await gotoPage(page, `${console_.url}/?${theme}`, '/flow', theme);
      await expect(page.locator('[data-testid="flow-node"][data-pack="inventory"]')).toHaveAttribute('data-count', '12');
      await expect(page.locator('[data-testid="flow-node"][data-pack="billing"]')).toHaveAttribute('data-count', '5');
      // a worker with one such function shows the function itself
      await expect(page.locator('.react-flow__node[data-id="fn:mailer::task_0"]')).toBeVisible();
      await expect(page.getByTestId('flow-empty-note')).toContainText('No function has a trigger yet');
      await expect(showUnconnected(page)).toHaveAccessibleName('Show unconnected (17)');
      await settled(page);
      const rendered = await renderedNodes(page);
      expect(rendered.every((n) => n.inside && n.height >= 24)).toBe(true);
      await page.screenshot({ path: `${ARTIFACTS}flow-default-only-unconnected-${theme}.png` });
    }
  } finally {
    for (const w of workers) await w.close();
    await console_?.stop();
    await engine?.stop();
  }
});
