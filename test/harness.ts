/**
 * Test harness: real engine processes on loopback. Every test that needs an engine spawns one
 * through `startEngine` (own ports, own data dir) and stops it in `afterAll`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { compileEntry } from '../packages/engine/scripts/compile.mjs';
import { ensureEngineBundle, useEngineBundle } from './engine-bundle.ts';

export const REPO_ROOT = resolve(import.meta.dirname, '..');
export const ENG_CLI = join(REPO_ROOT, 'packages/engine/src/cli/main.ts');
/** `--import` argument for tsx that works from any working directory. */
export const TSX_IMPORT = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
/** Node arguments that run a TypeScript file: `[...NODE_TS, file, ...args]`. */
export const NODE_TS = ['--import', TSX_IMPORT];

/**
 * Node arguments that run the `eng` CLI with `args`: the engine bundle (test/engine-bundle.ts)
 * except for `eng console`, whose console package the bundle leaves to tsx. `ENG_TEST_ENGINE=source`
 * runs packages/engine/src/cli/main.ts through tsx, as a user's checkout does.
 */
export function engArgs(args: readonly string[]): string[] {
  if (useEngineBundle() && args[0] !== 'console') return [ensureEngineBundle(), ...args];
  return [...NODE_TS, ENG_CLI, ...args];
}

/**
 * Node arguments that run a TypeScript entry of this repository (an absolute path or one relative to
 * the root): its compiled file (packages/engine/scripts/compile.mjs: about half the CPU of tsx per
 * start, the same code), or the source through tsx when it cannot be compiled or
 * `ENG_TEST_ENGINE=source`. `callMain` for a module that exports main() and runs only as a script.
 */
export async function tsEntryArgs(script: string, options: { callMain?: boolean } = {}): Promise<string[]> {
  const source = resolve(REPO_ROOT, script);
  if (useEngineBundle()) {
    const compiled = await compileEntry(source, { root: REPO_ROOT, callMain: options.callMain });
    if (compiled) return [compiled];
  }
  return options.callMain
    ? [
        ...NODE_TS,
        '--input-type=module',
        '-e',
        `const { main } = await import(${JSON.stringify(pathToFileURL(source).href)}); await main();`,
      ]
    : [...NODE_TS, source];
}

/** A free TCP port on 127.0.0.1 (the OS picks it; racy only in theory). */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

export interface EngineProcess {
  busUrl: string;
  busPort: number;
  /** Ports reserved for modules, filled into `{{PORT_NAME}}` placeholders of the config. */
  ports: Record<string, number>;
  addresses: Record<string, { url?: string; port?: number }>;
  dataDir: string;
  configPath: string;
  process: ChildProcess;
  logs(): string;
  stop(): Promise<number | null>;
  kill(signal?: NodeJS.Signals): Promise<void>;
  restart(): Promise<void>;
}

export interface StartEngineOptions {
  /**
   * Extra YAML under `workers:` (already indented as list items). `{{BUS_PORT}}` and any
   * `{{NAME_PORT}}` placeholder is replaced by a free port.
   */
  workersYaml?: string;
  /** Full config text instead of the default (placeholders apply). */
  configYaml?: string;
  env?: Record<string, string>;
  dataDir?: string;
  /** ms to wait for the ready line. */
  readyTimeoutMs?: number;
  /** Node options before the engine's entry (benches: `--cpu-prof`, which NODE_OPTIONS refuses). */
  execArgv?: string[];
}

export async function startEngine(options: StartEngineOptions = {}): Promise<EngineProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'eng-test-'));
  const dataDir = options.dataDir ?? join(dir, 'data');
  const busPort = await freePort();
  const ports: Record<string, number> = { BUS: busPort };
  let text =
    options.configYaml ?? `workers:\n  - name: eng-worker-manager\n    config:\n      port: {{BUS_PORT}}\n${options.workersYaml ?? ''}`;
  for (const match of text.matchAll(/\{\{([A-Z0-9_]+)_PORT\}\}/g)) {
    const name = match[1] as string;
    ports[name] ??= await freePort();
  }
  text = text.replace(/\{\{([A-Z0-9_]+)_PORT\}\}/g, (_m, name: string) => String(ports[name]));
  const configPath = join(dir, 'config.yaml');
  writeFileSync(configPath, text);

  let output = '';
  let child!: ChildProcess;
  const handle: EngineProcess = {
    busUrl: `ws://127.0.0.1:${busPort}`,
    busPort,
    ports,
    addresses: {},
    dataDir,
    configPath,
    get process() {
      return child;
    },
    logs: () => output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
    async kill(signal = 'SIGKILL') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill(signal);
      await exited;
    },
    async restart() {
      await handle.stop();
      await launch();
    },
  };

  const launch = () =>
    new Promise<void>((resolveReady, reject) => {
      child = spawn(process.execPath, [...(options.execArgv ?? []), ...engArgs(['start', '-c', configPath, '--data-dir', dataDir])], {
        cwd: REPO_ROOT,
        env: { ...process.env, ENG_LOG_LEVEL: process.env.ENG_LOG_LEVEL ?? 'info', ...options.env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdoutBuffer = '';
      const timer = setTimeout(
        () => reject(new Error(`engine did not become ready in time; output:\n${output}`)),
        options.readyTimeoutMs ?? 20_000,
      );
      child.stdout?.on('data', (chunk: Buffer) => {
        const text = chunk.toString();
        output += text;
        stdoutBuffer += text;
        const match = /^eng: ready (.*)$/m.exec(stdoutBuffer);
        if (match) {
          clearTimeout(timer);
          handle.addresses = JSON.parse(match[1] as string);
          stdoutBuffer = '';
          resolveReady();
        }
      });
      child.stderr?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`engine exited with code ${code} before it was ready; output:\n${output}`));
      });
    });

  await launch();
  return handle;
}

/** Poll `check` until it returns a truthy value or the time runs out. */
export async function waitFor<T>(check: () => T | Promise<T>, timeoutMs = 5000, intervalMs = 25): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
    } catch (err) {
      lastError = err;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(`condition not met within ${timeoutMs} ms${lastError ? `: ${(lastError as Error).message}` : ''}`);
}
