import { connect, type EngClient } from '@eng/sdk';
import type { Page } from '@playwright/test';
import { type ChatStack, openChat, startChatStack, until } from './fixtures/chat-stack.ts';
import { expect, test } from './fixtures/test.ts';

/**
 * Seed 2.9 "Chat" in a real browser against the real engine, the seven chat workers as their own
 * processes and the fake OpenAI server speaking the real SSE format: conversations (create, title
 * from the first message, inline rename, delete, live status), streaming Markdown with code,
 * a function-call turn approved and one denied with a reason, grouped calls with a failed counter,
 * "Always", stop mid-stream, a reload mid-turn, length and error notices.
 */

test.describe.configure({ mode: 'serial' });

let chat: ChatStack;
let fns: EngClient;
let slowCalls = 0;

test.beforeAll(async ({ stack }) => {
  test.setTimeout(120_000);
  chat = await startChatStack(stack);
  fns = connect(stack.engine.busUrl, { name: 'chat-e2e-functions' });
  fns.registerFunction(
    'chat-e2e::slow',
    async (input: { order?: number }) => {
      slowCalls++;
      await new Promise((r) => setTimeout(r, 1500));
      return { order: input?.order ?? null, status: 'shipped', items: [{ sku: 'A-1', qty: 2 }] };
    },
    { description: 'Look up an order (takes 1.5 s)' },
  );
  fns.registerFunction(
    'chat-e2e::boom',
    () => {
      throw new Error('warehouse offline');
    },
    { description: 'Always fails' },
  );
  await fns.ready();
});

test.afterAll(async () => {
  await fns?.close();
  await chat?.stop();
});

const input = (page: Page) => page.getByTestId('composer-input');
const assistant = (page: Page) => page.getByTestId('assistant-message');

async function send(page: Page, text: string) {
  await input(page).fill(text);
  await expect(page.getByTestId('send-button')).toBeEnabled();
  await input(page).press('Enter');
}

async function idle(page: Page) {
  await expect(page.getByTestId('chat-status')).toHaveText('idle', { timeout: 20_000 });
}

