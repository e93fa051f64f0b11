import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { copyFile, type FileHandle, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { CliError, ExitCode } from '../errors.js';
import { Acknowledged, type Compared, type JournalEntry, type LineKey } from './line-keys.js';
import type { HeldLock } from './lock.js';

export { Acknowledged, bodyHash, type Compared, type JournalEntry, type LineKey } from './line-keys.js';

/**
 * The journal of an NDJSON batch, so that an interrupted or failed batch can be resumed without sending
 * a document twice, whatever was edited, added, removed or moved in its input since. Which batch a run
 * belongs to, and the locks, are batch-records.ts's.
 *
 * A journal is a file of the state directory's `batches/`, mode 0600, named by its input and its batch:
 * `<input>.<batch>.ndjson` (the input: 24 hex digits of the hash of a file's real path, or of standard
 * input's directory; one input may have several batches). Its header names the batch (and for standard
 * input keeps the keys of its first lines); then comes one record per document the service
 * acknowledged: the line's key (line-keys.ts: the hash of the body sent and its occurrence, `n`), the
 * line it stood on, `document_id` and `token_count`. Records are appended as answers arrive, written
 * together at most every 100 ms (a write per answer cost a tenth of a bulk submit's time), so a kill -9
 * of facectl loses at most the records of the last 100 ms; the file is synced to disk at most once a
 * second and when the batch ends. A record lost either way only means that line is sent again by
 * --resume, and answered by its idempotency record: nothing is created twice. A torn last line is
 * ignored when read. A journal of another format (`facectl_batch`) is not read.
 *
 * Every request of a batch carries an Idempotency-Key made of the batch id and the line's key. A line
 * whose answer was lost (interrupted mid-request, or its record not yet written) is sent again by
 * --resume with the same key, wherever it stands now, and the service answers with the document it
 * already made instead of creating a second one. A line edited since is a new body, so a new key.
 *
 * When every line of a batch was submitted, its journal is renamed `<input>.<batch>.finished`: the record
 * of a finished batch, so that --resume of it sends nothing (and reports its lines again). It replaces
 * the finished records of the same input (a file's every one; standard input's with the same first
 * lines), and only the KEEP_FINISHED most recent are kept.
 */

export type JournalMode = 'new' | 'resume' | 'restart';

const SYNC_INTERVAL_MS = 1000;
const WRITE_INTERVAL_MS = 100;
/** The records of finished batches kept (the most recent, by their last write); older ones are removed. */
export const KEEP_FINISHED = 20;
const FINISHED = 'finished';
const UNFINISHED = 'ndjson';
/** `<input>.<batch>.<ndjson|finished>`: the input's 24 hex digits, the batch id's 16 base64url characters. */
const RECORD_NAME = /^([0-9a-f]{24})\.([\w-]{16})\.(ndjson|finished)$/;

export interface BatchJournal {
  readonly path: string;
  /** Documents the earlier run(s) of this batch submitted; empty for a new batch. */
  readonly earlier: Acknowledged;
  /** Whether --resume found an earlier batch to continue. */
  readonly resumed: boolean;
  /** Whether that earlier batch had finished (every line submitted). */
  readonly finished: boolean;
  /** For --resume of a file: how the whole input compares with the batch resumed. */
  readonly compared: Compared | undefined;
  idempotencyKey(key: LineKey): string;
  record(entry: JournalEntry): void;
  /** A request whose outcome is not known (it may have created a document): the batch will not stop clean. */
  unanswered(): void;
  /** Resolves when every record so far is written and synced to disk. */
  flush(): Promise<void>;
  /** Every line was submitted: the journal becomes the batch's finished record. */
  complete(): Promise<void>;
  /** The batch stopped short: the journal stays for --resume, with a stop record unless a request went unanswered. */
  close(): Promise<void>;
  /** Set when the lock was taken away (this process stalled past its staleness): stop sending. */
  lockLost(): Error | undefined;
}

/** Files are never opened through a symlink; a temporary file is always a new one (O_EXCL). */
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const CREATE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW;
const APPEND = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | NOFOLLOW;

/** The journal's format (see the top of this file); 2 matched lines by number and is not read. */
export const FORMAT = 3;
/** A resumed run's first record, and a cleanly stopped run's last (see the top of this file). */
export const STARTED = JSON.stringify({ started: true });
export const STOPPED = JSON.stringify({ stopped: true });

export interface Header {
  facectl_batch: typeof FORMAT;
  batch_id: string;
  source: string;
  created_at: string;
  /** Standard input: the keys of the input's first lines, `[hash, n]`, so a run of the same input knows it. */
  head?: [string, number][];
}

/** A batch's journal, opened to write to: a new one, or an earlier batch's to go on with. */
export interface JournalStart {
  dir: string;
  input: string;
  batchId: string;
  /** The held lock that keeps other runs off this batch, released when the journal is. */
  held: HeldLock;
  /** The earlier batch resumed; else a new batch with this header. */
  resumed?: { path: string; finished: boolean; tornTail: boolean; acknowledged: Acknowledged };
  header?: Omit<Header, 'facectl_batch' | 'batch_id'>;
  compared: Compared | undefined;
  /** Finished records of the same input that this batch replaces when it finishes. */
  replaced: string[];
  /** Standard input: the lock other runs choose under, taken while the journal becomes a finished record. */
  finishing: (() => Promise<HeldLock>) | undefined;
  lockLost: () => Error | undefined;
}

/** A new batch's id: 16 base64url characters. */
export function newBatchId(): string {
  return randomBytes(12).toString('base64url');
}

/** The journal's path, unfinished or finished. */
function journalPath(dir: string, input: string, batchId: string, finished = false): string {
  return join(dir, `${input}.${batchId}.${finished ? FINISHED : UNFINISHED}`);
}

export async function startJournal(start: JournalStart): Promise<BatchJournal> {
  const { resumed, batchId } = start;
  const path = journalPath(start.dir, start.input, batchId);
  let handle: FileHandle;
  try {
    if (resumed !== undefined) {
      // A copy of the finished record becomes the journal (renamed into place whole), so the record
      // stays as it was until this run finishes too.
      if (resumed.finished) await copyWhole(resumed.path, path);
      handle = await open(path, APPEND, 0o600);
      await handle.chmod(0o600);
      // A torn last record (the process was killed mid-write) is ended so the next one starts clean.
      const torn = resumed.tornTail && !resumed.finished ? '\n' : '';
      // On disk before the first request: a kill from here on leaves the batch unclean (see the top).
      await handle.write(`${torn}${STARTED}\n`);
      await handle.datasync();
    } else {
      const fields = start.header as Omit<Header, 'facectl_batch' | 'batch_id'>;
      const header: Header = { facectl_batch: FORMAT, batch_id: batchId, ...fields };
      // Written whole to a temporary file and renamed: a reader never sees it half-written.
      const temp = join(start.dir, `${start.input}.${process.pid}.tmp`);
      const fresh = await open(temp, CREATE, 0o600);
      try {
        await fresh.write(`${JSON.stringify(header)}\n`);
        await fresh.datasync();
      } finally {
        await fresh.close();
      }
      await rename(temp, path);
      await syncDirectory(start.dir);
      handle = await open(path, APPEND, 0o600);
    }
  } catch (error) {
    start.held.release();
    throw stateError(path, error);
  }
  const finishedPath = journalPath(start.dir, start.input, batchId, true);
  return journal({
    ...start,
    path,
    finishedPath,
    handle,
    earlier: resumed?.acknowledged ?? new Acknowledged(),
    resumed: resumed !== undefined,
    finished: resumed?.finished ?? false,
    replaced: start.replaced.filter((other) => other !== finishedPath),
  });
}

type JournalParts = Omit<JournalStart, 'resumed' | 'header'> & {
  path: string;
  finishedPath: string;
  handle: FileHandle;
  earlier: Acknowledged;
  resumed: boolean;
  finished: boolean;
};

function journal(parts: JournalParts): BatchJournal {
  const { path, finishedPath, handle } = parts;
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
  let unanswered = 0;
  const release = async () => {
    await handle.close().catch(() => undefined);
    parts.held.release();
  };

  return {
    path,
    earlier: parts.earlier,
    resumed: parts.resumed,
    finished: parts.finished,
    compared: parts.compared,
    idempotencyKey: (key) => `facectl-batch-${parts.batchId}-${key.hash}-${key.n}`,
    record(entry) {
      const { line, hash, n, document_id, token_count } = entry;
      queued.push(`${JSON.stringify({ line, hash, n, document_id, token_count })}\n`);
      if (scheduled) return;
      scheduled = true;
      // One write for every answer that arrived in the interval. The batch's end writes what is left:
      // the timer does not hold the process up to WRITE_INTERVAL_MS after it.
      setTimeout(() => {
        scheduled = false;
        flush(false).catch(() => undefined);
      }, WRITE_INTERVAL_MS).unref();
    },
    unanswered() {
      unanswered++;
    },
    flush,
    async complete() {
      // The journal becomes the finished record before the lock goes: a run that takes the lock next
      // never sees a finished batch's journal as unfinished.
      let choosing: HeldLock | undefined;
      try {
        await flush();
        await handle.close().catch(() => undefined);
        // Best effort: without it, a run choosing at this very moment may miss this batch.
        choosing = await parts.finishing?.().catch(() => undefined);
        try {
          await rename(path, finishedPath);
        } catch (error) {
          throw stateError(finishedPath, error);
        }
        for (const old of parts.replaced) await rm(old, { force: true }).catch(() => undefined);
        await pruneFinished(dirname(path), finishedPath);
      } finally {
        choosing?.release();
        await release();
      }
    },
    async close() {
      try {
        // Clean: its records say all it submitted. A run whose lock was taken over says nothing for the other.
        if (unanswered === 0 && parts.lockLost() === undefined) queued.push(`${STOPPED}\n`);
        await flush();
      } finally {
        await release();
      }
    },
    lockLost: parts.lockLost,
  };
}

/** A new entry of `dir` made durable (best effort: not every system can sync a directory). */
async function syncDirectory(dir: string): Promise<void> {
  try {
    const handle = await open(dir, constants.O_RDONLY);
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // The entry is there for every other process all the same; only a power loss could lose it.
  }
}

/** `from` copied to `to` through a temporary file renamed into place: `to` is never half-written. */
async function copyWhole(from: string, to: string): Promise<void> {
  const temp = `${to}.${process.pid}.tmp`;
  await copyFile(from, temp, constants.COPYFILE_EXCL);
  await rename(temp, to);
}

/** The records of one input in the directory: each batch once (its unfinished journal before its finished record). */
export async function listRecords(
  dir: string,
  input: string,
): Promise<{ batchId: string; path: string; finished: boolean }[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    throw stateError(dir, error);
  }
  const records = new Map<string, { batchId: string; path: string; finished: boolean }>();
  for (const name of names.sort()) {
    const match = RECORD_NAME.exec(name);
    if (match?.[1] !== input) continue;
    const batchId = match[2] as string;
    const finished = match[3] === FINISHED;
    // A finished batch resumed again has both: its journal is the one that goes on.
    if (finished && records.get(batchId)?.finished === false) continue;
    records.set(batchId, { batchId, path: join(dir, name), finished });
  }
  return [...records.values()];
}

/**
 * Keeps the records of finished batches to the KEEP_FINISHED most recent (the one just written always
 * among them), so they cannot pile up however many inputs are submitted. Best effort: a record another
 * run is using or has removed is left to it.
 */
async function pruneFinished(dir: string, keep: string): Promise<void> {
  try {
    const names = (await readdir(dir)).filter((name) => name.endsWith(`.${FINISHED}`));
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

export function stateError(path: string, error: unknown): CliError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return new CliError(`cannot write the batch record ${path}: ${code ?? (error as Error).message}`, ExitCode.error, {
    code: 'state_unwritable',
    hint: 'check the permissions of that directory, or set FACECTL_STATE_DIR to a writable one',
    cause: error,
  });
}
