import { createHash } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Refusal } from '../config/file-safety.js';
import { stateDirectoryRefusal } from '../config/state-dir.js';
import { CliError, ExitCode, UsageError } from '../errors.js';
import {
  type BatchJournal,
  type JournalMode,
  listRecords,
  newBatchId,
  startJournal,
  stateError,
} from './batch-journal.js';
import { readJournal } from './journal-read.js';
import { type Acknowledged, type Compared, type LineKey, keyText } from './line-keys.js';
import { acquireLock, type HeldLock, LockHeldError, waitForLock } from './lock.js';

/**
 * Which batch a run of `docs submit` belongs to, decided by content: the input's lines (a file's every
 * line, from the check pass that reads it before anything is sent; standard input's first lines, read
 * ahead) are compared with what each earlier batch of the same input acknowledged (batch-journal.ts).
 *
 * - A plain run is refused (exit 2) when its lines overlap what an unfinished batch acknowledged, or
 *   when an unfinished batch of the same input did not stop cleanly (killed, or a request left without
 *   an answer: batch-journal.ts): what that one made cannot be told from its records. Else it is a new
 *   batch, and the other stays resumable (an earlier run of the same input that stopped cleanly with no
 *   answer recorded is replaced).
 * - --resume goes on with the unfinished batch a plain run is refused for, if any; else with the batch
 *   it overlaps most (unfinished or finished); a file's unfinished batch even when no line is
 *   recognized. None: a new batch, said so.
 * - --restart drops the unfinished batches of the same input and starts a new one.
 *
 * Locks (lock.ts: a directory, kept fresh while its holder runs, removed only by it) keep two
 * invocations from sending the same input at once: the second exits 5. A file has one lock, held for the
 * whole run, so the same file is never sent twice at once. Standard input has one per batch, held for the
 * run, and one for its directory, held only while a run chooses its batch (and while one becomes a
 * finished record): two runs of different input in one directory both run; two of the same input (their
 * first lines in common) cannot. A lock left by a killed run is taken over once its process is gone or
 * it has not been touched for STALE_SECONDS.
 */

const STALE_SECONDS = 10;
/** How long a run of standard input waits for another to finish choosing its batch. */
const CHOOSING_WAIT_MS = (STALE_SECONDS + 5) * 1000;

export interface OpenRecordsOptions {
  /** The state directory (see stateDir). */
  dir: string;
  /** What identifies the input across runs: a file's real path, or standard input in a directory. */
  identity: string;
  /** For messages: the input as the user named it. */
  sourceName: string;
  mode: JournalMode;
  /** Read once as it comes (standard input, a pipe): compared by its first lines, one lock per batch. */
  streamed: boolean;
  now?: () => Date;
}

/** An earlier batch of the input. */
export interface Candidate {
  readonly batchId: string;
  readonly path: string;
  readonly finished: boolean;
  readonly acknowledged: Acknowledged;
  /** keyText of the first lines of its input (standard input only). */
  readonly head: ReadonlySet<string>;
  readonly mtimeMs: number;
  readonly tornTail: boolean;
  /** Its last run stopped cleanly: its records say all it submitted (batch-journal.ts). */
  readonly clean: boolean;
  /** Standard input: set when another facectl is sending this batch now. */
  busy?: LockHeldError;
  /** Standard input: this batch's lock, taken while choosing (it was free). */
  lock?: HeldLock;
}

/** The earlier batches a run is compared with, under the input's lock, until it opens its journal. */
export interface BatchRecords {
  /** Earlier batches the input's lines are to be compared with; none: no key need be known before sending. */
  readonly candidates: readonly Candidate[];
  /** A comparison to feed every line (a file) or the first lines (standard input) to. */
  compare(): Comparison;
  /** Chooses the batch (or refuses, exit 2 or 5) and opens its journal; `head`: standard input's first keys. */
  open(comparison: Comparison, head?: readonly LineKey[]): Promise<BatchJournal>;
  /** Lets go of the locks when the run ends before open. */
  release(): void;
}