test('a conversation: created, streamed Markdown with code, titled from the first message, renamed, ordered, deleted', async ({
  page,
  consoleUrl,
}) => {
  await openChat(page, consoleUrl);
  await expect(page.getByTestId('chat-empty')).toBeVisible();
  // New chat stores nothing: the first send makes the session (issue 25 item 2) and the URL names it
  await page.getByTestId('new-chat').click();
  await expect(page.getByTestId('session-bar')).toHaveCount(0);

  chat.openai.turn({
    text: 'Here is **bold** text.\n\n```json\n{"a": 1, "b": [true, null]}\n```\n\n| k | v |\n|---|---|\n| x | 1 |',
    // slow enough that the working status is still there to be seen once the message is on screen
    delayMs: 150,
  });
  await send(page, 'Show me some JSON please\nsecond line');
  await expect(page).toHaveURL(/#\/chat\/console-[^/?#]+$/);
  const first = (await page.getByTestId('session-id').innerText()).trim();
  expect(page.url()).toContain(`#/chat/${first}`);
  await expect(page.getByTestId('user-message')).toContainText('Show me some JSON please');
  // the status goes working while it streams, and idle at the end, in the sidebar too
  await expect(page.locator(`[data-testid="conversation"][data-session-id="${first}"]`)).toHaveAttribute('data-status', 'working');
  await idle(page);
  await expect(page.locator(`[data-testid="conversation"][data-session-id="${first}"]`)).toHaveAttribute('data-status', 'idle');
  await expect(assistant(page).locator('strong')).toHaveText('bold');
  const code = assistant(page).getByTestId('code-block');
  await expect(code).toHaveAttribute('data-language', 'json');
  await expect(code.locator('pre')).toHaveAttribute('data-highlighted', 'true');
  await expect(code.locator('.hljs-attr').first()).toHaveText('"a"');
  await expect(assistant(page).locator('table td').first()).toHaveText('x');
  // titled from the first line of the first message
  await expect(page.getByTestId('chat-title')).toHaveText('Show me some JSON please');
  await expect(page.getByTestId('conversation-title').first()).toHaveText('Show me some JSON please');

  // a second conversation goes on top; answering in the first moves it back up
  await page.getByTestId('new-chat').click();
  await expect(page.getByTestId('chat-empty')).toBeVisible();
  chat.openai.turn({ text: 'The second one.' });
  await send(page, 'A second conversation');
  await idle(page);
  const second = (await page.getByTestId('session-id').innerText()).trim();
  expect(second).not.toBe(first);
  await expect(page.getByTestId('conversation').first()).toHaveAttribute('data-session-id', second);
  await page.locator(`[data-testid="conversation"][data-session-id="${first}"]`).getByTestId('conversation-link').click();
  await expect(page.getByTestId('session-id')).toHaveText(first);
  chat.openai.turn({ text: 'Again, here.' });
  await send(page, 'and again');
  await expect(assistant(page).last()).toContainText('Again, here.');
  await idle(page);
  await expect(page.getByTestId('conversation').first()).toHaveAttribute('data-session-id', first);

  // inline rename, stored in the session store
  const row = page.locator(`[data-testid="conversation"][data-session-id="${first}"]`);
  await row.hover();
  await row.getByRole('button', { name: 'Rename' }).click();
  await row.getByTestId('rename-input').fill('Renamed conversation');
  await row.getByTestId('rename-input').press('Enter');
  await expect(row.getByTestId('conversation-title')).toHaveText('Renamed conversation');
  await until(async () => (await chat.client.call<any>('session::get', { session_id: first })).meta.title === 'Renamed conversation');

  // delete asks first, then removes it from the store
  const other = page.locator(`[data-testid="conversation"][data-session-id="${second}"]`);
  await other.hover();
  await other.getByRole('button', { name: 'Delete' }).click();
  await page.getByRole('button', { name: 'Cancel' }).click();
  await expect(other).toHaveCount(1);
  await other.hover();
  await other.getByRole('button', { name: 'Delete' }).click();
  await page.getByTestId('confirm-action').click();
  await expect(other).toHaveCount(0);
  expect(await chat.client.call('session::get', { session_id: second })).toBeNull();
});

test('a function-call turn: pending approval survives a reload, Approve runs it (running → done), Deny sends the reason', async ({
  page,
  consoleUrl,
}) => {
  await openChat(page, consoleUrl);
  await page.getByTestId('new-chat').click();
  chat.openai.turn({
    toolCalls: [
      {
        id: 'call_approve',
        name: 'agent_trigger',
        arguments: { function: 'chat-e2e::slow', payload: { order: 42 }, description: 'look up order 42' },
      },
    ],
  });
  chat.openai.turn({ text: 'Order 42 has shipped.' });
  const before = slowCalls;
  await send(page, 'Where is order 42?');
  const card = page.locator('[data-testid="function-card"][data-call-id="call_approve"]');
  await expect(card).toHaveAttribute('data-state', 'pending', { timeout: 15_000 });
  await expect(card).toContainText('chat-e2e::slow');
  await expect(card.getByTestId('json-block').first()).toContainText('"order": 42');
  expect(slowCalls).toBe(before);

  // the held call is read back from approval::list-pending after a reload
  await page.reload();
  await expect(card).toHaveAttribute('data-state', 'pending', { timeout: 15_000 });
  await card.getByRole('button', { name: 'Approve' }).click();
  // a card that stays held after Approve was seen once in a loaded run: say what the page and the gate knew
  await expect(card)
    .toHaveAttribute('data-state', 'running')
    .catch(async (err: Error) => {
      const held = await chat.client.call('approval::list-pending', { limit: 50 }).catch((e: Error) => e.message);
      throw new Error(
        `${err.message}\ncard after Approve: ${await card.innerText().catch(() => '?')}\nheld calls: ${JSON.stringify(held)}`,
      );
    });
  await expect(card).toHaveAttribute('data-state', 'done', { timeout: 10_000 });
  expect(slowCalls).toBe(before + 1);
  await expect(assistant(page).last()).toContainText('Order 42 has shipped.');
  await idle(page);
  await card.getByRole('button').first().click();
  await expect(card.getByTestId('json-block').nth(1)).toContainText('"status": "shipped"');

  // deny with a reason: the card shows it, and so does the model's next request
  chat.openai.turn({
    toolCalls: [{ id: 'call_deny', name: 'agent_trigger', arguments: { function: 'chat-e2e::slow', payload: { order: 7 } } }],
  });
  chat.openai.turn({ text: 'Understood, I will not look it up.' });
  await send(page, 'And order 7?');
  const denied = page.locator('[data-testid="function-card"][data-call-id="call_deny"]');
  await expect(denied).toHaveAttribute('data-state', 'pending', { timeout: 15_000 });
  await denied.getByRole('button', { name: 'Deny…' }).click();
  await denied.getByLabel('Reason for denying').fill('not during the audit');
  await denied.getByRole('button', { name: 'Deny', exact: true }).click();
  await expect(denied).toHaveAttribute('data-state', 'error');
  await expect(denied.getByTestId('function-error')).toContainText('not during the audit');
  await expect(assistant(page).last()).toContainText('Understood');
  const sent = JSON.stringify(chat.openai.chatRequests().at(-1)?.body.messages);
  expect(sent).toContain('not during the audit');
  expect(slowCalls).toBe(before + 1);
});

test('consecutive calls are grouped with a failed counter; Always stops asking for that function', async ({ page, consoleUrl }) => {
  await openChat(page, consoleUrl);
  await page.getByTestId('new-chat').click();
  chat.openai.turn({
    toolCalls: [
      { id: 'call_g1', name: 'agent_trigger', arguments: { function: 'chat-e2e::boom', payload: {} } },
      { id: 'call_g2', name: 'agent_trigger', arguments: { function: 'chat-e2e::slow', payload: { order: 1 } } },
    ],
  });
  chat.openai.turn({
    toolCalls: [{ id: 'call_g3', name: 'agent_trigger', arguments: { function: 'chat-e2e::slow', payload: { order: 2 } } }],
  });
  chat.openai.turn({ text: 'One lookup failed, two worked.' });
  await send(page, 'Check the warehouse and orders 1 and 2');
  const group = page.getByTestId('function-group');
  const g1 = page.locator('[data-testid="function-card"][data-call-id="call_g1"]');
  const g2 = page.locator('[data-testid="function-card"][data-call-id="call_g2"]');
  await expect(g1).toHaveAttribute('data-state', 'pending', { timeout: 15_000 });
  await g1.getByRole('button', { name: 'Approve' }).click();
  await expect(g1).toHaveAttribute('data-state', 'error');
  await expect(g1.getByTestId('function-error')).toContainText('warehouse offline');
  await expect(g2).toHaveAttribute('data-state', 'pending');
  // Always: approved now, and the next call of chat-e2e::slow in this conversation runs without asking
  await g2.getByRole('button', { name: 'Always' }).click();
  await expect(g2).toHaveAttribute('data-state', 'done', { timeout: 10_000 });
  const g3 = page.locator('[data-testid="function-card"][data-call-id="call_g3"]');
  await expect(g3).toHaveAttribute('data-state', 'done', { timeout: 15_000 });
  await expect(group.getByTestId('function-group-count')).toHaveText('3 function calls');
  await expect(group.getByTestId('function-group-failed')).toHaveText('1 failed');
  await expect(assistant(page).last()).toContainText('One lookup failed, two worked.');
});

test('Stop aborts mid-stream: the partial answer stays, with a "Stopped" notice', async ({ page, consoleUrl }) => {
  await openChat(page, consoleUrl);
  await page.getByTestId('new-chat').click();
  const words = Array.from({ length: 300 }, (_, i) => `word${i}`).join(' ');
  chat.openai.turn({ text: words, delayMs: 40 });
  await send(page, 'Write a long answer');
  await expect(assistant(page)).toContainText('word20', { timeout: 15_000 });
  await page.getByTestId('stop-button').click();
  await expect(page.getByTestId('stop-notice')).toHaveAttribute('data-reason', 'aborted', { timeout: 10_000 });
  await idle(page);
  const partial = (await assistant(page).innerText()).trim();
  expect(partial).toContain('word20');
  expect(partial).not.toContain('word299');
  await page.waitForTimeout(800);
  expect((await assistant(page).innerText()).trim()).toBe(partial);
});

test('a reload mid-turn restores the conversation and the turn still running, which then completes', async ({ page, consoleUrl }) => {
  await openChat(page, consoleUrl);
  await page.getByTestId('new-chat').click();
  const words = Array.from({ length: 160 }, (_, i) => `tok${i}`).join(' ');
  chat.openai.turn({ text: words, delayMs: 40 });
  await send(page, 'Stream something long');
  await expect(assistant(page)).toContainText('tok10', { timeout: 15_000 });
  await page.reload();
  await expect(page.getByTestId('user-message')).toContainText('Stream something long');
  await expect(page.getByTestId('stop-button')).toBeVisible();
  await expect(page.getByTestId('chat-status')).toHaveText('working');
  await expect(assistant(page)).toContainText('tok159', { timeout: 20_000 });
  await idle(page);
  await expect(page.getByTestId('stop-button')).toHaveCount(0);
  expect((await assistant(page).innerText()).trim()).toBe(words);
});

test('stop-reason notices: length and error', async ({ page, consoleUrl }) => {
  await openChat(page, consoleUrl);
  await page.getByTestId('new-chat').click();
  chat.openai.turn({ text: 'This answer is cut', finish: 'length' });
  await send(page, 'Say a lot');
  await expect(page.getByTestId('stop-notice')).toHaveAttribute('data-reason', 'length', { timeout: 15_000 });
  await idle(page);
  chat.openai.error(400, 'This model does not accept that request.', 'invalid_request_error', 'bad_request');
  await send(page, 'Now fail');
  const failed = page.locator('[data-testid="stop-notice"][data-reason="error"]');
  await expect(failed).toBeVisible({ timeout: 15_000 });
  await expect(failed).toContainText('does not accept');
  await expect(page.getByTestId('chat-status')).toHaveText('error');
});
