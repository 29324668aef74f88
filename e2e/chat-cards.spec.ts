import { connect, type EngClient } from '@eng/sdk';
import type { Page } from '@playwright/test';
import { type ChatStack, openChat, startChatStack } from './fixtures/chat-stack.ts';
import { expect, test } from './fixtures/test.ts';

/**
 * Issue 25 "the console as a new user finds it", chat items: the composer's @-mentions offer only
 * functions the approval gate could allow (item 5).
 */

test.describe.configure({ mode: 'serial' });

let chat: ChatStack;
let fns: EngClient;
let gateBefore: unknown;

test.beforeAll(async ({ stack }) => {
  test.setTimeout(120_000);
  chat = await startChatStack(stack);
  fns = connect(stack.engine.busUrl, { name: 'chat-cards-functions' });
  fns.registerFunction('chat-cards::lookup', async (input: { order?: number }) => {
    await new Promise((r) => setTimeout(r, 300));
    return { order: input?.order ?? null, status: 'shipped' };
  });
  fns.registerFunction('chat-cards::forbidden', () => 'never', { description: 'denied by a rule of the approval-gate entry' });
  fns.registerFunction('chat-cards::manual-only-deny', () => 'maybe', { description: 'denied in manual mode only' });
  fns.registerFunction('mcp::chat-cards-tool', () => null);
  await fns.ready();
  // a deny rule of the gate entry (every mode) and one bound to a mode (so not always denied)
  gateBefore = (await chat.client.call<{ value: unknown }>('configuration::get', { id: 'approval-gate' })).value;
  await chat.client.call('configuration::set', {
    id: 'approval-gate',
    value: {
      ...(gateBefore as object),
      rules: [
        '!approval::*',
        '!configuration::*',
        '!chat-cards::forbidden',
        { function: 'chat-cards::manual-only-deny', action: 'deny', modes: ['manual'] },
      ],
    },
  });
});

test.afterAll(async () => {
  if (gateBefore) await chat?.client.call('configuration::set', { id: 'approval-gate', value: gateBefore }).catch(() => undefined);
  await fns?.close();
  await chat?.stop();
});

const input = (page: Page) => page.getByTestId('composer-input');

async function mentionIds(page: Page, query: string): Promise<string[]> {
  await input(page).fill('');
  await input(page).pressSequentially(`@${query}`);
  const menu = page.getByTestId('mention-menu');
  await expect(menu).toBeVisible();
  await expect(menu.getByText('Loading functions…')).toHaveCount(0);
  return (await menu.getByTestId('suggestion').locator('span:first-child').allInnerTexts()).map((s) => s.trim());
}

test('@-mentions offer only functions the gate could allow', async ({ page, consoleUrl }) => {
  await openChat(page, consoleUrl);
  await page.getByTestId('new-chat').click();
  await input(page).click();
  // registered on the engine, never a model's: human-only, the control plane, opaque wrappers
  for (const query of ['approval::', 'configuration::', 'session::', 'harness::', 'router::', 'context::', 'mcp::', 'engine::traces::'])
    for (const id of await mentionIds(page, query)) {
      expect(id, `@${query}`).not.toMatch(
        /^(approval|configuration|session|harness|router|provider|context|mcp|a2a)::|^engine::(traces|logs)::clear$|redrive|^engine::workers::register$/,
      );
    }
  // the engine's own functions a model may call are still offered
  expect(await mentionIds(page, 'engine::traces::')).toContain('engine::traces::list');
  // the gate entry's deny rule: gone; a deny bound to one mode: still offered
  const mine = await mentionIds(page, 'chat-cards::');
  expect(mine).toEqual(expect.arrayContaining(['chat-cards::lookup', 'chat-cards::manual-only-deny']));
  expect(mine).not.toContain('chat-cards::forbidden');
});
