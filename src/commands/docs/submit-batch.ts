import { join } from 'node:path';
import { RateGate } from '../../api/rate-gate.js';
import { stateDir } from '../../config/paths.js';
import type { Context } from '../../context.js';
import { createDocument } from '../../contract/documents.js';
import { ApiError, AuthError, CliError, detailLines, ExitCode, UsageError } from '../../errors.js';
import { atLine } from '../../input/json.js';
import { LineTooLongError } from '../../input/lines.js';
import { type BatchLines, type CheckWatcher, type NdjsonLine, readAsNdjson } from '../../input/ndjson.js';
import { noDocuments, STDIN_NAME } from '../../input/source.js';
import type { BatchJournal, JournalMode } from '../../state/batch-journal.js';
import { openBatchRecords } from '../../state/batch-records.js';
import { type LineKey, Occurrences } from '../../state/line-keys.js';
import {
  batchError,
  interrupted,
  mayHaveCreated,
  NOTHING_SENT,
  overBadInput,
  partlySent,
  type Resumable,
  resumeHint,
} from './batch-end.js';
import {
  fileHead,
  giveKey,
  inputIdentity,
  keyIdentity,
  keyOf,
  otherInputBatch,
  otherInputsLines,
  readAhead,
  runPool,
} from './batch-lines.js';
import { type BatchSummary, createReporter, noteAdopted, noteOpened, noteResume } from './batch-report.js';

/** `docs submit` of NDJSON: workers send the lines, a journal records those acknowledged (document hash, occurrence). */

export interface BatchInput extends Resumable {
  /** resumeCommand with --json for the --jq that failed (pasted as is, it would fail again). */
  resumeWithoutJq: string;
  /** Reads the batch: a file's check pass runs here, each valid line shown to `watch`. */
  read(watch?: CheckWatcher): Promise<BatchLines>;
  /** A file's lines read again from its start (its first ones are recorded). */
  reread(): AsyncIterable<NdjsonLine>;
  concurrency: number;
  /** new: refuse if an earlier run of this input is unfinished; resume: send only what it left; restart. */
  journal: JournalMode;
  /** --format as given (NDJSON is otherwise read off the input's first line). */
  format?: string | undefined;
}

/** The batch as it is sent; `seen` gives each line not keyed yet its key as the pool takes it, in input order. */
type Opened = {
  lines: AsyncIterable<NdjsonLine>;
  total: number | undefined;
  seen: Occurrences;
  journal: BatchJournal;
  others?: Awaited<ReturnType<typeof otherInputsLines>>;
};

export async function submitBatch(ctx: Context, input: BatchInput): Promise<BatchSummary> {
  const opened = await openBatch(ctx, input);
  const summary = await sendLines(ctx, input, opened).catch(async (error: unknown) => {
    await opened.journal.close();
    throw error;
  });
  await opened.journal.complete();
  // A second signal from here (its results still being written) ends the process at once: with nothing to resume.
  ctx.stopHint =
    'The batch had finished: every document was submitted and recorded; nothing is left to resume ' +
    '(--resume prints the results again, sending nothing)';
  return summary;
}

