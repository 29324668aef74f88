import { mkdirSync } from 'node:fs';
import { connect, type EngClient } from '@eng/sdk';
import type { Page } from '@playwright/test';
import { ensureEmbeddedBundle } from '../packages/console-worker/scripts/build-bundle.ts';
import { FakeOpenAI } from '../packages/harness/test/fakes/openai.ts';
import { makeRepos } from '../packages/worktree/test/helpers.ts';
import { type EngineProcess, startEngine } from '../test/harness.ts';
import { OPENAI_KEY, openChat, until } from './fixtures/chat-stack.ts';
import { ENGINE_MODULES_YAML } from './fixtures/stack.ts';
import { ARTIFACTS, expect, test } from './fixtures/test.ts';

/**
 * Issue 25 item 1: the chat survives an engine outage. With a conversation open, the engine is
 * stopped (SIGTERM): for 15 s and more the transcript, the title, the token meter, the
 * conversation list and the Chat and Worktrees nav entries stay on screen, read-only under the
 * outage banner (the composer disabled, saying why); with no conversation open the page never
 * turns into the "needs the chat stack" install notice. When the engine is back the same
 * conversation is shown and live again, in the same document, and a message can be sent.
 *
 * The stack is `npm start`'s shape, this spec's own: one engine whose supervisor launches the
 * console worker, the seven chat workers and the worktree worker, so a SIGTERM stops them before
 * the bus closes (the UI hears them leave first) and a restart launches them again. The session
 * store keeps its sessions in the engine's file-based state, as `npm start` does.
 */

test.describe.configure({ mode: 'serial', timeout: 300_000 });

const SHOTS = `${ARTIFACTS}chat-outage/`;
let engine: EngineProcess;
let openai: FakeOpenAI;
let client: EngClient;
let consoleUrl: string;

const NEEDED = ['console::status', 'harness::send', 'session::messages', 'router::models::list', 'approval::resolve', 'worktree::list'];

/** Everything the page needs is registered (again, after a restart) and the model list is filled. */
async function stackReady() {
  let missing: string[] = NEEDED;
  try {
    await until(async () => {
      const { functions } = await client.call<{ functions: Array<{ function_id: string }> }>('engine::functions::list', {
        include_internal: true,
      });
      const ids = new Set(functions.map((f) => f.function_id));
      missing = NEEDED.filter((id) => !ids.has(id));
      return missing.length === 0;
    }, 120_000);
  } catch (err) {
    throw new Error(`${(err as Error).message}; missing ${missing.join(', ')}\n${engine.logs().slice(-3000)}`);
  }
  await until(async () => (await client.call<{ models: unknown[] }>('router::models::list', {})).models.length > 0, 30_000);
}

test.beforeAll(async () => {
  test.setTimeout(300_000);
  mkdirSync(SHOTS, { recursive: true });
  ensureEmbeddedBundle({ env: { ...process.env, SKIP_WEB_BUILD: '1' }, log: (l) => process.stdout.write(`[e2e] ${l}\n`) });
  openai = await new FakeOpenAI().start();
  openai.models = ['gpt-4o', 'gpt-4o-mini'];
  openai.fallback = () => openai.reply({ text: 'OK.' });
  const repos = makeRepos();
  const configYaml = [
    'workers:',
    '  - name: eng-worker-manager',
    '    config:',
    '      port: {{BUS_PORT}}',
    ENGINE_MODULES_YAML.trimEnd(),
    '  - name: console',
    '    config:',
    '      http_port: {{CONSOLE_PORT}}',
    ...['session-manager', 'approval-gate', 'llm-router', 'provider-openai', 'provider-anthropic', 'context-manager', 'harness'].map(
      (name) => `  - name: ${name}`,
    ),
    '  - name: worktree',
    '    config:',
    `      worktree_root: ${JSON.stringify(repos.root)}`,
    "      prune_schedule: ''",
    '',
  ].join('\n');
  engine = await startEngine({
    configYaml,
    env: { ENG_LOG_LEVEL: 'warn', SKIP_WEB_BUILD: '1', OPENAI_API_KEY: OPENAI_KEY, OPENAI_BASE_URL: openai.baseUrl, ...repos.env },
    readyTimeoutMs: 60_000,
  });
  consoleUrl = `http://127.0.0.1:${engine.ports.CONSOLE}`;
  client = connect(engine.busUrl, { name: 'e2e-chat-outage', registerWorker: false });
  await client.ready({ timeoutMs: 10_000 });
  await stackReady();
});

