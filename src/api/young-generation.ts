/**
 * Keeps V8's young generation small during bulk work (docs/decisions.md): a batch's steady allocation
 * grows each semi-space to its maximum (16 MiB on Node 20, 64 on Node 24). --max-semi-space-size cannot
 * be set at run time, but V8 reads the growth factor each time the space grows: once the space reached
 * the cap, it is set to 1. It tunes the whole process: the CLI's bulk path alone calls it.
 */

let started = false;

export async function capYoungGeneration(): Promise<void> {
  if (started) return;
  started = true;
  const [v8, { PerformanceObserver }] = await Promise.all([import('node:v8'), import('node:perf_hooks')]);
  // Each semi-space stops at 8 MiB; new_space's size counts both.
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
