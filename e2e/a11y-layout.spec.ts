import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { contrastViolations, horizontalOverflow, phoneLayoutDefects } from './fixtures/a11y.ts';
import { call, createOrder, randomTag } from './fixtures/engine-client.ts';
import { type LaunchedStack, launchedStackFixture } from './fixtures/launched-stack.ts';
import { type ConsoleProcess, consoleArgsFor, type Stack, startConsole } from './fixtures/stack.ts';
import { ARTIFACTS, test as base, expect } from './fixtures/test.ts';

/**
 * Issue 19 §10 on both servers (the console worker first, then eng-console --enable-flow): every
 * page (Chat and Worktrees as they show without their workers), and the states users open on them
 * (a function's runs, a trigger, a trace with a span, dead letters, a log record, a state item, the
 * palette, a rerun dialog), in both themes at 1,024 and 390 px: no text under WCAG AA contrast (axe-core's color-contrast rule: 4.5:1, 3:1 for large
 * text), nothing wider than the page, the navigation reachable, wide tables scrolling inside their
 * own pane. Screenshots in e2e/artifacts/layout/, counts in e2e/artifacts/a11y.json.
 */
const test = base.extend<object, { ls: LaunchedStack }>({ ls: launchedStackFixture });
// the eight tests share nothing but the stacks each worker starts: both workers take them
test.describe.configure({ mode: 'parallel', timeout: 300_000 });

