import { test as base } from '@playwright/test';
import { call } from './fixtures/engine-client.ts';
import { BROKEN_WORKERS, type LaunchedStack, launchedStackFixture } from './fixtures/launched-stack.ts';
import { ARTIFACTS, expect, gotoPage } from './fixtures/test.ts';

/**
 * Issue 25 item 12: the Workers page shows why a launched worker keeps failing — the last lines it
 * wrote to stderr, from `engine::supervisor::list` — not only the path of its log file.
 */
const test = base.extend<object, { ls: LaunchedStack }>({ ls: launchedStackFixture });
test.describe.configure({ timeout: 90_000 });

interface Supervised {
  name: string;
  status: string;
  stderrTail: string[];
}

test('a crash-looping worker shows the reason it printed on stderr; a running one shows none', async ({ page, ls }) => {
  const crashing = BROKEN_WORKERS.crashing.name;
  // the fixture's worker prints "importer: upstream refused" on stderr, then exits 3
  await expect
    .poll(
      async () => {
        const { workers } = await call<{ workers: Supervised[] }>(ls.asStack, 'engine::supervisor::list', {});
        const w = workers.find((x) => x.name === crashing);
        return w?.status === 'crash_loop' ? w.stderrTail : undefined;
      },
      { timeout: 20_000 },
    )
    .toEqual(['importer: upstream refused']);

  await gotoPage(page, ls.consoleUrl, '/workers');
  const row = (name: string) => page.locator(`[data-testid="supervised-row"][data-name="${name}"]`);
  const reason = row(crashing).getByTestId('supervised-stderr');
  await expect(reason).toBeVisible();
  await expect(reason).toHaveText('importer: upstream refused');
  await expect(row(crashing).getByRole('region', { name: `Last stderr lines of ${crashing}` })).toBeVisible();
  // the running workers' rows stay one line each
  await expect(row('orders')).toHaveAttribute('data-status', 'running');
  await expect(row('orders').getByTestId('supervised-stderr')).toHaveCount(0);
  await row(crashing).screenshot({ path: `${ARTIFACTS}console-worker/workers-stderr.png` });
});
