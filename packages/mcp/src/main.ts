import { runMcp } from './app.ts';
import { parseCommand, USAGE } from './options.ts';
import { SERVER_VERSION } from './server.ts';

// `eng-mcp` entry (bin/eng-mcp.js, and the engine supervisor's catalog worker `mcp`).
// Only protocol messages go to stdout; help and version are the exceptions, asked for explicitly.

const command = parseCommand(process.argv.slice(2));
switch (command.kind) {
  case 'help':
    process.stdout.write(`${USAGE}\n`);
    break;
  case 'version':
    process.stdout.write(`eng-mcp ${SERVER_VERSION}\n`);
    break;
  case 'error':
    process.stderr.write(`eng-mcp: ${command.message}\n\n${USAGE}\n`);
    process.exitCode = 2;
    break;
  case 'run': {
    const running = await runMcp(command.options);
    const stop = (signal: string) => {
      process.stderr.write(`eng-mcp: ${signal} received; shutting down\n`);
      void running.shutdown().finally(() => process.exit(0));
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
    break;
  }
}
