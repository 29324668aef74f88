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
    reporters: ['default'],
  },
});
