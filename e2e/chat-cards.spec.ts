import { connect, type EngClient } from '@eng/sdk';
import type { Page } from '@playwright/test';
import { type ChatStack, openChat, startChatStack, until } from './fixtures/chat-stack.ts';
import { expect, test } from './fixtures/test.ts';

/**
 * Issue 25 "the console as a new user finds it", chat items: the composer's @-mentions offer only
 * functions the approval gate could allow (item 5); a finished call card says who decided and
 * when, how long the call ran, and links to its span in the trace explorer (item 3).
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

async function send(page: Page, text: string) {
  await input(page).fill(text);
  await expect(page.getByTestId('send-button')).toBeEnabled();
  await input(page).press('Enter');
}

/** Screenshots of the transcript in both themes, at desktop width and 390 px (looked at by hand). */
async function shoot(page: Page, name: string) {
  for (const width of [1440, 390]) {
    await page.setViewportSize({ width, height: 900 });
    await page.reload();
    await expect(page.getByTestId('call-decision').first()).toBeVisible();
    // at 390 px the conversation list is hidden, as a phone user would
    if (width < 600 && (await page.getByTestId('chat-sidebar').getAttribute('data-collapsed')) === 'false') {
      // the list lies over the conversation instead of squeezing it
      await page.screenshot({ path: `/tmp/chat-cards/${name}-list-${width}.png` });
      expect((await page.getByTestId('chat-transcript').boundingBox())?.width ?? 0).toBeGreaterThan(width - 80);
      await page.getByRole('button', { name: 'Hide conversations' }).click();
    }
    for (const theme of ['light', 'dark'] as const) {
      await page.evaluate((t) => document.documentElement.setAttribute('data-theme', t), theme);
      await page.waitForTimeout(300);
      await page.screenshot({ path: `/tmp/chat-cards/${name}-${theme}-${width}.png` });
    }
  }
  await page.setViewportSize({ width: 1440, height: 900 });
}

test('a call card: who allowed it and when, how long it ran, and a link to its span', async ({ page, consoleUrl }) => {
  await openChat(page, consoleUrl);
  await page.getByTestId('new-chat').click();
  chat.openai.turn({
    toolCalls: [
      {
        id: 'call_cards_1',
        name: 'agent_trigger',
        arguments: { function: 'chat-cards::lookup', payload: { order: 7 }, description: 'look up order 7' },
      },
    ],
  });
  chat.openai.turn({
    toolCalls: [{ id: 'call_cards_2', name: 'agent_trigger', arguments: { function: 'chat-cards::lookup', payload: { order: 8 } } }],
  });
  chat.openai.turn({ text: 'Orders 7 and 8 have shipped.' });
  await send(page, 'Where are orders 7 and 8?');

  // Approve once: the card says so, with the time
  const first = page.locator('[data-testid="function-card"][data-call-id="call_cards_1"]');
  await expect(first).toHaveAttribute('data-state', 'pending');
  await expect(first.getByTestId('call-record')).toHaveCount(0);
  await first.getByRole('button', { name: 'Approve' }).click();
  await expect(first).toHaveAttribute('data-state', 'done', { timeout: 20_000 });
  await expect(first.getByTestId('call-decision')).toHaveText(/^Allowed by you · once · \d\d:\d\d$/);
  // the duration is the span's: the function sleeps 300 ms
  await expect(first.getByTestId('call-duration')).toHaveText(/^\d{3} ms$|^\d\.\d\d s$/, { timeout: 20_000 });

  // Deny the second with a reason
  const second = page.locator('[data-testid="function-card"][data-call-id="call_cards_2"]');
  await expect(second).toHaveAttribute('data-state', 'pending');
  await second.getByRole('button', { name: 'Deny…' }).click();
  await second.getByLabel('Reason for denying').fill('not this one');
  await second.getByRole('button', { name: 'Deny', exact: true }).click();
  await expect(second).toHaveAttribute('data-state', 'error');
  await expect(second.getByTestId('call-decision')).toHaveText(/^Denied by you · \d\d:\d\d$/);
  await expect(second.getByTestId('function-error')).toContainText('not this one');
  await expect(second.getByTestId('call-span-link')).toHaveCount(0);
  await expect(page.getByTestId('chat-status')).toHaveText('idle', { timeout: 20_000 });

  // a reload keeps the record (this console's decisions are remembered)
  await page.reload();
  await expect(first.getByTestId('call-decision')).toHaveText(/^Allowed by you · once/);
  await expect(second.getByTestId('call-decision')).toHaveText(/^Denied by you/);
  await shoot(page, 'cards');

  // the span link opens the trace explorer on this call's span
  let span: { trace_id: string; span_id: string; name: string } | undefined;
  await until(async () => {
    const res = await chat.client.call<{ spans: Array<{ trace_id: string; span_id: string; name: string }> }>('engine::traces::list', {
      attributes: [['eng.function_call.id', 'call_cards_1']],
      search_all_spans: true,
      include_internal: true,
    });
    span = res.spans.find((s) => s.name === 'function chat-cards::lookup');
    return span !== undefined;
  });
  await first.getByTestId('call-span-link').click();
  await expect(page).toHaveURL(/#\/traces\?/);
  await expect(page).toHaveURL(new RegExp(`trace_id=${span?.trace_id}`));
  await expect(page.getByTestId('active-filters')).toContainText('eng.function_call.id');
  await expect(page.getByTestId('active-filters')).toContainText('call_cards_1');
  const row = page.locator(`[data-testid="waterfall-row"][data-span-id="${span?.span_id}"]`);
  await expect(row).toContainText('function chat-cards::lookup');
  await expect(page.getByTestId('span-panel')).toHaveAttribute('data-span-id', span?.span_id as string);
  await page.screenshot({ path: '/tmp/chat-cards/span-dark-1440.png' });
});
