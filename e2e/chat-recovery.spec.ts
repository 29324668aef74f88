import { mkdirSync } from 'node:fs';
import type { Locator, Page } from '@playwright/test';
import { makeRepos, type Repos, startWorker, type WorkerProcess } from '../packages/worktree/test/helpers.ts';
import { type ChatStack, openChat, startChatStack, until } from './fixtures/chat-stack.ts';
import { ARTIFACTS, expect, test } from './fixtures/test.ts';

/**
 * Issue 25, chat: failed turns are not a dead end (item 4) and the composer fits (item 6, part).
 * Against the real chat stack with the fake OpenAI and Anthropic servers: a failed turn offers
 * Retry, which answers again in its place; Regenerate replaces the last answer; the last message is
 * edited in place and sent again, replacing it and its answer; Copy puts a message on the
 * clipboard; a 401 links to the provider's settings; a blank key is refused with the field named;
 * Remove key leaves the provider unconfigured. The composer's controls stay on one row at 1440 px
 * with a worktree badge, and none is cut off at 390 px.
 */

test.describe.configure({ mode: 'serial' });

const SHOTS = `${ARTIFACTS}chat-recovery/`;
let chat: ChatStack;

test.beforeAll(async ({ stack }) => {
  test.setTimeout(120_000);
  mkdirSync(SHOTS, { recursive: true });
  chat = await startChatStack(stack);
});
test.afterAll(async () => {
  // the engine is shared with other spec files: leave no stored credential behind
  await chat?.client.call('configuration::set', { id: 'llm-router', value: { providers: {} } }).catch(() => undefined);
  await chat?.stop();
});

const input = (page: Page) => page.getByTestId('composer-input');
const idle = (page: Page) => expect(page.getByTestId('chat-status')).toHaveText('idle', { timeout: 20_000 });
const answers = (page: Page) => page.getByTestId('assistant-message');

async function newChat(page: Page, consoleUrl: string, theme: 'light' | 'dark' = 'dark'): Promise<string> {
  await openChat(page, consoleUrl, theme);
  await page.getByTestId('new-chat').click();
  // the session is made by the first message, under the id the new conversation was given (issue 25 item 2)
  const id = await page.getByTestId('chat-page').getAttribute('data-conversation-id');
  expect(id).toBeTruthy();
  return id as string;
}

async function send(page: Page, text: string) {
  await input(page).fill(text);
  await expect(page.getByTestId('send-button')).toBeEnabled();
  await input(page).press('Enter');
}

/** What the model was sent in the latest generation (the system prompt left out). */
function lastContext(): string {
  const body = chat.openai.chatRequests().at(-1)?.body as { messages?: Array<{ role: string }> } | undefined;
  return JSON.stringify((body?.messages ?? []).filter((m) => m.role !== 'system'));
}

/** The session's active path as the store has it: role and text of each message. */
async function stored(sessionId: string): Promise<string[]> {
  const page = await chat.client.call<{ messages: Array<{ message?: { role: string; content: Array<{ type: string; text?: string }> } }> }>(
    'session::messages',
    { session_id: sessionId, limit: 500 },
  );
  return page.messages.map((m) => `${m.message?.role}:${(m.message?.content ?? []).map((b) => b.text ?? '').join('')}`);
}

/** Screenshots in both themes at 1440 and 390 px of what `visible` shows (looked at by hand). */
async function shoot(page: Page, name: string, visible: () => Locator) {
  for (const width of [1440, 390]) {
    await page.setViewportSize({ width, height: 900 });
    // (under a dialog the list stays: the dialog is what is shot)
    const dialog = (await page.getByRole('dialog').count()) > 0;
    if (width < 768 && !dialog && (await page.getByTestId('chat-sidebar').getAttribute('data-collapsed')) === 'false')
      await page.getByRole('button', { name: 'Hide conversations' }).click();
    await expect(visible()).toBeVisible();
    await visible().scrollIntoViewIfNeeded();
    for (const theme of ['light', 'dark'] as const) {
      await page.evaluate((t) => document.documentElement.setAttribute('data-theme', t), theme);
      await page.waitForTimeout(250);
      await page.screenshot({ path: `${SHOTS}${name}-${theme}-${width}.png` });
    }
  }
  await page.setViewportSize({ width: 1440, height: 900 });
}

