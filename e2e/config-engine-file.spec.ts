import { join } from 'node:path';
import { REPO_ROOT } from '../test/harness.ts';
import { expect, gotoPage, test } from './fixtures/test.ts';

/**
 * Issue 25 item 10: the Config page shows the configuration the engine runs, as the engine reports
 * it (`engine::config::get`), not the config.yaml of the console's folder. The fixtures' engine is
 * started with `-c <temp dir>/config.yaml` while the console runs in the repository, whose own
 * config.yaml is another file. And a console server without the settings endpoints is said plainly,
 * with no HTTP status beside the connected engine.
 */

test('shows the file the engine was started with and its content', async ({ page, consoleUrl, stack }) => {
  await gotoPage(page, consoleUrl, '/config');
  const card = page.getByTestId('engine-config');
  await expect(card.getByTestId('engine-config-path')).toHaveText(stack.engine.configPath);
  expect(stack.engine.configPath).not.toBe(join(REPO_ROOT, 'config.yaml'));
  await expect(card.getByTestId('engine-config-text')).toContainText(`port: ${stack.engine.busPort}`);
  await expect(card.getByTestId('engine-config-text')).toContainText('name: eng-worker-manager');
});

test('says plainly when the serving console has no settings endpoints (no "HTTP 404" beside a green dot)', async ({ page, consoleUrl }) => {
  await page.route(/\/_console\/(config|probe)(\?.*)?$/, (route) => route.fulfill({ status: 404, body: 'not found' }));
  await gotoPage(page, consoleUrl, '/config');
  await expect(page.getByTestId('connection-pill').first()).toHaveAttribute('data-connection', 'open');
  await expect(page.getByText('does not report console settings').first()).toBeVisible();
  await expect(page.getByText('cannot probe the engine').first()).toBeVisible();
  // the engine's own answer still shows: it comes over the bus, not from the console server
  await expect(page.getByTestId('engine-config-path')).toBeVisible();
  await expect(page.locator('body')).not.toContainText('HTTP 404');
});
