import type { Page } from '@playwright/test';
import { type ChatStack, openChat, startChatStack, until } from './fixtures/chat-stack.ts';
import { expect, test } from './fixtures/test.ts';

/**
 * The composer and the conversation header (seed 2.9) against the real chat stack: the model
 * picker (groups, not configured, effort row reaching the provider), @-mentions from the keyboard,
 * attachments (picker and drag-and-drop, previews, an image sent to a vision model and refused
 * for one without), the context meter's /compact nudge and /compact itself, the session id and its
 * trace link, local-storage persistence and the chat keys.
 */

test.describe.configure({ mode: 'serial' });

// 1×1 PNG
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
const SUMMARY =
  '## Goal\nReview the launch.\n## Constraints\nNone.\n## Progress\nA long brief was read.\n## Key Decisions\nShip Friday.\n## Actions Taken\nNone.\n## Next Steps\nConfirm.\n## Critical Context\nNone.\n## Relevant Files\nNone.';

let chat: ChatStack;

test.beforeAll(async ({ stack }) => {
  test.setTimeout(120_000);
  chat = await startChatStack(stack);
});
test.afterAll(async () => {
  await chat?.stop();
});

const input = (page: Page) => page.getByTestId('composer-input');
const idle = (page: Page) => expect(page.getByTestId('chat-status')).toHaveText('idle', { timeout: 20_000 });

/** Send and wait for the answer to end (the status is idle before the turn starts too, so the text is the signal). */
async function ask(page: Page, text: string, answer: string) {
  chat.openai.turn({ text: answer });
  await input(page).fill(text);
  await input(page).press('Enter');
  await expect(page.getByTestId('assistant-message').last()).toContainText(answer.slice(0, 40), { timeout: 20_000 });
  await idle(page);
}

async function pickModel(page: Page, key: string) {
  await page.getByTestId('model-picker').click();
  await page.locator(`[data-testid="model-option"][data-model="${key}"]`).click();
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('model-picker')).toHaveAttribute('data-model', key);
}

test('model picker: grouped by provider, Anthropic not configured, the effort row reaches the provider; choices survive a reload', async ({
  page,
  consoleUrl,
}) => {
  await openChat(page, consoleUrl);
  await page.getByTestId('model-picker').click();
  const menu = page.getByTestId('model-menu');
  await expect(menu.locator('[data-testid="model-group"][data-provider="openai"]')).toHaveAttribute('data-state', 'ready');
  await expect(menu.locator('[data-testid="model-group"][data-provider="anthropic"]')).toHaveAttribute('data-state', 'not-configured');
  await expect(menu.locator('[data-testid="model-group"][data-provider="anthropic"] [data-testid="model-option"]')).toHaveCount(0);
  await expect(menu.getByTestId('model-option')).toHaveText([/GPT-4o/, /GPT-4o mini/, /local-small/, /o4-mini/]);
  // a model without reasoning has no effort row; o4-mini has one
  await expect(menu.getByTestId('effort-row')).toHaveCount(0);
  await menu.locator('[data-testid="model-option"][data-model="openai::o4-mini"]').click();
  await expect(menu.getByTestId('effort-option')).toHaveText(['default', 'low', 'medium', 'high']);
  await menu.getByTestId('effort-option').filter({ hasText: 'high' }).click();
  await page.keyboard.press('Escape');
  await page.getByTestId('mode-plan').click();
  await page.getByTestId('new-chat').click();
  await ask(page, 'Plan the release', 'Planned.');
  const body = chat.openai.chatRequests().at(-1)?.body;
  expect(body.model).toBe('o4-mini');
  expect(body.reasoning_effort).toBe('high');
  expect(JSON.stringify(body.messages)).toContain('Mode: plan');

  // local storage keeps the model, the mode and the sidebar state; the URL names the conversation
  await page.getByRole('button', { name: 'Hide conversations' }).click();
  const sessionId = await page.getByTestId('session-id').innerText();
  await page.reload();
  await expect(page.getByTestId('model-picker')).toHaveAttribute('data-model', 'openai::o4-mini');
  await expect(page.getByTestId('mode-plan')).toHaveAttribute('aria-pressed', 'true');
  await expect(page.getByTestId('chat-sidebar')).toHaveAttribute('data-collapsed', 'true');
  await expect(page.getByTestId('session-id')).toHaveText(sessionId);
  await expect(page.getByTestId('assistant-message')).toContainText('Planned.');
  await page.getByRole('button', { name: 'Show conversations' }).click();
  await page.getByTestId('mode-agent').click();
  await pickModel(page, 'openai::gpt-4o');
});