test('a provider error: the failed turn offers Retry, and Retry answers in its place', async ({ page, consoleUrl }) => {
  const sessionId = await newChat(page, consoleUrl);
  chat.openai.error(400, 'The upstream model is temporarily unavailable.', 'invalid_request_error');
  await send(page, 'Say hello.');
  const notice = page.getByTestId('stop-notice');
  await expect(notice).toHaveAttribute('data-reason', 'error', { timeout: 20_000 });
  await expect(notice).toContainText('The upstream model is temporarily unavailable.');
  await expect(page.getByTestId('chat-status')).toHaveText('error');
  const retry = notice.getByTestId('retry-turn');
  await expect(retry).toBeVisible();
  await shoot(page, 'failed-turn', () => page.getByTestId('retry-turn'));

  chat.openai.turn({ text: 'Hello, after the retry.' });
  await page.getByTestId('retry-turn').click();
  await expect(answers(page)).toHaveText(['Hello, after the retry.'], { timeout: 20_000 });
  await expect(page.getByTestId('stop-notice')).toHaveCount(0);
  await expect(page.getByTestId('user-message')).toHaveCount(1);
  await idle(page);
  expect(await stored(sessionId)).toEqual(['user:Say hello.', 'assistant:Hello, after the retry.']);
  // a reload shows the same: the failed answer is no longer in the conversation
  await page.reload();
  await expect(answers(page)).toHaveText(['Hello, after the retry.']);
  await expect(page.getByTestId('stop-notice')).toHaveCount(0);
});

test('Regenerate replaces the last answer; Copy puts a message on the clipboard, from the keyboard too', async ({
  page,
  context,
  consoleUrl,
}) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(consoleUrl).origin });
  const sessionId = await newChat(page, consoleUrl);
  chat.openai.turn({ text: 'Paris is the capital.' });
  await send(page, 'Capital of France?');
  await expect(answers(page).last()).toContainText('Paris is the capital.', { timeout: 20_000 });
  chat.openai.turn({ text: 'The first answer: **forty-two**.' });
  await send(page, 'What is six times seven?');
  await expect(answers(page).last()).toContainText('The first answer:', { timeout: 20_000 });
  await idle(page);

  // only the last answer offers Regenerate; every answer can be copied
  const actions = page.getByTestId('answer-actions');
  await expect(actions).toHaveCount(2);
  await expect(actions.first().getByTestId('regenerate')).toHaveCount(0);
  const last = actions.last();
  await expect(last.getByTestId('regenerate')).toBeVisible();

  // Copy: the answer's Markdown, a brief "Copied"
  await last.getByTestId('copy-message').click();
  await expect(last.getByTestId('copy-message')).toHaveText('Copied');
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe('The first answer: **forty-two**.');
  await expect(last.getByTestId('copy-message')).toHaveText('Copy', { timeout: 5000 });
  // the user's message, from the keyboard
  const question = page.getByTestId('user-message').last();
  await question.getByTestId('copy-message').focus();
  await page.keyboard.press('Enter');
  await expect(question.getByTestId('copy-message')).toHaveText('Copied');
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe('What is six times seven?');
  await shoot(page, 'message-actions', () => page.getByTestId('regenerate'));

  // Regenerate: a new answer in place of the old one; the model is not sent the old one
  chat.openai.turn({ text: 'The regenerated answer: 42.' });
  await page.getByTestId('regenerate').click();
  await expect(answers(page).last()).toHaveText('The regenerated answer: 42.', { timeout: 20_000 });
  await expect(page.getByText('The first answer:')).toHaveCount(0);
  await expect(answers(page)).toHaveCount(2);
  await idle(page);
  expect(lastContext()).toContain('What is six times seven?');
  expect(lastContext()).not.toContain('The first answer');
  expect(await stored(sessionId)).toEqual([
    'user:Capital of France?',
    'assistant:Paris is the capital.',
    'user:What is six times seven?',
    'assistant:The regenerated answer: 42.',
  ]);
});

