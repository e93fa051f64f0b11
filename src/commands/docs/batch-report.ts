import type { Context, ProgressBar, Spinner } from '../../context.js';
import { CliError, ExitCode, type ExitCodeValue } from '../../errors.js';
import { atLine } from '../../input/json.js';
import { fieldColumns } from '../kit.js';
import type { BatchJournal } from '../../state/batch-journal.js';
import { KEEP_UNFINISHED_SINCE } from '../../state/batch-read.js';

/** Each line's result as it finishes (NDJSON under --json, TSV piped, a table on a terminal), then the summary. */
export type LineResult =
  | { line: number; ok: true; document_id: string; token_count: number; resumed?: true }
  | { line: number; ok: false; error: { code: string; message: string } };

export type FailedLine = LineResult & { ok: false };

/**
 * `earlier`: of `submitted`, the lines an earlier run had submitted (not sent again); `unanswered`: lines sent
 * whose answer the stop (Ctrl-C, SIGTERM) cut off.
 */
export type BatchSummary = { total: number | undefined } & Record<
  'submitted' | 'earlier' | 'failed' | 'unanswered' | 'tokens',
  number
>;

/** `listed`: the first few, in the order they came; `firstByExitCode` with its error's hint. */
export type Failures = { listed: FailedLine[]; firstByExitCode: Map<ExitCodeValue, FailedLine & { hint?: string }> };

const MAX_LISTED = 10;

export function createReporter(ctx: Context, total: number | undefined) {
  const summary: BatchSummary = { total, submitted: 0, earlier: 0, failed: 0, unanswered: 0, tokens: 0 };
  const failures: Failures = { listed: [], firstByExitCode: new Map() };
  const onTerminal = ctx.io.stdoutIsTTY && !ctx.out.json;
  const forTable: (LineResult & { ok: true })[] = [];
  const results = batchedLines(ctx);
  // Shown from the first line this run sends (or fails): a resumed batch's earlier lines alone are no work.
  let bar: ProgressBar | undefined;
  let spinner: Spinner | undefined;
  /** Failed lines not listed on purpose (stoppedAt), so not "more failures" either. */
  let unprinted = 0;
  /** The result line of the bad line that stopped the batch (--json), printed once the lines in flight are. */
  let stoppedLine: string | undefined;
  const fail = (result: FailedLine, exitCode: ExitCodeValue | undefined, listed: boolean, hint?: string) => {
    summary.failed++;
    const code = exitCode ?? ExitCode.error;
    if (listed && failures.listed.length < MAX_LISTED) failures.listed.push(result);
    if (!failures.firstByExitCode.has(code)) failures.firstByExitCode.set(code, { ...result, hint });
  };
  return {
    report(result: LineResult, exitCode?: ExitCodeValue, hint?: string): void {
      if (result.ok) {
        summary.submitted++;
        if (result.resumed) summary.earlier++;
        summary.tokens += result.token_count;
        if (ctx.out.json) results.add(`${JSON.stringify(result)}\n`);
        else if (onTerminal) forTable.push(result);
        else results.add(`${result.line}\t${result.document_id}\t${result.token_count}\n`);
      } else {
        fail(result, exitCode, true, hint);
        if (ctx.out.json) results.add(`${JSON.stringify(result)}\n`);
        else if (!onTerminal) ctx.out.warn(atLine(result.line, result.error.message));
      }
      if (!result.ok || !result.resumed) {
        if (total === undefined) spinner ??= ctx.out.spinner('Submitting documents');
        else bar ??= ctx.out.progress('Submitting');
      }
      const { failed } = summary;
      bar?.update(summary.submitted + failed, total as number, failed > 0 ? `(${failed} failed)` : undefined);
      spinner?.update(
        `Submitting documents: ${summary.submitted + failed} done${failed > 0 ? `, ${failed} failed` : ''}`,
      );
    },
    /** The summary so far, the `inFlight` lines as sent without an answer (a stop may come before they end). */
    counts: (inFlight: number) => summaryLine({ ...summary, unanswered: summary.unanswered + inFlight }),
    /** A line sent whose answer the stop cut off: it may have been created. */
    unanswered(): void {
      summary.unanswered++;
    },
    /**
     * A bad line that stops the batch: failed, not listed (the batch's error names it); under --json its result line
     * is printed last, after the lines in flight (`select(.ok | not)` finds it).
     */
    stoppedAt(result: FailedLine, exitCode: ExitCodeValue): void {
      fail(result, exitCode, false);
      unprinted++;
      if (ctx.out.json) stoppedLine = `${JSON.stringify(result)}\n`;
    },
    /** Writes the table, the failures and the summary. `alreadyFinished`: a finished batch resumed, read through. */
    finish(alreadyFinished = false) {
      // Not as the only line (a bad first line: stdout empty, as for a file's bad line found before sending).
      if (stoppedLine !== undefined && summary.submitted + summary.failed > 1) results.add(stoppedLine);
      results.flush();
      bar?.stop();
      spinner?.stop();
      if (onTerminal && forTable.length > 0) ctx.out.list(forTable, fieldColumns('line', 'document_id', 'token_count'));
      if (onTerminal) for (const result of failures.listed) ctx.out.warn(atLine(result.line, result.error.message));
      if (alreadyFinished && summary.failed === 0 && summary.earlier === summary.submitted) {
        const documents = summary.earlier === 1 ? 'document' : 'documents';
        ctx.out.info(`batch already finished: ${summary.earlier} ${documents} sent; nothing to do`);
      } else if (summary.submitted + summary.failed + summary.unanswered > unprinted) {
        // Not when no line was sent (a first line refused, an array): the error says nothing was submitted.
        const unlisted = onTerminal ? summary.failed - unprinted - failures.listed.length : 0;
        if (unlisted > 0) ctx.out.warn(`... and ${unlisted} more failures (use --json for every line)`);
        ctx.out.info(summaryLine(summary));
      }
      return { summary, failures, jq: results.jqFailure() };
    },
  };
}

