import { createHash, hash, randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { copyFile, mkdir, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Refusal } from '../config/file-safety.js';
import { stateDirectoryRefusal } from '../config/state-dir.js';
import { CliError, ExitCode, UsageError } from '../errors.js';
import { acquireLock, type HeldLock, LockHeldError } from './lock.js';

/**
 * The journal of an NDJSON batch, so that an interrupted or failed batch can be resumed without sending
 * a document twice.
 *
 * One file per input (a file by its real path; standard input by the working directory), under the
 * state directory's `batches/`, mode 0600: a header line naming the batch, then one line per document
 * the service acknowledged (`line`, a hash of the body sent, `document_id`, `token_count`). The header's
 * `facectl_batch` is the format, 2: bodies hashed as the request body's text as sent (bodyHash); a
 * journal of any other format is not resumed from (its lines are sent again). Records are
 * appended as answers arrive, written together at most every 100 ms (a write per answer cost a tenth
 * of a bulk submit's time), so a kill -9 of facectl loses at most the records of the last 100 ms; the
 * file is synced to disk at most once a second and when the batch ends. A record lost either way only
 * means that line is sent again by --resume, and answered by its idempotency record: nothing is
 * created twice. A torn last line is ignored when read.
 *
 * Every request of a batch carries an Idempotency-Key made of the batch id, the line number and the
 * body's hash. A line whose answer was lost (interrupted mid-request, or its record not yet written) is
 * sent again by --resume with the same key, and the service answers with the document it already made
 * instead of creating a second one. A line edited since is a different body, so a different key.
 *
 * When every line of the batch was submitted, the journal is renamed `<id>.finished`: the record of a
 * finished batch, so that --resume of it sends nothing (and reports its lines again); a plain run or
 * --restart starts a new batch, which replaces that record when it finishes. There is one such record
 * per input, and only the KEEP_FINISHED most recent are kept. A lock next to it (src/state/lock.ts:
 * a directory, kept fresh while the batch runs, removed only by its holder) keeps two invocations from
 * sending the same input at once: the second exits 5. A lock left by a killed run is taken over once
 * it has not been touched for STALE_SECONDS.
 */

export type JournalMode = 'new' | 'resume' | 'restart';

const SYNC_INTERVAL_MS = 1000;
const WRITE_INTERVAL_MS = 100;
const STALE_SECONDS = 10;
/** The records of finished batches kept (the most recent, by their last write); older ones are removed. */
export const KEEP_FINISHED = 20;
const FINISHED = '.finished';

export interface JournalEntry {
  line: number;
  hash: string;
  document_id: string;
  token_count: number;
}

export interface BatchJournal {
  readonly path: string;
  /** Documents the earlier run(s) of this batch submitted, by line; empty for a new batch. */
  readonly earlier: ReadonlyMap<number, JournalEntry>;
  /** Whether --resume found an earlier run to continue. */
  readonly resumed: boolean;
  /** Whether that earlier run had finished the batch (every line submitted). */
  readonly finished: boolean;
  idempotencyKey(line: number, hash: string): string;
  record(entry: JournalEntry): void;
  /** Resolves when every record so far is written and synced to disk. */
  flush(): Promise<void>;
  /** Every line was submitted: the journal becomes the batch's finished record. */
  complete(): Promise<void>;
  /** The batch stopped short: the journal stays for --resume. */
  close(): Promise<void>;
  /** Set when the lock was taken away (this process stalled past its staleness): stop sending. */
  lockLost(): Error | undefined;
}

/** Files are never opened through a symlink; a temporary file is always a new one (O_EXCL). */
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const CREATE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW;
const APPEND = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | NOFOLLOW;

/** The journal's format (see the top of this file). */
const FORMAT = 2;

interface Header {
  facectl_batch: typeof FORMAT;
  batch_id: string;
  source: string;
  created_at: string;
}

export interface OpenJournalOptions {
  /** The state directory (see stateDir). */
  dir: string;
  /** What identifies the input across runs: a file's real path, or standard input in a directory. */
  identity: string;
  /** For messages: the input as the user named it. */
  sourceName: string;
  mode: JournalMode;
  now?: () => Date;
}

/** The hash of a request body, as it is sent. */
export function bodyHash(body: string | Uint8Array): string {
  return hash('sha256', body, 'hex').slice(0, 32);
}

export async function openBatchJournal(options: OpenJournalOptions): Promise<BatchJournal> {
  const dir = join(options.dir, 'batches');
  const id = createHash('sha256').update(options.identity).digest('hex').slice(0, 24);
  const path = join(dir, `${id}.ndjson`);
  const lockPath = join(dir, `${id}.lock`);
  await privateDirectory(options.dir, dir);
  let lost: Error | undefined;
  const lock = takeLock(lockPath, options.sourceName, (error) => {
    lost = error;
  });
  try {
    return await openLocked(options, { path, finishedPath: join(dir, `${id}${FINISHED}`) }, lock, () => lost);
  } catch (error) {
    lock.release();
    throw error;
  }
}

async function openLocked(
  options: OpenJournalOptions,
  { path, finishedPath }: { path: string; finishedPath: string },
  lock: HeldLock,
  lockLost: () => Error | undefined,
): Promise<BatchJournal> {
  const unfinished = await readJournal(path);
  // No unfinished journal: --resume goes on from the batch's finished record, if there is one.
  const finished = unfinished === undefined && options.mode === 'resume' ? await readJournal(finishedPath) : undefined;
  const existing = unfinished ?? finished;
  const hasEarlier = existing !== undefined && existing.entries.size > 0;
  if (options.mode === 'new' && hasEarlier) {
    throw new UsageError(
      `an earlier batch of ${options.sourceName} stopped after ${existing.entries.size} of its documents were submitted`,
      {
        code: 'unfinished_batch',
        hint: `pass --resume to send only the lines not yet submitted, or --restart to send every line again (the record is ${path})`,
      },
    );
  }
  const resume = options.mode === 'resume' && existing !== undefined;
  let batchId: string;
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    if (resume) {
      batchId = existing.header.batch_id;
      // A copy of the finished record becomes the journal (renamed into place whole), so the record
      // stays as it was until this run finishes too.
      if (finished !== undefined) await copyWhole(finishedPath, path);
      handle = await open(path, APPEND, 0o600);
      await handle.chmod(0o600);
      // A torn last record (the process was killed mid-write) is ended so the next one starts clean.
      if (existing.tornTail) await handle.write('\n');
    } else {
      batchId = randomBytes(12).toString('base64url');
      const header: Header = {
        facectl_batch: FORMAT,
        batch_id: batchId,
        source: options.identity,
        created_at: (options.now?.() ?? new Date()).toISOString(),
      };
      // Written whole to a temporary file and renamed: an earlier record is replaced, never half-written.
      const temp = `${path}.${process.pid}.tmp`;
      const fresh = await open(temp, CREATE, 0o600);
      try {
        await fresh.write(`${JSON.stringify(header)}\n`);
        await fresh.datasync();
      } finally {
        await fresh.close();
      }
      await rename(temp, path);
      handle = await open(path, APPEND, 0o600);
    }
  } catch (error) {
    throw stateError(path, error);
  }

  let queued: string[] = [];
  let writing: Promise<void> = Promise.resolve();
  let failure: unknown;
  let unsynced = false;
  let lastSync = Date.now();
  const write = async (sync: boolean): Promise<void> => {
    try {
      if (queued.length > 0) {
        const text = queued.join('');
        queued = [];
        await handle.write(text);
        unsynced = true;
      }
      if (unsynced && (sync || Date.now() - lastSync >= SYNC_INTERVAL_MS)) {
        unsynced = false;
        lastSync = Date.now();
        await handle.datasync();
      }
    } catch (error) {
      failure ??= stateError(path, error);
    }
  };
  const flush = async (sync = true): Promise<void> => {
    writing = writing.then(() => write(sync));
    await writing;
    if (failure !== undefined) throw failure;
  };
  let scheduled = false;
  const release = async () => {
    await handle.close().catch(() => undefined);
    lock.release();
  };

  return {
    path,
    earlier: resume ? existing.entries : new Map(),
    resumed: resume,
    finished: resume && finished !== undefined,
    idempotencyKey: (line, hash) => `facectl-batch-${batchId}-${line}-${hash.slice(0, 16)}`,
    record(entry) {
      queued.push(`${JSON.stringify(entry)}\n`);
      if (scheduled) return;
      scheduled = true;
      // One write for every answer that arrived in the interval.
      setTimeout(() => {
        scheduled = false;
        flush(false).catch(() => undefined);
      }, WRITE_INTERVAL_MS);
    },
    flush,
    async complete() {
      // The journal becomes the finished record before the lock goes: a run that takes the lock next
      // never sees a finished batch's journal as unfinished.
      try {
        await flush();
        await handle.close().catch(() => undefined);
        try {
          await rename(path, finishedPath);
        } catch (error) {
          throw stateError(finishedPath, error);
        }
        await pruneFinished(dirname(path), finishedPath);
      } finally {
        await release();
      }
    },
    async close() {
      try {
        await flush();
      } finally {
        await release();
      }
    },
    lockLost,
  };
}