/** Each line's key set against every candidate. */
export class Comparison {
  readonly results: Compared[];

  constructor(private readonly candidates: readonly Candidate[]) {
    this.results = candidates.map(() => ({ lines: 0, matched: 0, moved: 0, headOnly: 0 }));
  }

  add(line: number, key: LineKey): void {
    for (let i = 0; i < this.candidates.length; i++) {
      const candidate = this.candidates[i] as Candidate;
      const result = this.results[i] as Compared;
      result.lines++;
      const earlier = candidate.acknowledged.get(key);
      if (earlier !== undefined) {
        result.matched++;
        if (earlier.line !== line) result.moved++;
      } else if (candidate.head.has(keyText(key))) result.headOnly++;
    }
  }
}

/**
 * Takes the input's lock (a file: for the whole run, exit 5 when held; standard input: while choosing,
 * waiting for another run that chooses) and reads the earlier batches the run is to be compared with:
 * the unfinished ones, and for --resume the finished ones too (for standard input, the first lines of
 * every finished one, to replace a finished record of the same input).
 */
export async function openBatchRecords(options: OpenRecordsOptions): Promise<BatchRecords> {
  const dir = join(options.dir, 'batches');
  const input = createHash('sha256').update(options.identity).digest('hex').slice(0, 24);
  await privateDirectory(options.dir, dir);
  let lost: Error | undefined;
  const onLost = (error: Error) => {
    lost = error;
  };
  const inputLockPath = join(dir, `${input}.lock`);
  const inputLock = options.streamed
    ? await waitForChoosing(inputLockPath, options.sourceName)
    : takeLock(inputLockPath, options.sourceName, onLost);
  const candidates: Candidate[] = [];
  const release = () => {
    for (const candidate of candidates) candidate.lock?.release();
    inputLock.release();
  };
  try {
    const found = await listRecords(dir, input);
    /** Finished records of a file, replaced by the next finished batch of it. */
    const fileFinished = options.streamed ? [] : found.filter((r) => r.finished).map((r) => r.path);
    for (const record of found) {
      const wanted = !record.finished || options.mode === 'resume' || options.streamed;
      if (!wanted) continue;
      // Finished records of standard input are told apart by their first lines; the rest is read for --resume.
      const headerOnly = record.finished && options.mode !== 'resume';
      let lock: HeldLock | undefined;
      let busy: LockHeldError | undefined;
      if (options.streamed && !record.finished) {
        try {
          lock = acquireLock(join(dir, `${input}.${record.batchId}.lock`), {
            staleMs: STALE_SECONDS * 1000,
            onCompromised: onLost,
          });
        } catch (error) {
          if (!(error instanceof LockHeldError)) throw stateError(dir, error);
          busy = error;
        }
      }
      const read = await readJournal(record.path, headerOnly).catch((error: unknown) => {
        lock?.release();
        throw error;
      });
      if (read === undefined || read.header.batch_id !== record.batchId) {
        lock?.release();
        continue;
      }
      candidates.push({
        batchId: record.batchId,
        path: record.path,
        finished: record.finished,
        acknowledged: read.entries,
        head: new Set((read.header.head ?? []).map(([hash, n]) => keyText({ hash, n }))),
        mtimeMs: read.mtimeMs,
        tornTail: read.tornTail,
        clean: read.clean,
        ...(busy ? { busy } : {}),
        ...(lock ? { lock } : {}),
      });
    }
    const opened = {
      dir,
      input,
      inputLock,
      fileFinished,
      lost: () => lost,
      onLost,
    };
    return {
      candidates,
      compare: () => new Comparison(candidates),
      open: async (comparison, head) => {
        try {
          return await choose(options, opened, candidates, comparison, head);
        } catch (error) {
          release();
          throw error;
        }
      },
      release,
    };
  } catch (error) {
    release();
    throw error;
  }
}