/** Opens the batch's journal: a file read through (its check pass) under its lock; standard input's first lines. */
async function openBatch(ctx: Context, input: BatchInput): Promise<Opened> {
  const { source } = input;
  const streamed = !source.reopenable;
  const creds = await ctx.credentials();
  const key = (await creds.apiKey())?.key;
  // Without a key every line would fail alike: said before anything is read or recorded, as any command does.
  if (key === undefined) throw new AuthError(`not logged in: ${creds.describe()}`);
  const options = {
    dir: stateDir(ctx.env),
    identity: await inputIdentity(source, ctx.runtime.cwd()),
    sourceName: source.name,
    mode: input.journal,
    streamed,
    destination: `key ${keyIdentity(key)}`,
  };
  const seen = new Occurrences();
  const ahead = streamed ? await readAhead((await input.read()).lines, seen, ctx.signal) : undefined;
  if (ahead !== undefined) {
    if (ctx.signal.aborted) throw interrupted(ctx.signal, input, NOTHING_SENT);
    // As a file's check pass says it (ndjson.ts), before anything is recorded.
    if (ahead.ended && ahead.head.length === 0) throw noDocuments(`${source.name} holds no documents`);
  }
  const records = await openBatchRecords(options);
  const batches = join(options.dir, 'batches');
  let opened: Opened;
  try {
    const comparison = records.compare();
    if (ahead !== undefined) {
      const head: LineKey[] = [];
      for (const line of ahead.head) {
        if (line.error !== undefined || line.key === undefined) continue;
        head.push(line.key);
        comparison.add(line.line, line.key);
      }
      // Are its first lines those an unfinished batch of another input (a file, or standard input read elsewhere)
      // sent? A plain run is refused then; --resume, when no batch of its own is found (it names the one to resume).
      const refuseIfOthers = async (resume: boolean) =>
        (await otherInputBatch(batches, source.name, options.identity, true))?.refuse(resume, head);
      if (input.journal === 'new') await refuseIfOthers(false);
      const journal = await records.open(comparison, head, ahead.ended).catch(async (error: unknown) => {
        if ((error as CliError).code === 'nothing_to_resume') await refuseIfOthers(true);
        throw error;
      });
      opened = { lines: ahead.lines, total: undefined, seen, journal };
    } else {
      // A file with no batch of its own: is it a moved file whose batch is unfinished?
      const moved =
        input.journal !== 'restart' && records.candidates.length === 0
          ? await otherInputBatch(batches, source.name, options.identity)
          : undefined;
      // Keys are needed before sending only to compare with earlier batches: then the check pass makes them.
      const watch: CheckWatcher | undefined =
        records.candidates.length === 0 && moved === undefined
          ? undefined
          : (line) => {
              line.key = keyOf(line.document, seen);
              comparison.add(line.line, line.key);
              moved?.add(line.key);
            };
      const batch = await input.read(watch);
      moved?.refuse(input.journal === 'resume');
      // Its first lines recorded: a file written again before any answer was recorded is known by them.
      const journal = await records.open(comparison, await fileHead(input.reread()));
      // The send pass counts again: in the room the check pass made if it counted, else in room made once for all.
      seen.clear();
      const counted = watch === undefined ? new Occurrences(batch.total) : seen;
      opened = { lines: batch.lines, total: batch.total, seen: counted, journal };
    }
  } catch (error) {
    records.release();
    throw error;
  }
  const { journal } = opened;
  noteOpened(ctx, journal, source.name, options.destination);
  if (journal.began !== undefined)
    opened.others = await otherInputsLines(batches, options.identity, journal.began, options.destination);
  return opened;
}

