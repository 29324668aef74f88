import { existsSync } from 'node:fs';
import { ensureWebBuild } from '../packages/web/scripts/build.ts';

/** Build the UI once when the bundle is missing or older than its sources (no `pretest` step). */
export default function globalSetup(): void {
  const chromium = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  if (!existsSync(chromium)) {
    throw new Error(
      `Chromium not found at ${chromium}: install Debian's package (apt-get install -y chromium); Playwright must never download a browser`,
    );
  }
  ensureWebBuild({ log: (line) => process.stdout.write(`[e2e] ${line}\n`) });
}