const SHOTS = join(ARTIFACTS, 'layout');
mkdirSync(SHOTS, { recursive: true });
const report: Record<string, unknown> = {};
test.afterAll(() => {
  // two workers each hold part of the report: merge into what the other one wrote
  const file = join(ARTIFACTS, 'a11y.json');
  let earlier: Record<string, unknown> = {};
  try {
    earlier = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch {
    // first writer
  }
  writeFileSync(file, `${JSON.stringify({ ...earlier, ...report }, null, 2)}\n`);
});

let flowConsole: ConsoleProcess | undefined;
test.afterAll(async () => {
  await flowConsole?.stop();
});

/** A page, or a state of it reached by clicking through (the first matching element of each selector). */
interface View {
  name: string;
  route: string;
  clicks?: string[];
  keys?: string[];
  /** What must be on screen before checking. */
  ready: string;
}

const VIEWS: View[] = [
  { name: 'dashboard', route: '/', ready: '[data-testid="app-flow"]' },
  { name: 'functions', route: '/functions', ready: '[data-function-id]' },
  {
    name: 'function-runs',
    route: '/functions?fn=orders::create&tab=runs',
    ready: '[data-testid="run-row"]',
    clicks: ['[data-testid="run-row"] button[aria-expanded]'],
  },
  {
    name: 'rerun-dialog',
    route: '/functions?fn=orders::create&tab=runs',
    ready: '[data-testid="run-row"]',
    clicks: ['[data-testid="run-rerun"]'],
  },
  { name: 'triggers', route: '/triggers', ready: '[data-trigger-id]' },
  { name: 'trigger-detail', route: '/triggers', ready: '[data-trigger-id]', clicks: ['[data-trigger-id]'] },
  { name: 'workers', route: '/workers', ready: '[data-testid="supervised-row"], [aria-label="Workers"]' },
  { name: 'states', route: '/states?scope=orders', ready: '[data-testid="state-item"]', clicks: ['[data-testid="state-item"]'] },
  { name: 'streams', route: '/streams', ready: '[data-testid="monitor-counters"]' },
  { name: 'queues', route: '/queues?topic=fulfilment', ready: '[data-testid="queue-stats"]' },
  {
    name: 'dead-letters',
    route: '/queues?topic=fulfilment&tab=dead-letters',
    ready: '[data-testid="dead-letter"]',
    clicks: ['[data-testid="dead-letter"] button[aria-expanded]'],
  },
  { name: 'traces', route: '/traces', ready: '[data-testid="trace-row"]' },
  {
    name: 'trace-span',
    route: '/traces',
    ready: '[data-testid="trace-row"]',
    clicks: ['[data-testid="trace-row"]', '[data-testid="waterfall-row"]'],
  },
  { name: 'logs', route: '/logs', ready: '[data-testid="log-row"]', clicks: ['[data-testid="log-row"]'] },
  { name: 'flow', route: '/flow', ready: '[data-testid="flow-node"]' },
  { name: 'config', route: '/config', ready: 'main h1' },
  { name: 'chat', route: '/chat', ready: 'main h1' },
  { name: 'worktrees', route: '/worktrees', ready: 'main h1' },
  { name: 'palette', route: '/functions', ready: '[data-function-id]', keys: ['Control+k'] },
];

async function seed(stack: Stack): Promise<void> {
  await createOrder(stack, { sku: `OK-${randomTag()}`, qty: 2 });
  const failing = await createOrder(stack, { sku: `FAIL-layout-${randomTag()}` });
  await expect
    .poll(
      async () => {
        const page = await call<{ messages: Array<{ payload: { id?: string } }> }>(stack, 'engine::queue::dlq_messages', {
          paged: true,
          topic: 'fulfilment',
          offset: 0,
          limit: 1000,
        });
        return page.messages.some((m) => m.payload.id === failing.id);
      },
      { timeout: 60_000, intervals: [1000] },
    )
    .toBe(true);
}

/**
 * Wait until what a person would look at has settled: web fonts loaded, no finite animation or
 * transition still running (the theme fade, a drawer sliding in), two frames painted. Endless ones
 * (a spinner, a live dot) are left running. Replaces fixed pauses of 250 and 600 ms per view.
 */
async function settle(page: Page): Promise<void> {
  await page.evaluate(async () => {
    await document.fonts.ready;
    const deadline = performance.now() + 2000;
    const running = () =>
      document
        .getAnimations()
        .filter((a) => a.playState === 'running' && Number.isFinite(a.effect?.getComputedTiming().endTime ?? Infinity));
    while (running().length > 0 && performance.now() < deadline) await Promise.all(running().map((a) => a.finished.catch(() => undefined)));
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  });
}

async function open(page: Page, url: string, view: View): Promise<void> {
  // a hash navigation keeps the app running: close what the last view opened (palette, dialog)
  for (let i = 0; i < 3 && (await page.locator('[role="dialog"]').count()) > 0; i++) await page.keyboard.press('Escape');
  await page.goto(`${url}/#${view.route}`);
  await expect(page.getByTestId('connection-pill').first()).toHaveAttribute('data-connection', 'open');
  await expect(page.locator(view.ready).first()).toBeVisible({ timeout: 20_000 });
  await settle(page);
  for (const selector of view.clicks ?? []) {
    await page.locator(selector).first().click();
    await settle(page);
  }
  for (const key of view.keys ?? []) await page.keyboard.press(key);
  await settle(page);
}

/** Each stack is seeded once per Playwright worker (the tests of a server may run on either worker). */
const seeded = new WeakSet<Stack>();

type Server = 'console worker' | 'eng-console';

/**
 * One server, one theme, one width: every view checked for contrast, width and (at 390 px) what a
 * person sees, then the navigation and the wide tables. Eight tests, so two Playwright workers
 * share them.
 */
for (const server of ['console worker', 'eng-console'] as const satisfies readonly Server[]) {
  for (const theme of ['dark', 'light'] as const) {
    for (const width of [1024, 390]) {
      test(`contrast, width and navigation of every page at ${width} px in the ${theme} theme (${server})`, async ({
        browser,
        ls,
        stack,
      }) => {
        const target = server === 'console worker' ? ls.asStack : stack;
        if (server === 'eng-console') flowConsole ??= await startConsole([...consoleArgsFor(stack.engine), '--no-otel', '--enable-flow']);
        const url = server === 'console worker' ? ls.consoleUrl : (flowConsole as ConsoleProcess).url;
        if (!seeded.has(target)) {
          await seed(target);
          // one run of orders::create by the browser too, so the Runs tab has a rerun in it
          await call(target, 'orders::create', { sku: `RUN-${randomTag()}` });
          seeded.add(target);
        }

        const failures: string[] = [];
        const counts: Record<string, number> = {};

        const context = await browser.newContext({ viewport: { width, height: 860 } });
        await context.addInitScript((t) => localStorage.setItem('eng-theme', t), theme);
        const page = await context.newPage();

        // the checks can fail: grey text on white (2.8:1), a sentence squeezed into 40 px and a
        // button pushed half out of the window are reported
        await open(page, url, { name: 'probe', route: '/config', ready: 'main h1' });
        await page.evaluate(() => {
          const p = document.createElement('p');
          p.id = 'contrast-probe';
          p.textContent = 'too faint to read';
          p.style.cssText = 'color:#999;background:#fff;font-size:13px;position:fixed;top:0;left:0;z-index:99';
          const narrow = document.createElement('p');
          narrow.id = 'squeeze-probe';
          narrow.textContent = 'a sentence of seven words squeezed thin';
          narrow.style.cssText = 'width:40px;position:fixed;top:40px;left:0;z-index:99;background:#fff;color:#000';
          const cut = document.createElement('button');
          cut.id = 'cut-probe';
          cut.textContent = 'Send message';
          cut.style.cssText = `position:fixed;top:0;left:${window.innerWidth - 30}px;width:120px;z-index:99;background:#fff;color:#000`;
          document.body.append(p, narrow, cut);
        });
        expect((await contrastViolations(page)).some((v) => v.target.includes('contrast-probe'))).toBe(true);
        const probeDefects = await phoneLayoutDefects(page);
        expect(probeDefects.some((d) => d.where.startsWith('p') && d.what.startsWith('text breaks'))).toBe(true);
        expect(probeDefects.some((d) => d.where.includes('Send message') && d.what.startsWith('control outside'))).toBe(true);
        await page.reload();

        for (const view of VIEWS) {
          const where = `${view.name} ${theme} ${width}px`;
          await open(page, url, view);
          const violations = await contrastViolations(page);
          counts[where] = violations.length;
          for (const v of violations) failures.push(`${where}: contrast ${v.ratio}:1 ${v.fg} on ${v.bg} — ${v.target} ${v.html}`);
          const overflow = await horizontalOverflow(page);
          if (overflow.overflow > 1)
            failures.push(`${where}: page ${overflow.overflow}px wider than the window — ${overflow.widest.join(' | ')}`);
          for (const d of await phoneLayoutDefects(page)) failures.push(`${where}: ${d.what} — ${d.where}`);
          if (theme === 'dark' || ['dashboard', 'trace-span', 'dead-letters', 'function-runs'].includes(view.name)) {
            await page.screenshot({ path: join(SHOTS, `${server.replace(' ', '-')}-${view.name}-${theme}-${width}.png`) });
          }
        }

        // the navigation: the sidebar at 1,024 px, the drawer behind the menu button at 390 px
        await open(page, url, VIEWS[0] as View);
        const nav = page.getByRole('navigation', { name: 'Main navigation' });
        if (width >= 768) {
          await nav.getByRole('link', { name: 'Traces', exact: true }).click();
        } else {
          await expect(nav).toHaveCount(0);
          await page.getByRole('button', { name: 'Open navigation' }).click();
          await expect(nav).toBeVisible();
          await settle(page);
          const drawerViolations = await contrastViolations(page);
          for (const v of drawerViolations) failures.push(`drawer ${theme}: contrast ${v.ratio}:1 — ${v.target}`);
          await page.screenshot({ path: join(SHOTS, `${server.replace(' ', '-')}-drawer-${theme}-${width}.png`) });
          await nav.getByRole('link', { name: 'Traces', exact: true }).click();
          await expect(nav).toHaveCount(0);
        }
        await expect(page).toHaveURL(/#\/traces/);
        await expect(page.getByRole('heading', { level: 1, name: 'Traces' })).toBeVisible();

        // wide tables scroll sideways inside their pane at phone width, the page does not
        if (width === 390) {
          for (const [route, table] of [
            ['/triggers', '[data-trigger-id]'],
            ['/traces', '[data-testid="trace-table"]'],
          ] as const) {
            await open(page, url, { name: route, route, ready: table });
            const pane = await page
              .locator(table)
              .first()
              .evaluate((el) => {
                let p: HTMLElement | null = el.parentElement;
                while (p && getComputedStyle(p).overflowX !== 'auto' && getComputedStyle(p).overflowX !== 'scroll') p = p.parentElement;
                return p ? { scroll: p.scrollWidth, client: p.clientWidth } : undefined;
              });
            expect(pane, `${route}: a scrolling pane around the table`).toBeDefined();
            expect(pane?.scroll ?? 0, `${route}: the table is wider than its pane and scrolls in it`).toBeGreaterThan(pane?.client ?? 0);
            expect((await horizontalOverflow(page)).overflow, `${route}: the page itself does not scroll sideways`).toBeLessThanOrEqual(1);
          }
        }
        await context.close();

        report[`${server} ${theme} ${width}`] = { checks: Object.keys(counts).length, violations: failures.length, counts };
        test.info().annotations.push({
          type: `a11y + layout (${server})`,
          description: `${Object.keys(counts).length} page states × axe color-contrast and layout: ${failures.length} problems`,
        });
        expect(failures, failures.join('\n')).toEqual([]);
      });
    }
  }
}
