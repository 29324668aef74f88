import { Command, CommanderError } from 'commander';
import { ENGINE_VERSION } from '../version.ts';
import { registerConsoleCommand } from './console.ts';
import { registerStartCommand } from './start.ts';
import { registerTriggerCommand } from './trigger.ts';
import { registerWorkerCommands } from './worker.ts';

const program = new Command();
program
  .name('eng')
  .description('eng: a function-and-trigger engine. Without a command, starts the engine.')
  .version(ENGINE_VERSION, '-v, --version', 'print the version')
  .showHelpAfterError('(run with --help for usage)')
  .exitOverride();

registerStartCommand(program, true);
registerTriggerCommand(program);
registerWorkerCommands(program);
registerConsoleCommand(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) process.exit(err.exitCode);
  process.stderr.write(`eng: ${(err as Error).message}\n`);
  process.exit(1);
}
