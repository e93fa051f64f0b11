import { realpath } from 'node:fs/promises';
import { resolve } from 'node:path';
import { stateDir } from '../../config/state-dir.js';
import type { Context } from '../../context.js';
import { createDocument } from '../../contract/documents.js';
import { CancelError, CliError, ExitCode, type ExitCodeValue, UsageError } from '../../errors.js';
import {
  checkNdjsonLine,
  type DocumentBody,
  type DocumentDefaults,
  documentRequestText,
  type NdjsonLine,
  readNdjsonDocuments,
} from '../../input/documents.js';
import type { InputSource } from '../../input/source.js';
import { type BatchJournal, bodyHash, bodyHashV1, type JournalMode, openBatchJournal } from './batch-journal.js';
import { batchedLines, printSummary, startProgress } from './batch-report.js';

/**
 * `docs submit` of NDJSON: one document per line, sent with --concurrency requests in flight.
 *
 * A file is read twice, streaming both times so memory stays flat whatever its size: the first pass
 * checks every line (and counts them for the progress bar), so a bad line means nothing is sent; the
 * second pass sends, checking each line again (the file may have changed in between). A file of up to
 * KEEP_BYTES is kept in memory from the first pass instead. Standard input cannot be read twice, so its
 * lines are checked as they are sent and the first bad line stops the batch (lines before it were
 * already submitted). With --continue-on-error, bad lines and refused documents are reported and the
 * rest is still sent.
 *
 * A checked line the flags complete nothing in is sent as it was read (its bytes are the request body);
 * any other is serialized as the API client would (documentRequestText).
 *
 * Results are reported as lines finish (in completion order; `line` says which input line): NDJSON
 * under --json, tab-separated `line document_id token_count` when piped, a table at the end on a
 * terminal. A summary goes to stderr, and any failure makes the exit code non-zero.
 *
 * A journal (see batch-journal.ts) records every line the service acknowledged. When the batch stops
 * short (Ctrl-C, a failure, a killed process), the message says how far it got and that --resume sends
 * only the rest; the lines an earlier run submitted are reported again (`"resumed": true`) without being
 * sent, so the output of a resumed run covers the whole batch.
 */

export interface BatchInput {
  source: InputSource;
  /** The bytes of the first read (they may replay what kind detection peeked at). */
  chunks: AsyncIterable<Buffer>;
  defaults: DocumentDefaults;
  concurrency: number;
  continueOnError: boolean;
  /** new: refuse if an earlier run of this input is unfinished; resume: send only what it left; restart. */
  journal: JournalMode;
}

export type LineResult =
  | { line: number; ok: true; document_id: string; token_count: number; resumed?: true }
  | { line: number; ok: false; error: { code: string; message: string } };

type FailedLine = LineResult & { ok: false };

interface Failures {
  listed: FailedLine[];
  firstByExitCode: Map<ExitCodeValue, FailedLine>;
}

export interface BatchSummary {
  total: number | undefined;
  submitted: number;
  /** Of `submitted`, the lines an earlier run had submitted (not sent again). */
  earlier: number;
  failed: number;
  tokens: number;
  notSent: boolean;
}

/** The most pressing failure decides the exit code: credentials and refusals before the rest. */
const EXIT_PRIORITY: ExitCodeValue[] = [
  ExitCode.interrupted,
  ExitCode.auth,
  ExitCode.refused,
  ExitCode.network,
  ExitCode.rateLimited,
  ExitCode.usage,
  ExitCode.conflict,
  ExitCode.notFound,
  ExitCode.error,
];
const MAX_LISTED = 10;

