import type { Command } from 'commander';
import { ConfigError, type EngineConfig, loadConfigFile } from '../config/load.ts';
import { resolveConfigPath } from '../config/resolve.ts';
import { Engine } from '../engine.ts';
import { Logger } from '../log.ts';
import { announceSupervisedWorkers } from '../supervisor/announce.ts';
import { ENGINE_VERSION } from '../version.ts';
import { out, err as pc } from './colors.ts';

export interface StartOptions {
  config?: string;
  dataDir?: string;
}

export function registerStartCommand(program: Command, isDefault: boolean): void {
  program
    .command('start', { isDefault })
    .description('start the engine (the default command)')
    .option('-c, --config <file>', 'configuration file (default $ENG_CONFIG, ./config.yaml if present, else ~/.eng/config.yaml)')
    .option('--data-dir <dir>', 'directory for file-based stores (default ./data, or ENG_DATA_DIR)')
    .action(async (options: StartOptions) => {
      await runEngine(options);
    });
}

export async function runEngine(options: StartOptions): Promise<Engine> {
  const log = new Logger('eng');
  const configPath = resolveConfigPath(options.config);
  let config: EngineConfig | null;
  try {
    config = loadConfigFile(configPath, process.env, ENGINE_VERSION);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${pc.red('eng: configuration error')}\n  ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  if (!config) {
    log.info(`no configuration file at ${configPath}: starting with the default modules`);
    config = { path: null, workers: [] };
  }

  let engine: Engine;
  try {
    engine = new Engine({ config, dataDir: options.dataDir });
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${pc.red('eng: configuration error')}\n  ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }

  let shuttingDown = false;
  const shutdown = async (signal: string) => {
    if (shuttingDown) return;
    shuttingDown = true;
    log.info(`${signal} received: stopping`);
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    // the launched workers leave first (the supervisor stops before any module), then the modules
    await engine.stop();
    const missed = engine.core.invoker.notSentWhileStopping;
    log.info(
      missed
        ? `stopped; ${missed} ${missed === 1 ? 'call to workers that were leaving was' : 'calls to workers that were leaving were'} not sent`
        : 'stopped',
    );
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));

  let addresses: Awaited<ReturnType<Engine['start']>>;
  try {
    addresses = await engine.start();
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const reason =
      e.code === 'EADDRINUSE'
        ? `address already in use (${(e as { address?: string }).address ?? ''}:${(e as { port?: number }).port ?? ''}); is another engine running?`
        : e.message;
    process.stderr.write(`${pc.red('eng: failed to start')}: ${reason}\n`);
    await engine.stop();
    process.exit(1);
  }

  const lines = [`${out.bold('eng')} ${ENGINE_VERSION} engine running`, `  worker bus  ${addresses.bus.url}`];
  for (const [name, value] of Object.entries(addresses)) {
    if (name === 'bus') continue;
    const url = (value as { url?: string })?.url;
    if (url) lines.push(`  ${name.padEnd(10)}  ${url}`);
  }
  lines.push(`  modules     ${engine.moduleNames.join(', ')}`);
  lines.push(...announceSupervisedWorkers(engine.services, (text) => process.stdout.write(text)));
  process.stdout.write(`${lines.join('\n')}\n`);
  // one machine-readable line for scripts and tests
  process.stdout.write(`eng: ready ${JSON.stringify(addresses)}\n`);
  return engine;
}
