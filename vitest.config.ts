import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

// A home of the tests' own: a process started with HOME alone keeps its batch records in ~/.local/state.
const home = mkdtempSync(join(tmpdir(), 'facectl-test-home-'));
process.on('exit', () => rmSync(home, { recursive: true, force: true }));

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    env: { HOME: home },
    // Two cores: end-to-end files start real processes, so run at most two files at once.
    maxWorkers: 2,
    // Tests run in a random order within each file (the seed is printed with a failure: rerun with
    // --sequence.seed=N), so a test that relies on another's state fails here rather than someday.
    sequence: { shuffle: { files: false, tests: true } },
  },
});
