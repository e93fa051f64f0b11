import { run } from './main.js';
import { createProcessContext } from './process-context.js';

/**
 * One invocation with the real context: what cli.ts loads for all but --version and prerendered --help
 * (a separate entry of the build, so cli.cjs imports nothing until it needs this).
 */
export async function runProcess(argv: string[]): Promise<number> {
  const ctx = createProcessContext();
  // Keep-alive sockets would hold the process open for seconds after the last request.
  return run(argv, ctx).finally(() => ctx.close());
}
