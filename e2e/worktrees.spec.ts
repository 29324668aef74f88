import { existsSync, mkdirSync } from 'node:fs';
import { connect } from '@eng/sdk';
import type { Page } from '@playwright/test';
import { makeRepos, type Repos, startWorker, type WorkerProcess } from '../packages/worktree/test/helpers.ts';
import { ARTIFACTS, expect, gotoPage, test } from './fixtures/test.ts';

/**
 * The Worktrees page (seed 2.9) against a real engine, the worktree worker as its own process and
 * real git repositories: the install notice without the worker; with it, the graph follows
 * worktrees created, claimed, landed and removed by a test script (no reload), and the detail
 * panel's claim, release, land and remove actions work; the land dialog offers a test command only
 * while the worker's gates.allow_caller_test_cmd is on and shows its W500 refusal in words.
 * Screenshots in both themes.
 */

const SHOTS = `${ARTIFACTS}worktrees/`;
const nav = (page: Page) => page.getByRole('navigation', { name: 'Main navigation' });
const node = (page: Page, worktreeId: string) => page.locator(`[data-testid="worktree-node"][data-node-id="wt:${worktreeId}"]`);
const sessionNode = (page: Page, session: string) => page.locator(`[data-testid="worktree-node"][data-node-id="session:${session}"]`);

async function setTheme(page: Page, theme: 'light' | 'dark') {
  const current = await page.locator('html').getAttribute('data-theme');
  if (current !== theme) await page.getByTestId('theme-toggle').first().click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', theme);
}

/** Screenshots of an open dialog in both themes: the `t` shortcut (the dialog covers the toggle), back to dark after. */
async function shotDialog(page: Page, name: string) {
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await page.screenshot({ path: `${SHOTS}${name}-dark.png` });
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  await page.keyboard.press('t');
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'light');
  await page.waitForTimeout(300); // the theme transition
  await page.screenshot({ path: `${SHOTS}${name}-light.png` });
  await page.keyboard.press('t');
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
}

type EngineCall = <T = any>(fn: string, payload: unknown) => Promise<T>;

/**
 * Whether the worker takes a caller's test_cmd right now (it reloads its configuration entry
 * through a trigger, so a configuration::set takes a moment): a land of an unknown worktree with
 * a test command is W500 while gates.allow_caller_test_cmd is off, W200 (unknown) while it is on.
 */
async function takesCallerTestCmd(call: EngineCall): Promise<boolean> {
  try {
    await call('worktree::land', { worktree_id: 'wt_000000000000', target_branch: 'main', test_cmd: 'true' });
    return true;
  } catch (err) {
    return (err as { code?: string }).code !== 'W500';
  }
}

/** configuration::set of the worker's `worktree` entry, as an operator edits it, with `change` applied to the stored value. */
async function setWorktreeConfig(call: EngineCall, change: (value: Record<string, any>) => Record<string, any>) {
  const { value } = await call<{ value: Record<string, any> }>('configuration::get', { id: 'worktree' });
  await call('configuration::set', { id: 'worktree', value: change(value) });
}

/** A WorktreeInfo as worktree::list answers it, for a worker stand-in. */
function fakeWorktree(id: string, repoPath: string) {
  return {
    worktree_id: id,
    repo_path: repoPath,
    repo_key: 'repo-00000000',
    path: `/tmp/${id}`,
    branch: `eng/${id}`,
    base_ref: 'main',
    base_sha: '0'.repeat(40),
    dev_port: 12345,
    lifecycle: 'active',
    status: {
      clean: true,
      ahead: 0,
      behind: 0,
      staged: 0,
      unstaged: 0,
      untracked: 0,
      conflicted: 0,
      unpushed: 0,
      in_rebase: false,
      diffstat: '',
      head_sha: '0'.repeat(40),
      integrated: false,
    },
    created_at: Date.now(),
    updated_at: Date.now(),
  };
}

test.describe.configure({ mode: 'serial' });

