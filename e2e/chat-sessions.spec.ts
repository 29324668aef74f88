import { mkdirSync } from 'node:fs';
import type { Page } from '@playwright/test';
import { type ChatStack, openChat, startChatStack, until } from './fixtures/chat-stack.ts';
import { ARTIFACTS, expect, test } from './fixtures/test.ts';

/**
 * Issue 25 item 2: conversations live in the engine, not in one browser. The sidebar lists the
 * engine's sessions (the console's, and any other with a transcript, marked by origin); every
 * conversation has a URL, `#/chat/<session_id>`, that opens it in any browser; the open
 * conversation follows the URL (back and forward); New chat stores nothing until the first send,
 * which makes exactly one session and moves the URL to it; an unknown id says so.
 */

test.describe.configure({ mode: 'serial' });

const SHOTS = `${ARTIFACTS}chat-sessions/`;
let chat: ChatStack;

test.beforeAll(async ({ stack }) => {
  test.setTimeout(180_000);
  mkdirSync(SHOTS, { recursive: true });
  chat = await startChatStack(stack);
});

test.afterAll(async () => {
  await chat?.stop();
});

const input = (page: Page) => page.getByTestId('composer-input');
const row = (page: Page, id: string) => page.locator(`[data-testid="conversation"][data-session-id="${id}"]`);

async function send(page: Page, text: string, answer: string) {
  chat.openai.turn({ text: answer });
  await input(page).fill(text);
  await expect(page.getByTestId('send-button')).toBeEnabled({ timeout: 20_000 });
  await input(page).press('Enter');
  await expect(page.getByTestId('assistant-message').last()).toContainText(answer, { timeout: 20_000 });
  await expect(page.getByTestId('chat-status')).toHaveText('idle', { timeout: 20_000 });
}

/** The session id the URL names (`#/chat/<id>`). */
function urlSession(page: Page): string {
  const m = /#\/chat\/([^/?#]+)/.exec(page.url());
  return m ? decodeURIComponent(m[1] as string) : '';
}

async function sessionCount(): Promise<number> {
  let count = 0;
  let cursor: string | undefined;
  do {
    const page = await chat.client.call<{ sessions: unknown[]; next_cursor?: string }>('session::list', {
      limit: 500,
      ...(cursor ? { cursor } : {}),
    });
    count += page.sessions.length;
    cursor = page.next_cursor;
  } while (cursor);
  return count;
}

