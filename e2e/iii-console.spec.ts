import { mkdirSync } from 'node:fs';
import { test as base, expect, type Page } from '@playwright/test';
import { type EngineProcess, startEngine } from '../test/harness.ts';
import { startConsoleBridge } from './fixtures/iii-console/bridge.ts';
import { ensureIiiConsoleBuild } from './fixtures/iii-console/build.ts';
import { type ConsoleServer, startConsoleServer } from './fixtures/iii-console/server.ts';
import { ENGINE_MODULES_YAML, startWorker, type WorkerProcess } from './fixtures/stack.ts';
import { ARTIFACTS } from './fixtures/test.ts';

/**
 * Issue 26: iii's own console, its frontend built from iii's source at iii/v0.22.1 and its
 * backend's registrations (fixtures/iii-console: the `engine::console::*` functions and `_console/*`
 * routes its Rust bridge registers, and its web server), runs on an eng engine configured like
 * `npm start` with the orders demo worker: every page loads with no page error, no console error
 * and no failed request.
 */
interface IiiStack {
  engine: EngineProcess;
  orders: WorkerProcess;
  bridge: ReturnType<typeof startConsoleBridge>;
  server: ConsoleServer;
}

const QUEUE_YAML = ENGINE_MODULES_YAML.replace(
  '  - name: eng-queue\n',
  '  - name: eng-queue\n    config:\n      queue_configs:\n        fulfilment: { max_retries: 0 }\n',
);

const test = base.extend<object, { iii: IiiStack }>({
  iii: [
    // biome-ignore lint/correctness/noEmptyPattern: Playwright fixture signature
    async ({}, use) => {
      const dist = ensureIiiConsoleBuild((l) => process.stdout.write(`[iii-console] ${l}\n`));
      const engine = await startEngine({ workersYaml: QUEUE_YAML, env: { ENG_LOG_LEVEL: 'warn' } });
      const orders = await startWorker('examples/orders/src/main.ts', { ENG_URL: engine.busUrl }, /orders demo worker connected/);
      const bridge = startConsoleBridge(engine.busUrl);
      const server = await startConsoleServer({ dist, enginePort: engine.ports.HTTP as number, wsPort: engine.ports.STREAMS as number });
      // the routes are frames: wait until the last one answers
      await expect
        .poll(async () => (await fetch(`${server.url}/api/engine/_console/dlq`).catch(() => null))?.status, { timeout: 20_000 })
        .toBe(200);
      await use({ engine, orders, bridge, server });
      await server.close();
      await bridge.shutdown();
      await orders.stop();
      await engine.stop();
    },
    // a first run builds iii's frontend (pnpm install from the npm registry, vite build)
    { scope: 'worker', timeout: 20 * 60_000 },
  ],
});
test.describe.configure({ timeout: 180_000 });

const SHOTS = `${ARTIFACTS}iii-console/`;

/** Records what would count against a page: page errors, console errors, failed requests. */
function watch(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console error: ${m.text()}`);
  });
  page.on('requestfailed', (r) => {
    // a poll cut short by leaving the page is not a failure
    if (r.failure()?.errorText === 'net::ERR_ABORTED') return;
    problems.push(`request failed: ${r.method()} ${r.url()} ${r.failure()?.errorText}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.request().method()} ${r.url()}`);
  });
  return problems;
}

async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: `${SHOTS}${name}.png` });
}

const PAGES: Array<[string, string, RegExp]> = [
  ['/', 'dashboard', /iii|Dashboard|Overview/i],
  ['/workers', 'workers', /orders/],
  ['/functions', 'functions', /orders::create/],
  ['/triggers', 'triggers', /orders/],
  ['/states', 'states', /orders|State/i],
  ['/streams', 'streams', /Stream/i],
  ['/queues', 'queues', /fulfilment|Queue/i],
  ['/dead-letter', 'dead-letter', /Dead|DLQ/i],
  ['/traces', 'traces', /Trace/i],
  ['/logs', 'logs', /Log/i],
  ['/config', 'config', /Config/i],
  ['/flow', 'flow', /Flow|orders/i],
];

/** iii's index.html loads its fonts from Google's font CDN; tests run offline, so those answer empty. */
async function offlineFonts(page: Page): Promise<void> {
  await page.route(/^https:\/\/fonts\.(googleapis|gstatic)\.com\//, (route) =>
    route.fulfill({ status: 200, contentType: route.request().url().includes('css') ? 'text/css' : 'font/woff2', body: '' }),
  );
}

test('every page of iii 0.22.1 console loads on eng with no error and no failed request', async ({ page, iii }) => {
  await offlineFonts(page);
  const problems = watch(page);
  // some traffic first: an order (a trace, a log, state, a durable publish)
  await fetch(`http://127.0.0.1:${iii.engine.ports.HTTP}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ item: 'iii-console', quantity: 1 }),
  });
  for (const [path, name, text] of PAGES) {
    await page.goto(`${iii.server.url}${path}`);
    await expect(page.locator('body')).toContainText(text, { timeout: 20_000 });
    await page.waitForLoadState('networkidle').catch(() => undefined);
    await expect(page.getByText(/OFFLINE/)).toHaveCount(0);
    await shot(page, name);
    expect(problems, `${path}: ${problems.join('\n')}`).toEqual([]);
  }
});