test.describe('Worktrees', () => {
  let repos: Repos;
  let worker: WorkerProcess | undefined;

  test.beforeAll(() => {
    mkdirSync(SHOTS, { recursive: true });
    repos = makeRepos();
  });
  test.afterAll(async ({ engineClient }) => {
    // the stack is shared with other spec files: leave it without the worker and its configuration entry, as found
    await worker?.stop();
    await engineClient.call('configuration::delete', { id: 'worktree' }).catch(() => undefined);
  });

  for (const theme of ['dark', 'light'] as const) {
    test(`without the worker: no nav entry, the page shows "eng worker add worktree" (${theme})`, async ({ page, consoleUrl }) => {
      await gotoPage(page, consoleUrl, '/worktrees', theme);
      await expect(page.getByTestId('gated-worktrees')).toHaveAttribute('data-present', 'false');
      await expect(page.getByTestId('install-command')).toHaveText('eng worker add worktree');
      await expect(nav(page).getByRole('link', { name: 'Worktrees' })).toHaveCount(0);
      await page.screenshot({ path: `${SHOTS}install-notice-${theme}.png` });
    });
  }

  test('polls every 15 s while the lifecycle bindings are not active, and not while the tab is hidden', async ({
    page,
    consoleUrl,
    stack,
  }) => {
    test.setTimeout(90_000);
    // a worker that answers worktree::list but provides none of the six trigger types: the page's bindings stay inactive
    let calls = 0;
    let worktrees: unknown[] = [];
    const fake = connect(stack.engine.busUrl, { name: 'worktree-without-triggers', tracing: false });
    fake.registerFunction('worktree::list', () => {
      calls++;
      return { worktrees };
    });
    await fake.ready({ timeoutMs: 10_000 });
    try {
      await gotoPage(page, consoleUrl, '/worktrees', 'dark');
      await expect(page.getByText('worktree::list reports no managed worktrees yet.')).toBeVisible();
      await expect(page.getByTestId('worktrees-live')).toHaveAttribute('data-live', 'false');
      await expect(page.getByTestId('worktrees-live')).toHaveText('polling 15 s');
      worktrees = [fakeWorktree('wt_00000000aaaa', repos.repo)];
      await expect(node(page, 'wt_00000000aaaa')).toBeVisible({ timeout: 20_000 });

      // hidden tab: no poll
      await page.evaluate(() => {
        Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => 'hidden' });
        Object.defineProperty(document, 'hidden', { configurable: true, get: () => true });
        document.dispatchEvent(new Event('visibilitychange', { bubbles: true }));
      });
      const before = calls;
      await page.waitForTimeout(17_000);
      expect(calls).toBe(before);
      // visible again: it reads at once
      await page.evaluate(() => {
        Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => 'visible' });
        Object.defineProperty(document, 'hidden', { configurable: true, get: () => false });
        document.dispatchEvent(new Event('visibilitychange', { bubbles: true }));
      });
      await expect.poll(() => calls, { timeout: 5_000 }).toBeGreaterThan(before);
    } finally {
      await fake.close();
    }
  });

  test('follows worktrees created, claimed, landed and removed by a script, live', async ({ page, consoleUrl, stack, engineClient }) => {
    test.setTimeout(120_000);
    const call = <T = any>(fn: string, payload: unknown) => engineClient.call<T>(fn, payload, { timeoutMs: 30_000 });
    // the stack is shared: another spec's worktree worker (chat-worktree) may have left its
    // worktrees in the engine's state, where the worker keeps them across restarts. Start clean.
    for (const scope of ['worktree', 'worktree-land']) {
      const listed = await call<{ items: Array<{ key: string }> }>('state::list', { scope, with_keys: true, limit: 1000 });
      for (const { key } of listed?.items ?? []) await call('state::delete', { scope, key });
    }
    // its configuration entry too (the engine keeps it, and the worker's ENG_WORKER_CONFIG only
    // seeds a new one): this worker starts on the defaults, gates.allow_caller_test_cmd off
    await call('configuration::delete', { id: 'worktree' });
    await gotoPage(page, consoleUrl, '/worktrees', 'dark');
    worker = startWorker(stack.engine.busUrl, {
      ...repos.env,
      ENG_WORKER_CONFIG: JSON.stringify({ worktree_root: repos.root, prune_schedule: '' }),
    });
    await worker.ready;

    // the surface appears by itself once the worker is connected
    await expect(nav(page).getByRole('link', { name: 'Worktrees' })).toBeVisible({ timeout: 15_000 });
    await expect(page.getByTestId('gated-worktrees')).toHaveAttribute('data-present', 'true');
    await expect(page.getByText('worktree::list reports no managed worktrees yet.')).toBeVisible();
    // all six lifecycle bindings active: no polling
    await expect(page.getByTestId('worktrees-live')).toHaveAttribute('data-live', 'true', { timeout: 20_000 });

    // created by the script → a node, without a reload (the poll is off, so this is the trigger)
    const a = await call('worktree::create', { repo_path: repos.repo });
    await expect(node(page, a.worktree_id)).toBeVisible({ timeout: 5_000 });
    await expect(node(page, a.worktree_id)).toHaveAttribute('data-lifecycle', 'active');
    await expect(page.locator(`[data-node-id="repo:${repos.repo}"]`)).toContainText('repo');

    // claimed by an agent session → the session node, and the status read with it
    repos.commit(a.path, { 'feature.txt': 'feature\n' }, 'feature');
    await call('worktree::claim', { worktree_id: a.worktree_id, session_id: 'agent-7' });
    await expect(sessionNode(page, 'agent-7')).toBeVisible({ timeout: 5_000 });
    await expect(node(page, a.worktree_id)).toHaveAttribute('data-lifecycle', 'claimed');
    await expect(page.getByTestId('worktrees-last-event')).toContainText('agent-7 claimed');

    // the detail panel
    await node(page, a.worktree_id).click();
    const detail = page.getByTestId('worktree-detail');
    await expect(detail.getByTestId('worktree-detail-branch')).toHaveText(a.branch);
    await expect(detail.getByTestId('worktree-base')).toContainText(`main @ ${a.base_sha.slice(0, 10)}`);
    await expect(detail.getByTestId('worktree-dev-port')).toContainText(String(a.dev_port));
    await expect(detail.getByTestId('worktree-ahead')).toHaveText('+1 ahead');
    await expect(detail.getByTestId('worktree-behind')).toHaveText('−0 behind');
    await expect(detail.getByTestId('worktree-clean')).toHaveText('clean');
    await expect(detail.getByTestId('worktree-diffstat')).toContainText('1 file changed, 1 insertion(+)');
    await page.waitForTimeout(400); // the graph refits beside the panel
    await page.screenshot({ path: `${SHOTS}graph-detail-dark.png` });
    await setTheme(page, 'light');
    await page.screenshot({ path: `${SHOTS}graph-detail-light.png` });
    await setTheme(page, 'dark');

    // release from the panel
    await detail.getByTestId('worktree-release').click();
    await expect(sessionNode(page, 'agent-7')).toHaveCount(0);
    await expect(detail.getByTestId('worktree-detail-lifecycle')).toHaveText('active');

    // claim from the panel, for the session id typed in
    await detail.getByLabel('Session id to claim for').fill('console-e2e');
    await detail.getByTestId('worktree-claim').click();
    await expect(sessionNode(page, 'console-e2e')).toBeVisible();

    // landed by the script → the worktree goes, the notice names the target and the sha
    const mainBefore = repos.head(repos.repo, 'main');
    await call('worktree::land', { worktree_id: a.worktree_id, target_branch: 'main' });
    await expect(node(page, a.worktree_id)).toHaveCount(0, { timeout: 20_000 });
    await expect(detail).toHaveCount(0);
    const merged = repos.head(repos.repo, 'main');
    expect(merged).not.toBe(mainBefore);
    await expect(page.getByTestId('worktrees-land-notice')).toHaveText(`${a.branch} landed onto main (${merged.slice(0, 8)})`);
    await expect(page.getByTestId('worktrees-live')).toHaveAttribute('data-live', 'true');

    // land from the panel: the target from the dialog. The default configuration takes no test
    // command from a caller (W500), so the dialog offers none and says why; no test_commands entry
    // matches this repository, so none runs
    const b = await call('worktree::create', { repo_path: repos.repo });
    repos.commit(b.path, { 'second.txt': 'second\n' }, 'second');
    await expect(node(page, b.worktree_id)).toBeVisible();
    await node(page, b.worktree_id).click();
    await detail.getByTestId('worktree-land-open').click();
    const gate = page.getByTestId('worktree-land-test-gate');
    await expect(gate).toHaveAttribute('data-known', 'true');
    await expect(gate).toHaveAttribute('data-allow-caller', 'false');
    await expect(page.getByLabel('Test command')).toHaveCount(0);
    await expect(gate.getByTestId('worktree-land-test-configured')).toHaveText(
      'None: no test_commands entry matches this repository, so the land runs no tests.',
    );
    await expect(gate.getByTestId('worktree-land-test-hint')).toContainText(
      'the worker refuses one (W500) unless its operator sets gates.allow_caller_test_cmd: true',
    );
    await page.getByLabel('Target branch').fill('main');
    await shotDialog(page, 'land-dialog-default');
    await page.getByTestId('worktree-land-submit').click();
    await expect(node(page, b.worktree_id)).toHaveCount(0, { timeout: 20_000 });
    expect(repos.git(repos.repo, 'log', '-1', '--format=%s', 'main')).toBe('second');

    // a land-blocked worktree shows why, with the conflicted file
    const c = await call('worktree::create', { repo_path: repos.repo });
    repos.commit(c.path, { 'src/app.txt': 'line 1\nmine\nline 3\n' }, 'mine');
    repos.commit(repos.repo, { 'src/app.txt': 'line 1\ntheirs\nline 3\n' }, 'theirs');
    await call('worktree::land', { worktree_id: c.worktree_id, target_branch: 'main' });
    await expect(node(page, c.worktree_id)).toHaveAttribute('data-lifecycle', 'land-blocked', { timeout: 20_000 });
    await expect(page.getByTestId('worktrees-land-notice')).toHaveText(`land of ${c.branch} onto main blocked: conflicts in src/app.txt`);
    await node(page, c.worktree_id).click();
    await expect(detail.getByTestId('worktree-conflicts')).toHaveText('src/app.txt');
    await expect(detail.getByTestId('worktree-integrated')).toHaveCount(0);
    await expect(detail.getByTestId('worktree-ahead')).toHaveText('+1 ahead');
    await page.waitForTimeout(400); // the graph refits beside the panel
    await page.screenshot({ path: `${SHOTS}land-blocked-dark.png` });

    // integrated upstream: the marker with its reason
    const d = await call('worktree::create', { repo_path: repos.repo });
    repos.commit(d.path, { 'integrated.txt': 'in\n' }, 'integrated');
    repos.git(repos.repo, 'merge', '--quiet', '--ff-only', d.branch);
    await call('worktree::claim', { worktree_id: d.worktree_id, session_id: 'agent-8' });
    await expect(node(page, d.worktree_id)).toHaveAttribute('data-integrated', 'true');
    await node(page, d.worktree_id).click();
    await expect(detail.getByTestId('worktree-integrated')).toContainText('merged upstream (same_commit');

    // remove from the panel, after the confirmation
    await call('worktree::release', { worktree_id: d.worktree_id, session_id: 'agent-8' });
    await detail.getByTestId('worktree-remove-open').click();
    await page.getByTestId('confirm-action').click();
    await expect(node(page, d.worktree_id)).toHaveCount(0, { timeout: 10_000 });
    expect(existsSync(d.path)).toBe(false);
    await setTheme(page, 'light');
    await page.screenshot({ path: `${SHOTS}graph-light.png` });
  });

  test("the land dialog: a test command of the caller's only while the operator allows it; the worker's refusal in words", async ({
    page,
    consoleUrl,
    engineClient,
  }) => {
    test.setTimeout(90_000);
    const call: EngineCall = (fn, payload) => engineClient.call(fn, payload, { timeoutMs: 30_000 });
    // the operator allows callers' commands and gives this repository one of its own (an argument vector that leaves a mark)
    const marker = `${repos.dir}/configured-test-ran`;
    await setWorktreeConfig(call, (v) => ({
      ...v,
      gates: { ...v.gates, allow_caller_test_cmd: true },
      test_commands: { [repos.repo]: ['touch', marker] },
    }));
    await expect.poll(() => takesCallerTestCmd(call), { timeout: 10_000 }).toBe(true);

    const f = await call<any>('worktree::create', { repo_path: repos.repo });
    repos.commit(f.path, { 'f.txt': 'f\n' }, 'f');
    await gotoPage(page, consoleUrl, `/worktrees?wt=${f.worktree_id}`, 'dark');
    const detail = page.getByTestId('worktree-detail');
    await expect(detail.getByTestId('worktree-detail-branch')).toHaveText(f.branch);
    await detail.getByTestId('worktree-land-open').click();
    const gate = page.getByTestId('worktree-land-test-gate');
    await expect(gate).toHaveAttribute('data-allow-caller', 'true');
    await expect(page.getByLabel('Test command')).toHaveAttribute('placeholder', `touch ${marker}`);
    await expect(gate.getByTestId('worktree-land-test-hint')).toContainText(
      `Left empty, the repository's configured one runs: touch ${marker}.`,
    );
    await page.getByLabel('Target branch').fill('main');
    await page.getByLabel('Test command').fill('test -f f.txt');
    await shotDialog(page, 'land-dialog-caller-allowed');

    // meanwhile the operator turns it back off (the default): the land with a test command is refused, in words
    await setWorktreeConfig(call, (v) => ({ ...v, gates: { ...v.gates, allow_caller_test_cmd: false } }));
    await expect.poll(() => takesCallerTestCmd(call), { timeout: 10_000 }).toBe(false);
    await page.getByTestId('worktree-land-submit').click();
    const refused = page.getByTestId('worktree-land-test-refused');
    await expect(refused).toBeVisible();
    await expect(refused).toHaveAttribute('role', 'alert');
    await expect(refused).toContainText('The worker refused the test command (W500)');
    await expect(refused).toContainText('A command of your own needs gates.allow_caller_test_cmd: true');
    // the worker's own words once, without its code repeated
    await expect(refused).toContainText("test_cmd in a worktree::land call is refused: only the repository's configured test command");
    await expect(refused).not.toContainText('W500: W500');
    // nothing was queued; the dialog re-reads the settings: no field now, the repository's command instead
    await expect(page.getByLabel('Test command')).toHaveCount(0);
    await expect(gate.getByTestId('worktree-land-test-configured')).toHaveText(`The repository's configured command runs: touch ${marker}`);
    expect((await call<any>('worktree::get', { worktree_id: f.worktree_id })).lifecycle).toBe('active');
    expect(existsSync(marker)).toBe(false);
    await shotDialog(page, 'land-dialog-refused');

    // landing again goes without it: the repository's configured command runs, then the land
    await page.getByTestId('worktree-land-submit').click();
    await expect(node(page, f.worktree_id)).toHaveCount(0, { timeout: 20_000 });
    expect(repos.git(repos.repo, 'log', '-1', '--format=%s', 'main')).toBe('f');
    expect(existsSync(marker)).toBe(true);
  });

  test('a refused action is shown in the panel with its code', async ({ page, consoleUrl, engineClient }) => {
    const e = await engineClient.call<any>('worktree::create', { repo_path: repos.repo, session_id: 'someone' }, { timeoutMs: 30_000 });
    repos.commit(e.path, { 'unmerged.txt': 'u\n' }, 'unmerged');
    await engineClient.call('worktree::release', { worktree_id: e.worktree_id, session_id: 'someone' });
    await gotoPage(page, consoleUrl, `/worktrees?wt=${e.worktree_id}`, 'dark');
    const detail = page.getByTestId('worktree-detail');
    await expect(detail.getByTestId('worktree-detail-branch')).toHaveText(e.branch);
    await detail.getByTestId('worktree-remove-open').click();
    await page.getByTestId('confirm-action').click();
    await expect(page.getByRole('alert')).toContainText('W221');
    await expect(node(page, e.worktree_id)).toBeVisible();
  });
});
