/**
 * The process entry: builds the real context from process.* and runs one invocation. bin/facectl.js
 * imports this and sets process.exitCode from the result.
 */
import { createProcessContext } from './process-context.js';

export async function runFromProcess(): Promise<number> {
  const argv = process.argv.slice(2);
  const ctx = createProcessContext(argv);
  const { run } = await import('./main.js');
  return run(argv, ctx);
}