test('New chat stores nothing; the first send makes one session and the URL names it; back returns to the previous one', async ({
  page,
  consoleUrl,
}) => {
  await openChat(page, consoleUrl);
  await expect(page).toHaveURL(/#\/chat$/);
  const before = await sessionCount();

  // New chat, then away and back, twice: nothing is stored
  await page.getByTestId('new-chat').click();
  await expect(page.getByTestId('chat-empty')).toBeVisible();
  await expect(page.getByTestId('session-bar')).toHaveCount(0);
  await page.getByRole('navigation', { name: 'Main navigation' }).getByRole('link', { name: 'Functions', exact: true }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Functions' })).toBeVisible();
  await page.getByRole('navigation', { name: 'Main navigation' }).getByRole('link', { name: 'Chat', exact: true }).click();
  await page.getByTestId('new-chat').click();
  await expect(page.getByTestId('chat-empty')).toBeVisible();
  expect(await sessionCount()).toBe(before);

  // the first send makes exactly one, made by the console, and the URL moves to it
  await send(page, 'First question of conversation A', 'Answer A.');
  await expect(page).toHaveURL(/#\/chat\/[^/?#]+$/);
  const a = urlSession(page);
  expect(a).toMatch(/^console-/);
  await expect(page.getByTestId('session-id')).toHaveText(a);
  expect(await sessionCount()).toBe(before + 1);
  const meta = await chat.client.call<{ meta: { metadata?: Record<string, unknown>; message_count: number } }>('session::get', {
    session_id: a,
  });
  expect(meta.meta.metadata).toEqual({ surface: 'console' });
  expect(meta.meta.message_count).toBe(2);
  await expect(row(page, a)).toHaveAttribute('data-active', 'true');
  await expect(row(page, a)).toHaveAttribute('data-origin', 'console');
  await expect(row(page, a).getByTestId('conversation-origin')).toHaveCount(0);

  // a second conversation
  await page.getByTestId('new-chat').click();
  await expect(page).toHaveURL(/#\/chat$/);
  await expect(page.getByTestId('chat-empty')).toBeVisible();
  await send(page, 'First question of conversation B', 'Answer B.');
  const b = urlSession(page);
  expect(b).not.toBe(a);
  expect(await sessionCount()).toBe(before + 2);
  await expect(row(page, b)).toHaveAttribute('data-active', 'true');

  // back: conversation A (the New chat page was replaced by B's URL), forward: B again
  await page.goBack();
  await expect(page).toHaveURL(new RegExp(`#/chat/${a}$`));
  await expect(page.getByTestId('session-id')).toHaveText(a);
  await expect(page.getByTestId('user-message')).toHaveCount(1);
  await expect(page.getByTestId('user-message')).toContainText('First question of conversation A');
  await expect(row(page, a)).toHaveAttribute('data-active', 'true');
  await page.goForward();
  await expect(page.getByTestId('session-id')).toHaveText(b);
  await expect(page.getByTestId('user-message')).toHaveCount(1);
  await expect(page.getByTestId('user-message')).toContainText('First question of conversation B');

  // a row is a link: clicking it opens that conversation and its URL
  await row(page, a).getByTestId('conversation-link').click();
  await expect(page).toHaveURL(new RegExp(`#/chat/${a}$`));
  await expect(page.getByTestId('assistant-message')).toHaveCount(1);
  await expect(page.getByTestId('assistant-message')).toContainText('Answer A.');
  expect(await sessionCount()).toBe(before + 2);
});

test('a conversation opens by its URL in another browser, whose sidebar lists it too', async ({ page, browser, consoleUrl }) => {
  await openChat(page, consoleUrl);
  await send(page, 'Made in the first browser', 'Seen from the second.');
  const id = urlSession(page);
  expect(id).toBeTruthy();

  // a fresh profile: no local storage at all
  const other = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  try {
    const second = await other.newPage();
    await second.goto(`${consoleUrl}/#/chat/${id}`);
    await expect(second.getByTestId('session-id')).toHaveText(id, { timeout: 20_000 });
    await expect(second.getByTestId('chat-title')).toHaveText('Made in the first browser');
    await expect(second.getByTestId('user-message')).toHaveCount(1);
    await expect(second.getByTestId('user-message')).toContainText('Made in the first browser');
    await expect(second.getByTestId('assistant-message')).toHaveCount(1);
    await expect(second.getByTestId('assistant-message')).toContainText('Seen from the second.');
    await expect(row(second, id)).toHaveAttribute('data-active', 'true');
    expect(await second.evaluate(() => localStorage.getItem('eng-chat'))).toBeNull();
    // and it is live there: an answer given in the first browser streams into the second
    chat.openai.turn({ text: 'Typed in one, read in both.' });
    await input(page).fill('A follow-up from the first browser');
    await input(page).press('Enter');
    await expect(second.getByTestId('assistant-message').last()).toContainText('Typed in one, read in both.', { timeout: 20_000 });

    // its sidebar lists what the first browser made; "#/chat" there is a new conversation
    await second.goto(`${consoleUrl}/#/chat`);
    await expect(second.getByTestId('chat-empty')).toBeVisible();
    await expect(row(second, id)).toBeVisible();
    await expect(row(second, id)).toHaveAttribute('data-active', 'false');
    await expect(second.getByText('No conversations yet')).toHaveCount(0);
  } finally {
    await other.close();
  }
});

test('sessions made by other clients: listed once they have a transcript, marked by origin', async ({ page, consoleUrl }) => {
  await openChat(page, consoleUrl);
  const tag = Date.now().toString(36);
  const make = async (metadata: Record<string, unknown> | undefined, title: string, messages: number) => {
    const { session_id } = await chat.client.call<{ session_id: string }>('session::create', {
      title,
      ...(metadata ? { metadata } : {}),
    });
    for (let i = 0; i < messages; i++) {
      await chat.client.call('session::append', {
        session_id,
        message: { role: i % 2 ? 'assistant' : 'user', content: [{ type: 'text', text: `${title} message ${i}` }] },
      });
    }
    return session_id;
  };
  const mcp = await make({ surface: 'mcp', tag }, `From MCP ${tag}`, 2);
  const api = await make({ origin: 'api', tag }, `From the API ${tag}`, 1);
  const bare = await make(undefined, `No metadata ${tag}`, 2);
  const empty = await make({ surface: 'mcp', tag }, `Empty MCP session ${tag}`, 0);

  // they appear without a reload (session::created and message-added)
  await expect(row(page, mcp)).toBeVisible({ timeout: 15_000 });
  await expect(row(page, mcp).getByTestId('conversation-origin')).toHaveText('mcp');
  await expect(row(page, api).getByTestId('conversation-origin')).toHaveText('api');
  await expect(row(page, bare).getByTestId('conversation-origin')).toHaveText('other');
  await expect(row(page, mcp).getByTestId('conversation-title')).toHaveText(`From MCP ${tag}`);
  // one without a transcript, not made by the console, is not a conversation to show
  await expect(row(page, empty)).toHaveCount(0);
  // its first message makes it one
  await chat.client.call('session::append', {
    session_id: empty,
    message: { role: 'user', content: [{ type: 'text', text: 'now it has one' }] },
  });
  await expect(row(page, empty)).toBeVisible({ timeout: 15_000 });
  await expect(row(page, empty).getByTestId('conversation-origin')).toHaveText('mcp');

  // and it opens like any other
  await row(page, mcp).getByTestId('conversation-link').click();
  await expect(page).toHaveURL(new RegExp(`#/chat/${mcp}$`));
  await expect(page.getByTestId('user-message')).toHaveCount(1);
  await expect(page.getByTestId('user-message')).toContainText(`From MCP ${tag} message 0`);
  await expect(page.getByTestId('assistant-message')).toHaveCount(1);
  await expect(page.getByTestId('assistant-message')).toContainText(`From MCP ${tag} message 1`);

  // a reload reads the same list from the engine
  await page.reload();
  await expect(row(page, api)).toBeVisible({ timeout: 20_000 });
  await expect(row(page, mcp)).toHaveAttribute('data-active', 'true');

  await page.getByTestId('chat-sidebar').hover();
  for (const width of [1440, 390]) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
    if (width === 390) {
      // the list lies over the conversation at this width: open it to show it
      const show = page.getByRole('button', { name: 'Show conversations' });
      if (await show.isVisible()) await show.click();
    }
    for (const theme of ['dark', 'light'] as const) {
      await page.evaluate(async (t) => {
        document.documentElement.setAttribute('data-theme', t);
        await Promise.all(
          document
            .getAnimations()
            // finite ones only: a spinner never finishes
            .filter((a) => Number.isFinite(Number(a.effect?.getComputedTiming().endTime)))
            .map((a) => a.finished.catch(() => undefined)),
        );
      }, theme);
      await page.screenshot({ path: `${SHOTS}origins-${theme}-${width}.png` });
    }
  }
  await page.setViewportSize({ width: 1440, height: 900 });
});

test('ids an older console kept in local storage still show while the engine has them, and are forgotten when it does not', async ({
  page,
  consoleUrl,
}) => {
  // a session that neither list query finds (not the console's, no transcript), and one the store never had
  const { session_id: kept } = await chat.client.call<{ session_id: string }>('session::create', {
    title: 'Kept by an older console',
    metadata: { surface: 'elsewhere' },
  });
  await page.addInitScript(
    ({ ids }) => {
      if (sessionStorage.getItem('legacy-seeded')) return;
      sessionStorage.setItem('legacy-seeded', '1');
      localStorage.setItem(
        'eng-chat',
        JSON.stringify({ conversations: ids, active: ids[0], mode: 'agent', sidebar: { collapsed: false } }),
      );
    },
    { ids: [kept, 'console-gone-long-ago'] },
  );
  await openChat(page, consoleUrl, 'dark', true);
  await expect(row(page, kept)).toBeVisible({ timeout: 20_000 });
  await expect(row(page, kept).getByTestId('conversation-title')).toHaveText('Kept by an older console');
  await expect(row(page, 'console-gone-long-ago')).toHaveCount(0);
  await expect
    .poll(async () => JSON.parse((await page.evaluate(() => localStorage.getItem('eng-chat'))) ?? '{}').legacyConversations)
    .toEqual([kept]);
  // the old "active" no longer opens anything: #/chat is a new conversation
  await expect(page.getByTestId('chat-empty')).toBeVisible();
});

test('an unknown conversation id says so, and offers a new chat', async ({ page, consoleUrl }) => {
  await openChat(page, consoleUrl);
  await page.goto(`${consoleUrl}/#/chat/console-no-such-session`);
  const missing = page.getByTestId('chat-not-found');
  await expect(missing).toBeVisible({ timeout: 20_000 });
  await expect(missing).toContainText('Conversation not found');
  await expect(page.getByTestId('not-found-id')).toHaveText('console-no-such-session');
  await expect(page.getByTestId('composer-input')).toHaveCount(0);
  await expect(page.getByTestId('session-bar')).toHaveCount(0);
  await expect(page.getByTestId('chat-sidebar')).toBeVisible();
  for (const theme of ['dark', 'light'] as const) {
    await page.evaluate(async (t) => {
      document.documentElement.setAttribute('data-theme', t);
      await Promise.all(
        document
          .getAnimations()
          // finite ones only: a spinner never finishes
          .filter((a) => Number.isFinite(Number(a.effect?.getComputedTiming().endTime)))
          .map((a) => a.finished.catch(() => undefined)),
      );
    }, theme);
    await page.screenshot({ path: `${SHOTS}not-found-${theme}-1440.png` });
  }
  // nothing was made for it
  expect(await chat.client.call('session::get', { session_id: 'console-no-such-session' })).toBeNull();
  await page.getByTestId('not-found-new-chat').click();
  await expect(page).toHaveURL(/#\/chat$/);
  await expect(page.getByTestId('chat-empty')).toBeVisible();

  // a conversation deleted elsewhere while it is open: the same state
  await send(page, 'About to be deleted elsewhere', 'Fine.');
  const id = urlSession(page);
  await chat.client.call('session::delete', { session_id: id });
  await expect(missing).toBeVisible({ timeout: 15_000 });
  await expect(row(page, id)).toHaveCount(0);
  await until(async () => (await chat.client.call('session::get', { session_id: id })) === null);
});
