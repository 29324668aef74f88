import { defineConfig } from 'vitest/config';

// Tests start real processes (engines, workers, redis-server, Chromium) on loopback ports.
export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    fileParallelism: true,
    reporters: ['default'],
  },
});
