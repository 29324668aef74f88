#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { resolveOptions } from './options.ts';
import { redactText } from './redact.ts';
import { startConsoleServer } from './server.ts';
import { CONSOLE_VERSION } from './version.ts';
import { resolveWebDir } from './web-dir.ts';

/**
 * `eng-console [OPTIONS]` (seed table 4.4). Prints `eng-console: ready {json}` once listening,
 * like the engine's ready line, so scripts and tests can read the chosen port.
 */
export function buildProgram(): Command {
  return new Command()
    .name('eng-console')
    .description('The eng web console: serves the UI and proxies /ws to a running engine.')
    .version(CONSOLE_VERSION, '-v, --version', 'print the version')
    .option('-p, --port <port>', 'console UI port (default 3113; 0 picks a free port)')
    .option('--host <host>', 'bind address of the console (default 127.0.0.1)')
    .option('--engine-host <host>', 'engine host address (default 127.0.0.1)')
    .option('--engine-port <port>', 'engine HTTP API port (default 3111)')
    .option('--ws-port <port>', 'engine streams WebSocket port (default 3112)')
    .option('--bridge-port <port>', 'engine SDK bridge (worker bus) WebSocket port (default 49134)')
    .option('--no-otel', "disable OpenTelemetry export of the console's own traces (env OTEL_DISABLED)")
    .option('--otel-service-name <name>', "service name of the console's own traces (env OTEL_SERVICE_NAME, default eng-console)")
    .option('--enable-flow', 'enable the Flow page (env ENG_ENABLE_FLOW)')
    .addHelpText(
      'after',
      '\nEnvironment:\n  OTEL_DISABLED=1        same as --no-otel\n  OTEL_SERVICE_NAME=…    same as --otel-service-name\n  ENG_ENABLE_FLOW=1      same as --enable-flow\n\nExample:\n  eng-console -p 3114 --engine-host 10.0.0.5',
    )
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
}

export async function main(argv = process.argv): Promise<void> {
  const program = buildProgram();
  try {
    program.parse(argv);
  } catch (err) {
    if (err instanceof CommanderError) process.exit(err.exitCode);
    throw err;
  }
  const write = (line: string) => process.stdout.write(`${redactText(line)}\n`);
  const logger = {
    info: (m: string) => write(`eng-console: ${m}`),
    warn: (m: string) => process.stderr.write(`eng-console: ${redactText(m)}\n`),
    debug: (m: string) => {
      if (process.env.ENG_LOG_LEVEL === 'debug') process.stderr.write(`eng-console: ${redactText(m)}\n`);
    },
  };
  let options: ReturnType<typeof resolveOptions>;
  try {
    options = resolveOptions(program.opts());
  } catch (err) {
    process.stderr.write(`eng-console: ${(err as Error).message}\n(run with --help for usage)\n`);
    process.exit(2);
  }
  let webDir: string;
  try {
    webDir = await resolveWebDir(logger.info);
  } catch (err) {
    process.stderr.write(`eng-console: ${(err as Error).message}\n`);
    process.exit(1);
  }
  let console_: Awaited<ReturnType<typeof startConsoleServer>>;
  try {
    console_ = await startConsoleServer({ ...options, webDir, logger });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const reason = e.code === 'EADDRINUSE' ? `port ${options.port} on ${options.host} is in use; pick another with --port` : e.message;
    process.stderr.write(`eng-console: failed to start: ${reason}\n`);
    process.exit(1);
  }
  const config = {
    url: console_.url,
    port: console_.port,
    host: options.host,
    engine: {
      bridge: `ws://${options.engineHost}:${options.bridgePort}`,
      http: `http://${options.engineHost}:${options.enginePort}`,
      streams: `ws://${options.engineHost}:${options.wsPort}`,
    },
    otel: options.otel ? options.otelServiceName : false,
    enable_flow: options.enableFlow,
    version: CONSOLE_VERSION,
  };
  write(`eng-console v${CONSOLE_VERSION} serving ${console_.url} (engine bus ${config.engine.bridge})`);
  write(`eng-console: ready ${JSON.stringify(config)}`);

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info(`${signal} received: shutting down`);
    // bounded: a stuck socket must not keep the process alive (issue 7 §5)
    const force = setTimeout(() => process.exit(0), 5000);
    force.unref();
    await console_.close().catch(() => undefined);
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

if (process.argv[1] && /[/\\]console[/\\]src[/\\]cli\.ts$/.test(process.argv[1])) {
  await main();
}
