import { startEngine } from '../test/harness.ts';
import { call, randomTag, reloadInTheme } from './fixtures/engine-client.ts';
import { expectTotal, hex, type Line, otlpLogs, postOtlp, total } from './fixtures/otlp-logs.ts';
import { consoleArgsFor, startConsole } from './fixtures/stack.ts';
import { ARTIFACTS, expect, gotoPage, test } from './fixtures/test.ts';

/**
 * Logs page (seed 2.7, issue 6): filters that narrow and live in the URL, the live tail and Pause, a
 * log's trace id that opens its trace, a Clear that deletes on the engine, and an engine that keeps
 * no logs. Lines are sent the way any OTel SDK exports them: OTLP/JSON to `POST /v1/logs` on the
 * engine's HTTP port, each test under services of its own. 100,000 lines: logs-perf.spec.ts.
 */
test.describe.configure({ mode: 'serial' });

test('filters narrow the list and live in the URL: severity, search, time range, trace id, service', async ({
  page,
  consoleUrl,
  stack,
}) => {
  const service = `e2e-logs-${randomTag()}`;
  const traceId = hex(16);
  const now = Date.now();
  const lines: Line[] = [
    ...[0, 1, 2].map((i) => ({ service, severity: 'ERROR' as const, body: `payment declined #${i}`, timeMs: now - 1000 * i })),
    ...[0, 1, 2, 3].map((i) => ({ service, severity: 'WARN' as const, body: `slow response #${i}`, timeMs: now - 5000 - 1000 * i })),
    ...[0, 1, 2, 3, 4].map((i) => ({ service, severity: 'INFO' as const, body: `request served #${i}`, timeMs: now - 10_000 - 1000 * i })),
    { service, severity: 'INFO', body: 'request served with a trace', timeMs: now - 20_000, traceId, spanId: hex(8) },
    ...[0, 1].map((i) => ({ service, severity: 'INFO' as const, body: `old line #${i}`, timeMs: now - 2 * 3_600_000 - i * 1000 })),
  ];
  await postOtlp(stack, '/v1/logs', otlpLogs(lines));

  await gotoPage(page, consoleUrl, `/logs?service=${service}`);
  await expectTotal(page, 15);
  await expect(page.getByTestId('log-row').first()).toContainText('payment declined #0'); // newest first
  await expect(page.getByTestId('severity-ERROR')).toContainText('3');
  await expect(page.getByTestId('log-sources')).toContainText(service);

  await page.getByTestId('severity-ERROR').click();
  await expectTotal(page, 3);
  await expect(page).toHaveURL(/severity=/);
  expect(await page.getByTestId('log-row').evaluateAll((els) => els.map((e) => e.getAttribute('data-severity')))).toEqual([
    'ERROR',
    'ERROR',
    'ERROR',
  ]);
  await page.getByTestId('severity-WARN').click();
  await expectTotal(page, 7);
  await page.getByPlaceholder('Search messages…').fill('declined');
  await expectTotal(page, 3);
  await expect(page).toHaveURL(/q=declined/);

  // a shared link reopens the same view
  await page.reload();
  await expectTotal(page, 3);
  await expect(page.getByPlaceholder('Search messages…')).toHaveValue('declined');
  await expect(page.getByTestId('severity-ERROR')).toHaveAttribute('aria-pressed', 'true');

  await page.getByRole('button', { name: 'Clear filters' }).first().click();
  await gotoPage(page, consoleUrl, `/logs?service=${service}&range=15m`);
  await expectTotal(page, 13);
  await page.getByLabel('Time range').selectOption('custom');
  await expect(page).toHaveURL(/range=custom/);
  await gotoPage(page, consoleUrl, `/logs?service=${service}&range=custom&from=${now - 3 * 3_600_000}&to=${now - 3_600_000}`);
  await expectTotal(page, 2);
  await expect(page.getByTestId('log-row').first()).toContainText('old line #0');

  await gotoPage(page, consoleUrl, `/logs?service=${service}`);
  await page.getByLabel('Trace id').fill(traceId);
  await expectTotal(page, 1);
  await expect(page).toHaveURL(new RegExp(`trace_id=${traceId}`));
  await expect(page.getByTestId('log-row')).toContainText('request served with a trace');

  // a source filters by its service
  await gotoPage(page, consoleUrl, '/logs');
  await page.getByTestId('log-source').filter({ hasText: service }).click();
  await expect(page).toHaveURL(new RegExp(`service=${service}`));
  await expectTotal(page, 15);
});

test('live tail shows new lines at the top by itself; Pause holds them until resumed', async ({ page, consoleUrl, stack }) => {
  const service = `e2e-tail-${randomTag()}`;
  await postOtlp(stack, '/v1/logs', otlpLogs([{ service, severity: 'INFO', body: 'tail line 1', timeMs: Date.now() }]));
  await gotoPage(page, consoleUrl, `/logs?service=${service}`);
  await expectTotal(page, 1);
  await postOtlp(stack, '/v1/logs', otlpLogs([{ service, severity: 'INFO', body: 'tail line 2', timeMs: Date.now() }]));
  await expect(page.getByTestId('log-row').first()).toContainText('tail line 2');
  await expectTotal(page, 2);

  await page.getByTestId('logs-live').click();
  await expect(page.getByTestId('logs-live')).toHaveText('Paused');
  await postOtlp(stack, '/v1/logs', otlpLogs([{ service, severity: 'WARN', body: 'tail line 3', timeMs: Date.now() }]));
  await page.waitForTimeout(3000); // two tail periods
  await expectTotal(page, 2);
  await expect(page.getByTestId('log-row').first()).toContainText('tail line 2');
  await page.getByTestId('logs-live').click();
  await expect(page.getByTestId('log-row').first()).toContainText('tail line 3');
  await expectTotal(page, 3);
});