async function sendLines(ctx: Context, input: BatchInput, opened: Opened): Promise<BatchSummary> {
  const api = await ctx.api();
  const { source } = input;
  const { journal } = opened;
  const reporter = createReporter(ctx, opened.total);
  /** Standard input resumed: how its lines compare with the batch resumed, said once all were read. */
  const compared = { lines: 0, matched: 0, moved: 0, headOnly: 0 };
  let adopted = 0;
  // One pause for every worker: a 429 makes the whole batch wait as the service asked (rate-gate.ts).
  // Its lock taken over (this run hung past the lock's age, or held it from another host), it sends nothing more,
  // not even a retry after a pause.
  const gate = new RateGate(
    () => ctx.clock.now().getTime(),
    () => journal.lockLost(),
  );
  let stopReason: UsageError | undefined;
  let fatal: unknown;
  const overtaken = trackOvertaken(!input.continueOnError);
  // From here a stop's error gives the --resume command; a second signal, ending the process at once, too, with
  // the counts so far until the reporter's summary says them.
  ctx.stopHint = resumeHint(input);
  let inFlight = 0;
  ctx.onSecondSignal = () => {
    journal.writeNow();
    return reporter.counts(inFlight);
  };

  /** The batch's lock lost (taken over, or removed with its record): it stops, sending nothing more. */
  const stopLost = (): false => {
    const lost = journal.lockLost() as Error;
    fatal ??=
      lost instanceof CliError
        ? lost
        : new CliError(`stopped: ${lost.message}`, ExitCode.conflict, { code: 'batch_in_progress' });
    return false;
  };

  /** A bad line stops the batch (unless --continue-on-error) as it is taken, so no line after it is sent. */
  const admit = (line: NdjsonLine): boolean => {
    // Taken in the order of the input: the nth line of a body is its nth occurrence.
    giveKey(line, opened.seen);
    if (line.error === undefined || input.continueOnError) return true;
    if (stopReason === undefined) {
      stopReason = new UsageError(`${source.name}: ${atLine(line.line, line.error)}`, { code: 'invalid_input' });
      const error = { code: 'invalid_input', message: line.error };
      reporter.stoppedAt({ line: line.line, ok: false, error }, ExitCode.usage);
    }
    return false;
  };

  /** Sends one line (or reports it); false stops the batch. */
  const sendLine = async (line: NdjsonLine): Promise<boolean> => {
    if (line.error !== undefined) {
      const message = line.error;
      reporter.report({ line: line.line, ok: false, error: { code: 'invalid_input', message } }, ExitCode.usage);
      return true;
    }
    if (journal.lockLost() !== undefined) return stopLost();
    // The key (in the journal and the Idempotency-Key): the hash of the document sent, and its occurrence.
    const key = line.key as LineKey;
    compared.lines++;
    const own = journal.earlier.get(key);
    const earlier = own ?? opened.others?.made(key);
    if (earlier !== undefined) {
      const { document_id, token_count } = earlier;
      if (own === undefined) {
        adopted++;
        journal.record({ ...earlier, line: line.line });
      } else {
        compared.matched++;
        if (own.line !== line.line) {
          compared.moved++;
          // Where it stands now, so a later --resume counts only what moved after this run.
          journal.record({ ...own, line: line.line });
        }
      }
      overtaken.ok(line.line);
      reporter.report({ line: line.line, ok: true, document_id, token_count, resumed: true });
      return true;
    }
    // On disk before the request: a run killed from here on is known to have maybe made this line. A line sent once
    // the record cannot be written could not be recorded: the lines sent so far are what --resume knows.
    await journal.sending(key);
    const unrecorded = journal.writeFailure();
    if (unrecorded !== undefined) {
      fatal ??= unrecorded;
      return false;
    }
    // Stopped while its key was written: not sent, so not unanswered.
    if (ctx.signal.aborted) return false;
    overtaken.start(line.line);
    inFlight++;
    try {
      // The reader checked the line against a rule stricter than the contract's: the client does not again.
      const document = await api.call(
        createDocument,
        { body: line.document },
        {
          signal: ctx.signal,
          idempotencyKey: journal.idempotencyKey(key, opened.others?.sentBy(key)),
          rawBody: line.body,
          gate,
          neededOnly: true,
          bodyChecked: true,
        },
      );
      const { document_id, token_count } = document;
      journal.record({ line: line.line, hash: key.hash, n: key.n, document_id, token_count });
      overtaken.ok(line.line);
      reporter.report({ line: line.line, ok: true, document_id, token_count });
      return true;
    } catch (error) {
      // Its lock lost between two attempts: no answer was awaited (the last was a 429, not processed).
      if (error === journal.lockLost()) return stopLost();
      // A request that may have made a document without its answer: the batch cannot stop clean.
      if (ctx.signal.aborted || mayHaveCreated(error)) journal.unanswered();
      if (ctx.signal.aborted) {
        reporter.unanswered();
        return false;
      }
      overtaken.failed(line.line);
      const cli = error instanceof CliError ? error : undefined;
      const said = error instanceof Error ? error.message : String(error);
      // The service's field errors too: a batch's line has no lines of its own to list them on.
      const fields = error instanceof ApiError ? detailLines(error.detail, said).map((l) => l.replace(/^- /, '')) : [];
      const message = fields.length > 0 ? `${said}: ${fields.join('; ')}` : said;
      reporter.report(
        { line: line.line, ok: false, error: { code: cli?.code ?? 'error', message } },
        cli?.exitCode,
        cli?.hint,
      );
      return input.continueOnError;
    } finally {
      inFlight--;
    }
  };

  let finished: ReturnType<typeof reporter.finish>;
  /** The input was gone through to its end, nothing stopping it: a finished batch resumed may have had nothing to do. */
  let throughout = false;
  try {
    const pool = { concurrency: input.concurrency, signal: ctx.signal, slowSource: !source.reopenable, admit };
    const outcome = await runPool(opened.lines, pool, sendLine);
    // A read error (e.g. a line over the size limit, a file changed since it was checked) ends the batch.
    fatal ??= outcome.readError;
    if (fatal instanceof LineTooLongError) {
      const error = { code: fatal.code, message: fatal.message.replace(/^.*?: line \d+: /, '') };
      reporter.stoppedAt({ line: fatal.line, ok: false, error }, ExitCode.usage);
    }
    throughout = !outcome.stopped && !ctx.signal.aborted && fatal === undefined;
    // Standard input resumed and read to its end: how it compared (a file's was said before sending).
    if (journal.resumed && journal.compared === undefined && !outcome.stopped && !ctx.signal.aborted) {
      noteResume(ctx, 'resumed', compared, journal);
    }
    noteAdopted(ctx, adopted, opened.others?.from);
  } finally {
    // The summary says the counts from here; the journal is written until it is closed.
    ctx.onSecondSignal = () => void journal.writeNow();
    finished = reporter.finish(journal.finished && throughout);
  }
  const { summary, failures, jq } = finished;
  const { total } = opened;
  const of = total === undefined ? '' : ` of ${total}`;
  // Lines sent whose answer a stop cut off, said so that the counts add up.
  const { unanswered } = summary;
  const [they, them] = unanswered === 1 ? ['it', 'it'] : ['they', 'them'];
  const unansweredNote =
    unanswered === 0
      ? ''
      : `, ${unanswered} sent without an answer (${they} may have been created; --resume does not create ${them} twice)`;
  const progressNote = `${summary.submitted}${of} ${(total ?? summary.submitted) === 1 ? 'document was' : 'documents were'} submitted${unansweredNote}`;
  const badLine = stopReason ?? (fatal instanceof LineTooLongError ? fatal : undefined);
  // --jq failed on a result (its document was submitted): one error at the end, or a warning beside another.
  if (jq) {
    const message = `--jq: line ${jq.line}: ${jq.message}${jq.lines > 1 ? ` (and on ${jq.lines - 1} more ${jq.lines === 2 ? 'line' : 'lines'})` : ''}`;
    const hint =
      'the documents were submitted all the same (the summary counts them). ' +
      resumeHint(
        { ...input, resumeCommand: input.resumeWithoutJq },
        'Fix the filter',
        'adding --jq with the fixed filter, to print every result again, sending nothing twice',
      );
    if (ctx.signal.aborted || badLine || fatal !== undefined || summary.failed > 0) ctx.out.warn(message);
    else throw new CliError(message, ExitCode.error, { code: 'jq_error', hint });
  }
  if (ctx.signal.aborted) throw interrupted(ctx.signal, input, progressNote);
  // A failure more pressing than the bad line (a refused key, no service, ...) decides the exit code.
  if (badLine !== undefined && overBadInput(failures, summary)) {
    throw batchError(failures, summary, input, overtaken.afterFirstFailure(), badLine.message);
  }
  if (fatal !== undefined) {
    if (fatal instanceof CliError && fatal.hint === undefined) {
      const first =
        fatal.code === 'input_changed'
          ? 'Once the file is as it should be'
          : fatal.code === 'batch_in_progress'
            ? 'Once the run that took the batch over has ended'
            : 'Fix it';
      throw new CliError(`${fatal.message} (${progressNote})`, partlySent(fatal.exitCode, summary), {
        code: fatal.code,
        hint: resumeHint(input, first),
        cause: fatal,
      });
    }
    if (fatal instanceof CliError && partlySent(fatal.exitCode, summary) !== fatal.exitCode) {
      throw new CliError(fatal.message, ExitCode.error, { code: fatal.code, hint: fatal.hint, cause: fatal });
    }
    throw fatal;
  }
  if (stopReason) {
    // Nothing sent and no failure but the bad line itself.
    const hint =
      summary.submitted === 0 && summary.failed <= 1
        ? `nothing was submitted. ${readAsNdjson(source.name === STDIN_NAME ? 'Standard input' : source.name, input.format === undefined)}`
        : `${summary.submitted} ${summary.submitted === 1 ? 'document before it was' : 'documents before it were'} already submitted (${input.source.name} is read ` +
          `once, so its lines are checked as they are sent). ${resumeHint(input, 'Fix the line')}; or pass --continue-on-error.`;
    throw new CliError(stopReason.message, partlySent(ExitCode.usage, summary), { code: 'invalid_input', hint });
  }
  if (summary.failed > 0) throw batchError(failures, summary, input, overtaken.afterFirstFailure());
  return summary;
}

/** Lines after the first failed one submitted anyway: for each line in flight or failed, the later ones submitted. */
function trackOvertaken(enabled: boolean) {
  const later = new Map<number, number>();
  const failed = new Set<number>();
  return {
    start(line: number): void {
      if (enabled) later.set(line, 0);
    },
    ok(line: number): void {
      later.delete(line);
      for (const [earlier, count] of later) if (earlier < line) later.set(earlier, count + 1);
    },
    failed(line: number): void {
      if (later.has(line)) failed.add(line);
    },
    afterFirstFailure(): { line: number; submitted: number } | undefined {
      if (failed.size === 0) return undefined;
      const line = Math.min(...failed);
      return { line, submitted: later.get(line) as number };
    },
  };
}