test('Queues: publish from the page; Dead Letters: the list, redrive one, discard one', async ({ page, iii }) => {
  await offlineFonts(page);
  const problems = watch(page);
  const dlq = async (): Promise<Array<{ id: string; payload: { id?: string } }>> => {
    const res = await fetch(`${iii.server.url}/api/engine/_console/dlq/fulfilment/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ offset: 0, limit: 100 }),
    });
    return ((await res.json()) as { messages: Array<{ id: string; payload: { id?: string } }> }).messages;
  };
  const before = (await dlq()).length;

  await page.goto(`${iii.server.url}/queues?topic=fulfilment&tab=overview`);
  await page.getByRole('button', { name: 'Publish Message' }).click();
  for (const [n, id] of ['iii-dlq-1', 'iii-dlq-2'].entries()) {
    // an order that does not exist: fulfilment::ship fails it, and after its retries it is dead-lettered
    await page.locator('textarea').fill(JSON.stringify({ id }));
    await page.getByRole('button', { name: 'Publish', exact: true }).click();
    await expect.poll(async () => (await dlq()).length, { timeout: 60_000, intervals: [1000] }).toBe(before + n + 1);
  }
  await shot(page, 'queue-overview');

  await page.goto(`${iii.server.url}/queues?topic=fulfilment&tab=dead-letters`);
  await expect(page.getByRole('button', { name: 'Redrive All' })).toBeVisible({ timeout: 20_000 });
  const dead = (await dlq()).filter((m) => m.payload?.id?.startsWith('iii-dlq-'));
  expect(dead).toHaveLength(2);
  await expect(page.getByText(dead[0]!.id)).toBeVisible();
  await shot(page, 'dead-letters');

  // redrive one (it fails again later: the order still does not exist)
  await page.getByText(dead[0]!.id).click();
  await page.getByRole('button', { name: 'Redrive', exact: true }).click();
  await expect.poll(async () => (await dlq()).some((m) => m.id === dead[0]!.id), { timeout: 20_000 }).toBe(false);
  // discard the other
  await page.getByText(dead[1]!.id).click();
  await page.getByRole('button', { name: 'Discard', exact: true }).click();
  await page.getByRole('button', { name: 'Confirm Delete' }).click();
  await expect.poll(async () => (await dlq()).some((m) => m.id === dead[1]!.id), { timeout: 20_000 }).toBe(false);
  await expect(page.getByText(dead[1]!.id)).toHaveCount(0, { timeout: 20_000 });
  await shot(page, 'dead-letters-after');
  expect(problems, problems.join('\n')).toEqual([]);
});

test('Functions invoke, Triggers Send Request and Run Now, States add and delete, a trace opened', async ({ page, iii }) => {
  await offlineFonts(page);
  const problems = watch(page);
  const api = `${iii.server.url}/api/engine/_console`;

  // Functions: invoke one from its panel
  await page.goto(`${iii.server.url}/functions`);
  await page.getByText('state::list_groups', { exact: true }).click();
  await page.locator('textarea').first().fill('{}');
  await page.getByRole('button', { name: 'Invoke', exact: true }).click();
  await expect(page.getByText('Success', { exact: true })).toBeVisible({ timeout: 20_000 });
  await shot(page, 'functions-invoke');

  // Triggers: Send Request on the HTTP trigger of orders::list, Run Now on the cron one
  await page.goto(`${iii.server.url}/triggers`);
  await page.getByText('orders::list').first().click();
  await page.getByRole('button', { name: /Send Request/ }).click();
  await expect(page.getByText(/200|Success/).first()).toBeVisible({ timeout: 20_000 });
  await shot(page, 'triggers-send-request');
  const summaries = async () => {
    const res = await fetch(`${api}/states/group`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"scope":"reports"}',
    });
    return JSON.stringify(await res.json());
  };
  const before = await summaries();
  await page.getByText('reports::hourly_summary').first().click();
  await page.getByRole('button', { name: /Run Now/ }).click();
  await expect.poll(summaries, { timeout: 20_000 }).not.toBe(before);
  await shot(page, 'triggers-run-now');

  // States: add an item to a group, then delete it
  await fetch(`${api}/states/iii-console/item`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ key: 'seed', value: { id: 'seed' } }),
  });
  const items = async () => {
    const res = await fetch(`${api}/states/group`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"scope":"iii-console"}',
    });
    return ((await res.json()) as { items: Array<{ id?: string }> }).items.map((i) => i.id);
  };
  await page.goto(`${iii.server.url}/states`);
  await page
    .getByRole('button', { name: /iii-console/ })
    .first()
    .click();
  await page.getByRole('button', { name: 'Add Item' }).click();
  await page.getByPlaceholder('item-key').fill('note');
  await page.getByPlaceholder('{"key": "value"}').fill(JSON.stringify({ id: 'note', text: 'from iii console' }));
  await page.getByRole('button', { name: 'Save' }).click();
  await expect.poll(items, { timeout: 20_000 }).toContain('note');
  await expect(page.getByText('note', { exact: true }).first()).toBeVisible({ timeout: 20_000 });
  await shot(page, 'states-added');
  await page.getByRole('row', { name: /note/ }).getByTitle('Delete').click();
  await expect.poll(items, { timeout: 20_000 }).not.toContain('note');
  await shot(page, 'states-deleted');

  // Traces: open one
  await page.goto(`${iii.server.url}/traces`);
  await page
    .getByText(/orders::list|state::list_groups|reports::hourly_summary/)
    .first()
    .click();
  await expect(page.getByText(/Span|span|Duration|duration/).first()).toBeVisible({ timeout: 20_000 });
  await shot(page, 'trace-open');
  expect(problems, problems.join('\n')).toEqual([]);
});
