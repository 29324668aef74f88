import { defineConfig } from 'vitest/config';

// Tests start real processes (engines, workers, redis-server, Chromium) on loopback ports.
export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // files at once (3 on 2 cores: 8 min 13 s against 10 min 21 s with 2); VITEST_MAX_WORKERS overrides
    maxWorkers: Number(process.env.VITEST_MAX_WORKERS ?? 3) || 3,
    fileParallelism: true,
    // one module cache per worker process, not one per file (VITEST_ISOLATE=1 gives each file its
    // own): the files start engines and workers as processes and share no state in-process, and
    // importing test/harness.ts, the SDK and their packages again for every file was 175 s of the
    // phase's import time against 36 s (vitest phase 8 min 27 s → 6 min 22 s, with the bundled entries)
    isolate: process.env.VITEST_ISOLATE === '1',
    reporters: ['default'],
  },
});
