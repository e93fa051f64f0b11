/**
 * Keeps V8's young generation small during bulk work, so that memory stays flat on every Node version.
 *
 * V8 sizes the young generation from the heap limit: each of its two semi-spaces may grow to 16 MiB
 * on Node 20 but to 64 MiB on Node 24 (measured on a 24 GiB machine). A batch allocates at a steady
 * rate and some of it is always in flight, so the space grows step by step to its maximum: a 1 GiB
 * NDJSON batch peaked at 264-282 MiB RSS on Node 24 against 140-150 MiB on Node 20, with the same code.
 * The maximum is fixed when the heap is set up: --max-semi-space-size works on the command line, which a
 * CLI cannot ask of its users, and v8.setFlagsFromString('--max-semi-space-size=8') at run time was
 * measured to change nothing. But V8 reads the growth factor each time the space grows, so once the
 * space reached the cap, the factor is set to 1 and it grows no further.
 *
 * Budget row it serves: a large NDJSON batch's peak RSS (<= 1.2x a batch a quarter its size, <= 160 MiB).
 * A 512 MiB batch vs a 128 MiB one on Node 24: 124 vs 122 MiB with it, 224 vs 160 MiB without it (miss);
 * on Node 20 no difference (113 vs 101, 115 vs 107 MiB). `npm run bench:tricks -- young-generation`.
 *
 * It tunes the whole process, so only the CLI's bulk path calls it (an NDJSON batch, see
 * docs submit), never the library's client; node:v8 costs a few milliseconds to import, so it is
 * imported then, not at start-up.
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
