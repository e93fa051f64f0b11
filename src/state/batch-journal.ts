import { constants, fstatSync, statSync, writeSync } from 'node:fs';
import { copyFile, type FileHandle, open, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { NOFOLLOW, writeAtomically } from '../config/file-store.js';
import { CliError } from '../errors.js';
import { FINISHED, FORMAT, type Header, pruneFinished, STARTED, STOPPED, UNFINISHED } from './batch-read.js';
import { stateError } from './batch-refusals.js';
import { Acknowledged, type Compared, type JournalEntry, keyText, type LineKey } from './line-keys.js';
import type { HeldLock } from './lock.js';

/**
 * The journal of an NDJSON batch, `<state>/batches/<input>.<batch>.ndjson`: a header, then the key of each line
 * before its first request (`{"sent":KEY}`, written at once: even a kill -9 leaves what it may have made known) and
 * one record per acknowledged document (a torn last line ignored), written in groups (an awaited write per answer
 * cost a tenth of a bulk submit's time). Finished, it is renamed `.finished`. A run that stops with every request
 * answered ends with STOPPED: without it the batch may have made documents it has no record of.
 */

export type { JournalMode } from './line-keys.js';

const SYNC_INTERVAL_MS = 1000;
const WRITE_INTERVAL_MS = 100;

const APPEND = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | NOFOLLOW;

interface JournalStart {
  dir: string;
  input: string;
  batchId: string;
  held: HeldLock;
  resumed?: { path: string; finished: boolean; tornTail: boolean; acknowledged: Acknowledged };
  /** When the batch gone on with began (resumed, or sent again with another key). */
  began: string | undefined;
  /** The keys that batch sent: under its own keys again, whichever batch answered for them since. */
  sentBefore: ReadonlySet<string> | undefined;
  /** Records finished since that batch began were pruned: lines they made may be made again. */
  pruned: boolean;
  header?: Omit<Header, 'facectl_batch' | 'batch_id'>;
  compared: Compared | undefined;
  replaced: string[];
  movedFrom?: string;
  restarted: { recorded: number; present: number | undefined };
  /** A plain run of an input that begins as a finished batch of it did: when that batch began. */
  repeats: string | undefined;
  /** Standard input: the lock other runs choose under, taken while the journal becomes a finished record. */
  finishing: (() => Promise<HeldLock>) | undefined;
  lockLost: () => Error | undefined;
}

export async function startJournal(start: JournalStart) {
  const { resumed, batchId } = start;
  const path = join(start.dir, `${start.input}.${batchId}.${UNFINISHED}`);
  let handle: FileHandle;
  try {
    if (resumed !== undefined) {
      if (resumed.finished) {
        // A copy, so the finished record stays as it was until this run finishes too.
        await copyFile(resumed.path, `${path}.${process.pid}.tmp`, constants.COPYFILE_EXCL);
        await rename(`${path}.${process.pid}.tmp`, path);
      }
      handle = await open(path, APPEND, 0o600);
      await handle.chmod(0o600);
      const torn = resumed.tornTail && !resumed.finished ? '\n' : '';
      // On disk before the first request: a kill from here on leaves the batch unclean.
      await handle.writeFile(`${torn}${STARTED}\n`);
      await handle.datasync();
    } else {
      // Whole or an error, as the configuration file is written: a torn header leaves the batch unknown to --resume.
      const header = `${JSON.stringify({ facectl_batch: FORMAT, batch_id: batchId, ...start.header })}\n`;
      writeAtomically(path, header, join(start.dir, `${start.input}.${process.pid}.tmp`));
      handle = await open(path, APPEND, 0o600);
    }
  } catch (error) {
    start.held.release();
    throw stateError(path, error, resumed !== undefined);
  }
  const finishedPath = join(start.dir, `${start.input}.${batchId}.${FINISHED}`);
  let queued: string[] = [];
  /** The records of the write in flight, and whether the file is closed: for writeNow. */
  let inWrite = '';
  let closed = false;
  let writing: Promise<void> = Promise.resolve();
  let failure: unknown;
  let unsynced = false;
  let lastSync = Date.now();
  const write = async (sync: boolean): Promise<void> => {
    try {
      if (queued.length > 0) {
        inWrite = queued.join('');
        queued = [];
        await handle.writeFile(inWrite);
        inWrite = '';
        unsynced = true;
      }
      if (unsynced && (sync || Date.now() - lastSync >= SYNC_INTERVAL_MS)) {
        unsynced = false;
        lastSync = Date.now();
        await handle.datasync();
      }
    } catch (error) {
      failure ??= stateError(path, error, true);
    }
  };
  const flush = async (sync = true): Promise<void> => {
    writing = writing.then(() => write(sync));
    await writing;
    if (failure !== undefined) throw failure;
  };
  let scheduled = false;
  let unanswered = 0;
  let sent: string[] = [];
  let sentWritten: Promise<void> | undefined;
  const writeSent = () => {
    sentWritten = undefined;
    if (sent.length === 0 || closed) return;
    const text = Buffer.from(sent.join(''));
    sent = [];
    try {
      // A write cut short (a full disk, ulimit -f) says so only when the rest is written: none of these lines is sent.
      for (let at = 0; at < text.length;) at += writeSync(handle.fd, text, at);
      // Removed, moved or replaced (rm -rf or mv of the state directory): writes to the file still succeed, but no
      // later run finds them where the record was.
      if (statSync(path).ino !== fstatSync(handle.fd).ino)
        throw Object.assign(new Error('replaced'), { code: 'ENOENT' });
    } catch (error) {
      failure ??= stateError(path, error, true);
    }
  };
  const closeFile = () => {
    writeSent();
    closed = true;
    return handle.close().catch(() => undefined);
  };
  const release = async () => {
    await closeFile();
    start.held.release();
  };

  return {
    path,
    earlier: resumed?.acknowledged ?? new Acknowledged(),
    resumed: resumed !== undefined,
    /** When the batch gone on with began: what other inputs' batches made since may be lines of it (otherBatches). */
    began: start.began,
    pruned: start.pruned,
    finished: resumed?.finished ?? false,
    /** For --resume of a file: how the whole input compares with the batch resumed. */
    compared: start.compared,
    ...(start.movedFrom === undefined ? {} : { movedFrom: start.movedFrom }),
    restarted: start.restarted,
    repeats: start.repeats,
    /** Of this batch if it sent the line before, else of the one that did (`sentBy`, a batch of another input). */
    idempotencyKey: (key: LineKey, sentBy?: string) =>
      `facectl-batch-${sentBy === undefined || start.sentBefore?.has(keyText(key)) ? batchId : sentBy}-${key.hash}-${key.n}`,
    record(entry: JournalEntry): void {
      const { line, hash, n, document_id, token_count } = entry;
      queued.push(`${JSON.stringify({ line, hash, n, document_id, token_count })}\n`);
      if (scheduled) return;
      scheduled = true;
      // One write per interval; the batch's end writes what is left, so the timer holds nothing open.
      setTimeout(() => {
        scheduled = false;
        flush(false).catch(() => undefined);
      }, WRITE_INTERVAL_MS).unref();
    },
    /**
     * A second signal ends the process at once: the records queued or in a write are written now, else --resume
     * sends again lines whose results were printed (a record twice is read once).
     */
    writeNow(): void {
      if (closed) return;
      try {
        writeSync(handle.fd, inWrite + queued.join(''));
      } catch {
        // the record holds what it holds: --resume sends the rest with the same idempotency keys
      }
    },
    /**
     * Awaited before a line's first request. The keys taken in one turn of the event loop go in one write, at its
     * end (a write per line cost about 3% of a bulk submit). A failure to write is the batch's (writeFailure), and
     * the line is not sent.
     */
    sending(key: LineKey): Promise<void> {
      sent.push(`{"sent":"${keyText(key)}"}\n`);
      return (sentWritten ??= new Promise((resolve) => setImmediate(() => resolve(writeSent()))));
    },
    /** A request whose outcome is not known (it may have created a document): the batch will not stop clean. */
    unanswered: () => void unanswered++,
    /** Renamed before the lock goes: the next run never sees a finished batch's journal as unfinished. */
    async complete(): Promise<void> {
      let choosing: HeldLock | undefined;
      try {
        await flush();
        await closeFile();
        // Best effort: without it, a run choosing at this very moment may miss this batch.
        choosing = await start.finishing?.().catch(() => undefined);
        await rename(path, finishedPath).catch((error: unknown) => {
          throw stateError(finishedPath, error);
        });
        for (const old of start.replaced)
          if (old !== finishedPath) await rm(old, { force: true }).catch(() => undefined);
        await pruneFinished(dirname(path), finishedPath);
      } finally {
        choosing?.release();
        await release();
      }
    },
    async close(): Promise<void> {
      try {
        // A run whose lock was taken over says nothing for the other. A stop (Ctrl-C, SIGTERM) with requests
        // unanswered is not clean, but not a kill either.
        if (start.lockLost() === undefined)
          queued.push(`${unanswered === 0 ? STOPPED : JSON.stringify({ stopped: true, unanswered })}\n`);
        await flush();
      } finally {
        await release();
      }
    },
    lockLost: start.lockLost,
    writeFailure: () => failure as CliError | undefined,
  };
}
export type BatchJournal = Awaited<ReturnType<typeof startJournal>>;
