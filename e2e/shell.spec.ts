import { startEngine } from '../test/harness.ts';
import { consoleArgsFor, ENGINE_MODULES_YAML, startConsole } from './fixtures/stack.ts';
import { expect, gotoPage, test } from './fixtures/test.ts';

// console spec §4 Global UX: themes, command palette, shortcuts, responsive layout; issue 6 §1 outage

test.describe('App shell', () => {
  test('the theme applies before first paint and persists', async ({ page, consoleUrl }) => {
    await gotoPage(page, consoleUrl, '/', 'light');
    await expect(page.locator('html')).toHaveAttribute('data-theme', 'light');
    await page.getByTestId('theme-toggle').first().click();
    await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
    expect(await page.evaluate(() => localStorage.getItem('eng-theme'))).toBe('dark');
    // the inline script sets the attribute before any module script runs
    const fresh = await page.context().newPage();
    await fresh.addInitScript(() => {
      localStorage.setItem('eng-theme', 'light');
      document.addEventListener('readystatechange', () => {
        if (document.readyState === 'interactive')
          (window as unknown as { themeAtParse: string | null }).themeAtParse = document.documentElement.getAttribute('data-theme');
      });
    });
    await fresh.goto(`${consoleUrl}/#/`);
    expect(await fresh.evaluate(() => (window as unknown as { themeAtParse: string | null }).themeAtParse)).toBe('light');
    const bg = await fresh.evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(bg).toBe('rgb(246, 247, 249)');
    await fresh.close();
  });

  test('"reduce motion" in the system settings stills the live dot; otherwise it pulses', async ({ page, consoleUrl }) => {
    const running = () =>
      page.evaluate(() =>
        document
          .getAnimations()
          .filter((a) => a.playState === 'running')
          .map((a) => (a as CSSAnimation).animationName),
      );
    await page.emulateMedia({ reducedMotion: 'no-preference' });
    await gotoPage(page, consoleUrl, '/traces');
    await expect(page.getByTestId('trace-summary').getByText('Live')).toBeVisible();
    await expect.poll(running).toContain('eng-pulse-dot');
    await page.emulateMedia({ reducedMotion: 'reduce' });
    await expect.poll(running).toEqual([]);
    await expect(page.getByTestId('trace-summary').getByText('Live')).toBeVisible();
  });

  test('the command palette finds pages, functions and triggers', async ({ page, consoleUrl }) => {
    await gotoPage(page, consoleUrl, '/');
    await page.keyboard.press('Control+k');
    const input = page.getByRole('combobox', { name: 'Command palette search' });
    await expect(input).toBeFocused();
    await input.fill('hourly');
    await expect(page.getByRole('option', { name: /^reports::hourly_summary/ })).toBeVisible();
    await page.keyboard.press('Enter');
    await expect(page).toHaveURL(/#\/functions\?fn=reports(::|%3A%3A)hourly_summary/);
    await expect(page.getByTestId('function-detail')).toContainText('reports::hourly_summary');

    await page.keyboard.press('Control+k');
    await input.fill('order.created');
    await page.getByRole('option', { name: /subscribe · order\.created/ }).click();
    await expect(page.getByTestId('trigger-detail')).toContainText('order.created');

    await page.keyboard.press('Control+k');
    await input.fill('confi');
    await page.keyboard.press('Enter');
    await expect(page.getByRole('heading', { level: 1, name: 'Config' })).toBeVisible();
  });

  test('keyboard shortcuts: ? overlay, g-navigation, / focuses search', async ({ page, consoleUrl }) => {
    await gotoPage(page, consoleUrl, '/');
    await page.keyboard.press('?');
    const dialog = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await expect(dialog).toBeVisible();
    await expect(dialog).toContainText('Open the command palette');
    await page.keyboard.press('Escape');
    await expect(dialog).toBeHidden();
    await page.keyboard.press('g');
    await page.keyboard.press('t');
    await expect(page.getByRole('heading', { level: 1, name: 'Triggers' })).toBeVisible();
    await page.keyboard.press('/');
    await expect(page.getByRole('searchbox')).toBeFocused();
    // typing in a field does not trigger shortcuts
    await page.keyboard.type('g f');
    await expect(page.getByRole('heading', { level: 1, name: 'Triggers' })).toBeVisible();
  });

  test('on a narrow screen the navigation moves into a drawer', async ({ page, consoleUrl }) => {
    await page.setViewportSize({ width: 390, height: 800 });
    await gotoPage(page, consoleUrl, '/functions');
    await expect(page.getByRole('navigation', { name: 'Main navigation' })).toBeHidden();
    await page.getByRole('button', { name: 'Open navigation' }).click();
    await page.getByRole('navigation', { name: 'Main navigation' }).getByRole('link', { name: 'Triggers' }).click();
    await expect(page.getByRole('heading', { level: 1, name: 'Triggers' })).toBeVisible();
    await expect(page.getByRole('navigation', { name: 'Main navigation' })).toBeHidden();
  });
});

test.describe('Engine outage', () => {
  test('the console says where the engine was expected and reconnects by itself', async ({ page }) => {
    const engine = await startEngine({ workersYaml: ENGINE_MODULES_YAML, env: { ENG_LOG_LEVEL: 'warn' } });
    const console_ = await startConsole([...consoleArgsFor(engine), '--no-otel']);
    try {
      await gotoPage(page, console_.url, '/');
      await engine.stop();
      const banner = page.getByTestId('engine-banner');
      await expect(banner).toBeVisible({ timeout: 15_000 });
      await expect(banner).toContainText(`Engine unreachable at ws://127.0.0.1:${engine.busPort}`);
      await expect(page.getByTestId('connection-pill').first()).not.toHaveAttribute('data-connection', 'open');
      // a fresh load while the engine is down still gets the UI
      await page.reload();
      await expect(page.getByRole('heading', { name: 'Dashboard' })).toBeVisible();
      await expect(page.getByTestId('engine-banner')).toBeVisible({ timeout: 15_000 });
      await engine.restart();
      await expect(page.getByTestId('connection-pill').first()).toHaveAttribute('data-connection', 'open', { timeout: 15_000 });
      await expect(page.getByTestId('engine-banner')).toBeHidden();
      await expect(page.getByTestId('counter-functions').locator('[data-value]')).not.toHaveAttribute('data-value', '');
    } finally {
      await console_.stop();
      await engine.stop();
    }
  });
});
