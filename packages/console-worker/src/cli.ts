import { Command, CommanderError, Option } from 'commander';
import { DEFAULT_ENGINE_URL, DEFAULT_HTTP_PORT, type FlagValues } from './config.ts';
import { WORKER_VERSION } from './version.ts';

/** `eng-console-worker [OPTIONS]` (seed table 4.4, component B). */
export type CliCommand = { kind: 'run'; flags: FlagValues } | { kind: 'manifest' } | { kind: 'exit'; code: number };

export function buildProgram(): Command {
  return new Command()
    .name('eng-console-worker')
    .description(
      'The eng console worker: serves the embedded UI, proxies /ws (and /ws/streams) to the engine and serves the console API, on one port.',
    )
    .version(WORKER_VERSION, '-v, --version', 'print the version')
    .option('--config <path>', 'YAML configuration (key http_port, or the console entry of an engine config)', './config.yaml')
    .option('--url <ws-url>', `engine WebSocket URL (env ENG_URL; default ${DEFAULT_ENGINE_URL})`)
    .option(
      '--http-port <port>',
      `port for /, /assets/* and /ws (overrides the config key http_port; default ${DEFAULT_HTTP_PORT}; 0 picks a free one)`,
    )
    .addOption(new Option('--host <host>', 'bind address (default 127.0.0.1; 0.0.0.0 for every interface)'))
    .option(
      '--engine-http-url <url>',
      'engine HTTP trigger port, for the HTTP trigger test (config key engine_http_url; default: ENG_HTTP_URL from the engine, else the --url host, port 3111)',
    )
    .option(
      '--engine-streams-url <url>',
      'engine streams socket, proxied at /ws/streams (config key engine_streams_url; default: ENG_STREAMS_URL from the engine, else the --url host, port 3112)',
    )
    .option('--enable-flow', 'show the Flow page (config key enable_flow; env ENG_ENABLE_FLOW=1)')
    .option('--manifest', 'print the publish manifest as JSON and exit (no engine connection)')
    .addHelpText(
      'after',
      [
        '',
        'Environment:',
        '  ENG_URL=ws://…          engine URL when --url is absent',
        '  ENG_WORKER_CONFIG={…}   JSON config block from the engine supervisor (flags still win)',
        '  ENG_HTTP_URL, ENG_STREAMS_URL  the engine HTTP and streams addresses (set by the engine that launches it)',
        '  ENG_ENABLE_FLOW=1       show the Flow page',
        '  ENG_LOG_LEVEL=debug     verbose logs',
        '',
        'Install it into an engine: eng worker add console && eng start',
      ].join('\n'),
    )
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({ writeOut: (s) => process.stdout.write(s), writeErr: (s) => process.stderr.write(s) });
}

export function parseCli(argv: string[]): CliCommand {
  const program = buildProgram();
  try {
    program.parse(argv);
  } catch (err) {
    if (err instanceof CommanderError) return { kind: 'exit', code: err.exitCode === 0 ? 0 : 2 };
    throw err;
  }
  const opts = program.opts<{
    config?: string;
    url?: string;
    httpPort?: string;
    host?: string;
    engineHttpUrl?: string;
    engineStreamsUrl?: string;
    enableFlow?: boolean;
    manifest?: boolean;
  }>();
  if (opts.manifest) return { kind: 'manifest' };
  const configGiven = program.getOptionValueSource('config') === 'cli';
  return {
    kind: 'run',
    flags: {
      config: configGiven ? opts.config : undefined,
      url: opts.url,
      httpPort: opts.httpPort,
      host: opts.host,
      engineHttpUrl: opts.engineHttpUrl,
      engineStreamsUrl: opts.engineStreamsUrl,
      enableFlow: opts.enableFlow,
    },
  };
}