interface Opened {
  dir: string;
  input: string;
  inputLock: HeldLock;
  fileFinished: string[];
  lost: () => Error | undefined;
  onLost: (error: Error) => void;
}

async function choose(
  options: OpenRecordsOptions,
  opened: Opened,
  candidates: readonly Candidate[],
  comparison: Comparison,
  head: readonly LineKey[] | undefined,
): Promise<BatchJournal> {
  const scored = candidates.map((candidate, i) => {
    const compared = comparison.results[i] as Compared;
    return { candidate, compared, any: compared.matched + compared.headOnly };
  });
  // Another facectl sends this very input now (standard input: their first lines in common).
  const busy = scored.find((s) => s.candidate.busy !== undefined && s.any > 0)?.candidate.busy;
  if (busy !== undefined) throw inProgress(busy, options.sourceName);

  let chosen: (typeof scored)[number] | undefined;
  let dropped: Candidate[] = [];
  // The same input: a file's every batch; standard input's that share its first lines.
  const sameInput = (s: (typeof scored)[number]) => s.any > 0 || !options.streamed;
  const unfinished = scored.filter((s) => !s.candidate.finished && s.candidate.busy === undefined);
  const stopped = unfinished
    .filter((s) => s.compared.matched > 0)
    .sort((a, b) => b.compared.matched - a.compared.matched)[0];
  // Killed, or stopped with a request unanswered: it may have made documents it has no record of.
  const unclean = unfinished.find((s) => !s.candidate.clean && sameInput(s));
  // The batch a plain run is refused for, which --resume then goes on with.
  const blocking = stopped ?? unclean;
  if (options.mode === 'new') {
    if (blocking !== undefined) {
      const done = blocking.candidate.acknowledged.size;
      const what =
        stopped !== undefined
          ? `stopped after ${done} of its documents were submitted`
          : `did not stop cleanly (it was killed, or left a request unanswered), so it may have submitted lines it has no record of (${done} recorded)`;
      throw new UsageError(`an earlier batch of ${options.sourceName} ${what}`, {
        code: 'unfinished_batch',
        hint: `pass --resume to send only the lines not yet submitted, or --restart to send every line again (the record is ${blocking.candidate.path})`,
      });
    }
    // An earlier run of the same input that stopped cleanly with no answer recorded made nothing:
    // this batch takes its place.
    dropped = unfinished
      .filter((s) => s.candidate.clean && s.candidate.acknowledged.size === 0 && sameInput(s))
      .map((s) => s.candidate);
  } else if (options.mode === 'restart') {
    // A file's earlier runs are replaced; standard input's, those of the same input.
    dropped = scored.filter((s) => !s.candidate.finished && sameInput(s)).map((s) => s.candidate);
  } else if (blocking !== undefined) {
    // The batch a plain run is refused for, even when a finished one overlaps more (a plain run of a
    // finished input, stopped): else it would stay, and a plain run would stay refused.
    chosen = blocking;
  } else {
    // The batch that overlaps most; among equals an unfinished one, then the most recent. A file's
    // unfinished batch is resumed even when none of its lines is recognized (it may have stopped before
    // its first answer was recorded, with lines applied in flight): its keys are those of content, so
    // nothing is taken for what it is not. Standard input in a directory is too weak a name for that.
    chosen = scored
      .filter((s) => s.candidate.busy === undefined && (s.any > 0 || (!options.streamed && !s.candidate.finished)))
      .sort(
        (a, b) =>
          b.any - a.any ||
          Number(a.candidate.finished) - Number(b.candidate.finished) ||
          b.candidate.mtimeMs - a.candidate.mtimeMs,
      )[0];
  }
  // Finished records of the same input, replaced when this batch finishes: a file's every one; standard
  // input's that share its first lines.
  const replaced = options.streamed
    ? scored.filter((s) => s.candidate.finished && s.any > 0).map((s) => s.candidate.path)
    : opened.fileFinished;

  for (const candidate of candidates)
    if (candidate !== chosen?.candidate && !dropped.includes(candidate)) candidate.lock?.release();
  const resumed = chosen?.candidate;
  const batchId = resumed?.batchId ?? newBatchId();
  let held: HeldLock;
  try {
    // Standard input: its batch's lock (a new batch's is free: its id is new). A file: the file's.
    held = options.streamed
      ? (resumed?.lock ??
        takeLock(join(opened.dir, `${opened.input}.${batchId}.lock`), options.sourceName, opened.onLost))
      : opened.inputLock;
    for (const candidate of dropped) {
      await rm(candidate.path, { force: true }).catch((error: unknown) => {
        if (held !== opened.inputLock) held.release();
        throw stateError(candidate.path, error);
      });
      candidate.lock?.release();
    }
    return await startJournal({
      dir: opened.dir,
      input: opened.input,
      batchId,
      held,
      ...(resumed === undefined
        ? {
            header: {
              source: options.identity,
              created_at: (options.now?.() ?? new Date()).toISOString(),
              ...(head === undefined ? {} : { head: head.map((key) => [key.hash, key.n] as [string, number]) }),
            },
          }
        : { resumed }),
      compared: options.streamed ? undefined : chosen?.compared,
      replaced,
      finishing: options.streamed ? () => waitForChoosing(opened.inputLock.path, options.sourceName) : undefined,
      lockLost: opened.lost,
    });
  } finally {
    // Standard input: the choice is made and its journal exists; other runs may choose now.
    if (options.streamed) opened.inputLock.release();
  }
}

