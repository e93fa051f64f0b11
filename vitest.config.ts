import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two cores: end-to-end files start real processes, so run at most two files at once.
    maxWorkers: 2,
    // Tests run in a random order within each file (the seed is printed with a failure: rerun with
    // --sequence.seed=N), so a test that relies on another's state fails here rather than someday.
    sequence: { shuffle: { files: false, tests: true } },
  },
});