test('@-mentions: fuzzy search over every registered function, picked with the keyboard', async ({ page, consoleUrl }) => {
  await openChat(page, consoleUrl, 'dark', true);
  await input(page).click();
  await input(page).pressSequentially('Use @ordrcpt');
  const menu = page.getByTestId('mention-menu');
  // fuzzy: the letters in order, anywhere in the id (functions a model can never call are not offered: chat-cards.spec.ts)
  await expect(menu.getByTestId('suggestion').filter({ hasText: 'orders::receipt' })).toHaveCount(1);
  for (const id of await menu.getByTestId('suggestion').locator('span:first-child').allInnerTexts())
    expect(id).toMatch(/o.*r.*d.*r.*c.*p.*t/);
  await input(page).fill('Use ');
  await input(page).pressSequentially('@orders::');
  await expect(menu.getByTestId('suggestion').first()).toContainText('orders::');
  const second = (await menu.getByTestId('suggestion').nth(1).locator('span').first().innerText()).trim();
  await input(page).press('ArrowDown');
  await expect(menu.getByTestId('suggestion').nth(1)).toHaveAttribute('aria-selected', 'true');
  await input(page).press('Enter');
  await expect(menu).toHaveCount(0);
  await expect(input(page)).toHaveValue(`Use @${second} `);
  // Escape closes the list without touching the text
  await input(page).pressSequentially('and @state');
  await expect(menu).toBeVisible();
  await input(page).press('Escape');
  await expect(menu).toHaveCount(0);
  await expect(input(page)).toHaveValue(`Use @${second} and @state`);
});

test('attachments: picker and drag-and-drop previews; an image reaches a vision model and is refused for one without', async ({
  page,
  consoleUrl,
}) => {
  await openChat(page, consoleUrl, 'dark', true);
  await page.getByTestId('new-chat').click();
  await pickModel(page, 'openai::gpt-4o');
  await page.getByTestId('attach-input').setInputFiles([
    { name: 'dot.png', mimeType: 'image/png', buffer: PNG },
    { name: 'notes.md', mimeType: 'text/markdown', buffer: Buffer.from('# Notes\nship on friday\n') },
  ]);
  await expect(page.getByTestId('attachment-preview')).toHaveCount(2);
  await expect(page.locator('[data-testid="attachment-preview"][data-kind="image"] img')).toBeVisible();
  await expect(page.getByTestId('text-preview')).toContainText('ship on friday');
  // drag and drop adds a third
  const drop = await page.evaluateHandle(() => {
    const dt = new DataTransfer();
    dt.items.add(new File(['a,b\n1,2\n'], 'table.csv', { type: 'text/csv' }));
    return dt;
  });
  await page.getByTestId('composer').dispatchEvent('dragover', { dataTransfer: drop });
  await page.getByTestId('composer').dispatchEvent('drop', { dataTransfer: drop });
  await expect(page.getByTestId('attachment-preview')).toHaveCount(3);
  await ask(page, 'What is in these?', 'I see a dot and your notes.');
  await expect(page.getByTestId('message-image')).toBeVisible();
  await expect(page.getByTestId('message-attachment')).toHaveCount(2);
  const sent = JSON.stringify(chat.openai.chatRequests().at(-1)?.body.messages);
  expect(sent).toContain(`data:image/png;base64,${PNG.toString('base64')}`);
  expect(sent).toContain('ship on friday');
  expect(sent).toContain('a,b');

  // local-small (no vision): the image is refused with an explanation, and not sent
  await pickModel(page, 'openai::local-small');
  await page.getByTestId('attach-input').setInputFiles([{ name: 'dot.png', mimeType: 'image/png', buffer: PNG }]);
  await expect(page.locator('[data-testid="attachment-preview"]')).toHaveAttribute('data-refused', 'true');
  await expect(page.getByTestId('vision-refusal')).toContainText('local-small does not read images');
  await ask(page, 'And this one?', 'No image here.');
  // the new message: no image, and the explanation instead
  const refused = JSON.stringify(chat.openai.chatRequests().at(-1)?.body.messages.at(-1));
  expect(refused).not.toContain('image_url');
  expect(refused).toContain('does not read images');
  await pickModel(page, 'openai::gpt-4o');
});