export async function submitBatch(ctx: Context, input: BatchInput): Promise<BatchSummary> {
  const { source, defaults } = input;
  let total: number | undefined;
  let lines: AsyncIterable<NdjsonLine>;
  if (source.reopenable) {
    const checked = await checkEveryLine(input);
    total = checked.count;
    lines = checked.kept ? fromMemory(checked.kept) : readNdjsonDocuments(source.open(), source.name, defaults);
  } else {
    lines = readNdjsonDocuments(input.chunks, source.name, defaults);
  }
  const journal = await openBatchJournal({
    dir: stateDir(ctx.env),
    identity: await inputIdentity(source),
    sourceName: source.name,
    mode: input.journal,
  });
  if (input.journal === 'resume' && !journal.resumed) {
    ctx.out.info(`Nothing to resume: no unfinished batch of ${source.name} was recorded; sending every line.`);
  }
  let complete = false;
  try {
    const summary = await sendLines(ctx, input, lines, total, journal);
    complete = true;
    return summary;
  } finally {
    if (complete) await journal.complete();
    else await journal.close();
  }
}

/** What names the input across runs: a file by its real path, standard input by the directory it is read in. */
async function inputIdentity(source: InputSource): Promise<string> {
  if (source.kind === 'stdin') return `stdin:${process.cwd()}`;
  try {
    return `file:${await realpath(source.name)}`;
  } catch {
    return `file:${resolve(source.name)}`;
  }
}

/** How to send the rest: the same command line with --resume, after `first` if given. */
function resumeHint(source: InputSource, first = ''): string {
  const again =
    source.kind === 'stdin'
      ? 'run the same command again, with the same standard input and --resume,'
      : `run the same command again with --resume (\`facectl docs submit --file ${source.name} --resume ...\`)`;
  const sentence = `${again} to send the rest; lines already submitted are not sent again`;
  return first === '' ? `${sentence[0]?.toUpperCase()}${sentence.slice(1)}` : `${first}, then ${sentence}`;
}

/**
 * A file up to this size is kept in memory between the two passes (its lines as the second pass would
 * read them), so it is read and parsed once; a larger one is read again, and memory stays flat.
 */
const KEEP_BYTES = 16 * 1024 * 1024;

/**
 * First pass over a file: every line checked, nothing sent. Returns the number of documents, and for a
 * small file its lines, ready to send.
 */
async function checkEveryLine(input: BatchInput): Promise<{ count: number; kept?: NdjsonLine[] }> {
  const { source } = input;
  let count = 0;
  const problems: string[] = [];
  let bad = 0;
  const kept: NdjsonLine[] | undefined = source.size !== undefined && source.size <= KEEP_BYTES ? [] : undefined;
  for await (const line of readNdjsonDocuments(input.chunks, source.name, input.defaults)) {
    count++;
    // A line sent as read needs only its bytes: the parsed document is let go.
    kept?.push(line.bytes === undefined ? line : { line: line.line, bytes: line.bytes });
    if (line.error === undefined) continue;
    bad++;
    if (problems.length < MAX_LISTED) problems.push(`line ${line.line}: ${line.error}`);
  }
  if (count === 0) throw new UsageError(`${source.name} holds no documents (only blank lines)`);
  if (bad > 0 && !input.continueOnError) {
    const more = bad > problems.length ? [`... and ${bad - problems.length} more`] : [];
    const message =
      bad === 1
        ? `${source.name}: ${problems[0]}`
        : `${source.name}: ${bad} of ${count} lines are invalid:\n${[...problems, ...more].map((p) => `  ${p}`).join('\n')}`;
    throw new UsageError(message, {
      code: 'invalid_input',
      hint: 'nothing was sent; fix the lines, or pass --continue-on-error to send the valid ones',
    });
  }
  return kept ? { count, kept } : { count };
}

async function* fromMemory(lines: NdjsonLine[]): AsyncGenerator<NdjsonLine> {
  // Each line is let go once it is taken, so the memory is returned as the batch goes.
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as NdjsonLine;
    lines[i] = undefined as unknown as NdjsonLine;
    yield line;
  }
}

