import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two cores: end-to-end files start real processes, so run at most two files at once.
    maxWorkers: 2,
  },
});
