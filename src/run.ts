import { ExitCode } from './errors.js';
import { run } from './main.js';
import { createProcessContext } from './process-context.js';

/** One invocation with the real context; a separate entry of the build, so cli.cjs loads it only when needed. */
export async function runProcess(argv: string[]): Promise<number> {
  const ctx = createProcessContext();
  let code: number = ExitCode.error;
  try {
    code = await run(argv, ctx);
  } finally {
    // Keep-alive sockets would hold the process open for seconds after the last request; interrupted by
    // SIGINT or SIGTERM, the process ends there, by that signal.
    await ctx.finish(code);
  }
  return code;
}
