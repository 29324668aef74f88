import type { Command } from 'commander';

/**
 * `eng console [eng-console flags]`: runs eng-console in this process with the same flags
 * (seed table 4.4), so a user with the engine installed has the console too (issue 6 §1).
 */
export function registerConsoleCommand(program: Command): void {
  program
    .command('console')
    .description('start eng-console, the web console on port 3113 (takes the same flags; eng console --help)')
    .helpOption(false)
    .allowUnknownOption(true)
    .allowExcessArguments(true)
    .argument('[flags...]', 'eng-console flags')
    .action(async () => {
      const at = process.argv.indexOf('console');
      const flags = at >= 0 ? process.argv.slice(at + 1) : [];
      const { main } = await import('@eng/console/cli');
      await main([process.argv[0] ?? 'node', 'eng-console', ...flags]);
    });
}