test('Edit the last message in place and send it again: it and its answer are replaced', async ({ page, consoleUrl }) => {
  const sessionId = await newChat(page, consoleUrl, 'light');
  chat.openai.turn({ text: 'Blue, mostly.' });
  await send(page, 'Colour of the sky?');
  await expect(answers(page).last()).toContainText('Blue, mostly.', { timeout: 20_000 });
  chat.openai.turn({ text: 'OLD ANSWER: four.' });
  await send(page, 'What is 2+2 with a typo?');
  await expect(answers(page).last()).toContainText('OLD ANSWER', { timeout: 20_000 });
  await idle(page);

  // only the last message can be edited
  await expect(page.getByTestId('user-message').first().getByTestId('edit-message')).toHaveCount(0);
  await page.getByTestId('user-message').last().getByTestId('edit-message').click();
  const field = page.getByTestId('edit-message-input');
  await expect(field).toBeFocused();
  await expect(field).toHaveValue('What is 2+2 with a typo?');
  // Escape leaves it as it was
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('edit-message-form')).toHaveCount(0);
  await expect(page.getByTestId('user-message').last()).toContainText('What is 2+2 with a typo?');

  await page.getByTestId('user-message').last().getByTestId('edit-message').click();
  await page.getByTestId('edit-message-input').fill('What is 3+3?');
  await shoot(page, 'edit-message', () => page.getByTestId('edit-message-form'));
  chat.openai.turn({ text: 'Six.' });
  await page.getByTestId('edit-message-input').press('Enter');
  await expect(answers(page).last()).toHaveText('Six.', { timeout: 20_000 });
  await expect(page.getByTestId('user-message')).toHaveText([/Colour of the sky\?/, /What is 3\+3\?/]);
  await expect(page.getByText('OLD ANSWER')).toHaveCount(0);
  await expect(page.getByText('with a typo')).toHaveCount(0);
  await idle(page);
  expect(lastContext()).toContain('What is 3+3?');
  expect(lastContext()).not.toContain('with a typo');
  expect(lastContext()).not.toContain('OLD ANSWER');
  expect(await stored(sessionId)).toEqual(['user:Colour of the sky?', 'assistant:Blue, mostly.', 'user:What is 3+3?', 'assistant:Six.']);
});

test('a 401 from the provider links to its settings', async ({ page, consoleUrl }) => {
  await newChat(page, consoleUrl);
  chat.openai.error(401, 'Incorrect API key provided: sk-e2e-o***789.', 'invalid_request_error', 'invalid_api_key');
  await send(page, 'Are you there?');
  const notice = page.getByTestId('stop-notice');
  await expect(notice).toHaveAttribute('data-error-kind', 'auth_expired', { timeout: 20_000 });
  await expect(notice).toContainText('OpenAI refused the credentials');
  const link = notice.getByTestId('open-provider-settings');
  await expect(link).toHaveText('Open OpenAI settings');
  await expect(notice.getByTestId('retry-turn')).toBeVisible();
  await shoot(page, 'auth-failed', () => page.getByTestId('open-provider-settings'));
  await link.click();
  const form = page.getByTestId('provider-config');
  await expect(form).toHaveAttribute('data-provider', 'openai');
  await expect(page.getByRole('dialog', { name: 'Configure OpenAI' })).toBeVisible();
  await expect(form.getByLabel('API key')).toBeVisible();
  await form.getByRole('button', { name: 'Close' }).click();
  await expect(form).toHaveCount(0);
});

