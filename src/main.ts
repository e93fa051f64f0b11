import { CommanderError } from 'commander';
import type { Context, GlobalOptions } from './context.js';
import {
  ApiError,
  CancelError,
  CliError,
  DeclinedError,
  detailFields,
  detailLines,
  ExitCode,
  forProfile,
  OUTPUT_CLOSED,
  OUTPUT_FAILED,
  withoutKeys,
} from './errors.js';
import { safeJson, visible, wrapForTerminal } from './io/output.js';
import { buildProgram } from './program.js';

/** The one place errors become exit codes and messages; --json before `--` makes errors JSON from the first word on. */
export async function run(argv: string[], ctx: Context): Promise<number> {
  const end = argv.indexOf('--');
  if ((end < 0 ? argv : argv.slice(0, end)).includes('--json')) ctx.globals.json = true;
  try {
    await (await buildProgram(ctx, argv)).parseAsync(argv, { from: 'user' });
    ctx.out.flush();
    // A write to stdout that failed (`> file` on a full disk) is known a tick after it was tried.
    await new Promise((resolve) => setImmediate(resolve));
    // A change made whose output's reader went away (`| true`): what was made is said on stderr, as keys create does.
    if (signalled(ctx, OUTPUT_CLOSED) && ctx.out.written !== undefined) {
      const closed = 'standard output was closed';
      reportError(ctx, new CliError(closed, ExitCode.outputClosed, { code: OUTPUT_CLOSED, hint: ctx.out.written }));
      return ExitCode.outputClosed;
    }
    const failed = signalled(ctx, OUTPUT_FAILED);
    if (!failed) return ExitCode.ok;
    // The command did its work (a thread created, a message list replaced): said, with what it made, so it is not
    // simply run again.
    const hint = ctx.out.written ?? ctx.stopHint ?? 'the command completed; only what it printed was lost';
    reportError(ctx, new CliError(failed.message, failed.exitCode, { code: failed.code, hint, cause: failed }));
    return failed.exitCode;
  } catch (caught) {
    // A command stopped by its output's failure says that, not "interrupted".
    const failed = signalled(ctx, OUTPUT_FAILED);
    const error = failed && caught instanceof CancelError && caught.message === 'interrupted' ? failed : caught;
    // stdout closed by its reader (`| head`): stop quietly, unless work was left undone (a batch cut short exits 141).
    const stoppedShort = error instanceof CliError && error.exitCode === ExitCode.outputClosed;
    if (signalled(ctx, OUTPUT_CLOSED) && !stoppedShort) return ExitCode.ok;
    if (error instanceof CommanderError) {
      // Help and version are "errors" to exitOverride; so is a group called without a subcommand.
      if (error.exitCode === 0 || error.code === 'commander.help') {
        ctx.out.flush();
        return ExitCode.ok;
      }
      // commander wrote `error: ...` and the usage line (not under --json: program.ts quiets it): a usage error.
      if (ctx.globals.json) writeJson(ctx, { code: 'usage', message: error.message.replace(/^error: /, '') });
      return ExitCode.usage;
    }
    reportError(ctx, error);
    return error instanceof CliError ? error.exitCode : ExitCode.error;
  }
}

function signalled(ctx: Context, code: string): CliError | undefined {
  const reason: unknown = ctx.signal.reason;
  return ctx.signal.aborted && reason instanceof CliError && reason.code === code ? reason : undefined;
}

export function reportError(ctx: Context, error: unknown): void {
  // What the service said (message, detail, hint) is shown with its control characters made visible.
  const write = (line: string) => void ctx.io.stderr.write(`${wrapForTerminal(ctx.io, visible(withoutKeys(line)))}\n`);
  if (ctx.globals.json) {
    const held = ctx.out.takeHeld();
    writeJson(ctx, { ...jsonError(error, ctx.globals), ...(held.length > 0 ? { warnings: held } : {}) });
    return;
  }
  ctx.out.flush();
  // A confirmation answered no is said plainly, not as an error (under --json, the error document above).
  if (error instanceof DeclinedError) return write(error.message);
  const cli = error instanceof CliError ? error : undefined;
  write(`error: ${cli ? '' : 'unexpected failure: '}${error instanceof Error ? error.message : String(error)}`);
  if (error instanceof ApiError) {
    write(`  status: ${error.status} ${error.code}`);
    for (const line of detailLines(error.detail, error.message)) write(`  ${line}`);
  }
  for (const { field, message } of cli?.fields ?? []) write(`  - ${field}: ${message}`);
  // Not for Ctrl-C or SIGTERM: their stack is the signal handler's, and it read as a second error ("CancelError: ...").
  if (ctx.globals.debug && error instanceof Error && error.stack && !(error instanceof CancelError)) write(error.stack);
  const hint = cli ? cli.hint : UNEXPECTED_HINT;
  if (hint) write(forProfile(hint, ctx.globals.profile, ctx.globals.baseUrl));
}

const UNEXPECTED_HINT = 'run again with --debug for details; if it persists, please report it';

function jsonError(error: unknown, { debug, profile, baseUrl }: GlobalOptions): Record<string, unknown> {
  if (!(error instanceof CliError)) {
    const message = error instanceof Error ? error.message : String(error);
    const stack = debug && error instanceof Error ? error.stack : undefined;
    return { code: 'internal_error', message, hint: UNEXPECTED_HINT, ...(stack ? { stack } : {}) };
  }
  return {
    code: error.code,
    message: error.message,
    ...(error instanceof ApiError ? { status: error.status, detail: error.detail } : {}),
    ...(error.fields
      ? { fields: error.fields }
      : error instanceof ApiError && Array.isArray(error.detail)
        ? { fields: detailFields(error.detail) }
        : {}),
    ...(error.hint ? { hint: forProfile(error.hint, profile, baseUrl) } : {}),
  };
}

function writeJson(ctx: Context, error: Record<string, unknown>): void {
  ctx.io.stderr.write(`${withoutKeys(safeJson({ error }))}\n`);
}
