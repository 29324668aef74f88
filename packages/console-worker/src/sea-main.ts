import { main } from './entry.ts';
import * as runtime from './run.ts';

// Entry of the single executable (scripts/build-sea.ts): the UI module is bundled in, nothing is
// built or read from disk. CommonJS output, so no top-level await.
main(process.argv, { loadRuntime: async () => runtime }).catch((err) => {
  process.stderr.write(`console: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