test('a blank key is refused naming the field; Remove key leaves the provider unconfigured', async ({ page, consoleUrl }) => {
  const KEY = 'sk-ant-e2e-remove-me-0123456789';
  await openChat(page, consoleUrl, 'dark');
  const group = () => page.locator('[data-testid="model-group"][data-provider="anthropic"]');
  await page.getByTestId('model-picker').click();
  await expect(group()).toHaveAttribute('data-state', 'not-configured');
  await page.getByTestId('configure-anthropic').click();
  const form = page.getByTestId('provider-config');
  const key = form.getByLabel('API key');

  // nothing typed, nothing stored
  await form.getByRole('button', { name: 'Save' }).click();
  await expect(form.getByTestId('field-problem-api_key')).toContainText('API key (api_key) must not be empty');
  await expect(key).toHaveAttribute('aria-invalid', 'true');
  // spaces only
  await key.fill('    ');
  await expect(form.getByTestId('field-problem-api_key')).toHaveCount(0);
  await form.getByRole('button', { name: 'Save' }).click();
  await expect(form.getByTestId('field-problem-api_key')).toHaveText('API key (api_key) must not be empty or only spaces');
  await expect(form.getByTestId('provider-config-saved')).toHaveCount(0);
  await shoot(page, 'blank-key', () => form.getByTestId('field-problem-api_key'));
  const untouched = await chat.client.call<{ value: { providers?: Record<string, unknown> } | null }>('configuration::get', {
    id: 'llm-router',
  });
  expect(untouched.value?.providers?.anthropic ?? {}).not.toHaveProperty('api_key');

  // a real key: Anthropic's models arrive
  await key.fill(KEY);
  await form.getByRole('button', { name: 'Save' }).click();
  await expect(form.getByTestId('provider-config-saved')).toBeVisible();
  await expect(form.getByTestId('secret-set-api_key')).toHaveText('set');
  await until(
    async () => (await chat.client.call<{ models: unknown[] }>('router::models::list', { provider: 'anthropic' })).models.length > 0,
    20_000,
  );

  // Remove key, confirmed
  await form.getByTestId('remove-key').click();
  await expect(form.getByTestId('remove-key-confirm')).toContainText('Remove the stored key?');
  await shoot(page, 'remove-key', () => form.getByTestId('remove-key-confirm'));
  await form.getByTestId('remove-key-confirm-button').click();
  await expect(form.getByTestId('provider-key-removed')).toBeVisible();
  await expect(form.getByTestId('secret-set-api_key')).toHaveCount(0);
  await expect(form.getByTestId('remove-key')).toHaveCount(0);
  await expect(form.getByTestId('provider-key-removed')).toHaveAttribute('data-state', 'not-configured', { timeout: 20_000 });
  await expect(form.getByTestId('provider-key-removed')).toContainText('Anthropic is not configured now.');
  await form.getByRole('button', { name: 'Close' }).click();
  await page.getByTestId('model-picker').click();
  await expect(group()).toHaveAttribute('data-state', 'not-configured');
  await expect(group().getByTestId('model-option')).toHaveCount(0);
  // really gone from the configuration store, and never shown
  const after = await chat.client.call<{ value: { providers: Record<string, Record<string, unknown>> } }>('configuration::get', {
    id: 'llm-router',
  });
  expect(after.value.providers.anthropic).not.toHaveProperty('api_key');
  const providers = await chat.client.call<{ providers: Array<{ id: string; configured: boolean }> }>('router::provider::list', {});
  expect(providers.providers.find((p) => p.id === 'anthropic')?.configured).toBe(false);
  expect(await page.content()).not.toContain(KEY);
});

