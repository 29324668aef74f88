import { mkdirSync } from 'node:fs';
import type { Page, WebSocket } from '@playwright/test';
import { makeRepos, type Repos, startWorker, type WorkerProcess } from '../packages/worktree/test/helpers.ts';
import { type ChatStack, openChat, startChatStack, until } from './fixtures/chat-stack.ts';
import { ARTIFACTS, expect, test } from './fixtures/test.ts';

/**
 * The chat's worktree pieces (seed 2.9 "Picker tab", "Working-dir badge", seed 8 landed /
 * land-blocked notices) against the real engine, the seven chat workers, the worktree worker as
 * its own process and real git repositories: the working directory reaches the turn as
 * `options.metadata.fs_scope.root`; picking a worktree validates and claims it for the
 * conversation's session, pointing elsewhere releases it; a worktree being landed is listed but
 * cannot be picked; the badge shows branch, short id, dirty `*`, ahead `+n` and the lifecycle;
 * the conversation owning a worktree gets its landed and land-blocked notices (others do not).
 */

test.describe.configure({ mode: 'serial' });

const SHOTS = `${ARTIFACTS}chat-worktree/`;
let chat: ChatStack;
let repos: Repos;
let worker: WorkerProcess | undefined;

test.beforeAll(async ({ stack }) => {
  test.setTimeout(120_000);
  mkdirSync(SHOTS, { recursive: true });
  repos = makeRepos();
  chat = await startChatStack(stack);
});

test.afterAll(async ({ engineClient }) => {
  // the stack is shared with other spec files: leave it without the worktree worker and its configuration entry, as found
  await worker?.stop();
  await engineClient.call('configuration::delete', { id: 'worktree' }).catch(() => undefined);
  await chat?.stop();
});

const nav = (page: Page) => page.getByRole('navigation', { name: 'Main navigation' });
const picker = (page: Page) => page.getByTestId('working-dir');
const menu = (page: Page) => page.getByTestId('working-dir-menu');
const option = (page: Page, id: string) => page.locator(`[data-testid="worktree-option"][data-worktree-id="${id}"]`);

/** The `harness::send` payloads this page sent over its engine socket. */
function recordSends(page: Page): Array<Record<string, any>> {
  const sends: Array<Record<string, any>> = [];
  page.on('websocket', (ws: WebSocket) => {
    ws.on('framesent', (frame) => {
      if (typeof frame.payload !== 'string' || !frame.payload.includes('harness::send')) return;
      try {
        const msg = JSON.parse(frame.payload);
        if (msg.function_id === 'harness::send') sends.push(msg.data);
      } catch {
        // not JSON: not a call
      }
    });
  });
  return sends;
}

/**
 * A new conversation: its session is made by the first message (issue 25 item 2), under the id
 * chosen when it began, so a working directory picked before that message is already its own.
 */
