import {
  ApiError,
  CancelError,
  CliError,
  ExitCode,
  type ExitCodeValue,
  NetworkError,
  OUTPUT_CLOSED,
  OUTPUT_FAILED,
  UsageError,
} from '../../errors.js';
import { atLine } from '../../input/json.js';
import type { InputSource } from '../../input/source.js';
import type { BatchSummary, Failures } from './batch-report.js';

/** `resumeCommand`: the command line that resumes this batch (resumeCommand in submit.ts); `cwd`: where it runs. */
export type Resumable = { source: InputSource; continueOnError: boolean; resumeCommand: string; cwd: string };

/** The most pressing failure decides the exit code: credentials and refusals before the rest. */
const EXIT_PRIORITY: ExitCodeValue[] = (
  ['interrupted', 'auth', 'refused', 'network', 'rateLimited', 'usage', 'conflict', 'notFound', 'error'] as const
).map((name) => ExitCode[name]);

/** How to send the rest (or do `then`): the exact command with --resume, after `first` if given. */
export function resumeHint(
  input: Resumable,
  first = '',
  then = 'to send the rest (lines already submitted are not sent again)',
): string {
  const run =
    input.source.kind === 'stdin'
      ? `feed the same standard input to \`${input.resumeCommand}\` in ${input.cwd}`
      : `run \`${input.resumeCommand}\``;
  const sentence = `${run} ${then}`;
  return first === '' ? `${sentence[0]?.toUpperCase()}${sentence.slice(1)}` : `${first}, then ${sentence}`;
}

/** Whether a failed request may have made its document: not after a 4xx, a refusal before sending, or nothing sent. */
export function mayHaveCreated(error: unknown): boolean {
  if (error instanceof ApiError) return error.status >= 500;
  if (error instanceof NetworkError) return !error.unsent;
  return !(error instanceof UsageError);
}

/** Exit 2 says nothing was sent: bad input after this run submitted documents is a partly failed batch, exit 1. */
export const partlySent = (exitCode: ExitCodeValue, summary: BatchSummary): ExitCodeValue =>
  exitCode === ExitCode.usage && summary.submitted > summary.earlier ? ExitCode.error : exitCode;

const mostPressing = (failures: Failures, summary: BatchSummary): ExitCodeValue | undefined =>
  EXIT_PRIORITY.find((code) => failures.firstByExitCode.has(code) && partlySent(code, summary) === code);

/** Whether another line's failure is more pressing than bad input (a refused key, the service unreachable, ...). */
export function overBadInput(failures: Failures, summary: BatchSummary): boolean {
  const worst = mostPressing(failures, summary);
  return worst !== undefined && EXIT_PRIORITY.indexOf(worst) < EXIT_PRIORITY.indexOf(ExitCode.usage);
}

/** `badLine`: the bad line that stopped the batch too, said after the failure that decides. */
export function batchError(
  failures: Failures,
  summary: BatchSummary,
  input: Resumable,
  after: { line: number; submitted: number } | undefined,
  badLine?: string,
): CliError {
  const continued = input.continueOnError;
  // Bad input (2) counts only when this run sent nothing; else the next most pressing failure, or 1.
  const worst = mostPressing(failures, summary);
  const exitCode = worst ?? ExitCode.error;
  const first = (worst === undefined ? undefined : failures.firstByExitCode.get(worst)) ?? failures.listed[0];
  const detail = first ? ` (${atLine(first.line, first.error.message)})` : '';
  // Lines in flight at the failure were finished: said, so "stopped" does not read as nothing after it was sent.
  const inFlight =
    after === undefined || after.submitted === 0
      ? ''
      : after.submitted === 1
        ? `, but 1 line after line ${after.line}, already in flight, was still submitted`
        : `, but ${after.submitted} lines after line ${after.line}, already in flight, were still submitted`;
  const stopped = continued ? '' : `; the batch stopped at the first failure${inFlight}`;
  const also = badLine === undefined ? '' : `; ${badLine}`;
  // Every failure one that no --continue-on-error helps: its fix; of a refused key, or a key without the scope to
  // submit, its code too (the service unreachable: a ring's find, it offered --continue-on-error).
  const only = failures.firstByExitCode.size === 1 ? [...failures.firstByExitCode.values()][0] : undefined;
  const unreachable = failures.firstByExitCode.has(ExitCode.network);
  const everyLine =
    only && (unreachable || failures.firstByExitCode.has(ExitCode.auth) || only.error.code === 'insufficient_scope')
      ? only
      : undefined;
  const hint = everyLine
    ? resumeHint(input, everyLine.hint ?? 'Fix the cause')
    : continued
      ? resumeHint(input, 'Fix the failed lines')
      : `${resumeHint(input, 'Fix the cause')}; or pass --continue-on-error to send every valid line`;
  const failed = `${summary.failed} ${summary.failed === 1 ? 'document' : 'documents'} failed`;
  const code = (unreachable ? undefined : everyLine?.error.code) ?? 'batch_failed';
  return new CliError(`${failed}${detail}${stopped}${also}`, exitCode, { code, hint });
}

/** The batch stopped by Ctrl-C (130), SIGTERM (143) or a closed output (141): how far it got, and how to go on. */
export function interrupted(signal: AbortSignal, input: Resumable, progressNote: string): CancelError {
  const reason = signal.reason instanceof CliError ? signal.reason : undefined;
  const closed = reason?.code === OUTPUT_CLOSED;
  const why =
    reason?.code === OUTPUT_FAILED ? reason.message : closed ? 'stopped: standard output was closed' : 'interrupted';
  return new CancelError(`${why}: ${progressNote}`, {
    ...(progressNote === NOTHING_SENT ? {} : { hint: resumeHint(input) }),
    ...(reason?.code === OUTPUT_FAILED ? { code: OUTPUT_FAILED } : {}),
    exitCode: closed
      ? ExitCode.outputClosed
      : reason && reason.exitCode !== ExitCode.ok
        ? reason.exitCode
        : ExitCode.interrupted,
  });
}

export const NOTHING_SENT = 'nothing was submitted';
