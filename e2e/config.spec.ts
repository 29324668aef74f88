import { readFileSync } from 'node:fs';
import type { Locator, Page } from '@playwright/test';
import { ensureBundle, startWorker as startConsoleWorker } from '../packages/console-worker/test/helpers.ts';
import { freePort } from '../test/harness.ts';
import { consoleArgsFor, startConsole } from './fixtures/stack.ts';
import { expect, gotoPage, test } from './fixtures/test.ts';

/**
 * Config page (seed 2.8): connectivity with live probes, ports, OpenTelemetry settings and
 * versions, checked against the running stack: the console's own `/_console/config` (fetched from
 * the page's origin), the engine's `engine::health::check`, and the ports the fixtures chose.
 * Served by the console worker, the same page shows the worker's own settings and flags (issue 19 §1).
 */

interface ConsoleConfig {
  version: string;
  host: string;
  port: number;
  engine_port: number;
  ws_port: number;
  bridge_port: number;
  otel: { enabled: boolean; service_name: string; endpoint?: string };
  engine_urls: { http: string; streams: string; bridge: string };
}

interface Health {
  version?: string;
  components: { otel?: { details?: { exporter?: string; service_name?: string } } };
}

const CONSOLE_PKG_VERSION = JSON.parse(readFileSync(new URL('../packages/console/package.json', import.meta.url), 'utf8')).version;
const ENGINE_PKG_VERSION = JSON.parse(readFileSync(new URL('../packages/engine/package.json', import.meta.url), 'utf8')).version;

/** The `<dd>` of the row labelled `label` in a definition list of the page. */
const value = (list: Locator, label: string) =>
  list
    .locator(':scope > div', { has: list.page().locator('dt', { hasText: new RegExp(`^${label.replace(/[()]/g, '\\$&')}$`) }) })
    .locator('dd');

const configOf = (page: Page) => page.evaluate(async () => (await fetch('/_console/config')).json()) as Promise<ConsoleConfig>;

