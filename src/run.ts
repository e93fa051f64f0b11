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
    await ctx.finish(code);
  }
  return code;
}