/** `from` copied to `to` through a temporary file renamed into place: `to` is never half-written. */
async function copyWhole(from: string, to: string): Promise<void> {
  const temp = `${to}.${process.pid}.tmp`;
  await copyFile(from, temp, constants.COPYFILE_EXCL);
  await rename(temp, to);
}

/**
 * Keeps the records of finished batches to the KEEP_FINISHED most recent (the one just written always
 * among them), so they cannot pile up however many inputs are submitted. Best effort: a record another
 * run is using or has removed is left to it.
 */
async function pruneFinished(dir: string, keep: string): Promise<void> {
  try {
    const names = (await readdir(dir)).filter((name) => name.endsWith(FINISHED));
    if (names.length <= KEEP_FINISHED) return;
    const records = await Promise.all(
      names
        .map((name) => join(dir, name))
        .filter((path) => path !== keep)
        .map(async (path) => ({
          path,
          mtimeMs: await stat(path).then(
            (s) => s.mtimeMs,
            () => 0,
          ),
        })),
    );
    records.sort((a, b) => b.mtimeMs - a.mtimeMs);
    for (const { path } of records.slice(KEEP_FINISHED - 1)) await rm(path, { force: true });
  } catch {
    // A record left over is only disk space; the batch itself finished.
  }
}

interface ReadJournal {
  header: Header;
  entries: Map<number, JournalEntry>;
  tornTail: boolean;
}