test.describe('the composer with a worktree badge', () => {
  let repos: Repos;
  let worker: WorkerProcess | undefined;

  test.beforeAll(async ({ stack, engineClient }) => {
    test.setTimeout(120_000);
    repos = makeRepos();
    await engineClient.call('configuration::delete', { id: 'worktree' }).catch(() => undefined);
    worker = startWorker(stack.engine.busUrl, {
      ...repos.env,
      ENG_WORKER_CONFIG: JSON.stringify({ worktree_root: repos.root, prune_schedule: '' }),
    });
    await worker.ready;
  });
  test.afterAll(async ({ engineClient }) => {
    await worker?.stop();
    await engineClient.call('configuration::delete', { id: 'worktree' }).catch(() => undefined);
  });

  /** The composer's controls (no attachment or menu open: every button is on its control row). */
  const controls = (page: Page) => page.getByTestId('composer').getByRole('button');

  test('one row at 1440 px with Send beside the badge; nothing cut off at 390 px', async ({ page, consoleUrl, engineClient }) => {
    test.setTimeout(120_000);
    await openChat(page, consoleUrl, 'dark');
    await expect(page.getByRole('navigation', { name: 'Main navigation' }).getByRole('link', { name: 'Worktrees' })).toBeVisible({
      timeout: 15_000,
    });
    await page.getByTestId('new-chat').click();
    const wt = await engineClient.call<{ worktree_id: string; branch: string }>(
      'worktree::create',
      { repo_path: repos.repo, branch: 'feature/a-rather-long-branch-name-for-the-composer-badge' },
      { timeoutMs: 30_000 },
    );
    await page.getByTestId('working-dir').click();
    await page.locator(`[data-testid="worktree-option"][data-worktree-id="${wt.worktree_id}"]`).click();
    const badge = page.getByTestId('working-dir').getByTestId('worktree-badge');
    await expect(badge).toBeVisible();
    // a model with an effort badge, the longest label the picker shows
    await page.getByTestId('model-picker').click();
    await page.locator('[data-testid="model-option"][data-model="openai::o4-mini"]').click();
    await page.getByTestId('effort-option').filter({ hasText: 'high' }).click();
    await page.keyboard.press('Escape');
    await input(page).fill('a message, so Send is enabled');

    // desktop: every control on the row of Send (same vertical band), the long branch truncated with its tooltip
    for (const sidebar of ['open', 'closed'] as const) {
      if (sidebar === 'closed') await page.getByRole('button', { name: 'Hide conversations' }).click();
      const send = await page.getByTestId('send-button').boundingBox();
      expect(send).not.toBeNull();
      // modes ×3, model, working directory, Attach, Send
      expect(await controls(page).count()).toBe(7);
      for (const control of await controls(page).all()) {
        const name = String((await control.getAttribute('data-testid')) ?? (await control.getAttribute('title')));
        const box = await control.boundingBox();
        expect(box, name).not.toBeNull();
        expect(
          Math.abs((box?.y ?? 0) + (box?.height ?? 0) / 2 - ((send?.y ?? 0) + (send?.height ?? 0) / 2)),
          `${name} on the row of Send`,
        ).toBeLessThan(4);
      }
      await page.screenshot({ path: `${SHOTS}composer-worktree-sidebar-${sidebar}-dark-1440.png` });
    }
    await expect(badge).toHaveAttribute('title', /feature\/a-rather-long-branch-name-for-the-composer-badge/);
    const branch = badge.getByTestId('worktree-badge-branch');
    expect(await branch.evaluate((el) => el.scrollWidth > el.clientWidth)).toBe(true);

    // 390 px: every control wholly inside the window and not clipped by the composer, one row still
    await page.setViewportSize({ width: 390, height: 800 });
    await until(async () => ((await page.getByTestId('composer').boundingBox())?.width ?? 999) < 390);
    const composer = await page.getByTestId('composer').boundingBox();
    const all = await controls(page).all();
    expect(all).toHaveLength(7);
    for (const control of all) {
      const name = (await control.getAttribute('data-testid')) ?? (await control.getAttribute('title'));
      await expect(control, String(name)).toBeVisible();
      const box = await control.boundingBox();
      expect(box, String(name)).not.toBeNull();
      const b = box as NonNullable<typeof box>;
      expect(b.x, `${name} left edge`).toBeGreaterThanOrEqual(0);
      expect(b.x + b.width, `${name} right edge`).toBeLessThanOrEqual(390);
      expect(b.x, `${name} inside the composer`).toBeGreaterThanOrEqual(composer?.x ?? 0);
      expect(b.x + b.width, `${name} inside the composer`).toBeLessThanOrEqual((composer?.x ?? 0) + (composer?.width ?? 0));
      expect(b.width, `${name} keeps room to be tapped`).toBeGreaterThanOrEqual(24);
      // its own content is not cut either (a button narrower than what it holds)
      expect(await control.evaluate((el) => el.scrollWidth <= el.clientWidth + 1), `${name} content`).toBe(true);
    }
    const send = await page.getByTestId('send-button').boundingBox();
    const picker = await page.getByTestId('model-picker').boundingBox();
    expect(Math.abs((send?.y ?? 0) - (picker?.y ?? 0))).toBeLessThan(4);
    await expect(page.getByTestId('send-button')).toHaveAccessibleName('Send');
    // the menus open inside the window
    await page.getByTestId('model-picker').click();
    const modelMenu = await page.getByTestId('model-menu').boundingBox();
    expect((modelMenu?.x ?? -1) >= 0 && (modelMenu?.x ?? 0) + (modelMenu?.width ?? 999) <= 390).toBe(true);
    await page.keyboard.press('Escape');
    await page.getByTestId('working-dir').click();
    const wdMenu = await page.getByTestId('working-dir-menu').boundingBox();
    expect((wdMenu?.x ?? -1) >= 0 && (wdMenu?.x ?? 0) + (wdMenu?.width ?? 999) <= 390).toBe(true);
    await page.keyboard.press('Escape');
    for (const theme of ['light', 'dark'] as const) {
      await page.evaluate((t) => document.documentElement.setAttribute('data-theme', t), theme);
      await page.waitForTimeout(250);
      await page.screenshot({ path: `${SHOTS}composer-worktree-${theme}-390.png` });
    }
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.evaluate(() => document.documentElement.setAttribute('data-theme', 'light'));
    await page.waitForTimeout(250);
    await page.screenshot({ path: `${SHOTS}composer-worktree-light-1440.png` });
  });
});