async function sendLines(
  ctx: Context,
  input: BatchInput,
  lines: AsyncIterable<NdjsonLine>,
  total: number | undefined,
  journal: BatchJournal,
): Promise<BatchSummary> {
  const api = await ctx.api();
  const { source } = input;
  const summary: BatchSummary = { total, submitted: 0, earlier: 0, failed: 0, tokens: 0, notSent: false };
  // Bounded whatever the batch size: the first few failures to list, and the first of each exit code.
  const failures: Failures = { listed: [], firstByExitCode: new Map() };
  const onTerminal = ctx.io.stdoutIsTTY && !ctx.out.json;
  const forTable: (LineResult & { ok: true })[] = [];
  let stopReason: UsageError | undefined;
  let fatal: unknown;
  const progress = startProgress(ctx, total);

  const results = batchedLines(ctx);
  const report = (result: LineResult, exitCode?: ExitCodeValue) => {
    if (result.ok) {
      summary.submitted++;
      if (result.resumed) summary.earlier++;
      summary.tokens += result.token_count;
      if (ctx.out.json) results.add(`${JSON.stringify(result)}\n`);
      else if (onTerminal) forTable.push(result);
      else results.add(`${result.line}\t${result.document_id}\t${result.token_count}\n`);
    } else {
      summary.failed++;
      const code = exitCode ?? ExitCode.error;
      if (failures.listed.length < MAX_LISTED) failures.listed.push(result);
      if (!failures.firstByExitCode.has(code)) failures.firstByExitCode.set(code, result);
      if (ctx.out.json) results.add(`${JSON.stringify(result)}\n`);
      else if (!onTerminal) ctx.out.warn(`line ${result.line}: ${result.error.message}`);
    }
    progress.update(summary.submitted + summary.failed, summary.failed);
  };

  const iterator = lines[Symbol.asyncIterator]();
  // The next line, or done at Ctrl-C. Not Promise.race with one long-lived "interrupted" promise: every
  // race would leave a reaction on it holding that race's result (a whole document), so memory grew
  // with the input (a 1 GiB batch peaked at 1.4 GiB RSS). Here the abort listener goes with the line.
  // A file's next line is never long in coming: only standard input, which may sit idle, needs the race
  // (and the listener it costs per line).
  const nextLine = () => (source.reopenable ? iterator.next() : nextLineOrAbort());
  const nextLineOrAbort = () =>
    new Promise<IteratorResult<NdjsonLine>>((resolve, reject) => {
      const onAbort = () => resolve({ done: true, value: undefined });
      if (ctx.signal.aborted) return onAbort();
      ctx.signal.addEventListener('abort', onAbort, { once: true });
      iterator.next().then(
        (result) => {
          ctx.signal.removeEventListener('abort', onAbort);
          resolve(result);
        },
        (error: unknown) => {
          ctx.signal.removeEventListener('abort', onAbort);
          reject(error);
        },
      );
    });
  let stopped = false;
  const worker = async () => {
    while (!stopped && !ctx.signal.aborted) {
      let next: IteratorResult<NdjsonLine>;
      try {
        next = await nextLine();
      } catch (error) {
        // A read error (e.g. a line over the size limit) ends the batch; in-flight requests finish.
        fatal ??= error;
        stopped = true;
        return;
      }
      if (next.done) return;
      const line = next.value;
      if (line.error !== undefined) {
        const message = line.error;
        if (!input.continueOnError) {
          stopReason = new UsageError(`${source.name}: line ${line.line}: ${message}`, { code: 'invalid_input' });
          stopped = true;
          return;
        }
        report({ line: line.line, ok: false, error: { code: 'invalid_input', message } }, ExitCode.usage);
        continue;
      }
      // The line as read, or else its document serialized once: the hash (in the journal and the
      // Idempotency-Key) is of the very bytes sent. A batch begun by an earlier build (format 1) is
      // sent as that build sent it, so that a line it left in flight is answered from its idempotency
      // record.
      let body: string | Buffer;
      let hash: string;
      if (journal.format === 2) {
        body = line.bytes ?? documentRequestText(line.document as DocumentBody);
        hash = bodyHash(body);
      } else {
        const checked = withDocument(line, input);
        // Builds of format 1 filled in perspective third-person when a line had none; send it so.
        const sentThen = checked.document as DocumentBody;
        body = documentRequestText({ ...sentThen, perspective: sentThen.perspective ?? 'third-person' });
        hash = bodyHashV1(input.source.reopenable && !input.continueOnError ? checked.filled : checked.document);
      }
      const earlier = journal.earlier.get(line.line);
      if (earlier !== undefined && earlier.hash === hash) {
        const { document_id, token_count } = earlier;
        report({ line: line.line, ok: true, document_id, token_count, resumed: true });
        continue;
      }
      try {
        // Sent as checked by the reader (against the same contract the client would check it with).
        const document = await api.call(
          createDocument,
          {},
          { signal: ctx.signal, idempotencyKey: journal.idempotencyKey(line.line, hash), rawBody: body },
        );
        const { document_id, token_count } = document;
        journal.record({ line: line.line, hash, document_id, token_count });
        report({ line: line.line, ok: true, document_id, token_count });
      } catch (error) {
        if (ctx.signal.aborted) return;
        const cli = error instanceof CliError ? error : undefined;
        const message = error instanceof Error ? error.message : String(error);
        report({ line: line.line, ok: false, error: { code: cli?.code ?? 'error', message } }, cli?.exitCode);
        if (!input.continueOnError) stopped = true;
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: input.concurrency }, worker));
  } finally {
    results.flush();
    progress.stop();
  }

  if (onTerminal && forTable.length > 0) {
    ctx.out.list(forTable, [
      { header: 'line', value: (r) => r.line },
      { header: 'document_id', value: (r) => r.document_id },
      { header: 'token_count', value: (r) => r.token_count },
    ]);
  }
  if (onTerminal) for (const result of failures.listed) ctx.out.warn(`line ${result.line}: ${result.error.message}`);
  summary.notSent = stopped || ctx.signal.aborted;
  printSummary(ctx, summary, onTerminal ? summary.failed - failures.listed.length : 0);

  const of = total === undefined ? '' : ` of ${total}`;
  const progressNote = `${summary.submitted}${of} ${(total ?? summary.submitted) === 1 ? 'document was' : 'documents were'} submitted`;
  if (ctx.signal.aborted) {
    throw new CancelError(`interrupted: ${progressNote}`, { hint: resumeHint(source) });
  }
  if (fatal !== undefined) {
    if (fatal instanceof CliError && fatal.hint === undefined) {
      throw new CliError(`${fatal.message} (${progressNote})`, fatal.exitCode, {
        code: fatal.code,
        hint: resumeHint(source, 'Fix it'),
        cause: fatal,
      });
    }
    throw fatal;
  }
  if (stopReason) {
    throw new UsageError(stopReason.message, {
      code: 'invalid_input',
      hint:
        `${summary.submitted} document(s) before it were already submitted (standard input is read once, so its ` +
        `lines are checked as they are sent). ${resumeHint(source, 'Fix the line')}; or pass --continue-on-error.`,
    });
  }
  if (summary.failed > 0) throw batchError(failures, summary, input.continueOnError, source);
  return summary;
}

/** A line with its document, parsed again from its bytes if the first pass let it go. */
function withDocument(line: NdjsonLine, input: BatchInput): NdjsonLine {
  if (line.document !== undefined || line.bytes === undefined) return line;
  return checkNdjsonLine(line.line, line.bytes.toString('utf8'), undefined, input.defaults);
}

function batchError(failures: Failures, summary: BatchSummary, continued: boolean, source: InputSource): CliError {
  const exitCode = EXIT_PRIORITY.find((code) => failures.firstByExitCode.has(code)) ?? ExitCode.error;
  const first = failures.firstByExitCode.get(exitCode) ?? failures.listed[0];
  const detail = first ? ` (line ${first.line}: ${first.error.message})` : '';
  const stopped = continued ? '' : '; the batch stopped at the first failure';
  return new CliError(`${summary.failed} document(s) failed${detail}${stopped}`, exitCode, {
    code: 'batch_failed',
    hint: continued
      ? resumeHint(source, 'Fix the failed lines')
      : `${resumeHint(source, 'Fix the cause')}; or pass --continue-on-error to send every valid line`,
  });
}