/** The records of an earlier run; a record cut short or unreadable is skipped (that line is sent again). */
async function readJournal(path: string): Promise<ReadJournal | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw stateError(path, error);
  }
  const lines = text.split('\n');
  const header = parse(lines[0]) as Partial<Header> | undefined;
  if (header?.facectl_batch !== FORMAT || typeof header.batch_id !== 'string') {
    return undefined;
  }
  const entries = new Map<number, JournalEntry>();
  for (const line of lines.slice(1)) {
    const entry = parse(line) as Partial<JournalEntry> | undefined;
    if (
      entry !== undefined &&
      Number.isSafeInteger(entry.line) &&
      typeof entry.hash === 'string' &&
      typeof entry.document_id === 'string' &&
      typeof entry.token_count === 'number'
    ) {
      entries.set(entry.line as number, entry as JournalEntry);
    }
  }
  return { header: header as Header, entries, tornTail: !text.endsWith('\n') };
}

function parse(line: string | undefined): unknown {
  if (!line) return undefined;
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

/** Only one facectl sends a given input at a time (exit 5 for the others); a killed run's lock is taken over. */
function takeLock(lockPath: string, sourceName: string, onCompromised: (error: Error) => void): HeldLock {
  try {
    return acquireLock(lockPath, { staleMs: STALE_SECONDS * 1000, onCompromised });
  } catch (error) {
    if (!(error instanceof LockHeldError)) throw stateError(lockPath, error);
    const who = error.ownerPid === undefined ? 'another facectl' : `another facectl (pid ${error.ownerPid})`;
    // The holder touches its lock every few seconds; a run killed with kill -9 no longer does.
    const seen = Math.floor(error.ageMs / 1000);
    const free = Math.max(STALE_SECONDS - seen, 1);
    throw new CliError(`${who} is submitting ${sourceName}`, ExitCode.conflict, {
      code: 'batch_in_progress',
      hint:
        `wait for it to finish or stop it; if it was killed, its lock (${lockPath}, last touched ${seen} s ago) ` +
        `is taken over once it is ${STALE_SECONDS} s old: run the command again in ${free} s`,
    });
  }
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

function stateError(path: string, error: unknown): CliError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return new CliError(`cannot write the batch record ${path}: ${code ?? (error as Error).message}`, ExitCode.error, {
    code: 'state_unwritable',
    hint: 'check the permissions of that directory, or set FACECTL_STATE_DIR to a writable one',
    cause: error,
  });
}
