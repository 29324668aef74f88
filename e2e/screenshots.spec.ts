import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ARTIFACTS, expect, gotoPage, test } from './fixtures/test.ts';

// issue 6 "Tests": screenshots of every page in both themes, saved as test artifacts
// (e2e/artifacts/screens/<page>-<theme>.png) and looked at by a person before a release.

const SCREENS = join(ARTIFACTS, 'screens');

const PAGES: Array<{ name: string; route: string | ((ids: Record<string, string>) => string); ready?: string }> = [
  { name: 'dashboard', route: '/', ready: 'app-flow' },
  { name: 'functions', route: '/functions' },
  { name: 'function-detail', route: '/functions?fn=orders::create', ready: 'function-detail' },
  { name: 'triggers', route: '/triggers' },
  { name: 'trigger-http', route: (ids) => `/triggers?id=${ids.http}`, ready: 'http-test-panel' },
  { name: 'trigger-cron', route: (ids) => `/triggers?id=${ids.cron}`, ready: 'cron-panel' },
  { name: 'workers', route: '/workers' },
  { name: 'states', route: '/states' },
  { name: 'streams', route: '/streams' },
  { name: 'queues', route: '/queues' },
  { name: 'traces', route: '/traces' },
  { name: 'logs', route: '/logs' },
  { name: 'flow', route: '/flow' },
  { name: 'config', route: '/config' },
];

for (const theme of ['dark', 'light'] as const) {
  test(`every page renders in the ${theme} theme`, async ({ page, consoleUrl, engineClient }) => {
    test.setTimeout(120_000);
    mkdirSync(SCREENS, { recursive: true });
    const { registered_triggers: triggers } = await engineClient.call<{
      registered_triggers: Array<{ id: string; trigger_type: string; config: any }>;
    }>('engine::registered-triggers::list', {});
    const ids = {
      http: triggers.find((t) => t.trigger_type === 'http' && t.config?.http_method === 'POST')?.id ?? '',
      cron: triggers.find((t) => t.trigger_type === 'cron')?.id ?? '',
    };
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    for (const p of PAGES) {
      const route = typeof p.route === 'function' ? p.route(ids) : p.route;
      await gotoPage(page, consoleUrl, route, theme);
      await expect(page.locator('html')).toHaveAttribute('data-theme', theme);
      await expect(page.getByRole('heading', { level: 1 }).first()).toBeVisible();
      if (p.ready) await expect(page.getByTestId(p.ready)).toBeVisible();
      await page.waitForTimeout(600); // let charts and lazy chunks settle
      await page.screenshot({ path: join(SCREENS, `${p.name}-${theme}.png`) });
    }
    await page.setViewportSize({ width: 390, height: 844 });
    await gotoPage(page, consoleUrl, '/', theme);
    await page.waitForTimeout(600);
    await page.screenshot({ path: join(SCREENS, `dashboard-mobile-${theme}.png`), fullPage: true });
    await gotoPage(page, consoleUrl, '/functions?fn=orders::create', theme);
    await page.screenshot({ path: join(SCREENS, `function-detail-mobile-${theme}.png`) });
    expect(errors).toEqual([]);
  });
}
