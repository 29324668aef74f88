import { type ChildProcess, spawn } from 'node:child_process';
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

export const CONSOLE_BIN = join(import.meta.dirname, '../bin/eng-console.js');

/** An eng-console process that printed its ready line. */
export interface StartedConsole {
  child: ChildProcess;
  url: string;
  port: number;
  output(): string;
}

/**
 * Run `eng-console` (or the engine CLI's `eng console` when `argv` says so) serving `webDir`, and
 * wait for `eng-console: ready {json}`. The console's own environment switches are cleared unless
 * `env` sets them; every child is pushed on `running` for the test's clean-up.
 */
export function spawnConsole(options: {
  argv: string[];
  webDir: string;
  running: ChildProcess[];
  env?: Record<string, string>;
  cwd: string;
  timeoutMs?: number;
}): Promise<StartedConsole> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, options.argv, {
      cwd: options.cwd,
      env: {
        ...process.env,
        ENG_CONSOLE_WEB_DIR: options.webDir,
        OTEL_DISABLED: '',
        OTEL_SERVICE_NAME: '',
        ENG_ENABLE_FLOW: '',
        ...options.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    options.running.push(child);
    let out = '';
    const timer = setTimeout(() => reject(new Error(`not ready:\n${out}`)), options.timeoutMs ?? 20_000);
    child.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /^eng-console: ready (.*)$/m.exec(out);
      if (m) {
        clearTimeout(timer);
        const ready = JSON.parse(m[1] as string) as { url: string; port: number };
        resolve({ child, url: ready.url, port: ready.port, output: () => out });
      }
    });
    child.stderr?.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited ${code}:\n${out}`));
    });
  });
}
