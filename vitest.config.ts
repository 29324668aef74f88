import { defineConfig } from 'vitest/config';

// Tests start real processes (engines, workers, redis-server, Chromium) on loopback ports.
export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // files at once; VITEST_MAX_WORKERS overrides (npm test sets it from its --vitest-workers)
    maxWorkers: Number(process.env.VITEST_MAX_WORKERS ?? 2) || 2,
    fileParallelism: true,
    reporters: ['default'],
  },
});