test('shows the console’s resolved settings, live probes, OpenTelemetry and versions of the running stack', async ({
  page,
  consoleUrl,
  stack,
  engineClient,
}) => {
  const probeCalls: string[] = [];
  page.on('request', (req) => {
    if (new URL(req.url()).pathname === '/_console/probe') probeCalls.push(req.url());
  });
  await gotoPage(page, consoleUrl, '/config');
  await expect(page.getByRole('heading', { level: 1, name: 'Config' })).toBeVisible();
  const config = await configOf(page);
  // the endpoint itself tells the truth about the stack the fixtures started
  expect(config).toMatchObject({
    port: stack.console.port,
    engine_port: stack.engine.ports.HTTP,
    ws_port: stack.engine.ports.STREAMS,
    bridge_port: stack.engine.busPort,
    version: CONSOLE_PKG_VERSION,
    otel: { enabled: false, service_name: 'eng-console' },
  });

  // connectivity: every probe, from the browser and from the console server, reached its target
  for (const id of ['bus', 'streams', 'engine_http', 'streams_ws', 'bridge_ws']) {
    const probe = page.getByTestId(`probe-${id}`);
    await expect(probe).toHaveAttribute('data-ok', 'true');
    await expect(probe).not.toContainText('unreachable');
    await expect(probe).toContainText(/\d+(\.\d+)? (ms|s|µs)/);
  }
  await expect(page.getByTestId('probe-engine_http')).toContainText(config.engine_urls.http);
  await expect(page.getByTestId('probe-streams_ws')).toContainText(config.engine_urls.streams);
  await expect(page.getByTestId('probe-bridge_ws')).toContainText(config.engine_urls.bridge);
  await expect(page.getByTestId('probe-bus')).toContainText(`${new URL(consoleUrl).host}/ws`);
  await expect(page.getByTestId('probe-streams')).toContainText(`${new URL(consoleUrl).host}/ws/streams`);
  // live: "Probe again" asks the server once more
  const before = probeCalls.length;
  await page.getByRole('button', { name: 'Probe again' }).click();
  await expect.poll(() => probeCalls.length).toBeGreaterThan(before);

  // ports and endpoints
  const ports = page.getByTestId('config-ports');
  await expect(value(ports, 'Console UI')).toHaveText(`http://${config.host}:${config.port}`);
  await expect(value(ports, 'Engine HTTP API')).toHaveText(`http://127.0.0.1:${stack.engine.ports.HTTP}`);
  await expect(value(ports, 'Engine streams WebSocket')).toHaveText(`ws://127.0.0.1:${stack.engine.ports.STREAMS}`);
  await expect(value(ports, 'Engine SDK bridge')).toHaveText(`ws://127.0.0.1:${stack.engine.busPort}`);
  await expect(value(ports, 'Browser bus (proxied)')).toContainText(`${new URL(consoleUrl).host}/ws`);
  await expect(value(ports, 'Flow page')).toContainText('disabled');
  await expect(page.getByTestId('config-command-line')).toHaveText(
    `eng-console -p ${config.port} --engine-port ${config.engine_port} --ws-port ${config.ws_port} --bridge-port ${config.bridge_port} --no-otel`,
  );

  // OpenTelemetry: the console's own (off in this stack) and the engine's pipeline
  const health = await engineClient.call<Health>('engine::health::check', {});
  const otel = page.getByTestId('config-otel');
  await expect(value(otel, 'Console traces')).toHaveText('disabled (--no-otel)');
  await expect(value(otel, 'Console service name')).toHaveText('eng-console');
  await expect(value(otel, 'Engine exporter')).toHaveText(health.components.otel?.details?.exporter as string);
  await expect(value(otel, 'Engine service name')).toHaveText(health.components.otel?.details?.service_name as string);

  // versions
  const versions = page.getByTestId('config-versions');
  await expect(value(versions, 'eng-console')).toHaveText(`v${config.version}`);
  expect(health.version).toBe(ENGINE_PKG_VERSION);
  await expect(value(versions, 'Engine')).toHaveText(`v${health.version}`);
  await expect(value(versions, 'Console server runtime')).toHaveText(/^Node v\d+\./);
});

test('a console with its own telemetry and a wrong streams port: the OTel settings and the failing probe show', async ({ page, stack }) => {
  const closedPort = await freePort();
  const args = consoleArgsFor(stack.engine).map((a, i, all) => (all[i - 1] === '--ws-port' ? String(closedPort) : a));
  const traced = await startConsole([...args, '--otel-service-name', 'e2e-config-console']);
  try {
    await gotoPage(page, traced.url, '/config');
    const config = await configOf(page);
    expect(config.otel).toMatchObject({ enabled: true, service_name: 'e2e-config-console' });
    expect(config.ws_port).toBe(closedPort);
    const otel = page.getByTestId('config-otel');
    await expect(value(otel, 'Console traces')).toHaveText('exporting');
    await expect(value(otel, 'Console service name')).toHaveText('e2e-config-console');
    await expect(value(otel, 'OTLP endpoint')).toHaveText(config.otel.endpoint as string);
    await expect(page.getByTestId('config-command-line')).toContainText('--otel-service-name e2e-config-console');
    await expect(page.getByTestId('config-command-line')).not.toContainText('--no-otel');

    // the streams socket is down from both sides; the bus and the HTTP API are up
    for (const id of ['streams', 'streams_ws']) {
      await expect(page.getByTestId(`probe-${id}`)).toHaveAttribute('data-ok', 'false');
      await expect(page.getByTestId(`probe-${id}`)).toContainText('unreachable');
    }
    await expect(page.getByTestId('probe-streams_ws')).toContainText(`ws://127.0.0.1:${closedPort}`);
    // the browser's probe goes through the console, which says why it closed the socket
    await expect(page.getByTestId('probe-streams')).toContainText(`engine unreachable at ws://127.0.0.1:${closedPort}`);
    for (const id of ['bus', 'engine_http', 'bridge_ws']) await expect(page.getByTestId(`probe-${id}`)).toHaveAttribute('data-ok', 'true');
  } finally {
    await traced.stop();
  }
});

