import { main } from './entry.ts';

// `eng-console-worker` under tsx (bin/eng-console-worker.js, and the engine supervisor's `console`
// worker). The embedded UI module is generated here when missing or stale (issue 7 §2), before
// the server that imports it is loaded.
await main(process.argv, {
  async prepare(logger) {
    const { ensureEmbeddedBundle } = await import('../scripts/build-bundle.ts');
    ensureEmbeddedBundle({ log: logger.info });
  },
  loadRuntime: () => import('./run.ts'),
});
