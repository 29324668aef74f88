/**
 * Spawns test/workers/iii-worker.ts (an iii-sdk worker in its own process) and tracks every
 * child so a test file can kill them all in `afterAll`: no process outlives its test file.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from '../../../../test/harness.ts';

export const IIIWORKER_SCRIPT = join(REPO_ROOT, 'test/workers/iii-worker.ts');

export interface ChildEvent {
  event: string;
  [key: string]: unknown;
}

export interface ChildWorker {
  process: ChildProcess;
  pid: number;
  workerId: string;
  events: ChildEvent[];
  /** The first event (already seen or future) matching `match`. */
  next(match: (e: ChildEvent) => boolean, timeoutMs?: number): Promise<ChildEvent>;
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export interface SpawnOptions {
  version: string;
  url: string;
  prefix: string;
  name?: string;
  bind?: Array<{ type: string; function_id: string; config: unknown }>;
  env?: Record<string, string>;
}

const children = new Set<ChildProcess>();

export async function spawnIiiWorker(options: SpawnOptions): Promise<ChildWorker> {
  const child = spawn(process.execPath, ['--import', 'tsx', IIIWORKER_SCRIPT], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      ENG_URL: options.url,
      III_SDK_VERSION: options.version,
      PREFIX: options.prefix,
      WORKER_NAME: options.name ?? `${options.prefix}-worker`,
      BIND: JSON.stringify(options.bind ?? []),
      ...options.env,
    },
    // stdin is a pipe the child watches: if this process dies, the child exits too
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.add(child);
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      children.delete(child);
      resolve();
    }),
  );
  const events: ChildEvent[] = [];
  const waiters: Array<{ match: (e: ChildEvent) => boolean; resolve: (e: ChildEvent) => void }> = [];
  let output = '';
  let buffer = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    buffer += chunk.toString();
    let newline = buffer.indexOf('\n');
    while (newline >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      newline = buffer.indexOf('\n');
      if (!line.startsWith('{')) continue;
      let event: ChildEvent;
      try {
        event = JSON.parse(line);
      } catch {
        continue;
      }
      events.push(event);
      for (const waiter of [...waiters]) {
        if (waiter.match(event)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(event);
        }
      }
    }
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });

  const next = (match: (e: ChildEvent) => boolean, timeoutMs = 15_000): Promise<ChildEvent> => {
    const seen = events.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`child worker ${options.prefix}: no matching event within ${timeoutMs} ms; output:\n${output}`));
      }, timeoutMs);
      waiters.push({
        match,
        resolve: (e) => {
          clearTimeout(timer);
          resolve(e);
        },
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`child worker ${options.prefix} exited (${code ?? signal}) before the event; output:\n${output}`));
      });
    });
  };

  const ready = await next((e) => e.event === 'ready', 20_000);
  return {
    process: child,
    pid: child.pid as number,
    workerId: ready.worker_id as string,
    events,
    next,
    output: () => output,
    async kill(signal = 'SIGKILL') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(signal);
      await exited;
    },
  };
}

/** Kill every child this process spawned and wait for them to exit. */
export async function killAllChildren(): Promise<void> {
  await Promise.all(
    [...children].map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
}

// last resort if a test file crashes before afterAll: never leave children behind
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});
