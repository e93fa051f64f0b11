/**
 * Keeps V8's young generation small during bulk work, so that memory stays flat on every Node version.
 * V8 sizes each semi-space from the heap limit (16 MiB on Node 20, 64 MiB on Node 24 here), and a
 * batch's steady allocation grows it step by step to that maximum. --max-semi-space-size is a flag no
 * CLI can ask of its users, and setting it at run time changes nothing; but V8 reads the growth factor
 * each time the space grows, so once the space reached the cap the factor is set to 1.
 * The budget row and its figures: docs/decisions.md. It tunes the whole process, so only the CLI's bulk
 * path calls it, never the library's client; node:v8 is imported then, not at start-up.
 */

/** Each semi-space stops growing at this size (MiB). */
export const MAX_SEMI_SPACE_MIB = 8;

let started = false;

export async function capYoungGeneration(maxSemiSpaceMib = MAX_SEMI_SPACE_MIB): Promise<void> {
  if (started) return;
  started = true;
  const [v8, { PerformanceObserver }] = await Promise.all([import('node:v8'), import('node:perf_hooks')]);
  // new_space's size counts both semi-spaces.
  const limit = maxSemiSpaceMib * 2 * 1024 * 1024;
  const capped = () => {
    const space = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
    if (space === undefined || space.space_size < limit) return false;
    v8.setFlagsFromString('--semi-space-growth-factor=1');
    return true;
  };
  if (capped()) return;
  // Checked after collections only (the space grows during one), until the cap is reached.
  const observer = new PerformanceObserver(() => {
    if (capped()) observer.disconnect();
  });
  observer.observe({ entryTypes: ['gc'] });
}