test("a log's trace id opens its trace; a row expands to its full JSON", async ({ page, consoleUrl, stack }) => {
  const traceId = hex(16);
  const spanId = hex(8);
  const service = `e2e-traced-${randomTag()}`;
  const now = Date.now();
  await postOtlp(stack, '/v1/traces', {
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] },
        scopeSpans: [
          {
            scope: { name: 'e2e-logs' },
            spans: [
              {
                traceId,
                spanId,
                name: 'e2e log-linked span',
                kind: 2,
                startTimeUnixNano: String((now - 50) * 1e6),
                endTimeUnixNano: String(now * 1e6),
                status: { code: 1 },
              },
            ],
          },
        ],
      },
    ],
  });
  await postOtlp(
    stack,
    '/v1/logs',
    otlpLogs([{ service, severity: 'WARN', body: 'inventory low for sku E2E', timeMs: now - 10, traceId, spanId }]),
  );

  await gotoPage(page, consoleUrl, `/logs?service=${service}`);
  const row = page.getByTestId('log-row').first();
  await expect(row).toContainText('inventory low for sku E2E');
  await row.getByRole('button', { expanded: false }).click();
  const detail = page.getByTestId('log-detail');
  await expect(detail).toContainText(`"trace_id": "${traceId}"`);
  await expect(detail).toContainText(`"span_id": "${spanId}"`);
  await expect(detail).toContainText('"e2e.tag": "logs-spec"');
  await page.screenshot({ path: `${ARTIFACTS}logs-dark.png` });

  await row.getByTestId('log-trace-link').click();
  await expect(page).toHaveURL(new RegExp(`#/traces\\?.*trace_id=${traceId}`));
  await expect(page.getByRole('heading', { level: 1, name: 'Traces' })).toBeVisible();
  await expect(page.getByText('e2e log-linked span').first()).toBeVisible();
});

test('Clear asks first, deletes on the engine, and a reload shows none', async ({ page, consoleUrl, stack }) => {
  const marker = `e2e-clear-${randomTag()}`;
  await postOtlp(stack, '/v1/logs', otlpLogs([{ service: marker, severity: 'ERROR', body: `${marker} must go`, timeMs: Date.now() }]));
  await gotoPage(page, consoleUrl, '/logs');
  await expect(page.getByTestId('log-row').first()).toBeVisible();
  const before = await total(page);
  await reloadInTheme(page, 'light');
  await expect(page.getByTestId('log-row').first()).toBeVisible();
  await page.screenshot({ path: `${ARTIFACTS}logs-light.png` });

  await page.getByTestId('logs-clear').click();
  const dialog = page.getByRole('dialog');
  await expect(dialog).toContainText('engine::logs::clear');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  expect((await call<{ total: number }>(stack, 'engine::logs::list', { limit: 1 })).total).toBeGreaterThanOrEqual(before);

  await page.getByTestId('logs-clear').click();
  await page.getByTestId('confirm-action').click();
  await expect(dialog).toBeHidden();
  await expect.poll(() => total(page)).toBeLessThan(10);
  expect((await call<{ total: number }>(stack, 'engine::logs::list', { search: marker, limit: 1 })).total).toBe(0);

  await page.reload();
  await expect.poll(() => total(page)).toBeLessThan(10);
  await gotoPage(page, consoleUrl, `/logs?q=${marker}`);
  await expectTotal(page, 0);
  await expect(page.getByText('No log line matches these filters')).toBeVisible();
  await page.screenshot({ path: `${ARTIFACTS}logs-empty-light.png` });
});

test('an engine without logs, state or queues says what to turn on', async ({ page }) => {
  const engine = await startEngine({
    workersYaml: [
      '  - name: eng-http',
      '    config:',
      '      port: {{HTTP_PORT}}',
      '  - name: eng-stream',
      '    config:',
      '      port: {{STREAMS_PORT}}',
      '  - name: eng-observability',
      '    config:',
      '      logs_enabled: false',
      '',
    ].join('\n'),
    env: { ENG_LOG_LEVEL: 'warn' },
  });
  const console_ = await startConsole([...consoleArgsFor(engine), '--no-otel']).catch(async (err) => {
    await engine.stop();
    throw err;
  });
  try {
    await gotoPage(page, console_.url, '/logs');
    await expect(page.getByText('Logs are off on this engine')).toBeVisible();
    await expect(page.getByText(/logs_enabled: true/)).toBeVisible();
    await page.screenshot({ path: `${ARTIFACTS}logs-disabled-dark.png` });
    // the same engine runs neither eng-state nor eng-queue
    await gotoPage(page, console_.url, '/states');
    await expect(page.getByText('No state store')).toBeVisible();
    await expect(page.getByText(/Add eng-state to its config.yaml/)).toBeVisible();
    await gotoPage(page, console_.url, '/queues');
    await expect(page.getByText('No queue module')).toBeVisible();
  } finally {
    await console_.stop();
    await engine.stop();
  }
});
