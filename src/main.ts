import { CommanderError } from 'commander';
import type { Context } from './context.js';
import { CliError, ExitCode, exitCodeFor } from './errors.js';
import { buildProgram } from './program.js';

/**
 * Runs one invocation and returns its exit code. This is the only place where errors become exit
 * codes and messages: commands throw, main renders.
 */
export async function run(argv: string[], ctx: Context): Promise<number> {
  const program = buildProgram(ctx);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return ExitCode.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version are "errors" to commander's exitOverride; their exit code is 0.
      return error.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
    }
    reportError(ctx, error);
    return exitCodeFor(error);
  }
}

function reportError(ctx: Context, error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  const hint = error instanceof CliError ? error.hint : undefined;
  ctx.io.stderr.write(`error: ${message}\n`);
  if (hint) ctx.io.stderr.write(`${hint}\n`);
  if (ctx.globals.debug && error instanceof Error && error.stack) ctx.io.stderr.write(`${error.stack}\n`);
}
