import { randomBytes } from 'node:crypto';
import { connect, type EngClient } from '@eng/sdk';
import type { Page, WebSocket as PwWebSocket } from '@playwright/test';
import { formatDuration } from '../packages/web/src/lib/format.ts';
import { call, createOrder } from './fixtures/engine-client.ts';
import { type CheckoutStory, otlpTraces, type SpanSpec, sendCheckoutStory } from './fixtures/otlp-traces.ts';
import type { Stack } from './fixtures/stack.ts';
import { expect, gotoPage, test } from './fixtures/test.ts';

/**
 * The trace explorer's controls driven through the UI (issue 7 item 7, seed 2.6 and 2.9): group by
 * function with server-side aggregation and lazy loading, every status tab, time presets and sort
 * through their controls, page sizes 50 and 100, the service breakdown's figures checked against
 * the engine's own spans, and a real examples/orders trace found by filter and opened.
 * Every trace a test looks for carries a fresh tag, so traces left by other specs do not matter.
 */

interface StoredSpan {
  trace_id: string;
  span_id: string;
  parent_span_id?: string | null;
  name: string;
  service_name?: string;
  status: string;
  pending?: boolean;
  start_time_unix_nano: number;
  end_time_unix_nano: number;
}
interface Group {
  value: string;
  trace_ids: string[];
  span_count: number;
  error_count: number;
}

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const tag = () => randomBytes(3).toString('hex');
const rows = (page: Page) => page.getByTestId('trace-row');
const row = (page: Page, traceId: string) => page.locator(`[data-testid="trace-row"][data-trace-id="${traceId}"]`);
const rowIds = (page: Page) => rows(page).evaluateAll((els) => els.map((el) => el.getAttribute('data-trace-id')));
const detail = (page: Page) => page.getByTestId('trace-detail');
const statusTab = (page: Page, name: string) => page.getByRole('tablist', { name: 'Status' }).getByRole('tab', { name, exact: true });

let httpBase: string;
let story: CheckoutStory;

test.beforeAll(async ({ stack }) => {
  httpBase = `http://127.0.0.1:${stack.engine.ports.HTTP}`;
  story = await sendCheckoutStory(httpBase);
});

/** Poll until `fn` gives a value. */
async function eventually<T>(fn: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 150));
  }
}