/**
 * Result lines written per 32 KB or 50 ms, not a system call per document. A failing --jq never throws here (a
 * timer's throw would crash the process): its block is written again line by line, the first failure kept.
 */
function batchedLines(ctx: Context) {
  let pending = '';
  let timer: ReturnType<typeof setTimeout> | undefined;
  /** --jq failed on some lines' results (their documents were submitted all the same): the first, and how many. */
  let failure: { line: number; message: string; lines: number } | undefined;
  const write = (text: string, each: (text: string) => void) => {
    try {
      each(text);
    } catch (error) {
      if (!(error instanceof CliError) || error.code !== 'jq_error') throw error;
      return error;
    }
    return undefined;
  };
  const flush = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (pending === '') return;
    const text = pending;
    pending = '';
    if (write(text, (t) => ctx.out.text(t)) === undefined) return;
    // One call per line costs about 2 ms (jq-web starts afresh each time): only for a block that failed.
    for (const line of text.split('\n')) {
      if (line === '') continue;
      const result = JSON.parse(line) as LineResult;
      const error = write(line, () => ctx.out.line(result));
      if (error === undefined) continue;
      const message = error.message.replace(/^--jq: /, '');
      failure = failure ? { ...failure, lines: failure.lines + 1 } : { line: result.line, message, lines: 1 };
    }
  };
  return {
    add(line: string): void {
      pending += line;
      if (pending.length >= 32 * 1024) flush();
      else timer ??= setTimeout(flush, 50);
    },
    flush,
    jqFailure: () => failure,
  };
}

