/**
 * Keeps V8's semi-spaces at 8 MiB during bulk work (docs/decisions.md). --max-semi-space-size cannot be set at
 * run time, but V8 reads the growth factor at each growth: once at the cap, it is set to 1. Process-wide.
 */

let started = false;

export async function capYoungGeneration(): Promise<void> {
  if (started) return;
  started = true;
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