test('the context meter warns at 75 % with a /compact nudge; /compact stores the summary and shows the marker', async ({
  page,
  consoleUrl,
}) => {
  await openChat(page, consoleUrl, 'dark', true);
  await page.getByTestId('new-chat').click();
  await pickModel(page, 'openai::local-small');
  // (a new conversation has no meter yet: its session, and its header, come with the first message)
  const meter = page.getByTestId('context-meter');
  // ~25,000 tokens against local-small's 32,768-token window
  const brief = `Launch brief: ${'the launch needs review and care. '.repeat(3000)}`;
  await ask(page, brief, 'Read it.');
  await expect(meter).toHaveAttribute('data-level', 'warn');
  await expect(page.getByTestId('compact-nudge')).toContainText('/compact');
  for (const q of ['first follow-up', 'second follow-up']) await ask(page, q, `Answer to ${q}.`);
  const sessionId = await page.getByTestId('session-id').innerText();
  const before = Number(await meter.getAttribute('data-tokens'));
  // /compact from the command menu: the summariser's request gets the summary
  chat.openai.fallback = (req) =>
    chat.openai.reply({ text: String(req.body?.messages?.[0]?.content ?? '').startsWith('You compact') ? SUMMARY : 'OK.' });
  await input(page).fill('/comp');
  await expect(page.getByTestId('command-menu').getByTestId('suggestion')).toHaveText([/\/compact/]);
  await input(page).press('Enter');
  const marker = page.getByTestId('compaction-marker');
  await expect(marker).toBeVisible({ timeout: 30_000 });
  await expect(marker.getByTestId('compaction-label')).toHaveText(/^compacted [\d,]+ tokens$/);
  await marker.getByRole('button').click();
  await expect(marker.getByTestId('compaction-summary')).toContainText('Review the launch.');
  await expect(page.getByTestId('chat-notice')).toContainText('Compacted');
  await expect(meter).toHaveAttribute('data-level', 'ok');
  expect(Number(await meter.getAttribute('data-tokens'))).toBeLessThan(before / 10);
  const entries = (await chat.client.call<any>('session::messages', { session_id: sessionId, include_custom: true, limit: 50 })).messages;
  const custom = entries.filter((e: any) => e.custom?.custom_type === 'compaction');
  expect(custom).toHaveLength(1);
  expect(custom[0].custom.data.summary).toBe(SUMMARY);
  // the transcript is untouched: the brief is still there
  expect(entries.filter((e: any) => e.message).length).toBe(6);
  await page.getByTestId('chat-transcript').evaluate((el) => {
    el.scrollTop = 0;
  });
  await expect(page.getByTestId('user-message').first()).toContainText('Launch brief');
  // the next turn starts from the summary
  await ask(page, 'When do we ship?', 'Friday it is.');
  const sent = JSON.stringify(chat.openai.chatRequests().at(-1)?.body.messages);
  expect(sent).toContain('Review the launch.');
  expect(sent).not.toContain('the launch needs review and care. the launch');
  chat.openai.fallback = () => chat.openai.reply({ text: 'OK.' });
  await pickModel(page, 'openai::gpt-4o');
});

test('the session id is copyable and its trace link lands on this conversation’s traces', async ({ page, context, consoleUrl }) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await openChat(page, consoleUrl, 'dark', true);
  await page.getByTestId('new-chat').click();
  await ask(page, 'Trace me', 'Traced.');
  const sessionId = await page.getByTestId('session-id').innerText();
  await page.getByRole('button', { name: 'Copy session id' }).click();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(sessionId);
  // the engine has this session's spans (the harness turn, the generation)
  let expected: string[] = [];
  await until(async () => {
    const res = await chat.client.call<any>('engine::traces::list', { attributes: [['eng.session.id', sessionId]], limit: 50 });
    expected = [...new Set<string>(res.spans.map((s: any) => s.trace_id))];
    return expected.length > 0;
  }, 20_000);
  await page.getByTestId('session-traces').click();
  await expect(page).toHaveURL(/#\/traces\?/);
  expect(decodeURIComponent(page.url())).toContain(sessionId);
  const rows = page.getByTestId('trace-row');
  await expect(rows.first()).toBeVisible({ timeout: 15_000 });
  const shown = await rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-trace-id')));
  expect(shown.sort()).toEqual([...expected].sort());
});

test('chat keys: listed in the ? overlay; n starts a conversation, Esc stops a streaming answer', async ({ page, consoleUrl }) => {
  await openChat(page, consoleUrl, 'dark', true);
  await page.locator('body').click();
  await page.keyboard.press('?');
  const chatKeys = page.getByRole('dialog').getByRole('region', { name: 'Chat' });
  await expect(chatKeys.getByTestId('shortcut')).toHaveText([
    /Send the message/,
    /Stop the answer/,
    /New conversation/,
    /Mention a function/,
  ]);
  await page.keyboard.press('Escape');
  await expect(page.getByText('Loading conversations…')).toHaveCount(0);
  const count = await page.getByTestId('conversation').count();
  await page.locator('body').click();
  await page.keyboard.press('n');
  // a new conversation: an empty composer, focused; its session is made by the first message
  await expect(page).toHaveURL(/#\/chat$/);
  await expect(input(page)).toBeFocused();
  await expect(page.getByTestId('conversation')).toHaveCount(count);
  chat.openai.turn({ text: Array.from({ length: 200 }, (_, i) => `w${i}`).join(' '), delayMs: 40 });
  await input(page).fill('Go on and on');
  await input(page).press('Enter');
  await expect(page.getByTestId('assistant-message')).toContainText('w10', { timeout: 15_000 });
  await expect(page.getByTestId('conversation')).toHaveCount(count + 1);
  await input(page).press('Escape');
  await expect(page.getByTestId('stop-notice')).toHaveAttribute('data-reason', 'aborted', { timeout: 10_000 });
});