/** Post OTLP bodies (one per trace) as a single export request. */
async function postOtlp(bodies: unknown[]): Promise<void> {
  const resourceSpans = bodies.flatMap((b) => (b as { resourceSpans: unknown[] }).resourceSpans);
  const res = await fetch(`${httpBase}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ resourceSpans }),
  });
  expect(res.status).toBe(200);
  expect(await res.text()).not.toContain('rejected');
}

/** One-span trace; `status: 'unset'` leaves the OTLP status out (code 0). */
function oneSpan(name: string, o: { service?: string; startMs?: number; durationMs?: number; status?: 'ok' | 'unset' | 'error' } = {}) {
  const traceId = hex(16);
  const spec: SpanSpec = {
    service: o.service ?? 'probe',
    name,
    spanId: hex(8),
    startMs: o.startMs ?? Date.now() - 50,
    durationMs: o.durationMs ?? 12,
    kind: 2,
    ...(o.status === 'error' ? { error: { type: 'ProbeError', message: 'probe failed', stack: 'ProbeError: probe failed' } } : {}),
  };
  const body = otlpTraces(traceId, [spec]) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<{ status?: unknown }> }> }> };
  if (o.status === 'unset') {
    for (const rs of body.resourceSpans) for (const ss of rs.scopeSpans) for (const s of ss.spans) delete s.status;
  }
  return { traceId, body };
}

/** Every bus frame the page sends, parsed (the SDK in the browser speaks JSON text frames). */
function recordCalls(page: Page): Array<{ function_id: string; data: Record<string, unknown> }> {
  const calls: Array<{ function_id: string; data: Record<string, unknown> }> = [];
  page.on('websocket', (ws: PwWebSocket) =>
    ws.on('framesent', (frame) => {
      if (typeof frame.payload !== 'string') return;
      try {
        const msg = JSON.parse(frame.payload) as { type?: string; function_id?: string; data?: Record<string, unknown> };
        if (msg.type === 'invokefunction' && msg.function_id) calls.push({ function_id: msg.function_id, data: msg.data ?? {} });
      } catch {
        // not JSON: ignore
      }
    }),
  );
  return calls;
}

async function groupsOf(stack: Stack, attributes: string[]): Promise<Map<string, Group>> {
  const out = new Map<string, Group>();
  for (const attribute of attributes) {
    const res = await call<{ groups: Group[] }>(stack, 'engine::traces::group_by', { attribute, limit: 100 });
    for (const g of res.groups) if (!out.has(g.value)) out.set(g.value, g);
  }
  return out;
}

/** The spans of a trace once it stopped growing (no pending span, same count twice in a row). */
async function settledSpans(stack: Stack, traceId: string, atLeast = 1): Promise<StoredSpan[]> {
  let previous = -1;
  let spans: StoredSpan[] = [];
  await expect
    .poll(
      async () => {
        spans = (await call<{ spans: StoredSpan[] }>(stack, 'engine::traces::spans', { trace_id: traceId })).spans;
        const settled = spans.length >= atLeast && spans.length === previous && !spans.some((s) => s.pending);
        previous = spans.length;
        return settled;
      },
      { timeout: 20_000, intervals: [700] },
    )
    .toBe(true);
  return spans;
}

/** Seed 2.6 Service Breakdown figures computed from the engine's spans, as the table shows them. */
function expectedBreakdown(spans: StoredSpan[]): Map<string, { spans: string; avg: string; errors: string; rate: string }> {
  const by = new Map<string, StoredSpan[]>();
  for (const s of spans) {
    const service = s.service_name || 'unknown';
    by.set(service, [...(by.get(service) ?? []), s]);
  }
  const out = new Map<string, { spans: string; avg: string; errors: string; rate: string }>();
  for (const [service, list] of by) {
    // the engine's rounding of a duration: nanoseconds to the microsecond
    const total = list.reduce((sum, s) => sum + Math.round((s.end_time_unix_nano - s.start_time_unix_nano) / 1e3) / 1e3, 0);
    const errors = list.filter((s) => s.status === 'error').length;
    const rate = errors / list.length;
    out.set(service, {
      spans: String(list.length),
      avg: formatDuration(total / list.length),
      errors: String(errors),
      rate: `${(rate * 100).toFixed(rate > 0 && rate < 0.1 ? 1 : 0)}%`,
    });
  }
  return out;
}

async function shownBreakdown(page: Page): Promise<Map<string, { spans: string; avg: string; errors: string; rate: string }>> {
  const cells = await page
    .getByTestId('service-row')
    .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => (td.textContent ?? '').trim())));
  const out = new Map<string, { spans: string; avg: string; errors: string; rate: string }>();
  // columns: Service, Spans, Avg duration, p50, p95, Self time, Errors, Error rate
  for (const c of cells)
    out.set(c[0] as string, { spans: c[1] as string, avg: c[2] as string, errors: c[6] as string, rate: c[7] as string });
  return out;
}

test('group by function: one group per function from engine::traces::group_by, traces and span trees loaded only when opened', async ({
  page,
  consoleUrl,
  stack,
}) => {
  // two traces of one function (one failing), one of them also calling a second function
  const t = tag();
  const price = `grp${t}::price`;
  const ship = `grp${t}::ship`;
  const t0 = Date.now() - 3000;
  const okTrace = { traceId: hex(16), root: hex(8) };
  const badTrace = { traceId: hex(16), root: hex(8), shipId: hex(8) };
  await postOtlp([
    otlpTraces(okTrace.traceId, [
      { service: 'shop', name: `GET /price-${t}`, spanId: okTrace.root, startMs: t0, durationMs: 40, kind: 2 },
      {
        service: 'pricing',
        name: `call ${price}`,
        spanId: hex(8),
        parent: okTrace.root,
        startMs: t0 + 5,
        durationMs: 20,
        attributes: { function_id: price },
      },
    ]),
    otlpTraces(badTrace.traceId, [
      { service: 'shop', name: `POST /buy-${t}`, spanId: badTrace.root, startMs: t0 + 100, durationMs: 90, kind: 2 },
      {
        service: 'pricing',
        name: `call ${price}`,
        spanId: hex(8),
        parent: badTrace.root,
        startMs: t0 + 105,
        durationMs: 10,
        attributes: { function_id: price },
      },
      {
        service: 'shipping',
        name: `call ${ship}`,
        spanId: badTrace.shipId,
        parent: badTrace.root,
        startMs: t0 + 120,
        durationMs: 50,
        attributes: { function_id: ship },
        error: { type: 'NoCarrier', message: 'no carrier', stack: 'NoCarrier: no carrier' },
      },
    ]),
  ]);
  // and real orders traces: the orders::create group holds every POST /orders
  await createOrder(stack, { sku: `GRP-${t}` });

  const calls = recordCalls(page);
  await gotoPage(page, consoleUrl, '/traces');
  await expect(rows(page).first()).toBeVisible();
  calls.length = 0;
  await page.getByLabel('Group by').selectOption('function');
  await expect(page).toHaveURL(/group=function/);
  await expect(page.getByTestId('trace-groups')).toBeVisible();

  // server-side aggregation: the page asks the engine to group (both spellings of the attribute)
  await expect
    .poll(() => calls.filter((c) => c.function_id === 'engine::traces::group_by').map((c) => c.data.attribute))
    .toEqual(expect.arrayContaining(['function_id', 'iii.function.id']));
  // one group per function, exactly the engine's groups (new traces may arrive meanwhile: compare until equal)
  await expect
    .poll(
      async () => {
        const shown = await page.getByTestId('trace-group').evaluateAll((els) => els.map((el) => el.getAttribute('data-group')));
        const server = [...(await groupsOf(stack, ['function_id', 'iii.function.id'])).keys()];
        return {
          duplicates: shown.length - new Set(shown).size,
          missing: server.filter((v) => !shown.includes(v)),
          extra: shown.filter((v) => !server.includes(v as string)),
        };
      },
      { timeout: 15_000 },
    )
    .toEqual({ duplicates: 0, missing: [], extra: [] });
  const server = await groupsOf(stack, ['function_id']);
  expect(server.get(price)?.trace_ids.sort()).toEqual([okTrace.traceId, badTrace.traceId].sort());
  expect(server.get(ship)?.trace_ids).toEqual([badTrace.traceId]);

  // the group's figures are the engine's aggregation: 2 traces, 5 spans; errors count the group's
  // own failed spans (issue 19 item 7): the price function never failed, the ship function did
  const priceGroup = page.locator(`[data-testid="trace-group"][data-group="${price}"]`);
  const shipGroup = page.locator(`[data-testid="trace-group"][data-group="${ship}"]`);
  await expect(priceGroup).toContainText('2 traces');
  await expect(priceGroup).toContainText('5 spans');
  await expect(priceGroup).not.toContainText(/\b\d+ errors?\b/);
  await expect(shipGroup).toContainText('1 trace');
  await expect(shipGroup).toContainText('3 spans');
  await expect(shipGroup).toContainText('1 error');
  const ordersGroup = page.locator('[data-testid="trace-group"][data-group="orders::create"]');
  await expect(ordersGroup).toBeVisible();

  // nothing of a group is loaded before it opens
  const listCalls = () => calls.filter((c) => c.function_id === 'engine::traces::list' && Array.isArray(c.data.trace_ids));
  const spanCalls = (traceId: string) => calls.filter((c) => c.function_id === 'engine::traces::spans' && c.data.trace_id === traceId);
  await page.waitForTimeout(500);
  expect(listCalls()).toHaveLength(0);
  await expect(page.getByTestId('group-traces')).toHaveCount(0);

  await priceGroup.locator('> button').click();
  await expect(priceGroup.getByTestId('group-trace-row')).toHaveCount(2);
  expect(
    await priceGroup.getByTestId('group-trace-row').evaluateAll((els) => els.map((e) => e.getAttribute('data-trace-id')).sort()),
  ).toEqual([okTrace.traceId, badTrace.traceId].sort());
  // exactly this group's traces were fetched, and only this group's
  expect(listCalls()).toHaveLength(1);
  expect([...((listCalls()[0]?.data.trace_ids as string[] | undefined) ?? [])].sort()).toEqual([okTrace.traceId, badTrace.traceId].sort());
  await expect(shipGroup.getByTestId('group-traces')).toHaveCount(0);
  await expect(priceGroup.locator(`[data-trace-id="${badTrace.traceId}"]`).getByLabel('Status Error')).toBeVisible();

  // a trace's span tree loads when asked for
  expect(spanCalls(badTrace.traceId)).toHaveLength(0);
  await priceGroup
    .locator(`[data-trace-id="${badTrace.traceId}"]`)
    .locator('xpath=..')
    .getByRole('button', { name: 'Show span tree' })
    .click();
  const tree = priceGroup.getByTestId('group-span-tree');
  await expect(tree.getByRole('button')).toHaveCount(3);
  await expect(tree).toContainText(`POST /buy-${t}`);
  await expect(tree).toContainText(`call ${ship}`);
  expect(spanCalls(badTrace.traceId).length).toBeGreaterThan(0);
  expect(spanCalls(okTrace.traceId)).toHaveLength(0);

  // the real orders group opens to the engine's orders::create traces
  const orders = (await groupsOf(stack, ['function_id'])).get('orders::create');
  await ordersGroup.locator('> button').click();
  await expect(ordersGroup.getByTestId('group-trace-row')).toHaveCount(orders?.trace_ids.length ?? -1);

  // a span in the tree opens its trace with that span selected
  await tree.getByText(`call ${ship}`).click();
  await expect(detail(page)).toHaveAttribute('data-trace-id', badTrace.traceId);
  await expect(page.getByTestId('span-panel')).toHaveAttribute('data-span-id', badTrace.shipId);

  // the filters apply to the groups too: with Status Error the price group keeps only its failing trace
  await page.getByRole('tablist', { name: 'Status' }).getByRole('tab', { name: 'Error' }).click();
  await expect(page).toHaveURL(/status=error/);
  await expect(priceGroup).not.toContainText('2 traces');
  await expect(priceGroup).toContainText('1 trace');
  await expect(priceGroup).not.toContainText(/\b\d+ errors?\b/);
  expect(
    calls.some(
      (c) => c.function_id === 'engine::traces::group_by' && (c.data.filter as { status?: string } | undefined)?.status === 'error',
    ),
  ).toBe(true);
  const filtered = await call<{ groups: Group[] }>(stack, 'engine::traces::group_by', {
    attribute: 'function_id',
    filter: { status: 'error' },
  });
  expect(filtered.groups.find((g) => g.value === price)?.trace_ids).toEqual([badTrace.traceId]);
});

test('status tabs All, OK, Error, Pending and Unset narrow the list and live in the URL', async ({ page, consoleUrl, stack }) => {
  const t = tag();
  const ok = oneSpan(`status-${t} ok`, { status: 'ok' });
  const unset = oneSpan(`status-${t} unset`, { status: 'unset' });
  const failed = oneSpan(`status-${t} error`, { status: 'error' });
  await postOtlp([ok.body, unset.body, failed.body]);

  // a real in-progress engine span: a call without a trace context gets an engine root span,
  // stored as Pending while the worker has not answered
  const slowFn = `status-${t}::slow`;
  let release!: () => void;
  const released = new Promise<void>((r) => {
    release = r;
  });
  const worker: EngClient = connect(stack.engine.busUrl, { name: `slow-${t}`, tracing: false });
  try {
    worker.registerFunction(slowFn, async () => {
      await released;
      return { done: true };
    });
    await worker.ready({ timeoutMs: 10_000 });
    const pendingCall = worker.call(slowFn, {}, { timeoutMs: 60_000 });
    const pendingId = await eventually(async () => {
      const res = await call<{ spans: Array<{ trace_id: string; pending?: boolean }> }>(stack, 'engine::traces::list', { name: slowFn });
      return res.spans.find((s) => s.pending)?.trace_id;
    });

    await gotoPage(page, consoleUrl, `/traces?q=status-${t}`);
    await expect(rows(page)).toHaveCount(4);
    await expect(row(page, pendingId)).toContainText('Pending');
    await expect(row(page, unset.traceId)).toContainText('OK');

    await statusTab(page, 'OK').click();
    await expect(page).toHaveURL(/status=ok/);
    // OK = finished without an error: OTel leaves successful spans unset, so both show as OK
    await expect.poll(() => rowIds(page).then((ids) => ids.sort())).toEqual([ok.traceId, unset.traceId].sort());
    expect(await rows(page).allInnerTexts()).toEqual([expect.stringContaining('OK'), expect.stringContaining('OK')]);

    await statusTab(page, 'Error').click();
    await expect(page).toHaveURL(/status=error/);
    await expect.poll(() => rowIds(page)).toEqual([failed.traceId]);
    await expect(rows(page).first()).toContainText('Error');

    await statusTab(page, 'Unset').click();
    await expect(page).toHaveURL(/status=unset/);
    await expect(row(page, unset.traceId)).toBeVisible();
    await expect(row(page, ok.traceId)).toHaveCount(0);
    await expect(row(page, failed.traceId)).toHaveCount(0);

    await statusTab(page, 'Pending').click();
    await expect(page).toHaveURL(/status=pending/);
    await expect.poll(() => rowIds(page)).toEqual([pendingId]);
    await expect(rows(page).first()).toContainText('Pending');
    await expect(page.getByTestId('active-filters')).toContainText('status: pending');
    await page.reload();
    await expect(statusTab(page, 'Pending')).toHaveAttribute('aria-selected', 'true');
    await expect.poll(() => rowIds(page)).toEqual([pendingId]);

    // the call ends: live, without a reload, it leaves Pending and shows under OK
    release();
    await pendingCall;
    await expect(page.getByText('No traces match these filters')).toBeVisible({ timeout: 10_000 });
    await statusTab(page, 'OK').click();
    await expect(row(page, pendingId)).toBeVisible();
    await expect(row(page, pendingId)).toContainText('OK');

    await statusTab(page, 'All').click();
    await expect(page).not.toHaveURL(/status=/);
    await expect(rows(page)).toHaveCount(4);
  } finally {
    release();
    await worker.close();
  }
});

test('time presets and sort, chosen with their controls, change the URL and the list', async ({ page, consoleUrl }) => {
  const t = tag();
  const now = Date.now();
  // an old trace (2 h ago) and a fresh one
  const old = oneSpan(`time-${t} old`, { startMs: now - 2 * 3_600_000 });
  const fresh = oneSpan(`time-${t} fresh`, { startMs: now - 5_000 });
  // three traces whose start, duration, service and name orders all differ
  const a = oneSpan(`sort-${t} alpha`, { service: `svc-z-${t}`, startMs: now - 3000, durationMs: 30 });
  const b = oneSpan(`sort-${t} charlie`, { service: `svc-a-${t}`, startMs: now - 2990, durationMs: 90 });
  const c = oneSpan(`sort-${t} bravo`, { service: `svc-m-${t}`, startMs: now - 2980, durationMs: 60 });
  await postOtlp([old.body, fresh.body, a.body, b.body, c.body]);

  await gotoPage(page, consoleUrl, `/traces?q=time-${t}`);
  await expect(rows(page)).toHaveCount(2);
  const range = page.getByLabel('Time range');
  await expect(range).toHaveValue('all');
  await range.selectOption('1h');
  await expect(page).toHaveURL(/range=1h/);
  await expect.poll(() => rowIds(page)).toEqual([fresh.traceId]);
  await expect(page.getByTestId('active-filters')).toContainText('time: Last hour');
  await range.selectOption('6h');
  await expect(page).toHaveURL(/range=6h/);
  await expect(rows(page)).toHaveCount(2);
  await range.selectOption('15m');
  await expect(page).toHaveURL(/range=15m/);
  await expect.poll(() => rowIds(page)).toEqual([fresh.traceId]);
  await range.selectOption('24h');
  await expect(rows(page)).toHaveCount(2);
  await range.selectOption('7d');
  await expect(page).toHaveURL(/range=7d/);
  await expect(rows(page)).toHaveCount(2);
  // custom: starts as the last hour; moving From back three hours takes the old trace in
  await range.selectOption('custom');
  await expect(page).toHaveURL(/range=custom&from=\d+|from=\d+.*range=custom/);
  await expect.poll(() => rowIds(page)).toEqual([fresh.traceId]);
  const threeHoursAgo = new Date(now - 3 * 3_600_000);
  const pad = (n: number) => String(n).padStart(2, '0');
  await page
    .getByLabel('From', { exact: true })
    .fill(
      `${threeHoursAgo.getFullYear()}-${pad(threeHoursAgo.getMonth() + 1)}-${pad(threeHoursAgo.getDate())}T${pad(threeHoursAgo.getHours())}:${pad(threeHoursAgo.getMinutes())}`,
    );
  await expect(rows(page)).toHaveCount(2);
  await range.selectOption('all');
  await expect(page).not.toHaveURL(/range=|from=/);
  await expect(rows(page)).toHaveCount(2);

  // sort: start time (newest first) by default
  await gotoPage(page, consoleUrl, `/traces?q=sort-${t}`);
  await expect(rows(page)).toHaveCount(3);
  const sortBy = page.getByLabel('Sort by');
  const direction = page.getByRole('button', { name: /^Sort (descending|ascending)/ });
  await expect.poll(() => rowIds(page)).toEqual([c.traceId, b.traceId, a.traceId]);
  await sortBy.selectOption('duration');
  await expect(page).toHaveURL(/sort=duration/);
  await expect.poll(() => rowIds(page)).toEqual([b.traceId, c.traceId, a.traceId]);
  await direction.click();
  await expect(page).toHaveURL(/order=asc/);
  await expect(direction).toHaveAttribute('title', 'Ascending');
  await expect.poll(() => rowIds(page)).toEqual([a.traceId, c.traceId, b.traceId]);
  await sortBy.selectOption('service_name');
  await expect(page).toHaveURL(/sort=service_name/);
  await expect.poll(() => rowIds(page)).toEqual([b.traceId, c.traceId, a.traceId]);
  await sortBy.selectOption('name');
  await expect(page).toHaveURL(/sort=name/);
  await expect.poll(() => rowIds(page)).toEqual([a.traceId, c.traceId, b.traceId]);
  await page.reload();
  await expect(sortBy).toHaveValue('name');
  await expect.poll(() => rowIds(page)).toEqual([a.traceId, c.traceId, b.traceId]);
  await direction.click();
  await expect(page).not.toHaveURL(/order=/);
  await expect.poll(() => rowIds(page)).toEqual([b.traceId, c.traceId, a.traceId]);
  await sortBy.selectOption('start_time');
  await expect(page).not.toHaveURL(/sort=/);
  await expect.poll(() => rowIds(page)).toEqual([c.traceId, b.traceId, a.traceId]);
});

test('page sizes 50 (the default) and 100 page through 120 traces', async ({ page, consoleUrl }) => {
  const t = tag();
  const now = Date.now();
  await postOtlp(Array.from({ length: 120 }, (_, i) => oneSpan(`paging-${t} ${i}`, { startMs: now - 10_000 + i * 10 }).body));
  await gotoPage(page, consoleUrl, `/traces?q=paging-${t}`);
  const size = page.getByLabel('Page size');
  const pagination = page.getByTestId('trace-pagination');
  await expect(size).toHaveValue('50');
  await expect(rows(page)).toHaveCount(50);
  await expect(pagination).toContainText('1–50 of 120');
  await expect(pagination).toContainText('1 / 3');

  await size.selectOption('100');
  await expect(page).toHaveURL(/size=100/);
  await expect(rows(page)).toHaveCount(100);
  await expect(pagination).toContainText('1–100 of 120');
  await expect(pagination).toContainText('1 / 2');
  // newest first: the first page starts with the last one posted
  await expect(rows(page).first()).toContainText(`paging-${t} 119`);
  await page.getByRole('button', { name: 'Next page' }).click();
  await expect(page).toHaveURL(/page=1/);
  await expect(rows(page)).toHaveCount(20);
  await expect(pagination).toContainText('101–120 of 120');
  await expect(rows(page).last()).toContainText(`paging-${t} 0`);
  await expect(page.getByRole('button', { name: 'Next page' })).toBeDisabled();
  await page.reload();
  await expect(rows(page)).toHaveCount(20);

  // back to 50: the default leaves the URL, and paging starts over
  await size.selectOption('50');
  await expect(page).not.toHaveURL(/size=|page=/);
  await expect(rows(page)).toHaveCount(50);
  await expect(pagination).toContainText('1–50 of 120');
  await page.getByRole('button', { name: 'Next page' }).click();
  await expect(rows(page)).toHaveCount(50);
  await expect(pagination).toContainText('51–100 of 120');
  await page.getByRole('button', { name: 'Next page' }).click();
  await expect(rows(page)).toHaveCount(20);
  await expect(pagination).toContainText('101–120 of 120');
  await page.getByRole('button', { name: 'Previous page' }).click();
  await expect(pagination).toContainText('51–100 of 120');
});

test('service breakdown: spans, average duration and error rate per service match engine::traces::spans', async ({
  page,
  consoleUrl,
  stack,
}) => {
  // the failing consumer (payments: 2 spans, one error → 50 %), the producer (gateway and cart), a real order
  const order = await createOrder(stack, { sku: `SB-${tag()}` });
  const orderTrace = await eventually(async () => {
    const res = await call<{ spans: Array<{ trace_id: string }> }>(stack, 'engine::traces::list', {
      attributes: [['eng.state.key', order.id]],
    });
    return res.spans[0]?.trace_id;
  });

  for (const traceId of [story.consumer.traceId, story.producer.traceId, orderTrace]) {
    const spans = await settledSpans(stack, traceId, traceId === orderTrace ? 10 : 1);
    const expected = expectedBreakdown(spans);
    await gotoPage(page, consoleUrl, `/traces?trace_id=${traceId}`);
    await page.getByRole('tablist', { name: 'Trace views' }).getByRole('tab', { name: 'Service breakdown' }).click();
    await expect(page).toHaveURL(/view=services/);
    await expect(page.getByTestId('service-row')).toHaveCount(expected.size);
    await expect.poll(async () => Object.fromEntries(await shownBreakdown(page))).toEqual(Object.fromEntries(expected));
    if (traceId === story.consumer.traceId) {
      // and independently of the formatting code: 230 ms average, 1 of 2 spans failed
      expect(expected.get('payments')).toEqual({ spans: '2', avg: '230 ms', errors: '1', rate: '50%' });
    }
    if (traceId === story.producer.traceId) {
      expect(expected.get('gateway')).toMatchObject({ spans: '2', avg: '103 ms', rate: '0%' });
      expect(expected.get('cart')).toMatchObject({ spans: '2', avg: '75 ms', rate: '0%' });
    }
    if (traceId === orderTrace) {
      // the engine's spans and the orders worker's execute spans
      expect([...expected.keys()].sort()).toEqual(['eng', 'orders']);
    }
  }
});

test('a real POST /orders trace is found by filter and opens with the worker span under the HTTP span', async ({
  page,
  consoleUrl,
  stack,
}) => {
  const sku = `REAL-${tag()}`;
  const order = await createOrder(stack, { sku, qty: 2, customer: 'e2e' });
  expect(order.sku).toBe(sku);

  // the order id is the state key the trace writes (eng.state.key): filter on it in the UI
  await gotoPage(page, consoleUrl, '/traces');
  await page.getByRole('button', { name: 'Filters' }).click();
  await page.getByLabel('Attribute key').fill('eng.state.key');
  await page.getByLabel('Attribute value').fill(order.id);
  await page.getByRole('button', { name: 'Add', exact: true }).click();
  await expect(page.getByTestId('active-filters')).toContainText(`eng.state.key = ${order.id}`);
  await expect(page).toHaveURL(new RegExp(`attr=.*${order.id}`));
  await expect(rows(page)).toHaveCount(1);
  const found = rows(page).first();
  await expect(found).toContainText('POST /orders');
  await expect(found).toContainText('OK');
  const traceId = (await found.getAttribute('data-trace-id')) as string;

  // the engine agrees on the trace, its root and the worker span beneath it
  const spans = await settledSpans(stack, traceId, 10);
  const root = spans.find((s) => s.name === 'POST /orders' && !s.parent_span_id);
  const execute = spans.find((s) => s.name === 'execute orders::create');
  expect(root?.service_name).toBe('eng');
  expect(execute?.service_name).toBe('orders');
  expect(execute?.parent_span_id).toBe(root?.span_id);

  await found.click();
  await expect(detail(page)).toHaveAttribute('data-trace-id', traceId);
  await expect(page).toHaveURL(new RegExp(`trace_id=${traceId}`));
  const httpRow = page.locator(`[data-testid="waterfall-row"][data-span-id="${root?.span_id}"]`);
  const execRow = page.locator(`[data-testid="waterfall-row"][data-span-id="${execute?.span_id}"]`);
  await expect(page.getByTestId('waterfall-row').first()).toHaveAttribute('data-span-id', root?.span_id as string);
  await expect(httpRow).toContainText('POST /orders');
  await expect(httpRow).toHaveAttribute('aria-level', '1');
  await expect(execRow).toContainText('execute orders::create');
  await expect(execRow).toHaveAttribute('aria-level', '2');
  // the worker's span is the HTTP span's first child in the tree, right below it
  const order_ = await page.getByTestId('waterfall-row').evaluateAll((els) => els.map((e) => e.getAttribute('data-span-id')));
  expect(order_.indexOf(execute?.span_id as string)).toBe(order_.indexOf(root?.span_id as string) + 1);
  // its span panel names the service and the parent
  await execRow.click();
  await expect(page.getByTestId('span-panel')).toHaveAttribute('data-span-id', execute?.span_id as string);
  await expect(page.getByTestId('span-tab-info')).toContainText('orders');
  // the trace header counts every span the engine holds for it
  await expect(detail(page)).toContainText(`${spans.length} spans`);
});
