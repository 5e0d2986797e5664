import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Vitest's default is one worker fewer than the cores: one on a 2-core machine, every file in
    // turn. Most of a file's time is spent waiting on the argo processes it spawns, so a worker per
    // core (two at least) runs the suite in parallel without starving them.
    maxWorkers: Math.max(2, availableParallelism()),
  },
});