/** Only one facectl sends a given input at a time (exit 5 for the others); a killed run's lock is taken over. */
function takeLock(lockPath: string, sourceName: string, onCompromised: (error: Error) => void): HeldLock {
  try {
    return acquireLock(lockPath, { staleMs: STALE_SECONDS * 1000, onCompromised });
  } catch (error) {
    if (!(error instanceof LockHeldError)) throw stateError(lockPath, error);
    throw inProgress(error, sourceName);
  }
}

/** Standard input: waits while another run of the same directory chooses its batch (a moment). */
async function waitForChoosing(lockPath: string, sourceName: string): Promise<HeldLock> {
  try {
    return await waitForLock(lockPath, { staleMs: STALE_SECONDS * 1000, waitMs: CHOOSING_WAIT_MS });
  } catch (error) {
    if (!(error instanceof LockHeldError)) throw stateError(lockPath, error);
    throw inProgress(error, sourceName);
  }
}

function inProgress(error: LockHeldError, sourceName: string): CliError {
  const who = error.ownerPid === undefined ? 'another facectl' : `another facectl (pid ${error.ownerPid})`;
  // The holder touches its lock every few seconds; a run killed with kill -9 no longer does.
  const seen = Math.floor(error.ageMs / 1000);
  const free = Math.max(STALE_SECONDS - seen, 1);
  return new CliError(`${who} is submitting ${sourceName}`, ExitCode.conflict, {
    code: 'batch_in_progress',
    hint:
      `wait for it to finish or stop it; if it was killed, its lock (${error.lockPath}, last touched ${seen} s ago) ` +
      `is taken over once it is ${STALE_SECONDS} s old: run the command again in ${free} s`,
  });
}

/** The state directory and its `batches/` are checked (state-dir.ts) before anything is written there. */
async function privateDirectory(stateDir: string, dir: string): Promise<void> {
  refuse(stateDirectoryRefusal(stateDir));
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw stateError(dir, error);
  }
  refuse(stateDirectoryRefusal(dir, 'batch record directory'));
}

function refuse(refusal: Refusal | undefined): void {
  if (!refusal) return;
  throw new CliError(`refusing to write batch records: ${refusal.problem}; nothing was sent`, ExitCode.error, {
    code: 'state_unsafe',
    hint: refusal.fix,
  });
}