test.afterAll(async () => {
  await client?.close();
  await engine?.stop();
  await openai?.stop();
});

const nav = (page: Page) => page.getByRole('navigation', { name: 'Main navigation' });
const input = (page: Page) => page.getByTestId('composer-input');
const OUTAGE_REASON = 'The engine is unreachable: messages can be sent once it is back';

async function send(page: Page, text: string, answer: string) {
  openai.turn({ text: answer });
  await input(page).fill(text);
  await expect(page.getByTestId('send-button')).toBeEnabled({ timeout: 20_000 });
  await input(page).press('Enter');
  // the answer is drawn as Markdown: **bold** shows as bold text, without the asterisks
  await expect(page.getByTestId('assistant-message').last()).toContainText(answer.replaceAll('**', ''), { timeout: 20_000 });
  await expect(page.getByTestId('chat-status')).toHaveText('idle', { timeout: 20_000 });
}

/** Run `check` about once a second for `ms`: what it asserts must hold the whole time. */
async function holds(page: Page, ms: number, check: () => Promise<void>) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    await check();
    await page.waitForTimeout(1000);
  }
  await check();
}

async function navEntries(page: Page) {
  await expect(nav(page).getByRole('link', { name: 'Chat', exact: true })).toBeVisible({ timeout: 2000 });
  await expect(nav(page).getByRole('link', { name: 'Worktrees', exact: true })).toBeVisible({ timeout: 2000 });
}

/** Light and dark, at 1440 and 390 px; at 390 the conversation list steps aside (it lies over the conversation there). */
async function shoot(page: Page, name: string) {
  for (const width of [1440, 390]) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
    const hide = page.getByRole('button', { name: 'Hide conversations' });
    if (width === 390 && (await hide.isVisible())) await hide.click();
    for (const theme of ['dark', 'light'] as const) {
      await page.evaluate(async (t) => {
        document.documentElement.setAttribute('data-theme', t);
        // the colours change with a transition: the shot is of the end state
        await Promise.all(
          document
            .getAnimations()
            // finite ones only: a spinner never finishes
            .filter((a) => Number.isFinite(Number(a.effect?.getComputedTiming().endTime)))
            .map((a) => a.finished.catch(() => undefined)),
        );
      }, theme);
      await page.screenshot({ path: `${SHOTS}${name}-${theme}-${width}.png` });
    }
  }
  await page.setViewportSize({ width: 1440, height: 900 });
  const show = page.getByRole('button', { name: 'Show conversations' });
  if (await show.isVisible()) await show.click();
  await page.evaluate(() => document.documentElement.setAttribute('data-theme', 'dark'));
}