/** "Submitted N of M documents, ...": at the end, or (onSecondSignal) when a second signal ends the batch at once. */
function summaryLine(summary: BatchSummary): string {
  const of = summary.total !== undefined ? ` of ${summary.total}` : '';
  const failed = summary.failed > 0 ? `, ${summary.failed} failed` : '';
  const unanswered = summary.unanswered > 0 ? `, ${summary.unanswered} sent without an answer` : '';
  const left =
    summary.total !== undefined ? summary.total - summary.submitted - summary.failed - summary.unanswered : 0;
  const notSent = left > 0 ? `, ${left} not sent` : '';
  const earlier = summary.earlier > 0 ? ` (${summary.earlier} of them by an earlier run, not sent again)` : '';
  return (
    `Submitted ${summary.submitted}${of} ${(summary.total ?? summary.submitted) === 1 ? 'document' : 'documents'}` +
    `${earlier}${failed}${unanswered}${notSent}. token_count total ${summary.tokens} ` +
    '(a preview: nothing is charged until each document is synced).'
  );
}

/**
 * What --resume found: lines acknowledged (moved: now on another line), others (added, if it had finished) and
 * lines gone; nothing for a finished batch resumed as it was ("batch already finished" says it).
 */
export function noteResume(
  ctx: Context,
  tense: 'resuming' | 'resumed',
  compared: { lines: number; matched: number; moved: number },
  journal: { earlier: { size: number }; finished: boolean },
): void {
  const others = compared.lines - compared.matched;
  const removed = journal.earlier.size - compared.matched;
  if (journal.finished && others === 0 && removed === 0 && compared.moved === 0) return;
  const rest = journal.finished ? `${others} added` : `${others} not yet submitted`;
  ctx.out.info(
    `${tense}: ${compared.matched} already submitted (${compared.moved} moved), ${rest}, ${removed} removed`,
  );
}

/** What a batch says as it opens: sent with another key, resumed, a finished batch repeated, a record dropped. */
export function noteOpened(ctx: Context, journal: BatchJournal, name: string, destination: string): void {
  if (journal.movedFrom !== undefined) {
    ctx.out.warn(
      `the earlier runs of this batch sent with ${journal.movedFrom}…, this one with ${destination}…, ` +
        "perhaps of another account: every line is sent again, with the earlier runs' idempotency keys (where " +
        "a line's document was already made for this account, the service answers with that document)",
    );
  }
  if (journal.compared !== undefined) noteResume(ctx, 'resuming', journal.compared, journal);
  if (journal.pruned)
    ctx.out.warn(
      `records of batches finished since this one began were removed (${KEEP_UNFINISHED_SINCE} are kept): lines of ` +
        `${name} that other inputs' batches submitted meanwhile, if any, are sent again and created twice`,
    );
  if (journal.repeats !== undefined)
    ctx.out.warn(
      `an earlier batch of ${name} (begun at ${journal.repeats.replace(/\.\d+Z$/, 'Z')}) finished with the same first ` +
        'lines: this run is a new batch, and the documents of the lines it shares with it are created again; ' +
        '`--resume` sends only the lines added or edited since',
    );
  const { recorded, present } = journal.restarted;
  if (recorded > 0) {
    // Lines edited since (or completed by other flags) are other documents: what is made again is what is left.
    const left = Math.min(present ?? recorded, recorded);
    const again =
      left === recorded
        ? 'and those already submitted are created again'
        : left === 0
          ? `none of them is in ${name} now (edited since, or completed by other flags: other documents)`
          : `${left} of them, still in ${name}, ${left === 1 ? 'is' : 'are'} created again (the others were edited or removed since)`;
    ctx.out.warn(
      `restarting: the unfinished batch's record of ${recorded} submitted ${recorded === 1 ? 'line' : 'lines'} is dropped; ` +
        `every line is sent again${left === recorded ? ', ' : ': '}${again}`,
    );
  }
}

/** Lines of a batch resumed that batches of other inputs submitted (a slice of it sent as a file of its own). */
export function noteAdopted(ctx: Context, adopted: number, from: ReadonlySet<string> = new Set()): void {
  if (adopted === 0) return;
  const [n, were, their] = adopted === 1 ? ['1 line', 'was', 'its'] : [`${adopted} lines`, 'were', 'their'];
  ctx.out.info(
    `${n} not submitted by this batch ${were} by that of ${[...from].join(', ')}: reported with ${their} documents, not sent again`,
  );
}
