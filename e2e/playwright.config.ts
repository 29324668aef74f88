import { defineConfig } from '@playwright/test';

/**
 * Browser tests: Debian's Chromium (never a downloaded browser, deps.md "Browser tests") driving
 * the console against a real engine running examples/orders (fixtures/stack.ts). One worker:
 * the machine has 2 cores and each stack is an engine + a worker + a console.
 */
export default defineConfig({
  testDir: '.',
  testMatch: '**/*.spec.ts',
  // E2E_OUTPUT_DIR lets two runs on one checkout keep their traces apart
  outputDir: process.env.E2E_OUTPUT_DIR ?? './artifacts/test-results',
  globalSetup: './global-setup.ts',
  timeout: 60_000,
  expect: { timeout: 10_000 },
  fullyParallel: false,
  workers: 1,
  retries: 0,
  reporter: [['list']],
  use: {
    browserName: 'chromium',
    headless: true,
    viewport: { width: 1440, height: 900 },
    screenshot: 'only-on-failure',
    trace: 'retain-on-failure',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    },
  },
  projects: [{ name: 'debian-chromium', use: { browserName: 'chromium' } }],
});
