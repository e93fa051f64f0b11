import { run } from './main.js';
import { createProcessContext } from './process-context.js';

/** One invocation with the real context; a separate entry of the build, so cli.cjs loads it only when needed. */
export async function runProcess(argv: string[]): Promise<number> {
  const ctx = createProcessContext();
  // Keep-alive sockets would hold the process open for seconds after the last request.
  return run(argv, ctx).finally(() => ctx.close());
}