test('served by a console worker started by hand: its own settings and flags, console::status, probes and the HTTP test', async ({
  page,
  stack,
  engineClient,
}) => {
  ensureBundle();
  const cw = await startConsoleWorker([
    '--http-port',
    '0',
    '--url',
    stack.engine.busUrl,
    '--engine-http-url',
    `http://127.0.0.1:${stack.engine.ports.HTTP}`,
    '--engine-streams-url',
    `ws://127.0.0.1:${stack.engine.ports.STREAMS}`,
  ]);
  try {
    await gotoPage(page, cw.base, '/config');
    const config = await configOf(page);
    expect(config).toMatchObject({ port: cw.ready.http_port, engine_port: stack.engine.ports.HTTP, ws_port: stack.engine.ports.STREAMS });
    await expect(page.getByRole('status').filter({ hasText: 'Not available' })).toHaveCount(0);
    for (const id of ['bus', 'streams', 'engine_http', 'streams_ws', 'bridge_ws']) {
      await expect(page.getByTestId(`probe-${id}`)).toHaveAttribute('data-ok', 'true');
    }
    const ports = page.getByTestId('config-ports');
    await expect(value(ports, 'Engine HTTP API')).toHaveAttribute('title', '--engine-http-url / engine_http_url — from its flag');
    await expect(value(ports, 'Engine SDK bridge')).toHaveAttribute('title', '--url (ENG_URL)');
    await expect(value(ports, 'Launched')).toHaveText('by hand (eng-console-worker)');
    await expect(value(ports, 'Flow page')).toHaveText('disabled (enable_flow: true, --enable-flow, ENG_ENABLE_FLOW=1)');
    await expect(page.getByTestId('config-command-line')).toHaveText(
      `eng-console-worker --http-port ${cw.ready.http_port} --url ${stack.engine.busUrl} --engine-http-url http://127.0.0.1:${stack.engine.ports.HTTP} --engine-streams-url ws://127.0.0.1:${stack.engine.ports.STREAMS}`,
    );
    const versions = page.getByTestId('config-versions');
    await expect(value(versions, 'Console worker')).toHaveText(`v${cw.ready.version}`);
    await expect(value(versions, 'console::status')).toHaveText(
      `v${cw.ready.version} · port ${cw.ready.http_port} · ${stack.engine.busUrl}`,
    );
    const health = await engineClient.call<Health>('engine::health::check', {});
    await expect(value(versions, 'Engine')).toHaveText(`v${health.version}`);
    await expect(value(page.getByTestId('config-otel'), 'Console traces')).toHaveText('none (the console worker exports no traces)');

    // Flow is off on this worker: the page names the worker's own key and flag, not eng-console's
    await page.goto(`${cw.base}/#/flow`);
    await expect(page.getByText('The Flow page is off')).toBeVisible();
    await expect(page.locator('main')).toContainText('enable_flow: true');
    await expect(page.locator('main')).toContainText('--enable-flow');
    await expect(page.locator('main')).not.toContainText('eng-console --enable-flow');
    await expect(page.locator('main')).not.toContainText('/_console/config');

    // the Triggers page's HTTP test goes through this server too
    await page.goto(`${cw.base}/#/triggers?type=http`);
    await page.locator('[data-trigger-id]', { hasText: 'orders::list' }).click();
    const panel = page.getByTestId('http-test-panel');
    await panel.getByRole('button', { name: 'Send request' }).click();
    await expect(page.getByTestId('http-test-status')).toHaveText('200');
    await expect(panel).not.toContainText('does not forward');
  } finally {
    await cw.stop();
  }
});