async function newConversation(page: Page): Promise<string> {
  await page.getByTestId('new-chat').click();
  await expect(page).toHaveURL(/#\/chat$/);
  await expect(page.getByTestId('chat-page')).toHaveAttribute('data-new', 'true');
  const id = await page.getByTestId('chat-page').getAttribute('data-conversation-id');
  expect(id).toMatch(/^console-/);
  return id as string;
}

async function send(page: Page, text: string) {
  chat.openai.turn({ text: `Answer to: ${text}` });
  await page.getByTestId('composer-input').fill(text);
  await expect(page.getByTestId('send-button')).toBeEnabled();
  await page.getByTestId('composer-input').press('Enter');
  await expect(page.getByTestId('assistant-message').last()).toContainText(`Answer to: ${text}`, { timeout: 20_000 });
}

test('without the worktree worker: the Folder tab only; the folder reaches the turn as fs_scope.root', async ({ page, consoleUrl }) => {
  const sends = recordSends(page);
  await openChat(page, consoleUrl, 'dark');
  // a new conversation takes a working directory before its first message, which goes with it
  const session = await newConversation(page);
  await picker(page).click();
  await expect(page.getByTestId('working-dir-tab-folder')).toHaveAttribute('aria-selected', 'true');
  await expect(page.getByTestId('working-dir-tab-worktrees')).toHaveCount(0);
  await page.getByTestId('working-dir-input').fill(repos.repo);
  await page.getByTestId('working-dir-use').click();
  await expect(menu(page)).toHaveCount(0);
  await expect(picker(page)).toHaveAttribute('data-root', repos.repo);
  await expect(picker(page)).toContainText('repo');

  await send(page, 'Where am I working?');
  await expect(page).toHaveURL(new RegExp(`#/chat/${session}$`));
  await expect(page.getByTestId('session-id')).toHaveText(session);
  const sent = sends.find((s) => s.session_id === session);
  expect(sent?.options?.metadata?.fs_scope).toEqual({ root: repos.repo });

  // None: the next turn goes without one
  await picker(page).click();
  await page.getByTestId('working-dir-clear').click();
  await expect(picker(page)).toHaveAttribute('data-root', '');
  await send(page, 'And now?');
  expect(sends.filter((s) => s.session_id === session).at(-1)?.options?.metadata?.fs_scope).toBeUndefined();
});

test('the worktrees tab: pick validates and claims, the badge shows its markers, pointing elsewhere releases', async ({
  page,
  consoleUrl,
  stack,
  engineClient,
}) => {
  test.setTimeout(150_000);
  const call = <T = any>(fn: string, payload: unknown) => engineClient.call<T>(fn, payload, { timeoutMs: 30_000 });
  const sends = recordSends(page);
  await openChat(page, consoleUrl, 'dark');
  // The lands below are a script's, with test commands of its own (a slow one, a failing one):
  // the operator allows that, as the worker refuses a caller's test_cmd by default (W500). The
  // config block only seeds a new configuration entry, which the engine keeps: start from none.
  await call('configuration::delete', { id: 'worktree' });
  worker = startWorker(stack.engine.busUrl, {
    ...repos.env,
    ENG_WORKER_CONFIG: JSON.stringify({ worktree_root: repos.root, prune_schedule: '', gates: { allow_caller_test_cmd: true } }),
  });
  await worker.ready;
  await expect(nav(page).getByRole('link', { name: 'Worktrees' })).toBeVisible({ timeout: 15_000 });

  // a: one commit ahead and an uncommitted file; b: clean, level with main
  const a = await call('worktree::create', { repo_path: repos.repo });
  repos.commit(a.path, { 'feature.txt': 'feature\n' }, 'feature');
  repos.git(a.path, 'status'); // (refreshes the index timestamps: status is then cheap)
  const { writeFileSync } = await import('node:fs');
  writeFileSync(`${a.path}/scratch.txt`, 'not committed yet\n');
  const b = await call('worktree::create', { repo_path: repos.repo });

  const session = await newConversation(page);
  await picker(page).click();
  await expect(page.getByTestId('working-dir-tab-worktrees')).toHaveAttribute('aria-selected', 'true');
  await expect(option(page, a.worktree_id)).toBeVisible();
  await expect(option(page, b.worktree_id)).toBeVisible();
  await page.screenshot({ path: `${SHOTS}picker-dark.png` });

  // pick a: validated and claimed for this conversation's session
  await option(page, a.worktree_id).click();
  await expect(menu(page)).toHaveCount(0);
  await expect.poll(async () => (await call('worktree::get', { worktree_id: a.worktree_id })).session_id).toBe(session);
  await expect(picker(page)).toHaveAttribute('data-root', a.path);
  const badge = picker(page).getByTestId('worktree-badge');
  await expect(badge.getByTestId('worktree-badge-branch')).toHaveText(a.branch);
  await expect(badge.getByTestId('worktree-badge-id')).toHaveText(a.worktree_id.replace(/^wt_/, '').slice(0, 8));
  await expect(badge.getByTestId('worktree-badge-dirty')).toHaveText('*');
  await expect(badge.getByTestId('worktree-badge-ahead')).toHaveText('+1');
  await expect(badge).toHaveAttribute('data-lifecycle', 'claimed');
  await expect(badge).toHaveAttribute('title', new RegExp(`^${a.path}`));
  await page.screenshot({ path: `${SHOTS}badge-dark.png` });

  // the turn runs in it
  await send(page, 'Work in the worktree');
  expect(sends.filter((s) => s.session_id === session).at(-1)?.options?.metadata?.fs_scope).toEqual({ root: a.path });

  // pointing at b releases a
  await picker(page).click();
  await option(page, b.worktree_id).click();
  await expect.poll(async () => (await call('worktree::get', { worktree_id: b.worktree_id })).session_id).toBe(session);
  await expect.poll(async () => (await call('worktree::get', { worktree_id: a.worktree_id })).session_id ?? null).toBeNull();
  await expect(picker(page).getByTestId('worktree-badge-branch')).toHaveText(b.branch);
  await expect(picker(page).getByTestId('worktree-badge-dirty')).toHaveCount(0);
  await expect(picker(page).getByTestId('worktree-badge-ahead')).toHaveCount(0);

  // a worktree claimed by another session is listed with its owner; picking it is refused with the worker's code
  await call('worktree::claim', { worktree_id: a.worktree_id, session_id: 'agent-9' });
  await picker(page).click();
  await expect(option(page, a.worktree_id).getByTestId('worktree-option-note')).toHaveText('claimed by agent-9');
  await option(page, a.worktree_id).click();
  await expect(page.getByTestId('working-dir-error')).toContainText('W210');
  await expect(picker(page)).toHaveAttribute('data-root', b.path);
  await page.keyboard.press('Escape');
  await call('worktree::release', { worktree_id: a.worktree_id, session_id: 'agent-9' });

  // a folder (the Folder tab) releases b too
  await picker(page).click();
  await page.getByTestId('working-dir-tab-folder').click();
  await page.getByTestId('working-dir-input').fill(repos.dir);
  await page.getByTestId('working-dir-use').click();
  await expect(picker(page)).toHaveAttribute('data-root', repos.dir);
  await expect.poll(async () => (await call('worktree::get', { worktree_id: b.worktree_id })).session_id ?? null).toBeNull();

  // a folder inside a managed worktree claims that worktree
  await picker(page).click();
  await page.getByTestId('working-dir-tab-folder').click();
  await page.getByTestId('working-dir-input').fill(b.path);
  await page.getByTestId('working-dir-use').click();
  await expect.poll(async () => (await call('worktree::get', { worktree_id: b.worktree_id })).session_id).toBe(session);
  await expect(picker(page).getByTestId('worktree-badge-branch')).toHaveText(b.branch);

  // deleting the conversation gives the worktree back
  const row = page.locator(`[data-testid="conversation"][data-session-id="${session}"]`);
  await row.hover();
  await row.getByRole('button', { name: 'Delete' }).click();
  await page.getByTestId('confirm-action').click();
  await expect(row).toHaveCount(0);
  await expect.poll(async () => (await call('worktree::get', { worktree_id: b.worktree_id })).session_id ?? null).toBeNull();
});

test('a land in progress cannot be picked; the owning conversation gets the landed and land-blocked notices', async ({
  page,
  consoleUrl,
  engineClient,
}) => {
  test.setTimeout(150_000);
  const call = <T = any>(fn: string, payload: unknown) => engineClient.call<T>(fn, payload, { timeoutMs: 30_000 });
  await openChat(page, consoleUrl, 'dark');
  await expect(nav(page).getByRole('link', { name: 'Worktrees' })).toBeVisible({ timeout: 15_000 });
  const session = await newConversation(page);

  // c: created from the picker's form, claimed for this conversation at once
  await picker(page).click();
  await page.getByLabel('Repository').fill(repos.repo);
  await page.getByTestId('worktree-create').click();
  await expect(menu(page)).toHaveCount(0);
  const root = (await picker(page).getAttribute('data-root')) as string;
  const cId = (await picker(page).getAttribute('data-worktree-id')) as string;
  expect(cId).toMatch(/^wt_/);
  const c = await call('worktree::get', { worktree_id: cId });
  expect(c.session_id).toBe(session);
  expect(c.path).toBe(root);
  repos.commit(c.path, { 'landed.txt': 'landed\n' }, 'to land');

  // another session's worktree lands meanwhile: not this conversation's notice
  const other = await call('worktree::create', { repo_path: repos.repo, session_id: 'agent-elsewhere' });
  repos.commit(other.path, { 'other.txt': 'other\n' }, 'other work');
  await call('worktree::land', { worktree_id: other.worktree_id, target_branch: 'main', session_id: 'agent-elsewhere' });
  await until(async () => repos.git(repos.repo, 'log', '-1', '--format=%s', 'main') === 'other work', 20_000);

  // c is landed by a script with a slow test command of its own (gates.allow_caller_test_cmd, above): listed while it lands, not pickable
  await call('worktree::land', { worktree_id: c.worktree_id, target_branch: 'main', test_cmd: 'sleep 4' });
  await picker(page).click();
  await expect(option(page, c.worktree_id)).toHaveAttribute('data-lifecycle', 'landing', { timeout: 5_000 });
  await expect(option(page, c.worktree_id)).toBeDisabled();
  await expect(option(page, c.worktree_id).getByTestId('worktree-option-note')).toHaveText('cannot be picked: a land is in progress');
  await page.keyboard.press('Escape');

  // landed: the notice names the target and the merged sha; the worktree is gone, so is its badge
  const notice = page.getByTestId('worktree-notice');
  await expect(notice).toHaveCount(1, { timeout: 30_000 });
  const merged = repos.head(repos.repo, 'main');
  await expect(notice).toHaveAttribute('data-kind', 'landed');
  await expect(notice.getByTestId('worktree-notice-title')).toHaveText(`Worktree ${c.branch} landed onto main (${merged.slice(0, 8)})`);
  await expect(picker(page).getByTestId('worktree-badge')).toHaveAttribute('data-gone', 'true');

  // d: picked, then its land is blocked by conflicts in four files
  const d = await call('worktree::create', { repo_path: repos.repo });
  const files = ['c1.txt', 'c2.txt', 'c3.txt', 'c4.txt'];
  repos.commit(d.path, Object.fromEntries(files.map((f) => [f, 'mine\n'])), 'mine');
  repos.commit(repos.repo, Object.fromEntries(files.map((f) => [f, 'theirs\n'])), 'theirs');
  await picker(page).click();
  await option(page, d.worktree_id).click();
  await expect(picker(page).getByTestId('worktree-badge-branch')).toHaveText(d.branch);
  await call('worktree::land', { worktree_id: d.worktree_id, target_branch: 'main' });
  const blocked = page.locator('[data-testid="worktree-notice"][data-kind="land-blocked"]');
  await expect(blocked).toBeVisible({ timeout: 30_000 });
  await expect(blocked.getByTestId('worktree-notice-title')).toHaveText(
    `Land of ${d.branch} onto main blocked: conflicts in c1.txt, c2.txt, c3.txt and 1 more (the rebase is left in progress to resolve)`,
  );
  await expect(blocked).toContainText('W401');
  // the badge follows the event
  await expect(picker(page).getByTestId('worktree-badge')).toHaveAttribute('data-lifecycle', 'land-blocked');
  await expect(page.getByTestId('worktree-notice')).toHaveCount(2);
  await page.screenshot({ path: `${SHOTS}notices-dark.png` });
  await page.getByTestId('theme-toggle').first().click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'light');
  await page.screenshot({ path: `${SHOTS}notices-light.png` });
  await picker(page).click();
  await page.screenshot({ path: `${SHOTS}picker-light.png` });
  await page.keyboard.press('Escape');

  // the script's test command failing: the exit code
  const e = await call('worktree::create', { repo_path: repos.repo, session_id: session });
  repos.commit(e.path, { 'e.txt': 'e\n' }, 'e');
  await call('worktree::land', { worktree_id: e.worktree_id, target_branch: 'main', test_cmd: 'exit 3' });
  await expect(page.locator(`[data-testid="worktree-notice"][data-worktree-id="${e.worktree_id}"]`)).toContainText(
    `Land of ${e.branch} onto main blocked: the tests failed (exit 3)`,
    { timeout: 30_000 },
  );
  // dismissed, it goes
  await page
    .locator(`[data-testid="worktree-notice"][data-worktree-id="${e.worktree_id}"]`)
    .getByRole('button', { name: 'Dismiss' })
    .click();
  await expect(page.getByTestId('worktree-notice')).toHaveCount(2);
});
