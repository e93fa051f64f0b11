/**
 * The process entry: builds the real context from process.* and runs one invocation. bin/facectl.js
 * imports this and sets process.exitCode from the result.
 */
import { VERSION } from './version.js';

export async function runFromProcess(): Promise<number> {
  const argv = process.argv.slice(2);
  // Scripts call `facectl --version` to check the install: answer without loading anything else.
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  const { createProcessContext } = await import('./process-context.js');
  const ctx = createProcessContext(argv);
  const { run } = await import('./main.js');
  try {
    return await run(argv, ctx);
  } finally {
    // Keep-alive sockets would hold the process open for seconds after the last request.
    await ctx.close();
  }
}
