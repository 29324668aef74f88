/**
 * Helpers for console worker tests: the embedded bundle generated once, and the worker started
 * as a real child process (bin/eng-console-worker.js) that prints `eng-console-worker: ready {json}`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type EngineProcess, REPO_ROOT, startEngine } from '../../../test/harness.ts';
import { ensureEmbeddedBundle, GENERATED_FILE } from '../scripts/build-bundle.ts';

export const WORKER_BIN = join(REPO_ROOT, 'packages/console-worker/bin/eng-console-worker.js');

/** Generate the embedded UI module when missing (from an existing Vite build when there is one). */
export function ensureBundle(): void {
  const haveSomething = existsSync(GENERATED_FILE) || existsSync(join(REPO_ROOT, 'packages/web/dist/index.html'));
  ensureEmbeddedBundle({
    env: haveSomething ? { ...process.env, SKIP_WEB_BUILD: '1' } : process.env,
    log: (line) => process.stderr.write(`[console-worker test] ${line}\n`),
  });
}

/** An engine whose supervisor launches the console worker on a free port (`engine.ports.CONSOLE`). */
export function startEngineWithConsole(): Promise<EngineProcess> {
  ensureBundle();
  const configYaml = `workers:
  - name: eng-worker-manager
    config:
      port: {{BUS_PORT}}
  - name: console
    config:
      http_port: {{CONSOLE_PORT}}
`;
  return startEngine({ configYaml, env: { SKIP_WEB_BUILD: '1' } });
}

export interface ReadyInfo {
  http_port: number;
  engine_url: string;
  version: string;
  url: string;
  host: string;
  pid: number;
}

export interface WorkerProcess {
  ready: ReadyInfo;
  /** `http://127.0.0.1:<port>` without the trailing slash. */
  base: string;
  process: ChildProcess;
  logs(): string;
  /** Send `signal` and resolve with the exit code (SIGKILL after `timeoutMs`). */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<{ code: number | null; signal: string | null; ms: number }>;
}

export function emptyDir(): string {
  return mkdtempSync(join(tmpdir(), 'eng-cw-empty-'));
}

/** Start the worker; `cwd` defaults to a fresh empty directory (no config.yaml, no UI files). */
export function startWorker(
  args: string[],
  options: { env?: Record<string, string>; cwd?: string; timeoutMs?: number; command?: string } = {},
): Promise<WorkerProcess> {
  return new Promise((resolve, reject) => {
    const command = options.command ?? process.execPath;
    const child = spawn(command, options.command ? args : [WORKER_BIN, ...args], {
      cwd: options.cwd ?? emptyDir(),
      env: { ...process.env, SKIP_WEB_BUILD: '1', ENG_URL: '', ENG_WORKER_CONFIG: '', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const timer = setTimeout(() => reject(new Error(`console worker not ready in time:\n${output}`)), options.timeoutMs ?? 30_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /^eng-console-worker: ready (.*)$/m.exec(output);
      if (match && timer.hasRef()) {
        clearTimeout(timer);
        timer.unref();
        const ready = JSON.parse(match[1] as string) as ReadyInfo;
        resolve({
          ready,
          base: ready.url.replace(/\/$/, ''),
          process: child,
          logs: () => output,
          stop: (signal = 'SIGTERM', timeoutMs = 10_000) => stopChild(child, signal, timeoutMs),
        });
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`console worker exited with ${code} before it was ready:\n${output}`));
    });
  });
}

export function stopChild(
  child: ChildProcess,
  signal: NodeJS.Signals = 'SIGTERM',
  timeoutMs = 10_000,
): Promise<{ code: number | null; signal: string | null; ms: number }> {
  const started = Date.now();
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode, ms: 0 });
  }
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code, sig) => {
      clearTimeout(timer);
      resolve({ code, signal: sig, ms: Date.now() - started });
    });
    child.kill(signal);
  });
}

/** Run the worker to completion (for --manifest, --help, bad flags). */
export function runWorker(
  args: string[],
  options: { env?: Record<string, string>; cwd?: string } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [WORKER_BIN, ...args], {
      cwd: options.cwd ?? emptyDir(),
      env: { ...process.env, SKIP_WEB_BUILD: '1', ENG_URL: '', ENG_WORKER_CONFIG: '', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr?.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
