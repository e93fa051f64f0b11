/**
 * V8 settings for bulk work, process-wide, which no CLI can pass at start (docs/decisions.md).
 */

/**
 * On V8 11 (Node 20), a function is optimized after about a third of the usual interpreter budget: the code
 * of a batch (or of `serve`) reaches its optimized form within its first documents, not hundreds later. V8 12
 * and later tier up by call counts, where lowering them measured worse (Node 24).
 */
export function optimizeSooner(): void {
  if (Number.parseInt(process.versions.v8, 10) > 11) return;
  process.getBuiltinModule('node:v8').setFlagsFromString('--interrupt-budget=20000');
}

let started = false;

/**
 * For a batch, or a text past 4 MiB: optimizeSooner, and V8's semi-spaces stay at 8 MiB. --max-semi-space-size
 * cannot be set at run time, but V8 reads the growth factor at each growth: once at the cap, it is set to 1.
 */
export async function tuneForBulk(): Promise<void> {
  if (started) return;
  started = true;
  optimizeSooner();
  const [v8, { PerformanceObserver }] = await Promise.all([import('node:v8'), import('node:perf_hooks')]);
  // new_space's size counts both semi-spaces.
  const limit = 2 * 8 * 1024 * 1024;
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
