// Preloaded (NODE_OPTIONS=--import) into each process of a concurrency round: it blocks until the
// round's start file appears, so N processes that took different times to start begin their real work
// within a millisecond or so of each other. Without FACECTL_TEST_BARRIER it does nothing.
import { existsSync } from 'node:fs';

const path = process.env.FACECTL_TEST_BARRIER;
if (path) {
  const cell = new Int32Array(new SharedArrayBuffer(4));
  const until = Date.now() + 30_000;
  while (!existsSync(path) && Date.now() < until) Atomics.wait(cell, 0, 0, 1);
}
