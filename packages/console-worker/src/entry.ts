import { redactText } from '@eng/console/redact';
import { parseCli } from './cli.ts';
import { resolveSettings, SettingsError } from './config.ts';
import { manifest } from './manifest.ts';
import type { RunningWorker } from './run.ts';
import type { ServerLogger } from './server.ts';

/**
 * The process around the worker, shared by the tsx entry (main.ts) and the single executable
 * (sea-main.ts): flags, logging with credentials removed from every line (issue 7 §5), and
 * graceful shutdown on SIGINT and SIGTERM within a bounded time.
 */
export interface EntryHooks {
  /** Runs before the worker starts (the tsx entry builds the embedded bundle here when missing). */
  prepare?(logger: ServerLogger): Promise<void> | void;
  loadRuntime(): Promise<{ runConsoleWorker: typeof import('./run.ts').runConsoleWorker }>;
}

const SHUTDOWN_LIMIT_MS = 5000;

export function createLogger(env: NodeJS.ProcessEnv = process.env): ServerLogger {
  const debug = env.ENG_LOG_LEVEL === 'debug';
  return {
    info: (m) => process.stdout.write(`console: ${redactText(m)}\n`),
    warn: (m) => process.stderr.write(`console: ${redactText(m)}\n`),
    debug: (m) => {
      if (debug) process.stderr.write(`console: ${redactText(m)}\n`);
    },
  };
}

export async function main(argv: string[], hooks: EntryHooks): Promise<void> {
  const command = parseCli(argv);
  if (command.kind === 'exit') {
    process.exitCode = command.code;
    return;
  }
  if (command.kind === 'manifest') {
    process.stdout.write(`${JSON.stringify(manifest(), null, 2)}\n`);
    return;
  }
  const logger = createLogger();
  let settings: ReturnType<typeof resolveSettings>;
  try {
    settings = resolveSettings(command.flags, process.env, logger.warn);
  } catch (err) {
    if (!(err instanceof SettingsError)) throw err;
    logger.warn(`${err.message}\n(run with --help for usage)`);
    process.exit(2);
  }

  let running: RunningWorker;
  try {
    await hooks.prepare?.(logger);
    const { runConsoleWorker } = await hooks.loadRuntime();
    running = await runConsoleWorker(settings, logger);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const reason =
      e.code === 'EADDRINUSE'
        ? `port ${settings.httpPort} on ${settings.host} is in use; pick another with --http-port or http_port in the config`
        : e.message;
    logger.warn(`failed to start: ${reason}`);
    process.exit(1);
  }
  const status = running.status();
  // one machine-readable line for scripts and tests, like the engine's `eng: ready`
  process.stdout.write(`eng-console-worker: ready ${redactText(JSON.stringify({ ...status, host: settings.host, pid: process.pid }))}\n`);

  let stopping = false;
  const shutdown = async (why: string) => {
    if (stopping) return;
    stopping = true;
    logger.info(`${why}: shutting down`);
    const force = setTimeout(() => {
      logger.warn(`shutdown took longer than ${SHUTDOWN_LIMIT_MS} ms; exiting anyway`);
      process.exit(0);
    }, SHUTDOWN_LIMIT_MS);
    force.unref();
    await running.close().catch((err) => logger.warn(`shutdown: ${(err as Error).message}`));
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT received'));
  process.on('SIGTERM', () => void shutdown('SIGTERM received'));
  // Launched by an engine's supervisor, this worker holds an IPC channel to that engine, which
  // closes when the engine exits however it exits (a SIGKILL sends no SIGTERM on). A worker that
  // outlived its engine would keep its port from the console the next engine launches.
  if (process.env.ENG_BUS_HANDOFF && process.channel) {
    process.on('disconnect', () => void shutdown('the engine that launched this worker has exited'));
  }
}
