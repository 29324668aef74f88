/**
 * Development helper: screenshot console routes in both themes.
 * `node --import tsx e2e/shot.ts <console url> <route> [<route> …]` → e2e/artifacts/dev/*.png
 */
import { mkdirSync } from 'node:fs';
import { chromium } from '@playwright/test';

const [url, ...routes] = process.argv.slice(2);
const out = new URL('./artifacts/dev/', import.meta.url).pathname;
mkdirSync(out, { recursive: true });
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
const width = Number(process.env.W ?? 1440);
const height = Number(process.env.H ?? 900);
for (const theme of (process.env.THEMES ?? 'dark,light').split(',')) {
  const page = await browser.newPage({ viewport: { width, height } });
  await page.addInitScript((t) => localStorage.setItem('eng-theme', t), theme);
  for (const route of routes) {
    await page.goto(`${url}/#${route}`);
    await page.waitForTimeout(Number(process.env.WAIT ?? 1500));
    const name = `${route.replace(/[^a-z0-9]+/gi, '_') || 'root'}-${theme}-${width}.png`;
    await page.screenshot({ path: `${out}${name}`, fullPage: process.env.FULL === '1' });
    process.stdout.write(`${out}${name}\n`);
  }
  await page.close();
}
await browser.close();
