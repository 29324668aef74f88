import { connect, type EngClient } from '@eng/sdk';

export interface StartedWorker {
  /** What the ready line says the worker serves (`24 functions, 6 trigger types`). */
  summary: string;
  /** Finish in-flight work (flush writes, cancel timers); the client is closed after it. */
  stop?(): Promise<void>;
}

export interface WorkerRole {
  /** Default worker name; the engine's supervisor sets `ENG_WORKER_NAME` to the configured one. */
  name: string;
  description: string;
  start(client: EngClient, log: (line: string) => void): Promise<StartedWorker>;
}

const STOP_LIMIT_MS = 4000;

/**
 * Run one chat role as an ordinary worker: connect to `ENG_URL`, start it, print one ready line,
 * and shut down gracefully on SIGINT/SIGTERM (or when the engine that launched it is gone).
 */
export async function runWorker(role: WorkerRole): Promise<void> {
  const name = process.env.ENG_WORKER_NAME || role.name;
  const log = (line: string) => process.stdout.write(`${name}: ${line}\n`);
  const url = process.env.ENG_URL || 'ws://127.0.0.1:49134';
  const client = connect(url, { name, description: role.description });
  let started: StartedWorker | undefined;
  let stopping = false;

  const stop = async (why: string) => {
    if (stopping) return;
    stopping = true;
    log(`${why}; shutting down`);
    const limit = setTimeout(() => {
      log(`did not stop within ${STOP_LIMIT_MS} ms; exiting`);
      process.exit(1);
    }, STOP_LIMIT_MS);
    limit.unref();
    try {
      await started?.stop?.();
    } catch (err) {
      log(`stop failed: ${(err as Error).message}`);
    }
    await client.close().catch(() => undefined);
    clearTimeout(limit);
    process.exit(0);
  };
  process.once('SIGINT', () => void stop('SIGINT received'));
  process.once('SIGTERM', () => void stop('SIGTERM received'));
  watchEngine((pid) => void stop(`the engine (pid ${pid}) is gone`));

  const waiting = setTimeout(() => log(`waiting for the engine at ${printable(url)}`), 3000);
  waiting.unref();
  await client.ready();
  clearTimeout(waiting);
  started = await role.start(client, log);
  if (!stopping) log(`ready — ${started.summary} on ${printable(url)}`);
}

/** The chat workers keep their data through state::*: wait for the engine's state module, saying what is missing. */
export async function untilStateAnswers<T>(run: () => Promise<T>, log: (line: string) => void): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await run();
    } catch (err) {
      if (attempt === 0) log(`state::* does not answer (${(err as Error).message}); the engine needs the eng-state module. Retrying…`);
      await new Promise((r) => setTimeout(r, Math.min(5000, 250 * 2 ** attempt)));
    }
  }
}

/** Launched by an engine (`ENG_ENGINE_PID`): leave when that engine died without stopping us (kill -9). */
function watchEngine(onGone: (pid: number) => void): void {
  const pid = Number(process.env.ENG_ENGINE_PID);
  if (!Number.isInteger(pid) || pid <= 0) return;
  const timer = setInterval(() => {
    try {
      process.kill(pid, 0);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ESRCH') {
        clearInterval(timer);
        onGone(pid);
      }
    }
  }, 2000);
  timer.unref();
}

/** The URL without credentials, for logs. */
function printable(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString().replace(/\/$/, '');
  } catch {
    return url;
  }
}