test('an open conversation stays on screen, read-only, while the engine is down, and comes back live in place', async ({ page }) => {
  await openChat(page, consoleUrl);
  await navEntries(page);
  await send(page, 'Where do orders go after checkout?', 'They are queued for **fulfilment**.');
  await expect(page.getByTestId('assistant-message').last().locator('strong')).toHaveText('fulfilment');
  await send(page, 'And after fulfilment?', 'A shipment record is written to the orders stream.');
  const sessionId = (await page.getByTestId('session-id').innerText()).trim();
  expect(sessionId).toBeTruthy();
  const title = page.getByTestId('chat-title');
  await expect(title).toHaveText('Where do orders go after checkout?');
  const meter = page.getByTestId('context-meter');
  const tokens = Number(await meter.getAttribute('data-tokens'));
  expect(tokens).toBeGreaterThan(10);
  const row = page.locator(`[data-testid="conversation"][data-session-id="${sessionId}"]`);
  await expect(row).toBeVisible();
  // (the console worker serving this page stops with the engine: a page is visited once before, so its code is loaded)
  await nav(page).getByRole('link', { name: 'Functions', exact: true }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Functions' })).toBeVisible();
  await page.goBack();
  await expect(title).toHaveText('Where do orders go after checkout?');
  await page.evaluate(() => {
    (window as unknown as { sameDocument: boolean }).sameDocument = true;
  });

  await engine.stop();
  const banner = page.getByTestId('chat-outage');
  await expect(banner).toHaveAttribute('data-reason', 'engine', { timeout: 15_000 });
  await expect(banner).toContainText('What is shown is the last known state');
  await holds(page, 16_000, async () => {
    await expect(banner).toHaveAttribute('data-reason', 'engine', { timeout: 2000 });
    await expect(page.getByTestId('user-message').first()).toContainText('Where do orders go after checkout?', { timeout: 2000 });
    await expect(page.getByTestId('assistant-message').last()).toContainText('orders stream', { timeout: 2000 });
    await expect(title).toHaveText('Where do orders go after checkout?', { timeout: 2000 });
    await expect(meter).toHaveAttribute('data-tokens', String(tokens), { timeout: 2000 });
    await expect(page.getByTestId('session-id')).toHaveText(sessionId, { timeout: 2000 });
    await expect(row).toBeVisible({ timeout: 2000 });
    await expect(row.getByTestId('conversation-title')).toHaveText('Where do orders go after checkout?', { timeout: 2000 });
    await navEntries(page);
    await expect(page.getByTestId('send-button')).toBeDisabled({ timeout: 2000 });
    await expect(input(page)).toHaveAttribute('placeholder', OUTAGE_REASON, { timeout: 2000 });
    await expect(page.locator('main')).not.toContainText('needs the chat stack');
  });
  // another page and back during the outage: the conversation is still what it was
  await nav(page).getByRole('link', { name: 'Functions', exact: true }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Functions' })).toBeVisible();
  await page.goBack();
  await expect(page).toHaveURL(new RegExp(`#/chat/${sessionId}$`));
  await expect(page.getByTestId('assistant-message').last()).toContainText('orders stream');
  await expect(title).toHaveText('Where do orders go after checkout?');
  await expect(meter).toHaveAttribute('data-tokens', String(tokens));
  await shoot(page, 'conversation-outage');

  await engine.restart();
  await stackReady();
  await expect(page.getByTestId('connection-pill').first()).toHaveAttribute('data-connection', 'open', { timeout: 30_000 });
  // the chat workers reconnect with their own backoff (capped at 30 s)
  await expect(banner).toHaveCount(0, { timeout: 60_000 });
  await expect(title).toHaveText('Where do orders go after checkout?');
  await expect(page.getByTestId('session-id')).toHaveText(sessionId);
  await expect(page.getByTestId('assistant-message').last()).toContainText('orders stream');
  await send(page, 'Thanks, and returns?', 'Returns go back through the orders queue.');
  await expect(page.getByTestId('user-message')).toHaveCount(3);
  await expect(page.getByTestId('session-id')).toHaveText(sessionId);
  expect(await page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument)).toBe(true);
});

test('with no conversation open, the chat page and its nav entries stay during an outage: no install notice', async ({ page }) => {
  await openChat(page, consoleUrl);
  await navEntries(page);
  await expect(page.getByTestId('chat-empty')).toBeVisible();
  await page.evaluate(() => {
    (window as unknown as { sameDocument: boolean }).sameDocument = true;
  });

  await engine.stop();
  const banner = page.getByTestId('chat-outage');
  await expect(banner).toHaveAttribute('data-reason', 'engine', { timeout: 15_000 });
  await holds(page, 16_000, async () => {
    await expect(page.getByTestId('chat-page')).toBeVisible({ timeout: 2000 });
    await expect(page.getByTestId('install-command')).toHaveCount(0);
    await expect(page.locator('main')).not.toContainText('needs the chat stack');
    await expect(page.getByTestId('chat-empty')).toBeVisible({ timeout: 2000 });
    await expect(page.getByTestId('send-button')).toBeDisabled({ timeout: 2000 });
    await navEntries(page);
  });
  await shoot(page, 'empty-outage');

  await engine.restart();
  await stackReady();
  await expect(banner).toHaveCount(0, { timeout: 60_000 });
  await send(page, 'Are you back?', 'Yes, all back.');
  await expect(page).toHaveURL(/#\/chat\/[^/?]+/);
  expect(await page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument)).toBe(true);
});
