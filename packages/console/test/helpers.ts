import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ConsoleOptions, DEFAULTS } from '../src/options.ts';
import { type ConsoleServer, startConsoleServer } from '../src/server.ts';

/**
 * A small UI bundle shaped like Vite's output (index.html with an inline script, hashed assets),
 * so the server tests do not depend on building @eng/web.
 */
export const BUNDLE_JS = `console.log(${JSON.stringify('x'.repeat(4000))});`;
export function makeBundle(): string {
  const dir = mkdtempSync(join(tmpdir(), 'eng-console-bundle-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(
    join(dir, 'index.html'),
    '<!doctype html><html data-theme="dark"><head><script>document.documentElement.dataset.x="1"</script><script type="module" src="./assets/index-AbC123.js"></script></head><body><div id="root"></div></body></html>',
  );
  writeFileSync(join(dir, 'assets', 'index-AbC123.js'), BUNDLE_JS);
  writeFileSync(join(dir, 'assets', 'index-Xy9.css'), `body{color:red}${' '.repeat(1000)}`);
  writeFileSync(join(dir, 'assets', 'inter-latin-Q1.woff2'), Buffer.from([0x77, 0x4f, 0x46, 0x32, 0, 1, 2, 3]));
  return dir;
}

export async function startTestConsole(overrides: Partial<ConsoleOptions> = {}, webDir = makeBundle()): Promise<ConsoleServer> {
  return startConsoleServer({ ...DEFAULTS, port: 0, otel: false, ...overrides, webDir });
}

/** A port nothing listens on (bound, closed, and not reused within the test). */
export async function deadPort(): Promise<number> {
  const { freePort } = await import('../../../test/harness.ts');
  return freePort();
}
