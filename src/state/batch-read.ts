import { constants } from 'node:fs';
import { lstat, open, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { NOFOLLOW } from '../config/file-store.js';
import { CliError } from '../errors.js';
import { parsedOrUndefined } from '../io/output.js';
import { damaged, stateError, unreadable } from './batch-refusals.js';
import { Acknowledged, type JournalEntry } from './line-keys.js';

/** The batch records of a state directory as read: the journals (batch-journal.ts writes them) and finished records. */

export const KEEP_FINISHED = 20;
/** While a batch is unfinished, the most finished since it began that are kept (a batch left for good stops none). */
export const KEEP_UNFINISHED_SINCE = 200;
export const FINISHED = 'finished';
const PRUNED = 'pruned';
const WRITE_MARKER = constants.O_WRONLY | constants.O_CREAT | constants.O_NONBLOCK | NOFOLLOW;
export const UNFINISHED = 'ndjson';
const RECORD_NAME = /^([0-9a-f]{24})\.([\w-]{16})\.(ndjson|finished)$/;

/** Format 2 matched lines by number and is not read. */
export const FORMAT = 3;
export const STARTED = JSON.stringify({ started: true });
export const STOPPED = JSON.stringify({ stopped: true });

export interface Header {
  facectl_batch: typeof FORMAT;
  batch_id: string;
  source: string;
  created_at: string;
  /** Standard input: the keys of the input's first lines, `[hash, n]`, so a run of the same input knows it. */
  head?: [string, number][];
  destination?: string;
}

/** The records of one input in the directory: each batch once (its journal over its finished record, sorted after). */
export async function listRecords(dir: string, input: string) {
  const names = await readdir(dir).catch((error: unknown) => {
    throw stateError(dir, error);
  });
  const records = new Map<string, { batchId: string; path: string; finished: boolean }>();
  for (const name of names.sort()) {
    const match = RECORD_NAME.exec(name);
    if (match?.[1] !== input) continue;
    const batchId = match[2] as string;
    records.set(batchId, { batchId, path: join(dir, name), finished: match[3] === FINISHED });
  }
  return [...records.values()];
}

/**
 * The unfinished batches of inputs other than `identity` (files and standard input; an input may be one of them moved,
 * copied or cut): what each acknowledged, and sent when it did not stop cleanly (it may have made those), with its
 * file, or undefined for standard input, and whether that file is gone. `since`: finished ones finished after it too.
 */
export async function otherBatches(dir: string, identity: string, since?: string) {
  const found = [];
  for (const name of await readdir(dir).catch(() => [])) {
    const finished = name.endsWith(`.${FINISHED}`);
    if (!RECORD_NAME.test(name) || (finished && since === undefined)) continue;
    // Unreadable or damaged, it may hold lines of this input: refused (exit 1) rather than sent twice.
    const read = await readJournal(join(dir, name), false);
    const source = read?.header.source;
    if (read === undefined || source === undefined || source === identity) continue;
    // Finished before this batch began: another input's, not a part of this one run beside it.
    if (finished && read.mtimeMs <= Date.parse(since as string)) continue;
    const path = source.startsWith('file:') ? source.slice('file:'.length) : undefined;
    const input = path ?? `standard input read in ${source.replace(/^stdin:/, '')}`;
    const gone = path !== undefined && !(await stat(path).catch(() => undefined));
    found.push({
      record: join(dir, name),
      batchId: read.header.batch_id,
      destination: read.header.destination,
      path,
      name: input,
      gone,
      acknowledged: read.entries,
      // A finished batch had every line answered.
      sent: finished ? new Set<string>() : read.sent,
    });
  }
  return found;
}

/**
 * Keeps the KEEP_FINISHED most recent finished records, `keep` among them, and up to KEEP_UNFINISHED_SINCE finished
 * since an unfinished batch here began: its --resume reads them (otherBatches), else lines of it they made are made
 * again. Best effort.
 */
export async function pruneFinished(dir: string, keep: string): Promise<void> {
  try {
    const names = await readdir(dir);
    const finished = names.filter((name) => name.endsWith(`.${FINISHED}`));
    if (finished.length <= KEEP_FINISHED) return;
    let since = Infinity;
    for (const name of names.filter((name) => name.endsWith(`.${UNFINISHED}`))) {
      const began = (await readJournal(join(dir, name), true).catch(() => undefined))?.header.created_at;
      if (began !== undefined) since = Math.min(since, Date.parse(began));
    }
    const records = await Promise.all(
      finished
        .map((name) => join(dir, name))
        .filter((path) => path !== keep)
        .map(async (path) => ({ path, mtimeMs: (await stat(path).catch(() => undefined))?.mtimeMs ?? 0 })),
    );
    records.sort((a, b) => b.mtimeMs - a.mtimeMs);
    let lost = 0;
    for (const [i, { path, mtimeMs }] of records.entries()) {
      if (i < KEEP_FINISHED - 1 || (mtimeMs > since && i < KEEP_UNFINISHED_SINCE - 1)) continue;
      await rm(path, { force: true });
      if (mtimeMs > since) lost = Math.max(lost, mtimeMs);
    }
    // One an unfinished batch's --resume would read, removed all the same: the marker's time says when it finished.
    if (lost > (await prunedAt(dir))) {
      // Never through a symlink put there (it would empty and touch its target).
      const handle = await open(join(dir, PRUNED), WRITE_MARKER, 0o600);
      await handle.utimes(lost / 1000, lost / 1000).finally(() => handle.close());
    }
  } catch {
    // a record left over is only disk space
  }
}

/** Whether a record finished after `began` was pruned (past KEEP_UNFINISHED_SINCE): lines it made are not known. */
export const prunedSince = async (dir: string, began: string): Promise<boolean> =>
  (await prunedAt(dir)) > Date.parse(began);

/** The marker's time, if it is a file (a directory or FIFO put there says nothing). */
async function prunedAt(dir: string): Promise<number> {
  const info = await lstat(join(dir, PRUNED)).catch(() => undefined);
  return info?.isFile() ? info.mtimeMs : 0;
}

/**
 * An earlier run's records (or only its header), never through a symlink; undefined when gone or of another format.
 * Unreadable or damaged (its header gone), an error: what that batch submitted is not known.
 */
export async function readJournal(path: string, headerOnly: boolean) {
  // Not blocked by a FIFO put in its place (as an open of one with no writer would be): refused as not a file below.
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | NOFOLLOW).catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw unreadable(path, error);
  });
  if (handle === undefined) return undefined;
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw damaged(path, 'it is not a regular file');
    const entries = new Acknowledged();
    let header: Partial<Header> | undefined;
    let clean = false;
    /** Requests a stop left unanswered (its last marker); undefined for a clean stop or none (a kill). */
    let unanswered: number | undefined;
    /** The keys of the lines it sent (acknowledged or not); of a clean stop, none. */
    const sent = new Set<string>();
    // Read as lines, streaming: a journal may be larger than a string can be.
    for await (const text of handle.readLines({ autoClose: false })) {
      if (header === undefined) {
        header = parsedOrUndefined(text) as Partial<Header> | undefined;
        // Another version's record is passed over; one whose header is gone (emptied, overwritten) was damaged.
        if (typeof header?.facectl_batch === 'number' && header.facectl_batch !== FORMAT) return undefined;
        if (header?.facectl_batch !== FORMAT || typeof header.batch_id !== 'string') throw damaged(path);
        if (headerOnly) break;
        continue;
      }
      if (text.startsWith('{"sent":"')) {
        sent.add(text.slice(9, -2));
        continue;
      }
      if (text === STOPPED) {
        clean = true;
        unanswered = undefined;
        continue;
      }
      const entry = parsedOrUndefined(text) as
        | (Partial<JournalEntry> & {
            stopped?: unknown;
            unanswered?: unknown;
            started?: unknown;
          })
        | null;
      if (entry?.started === true) {
        clean = false;
        unanswered = undefined;
        continue;
      }
      if (entry?.stopped === true && Number.isSafeInteger(entry.unanswered)) {
        clean = false;
        unanswered = entry.unanswered as number;
        continue;
      }
      if (
        typeof entry?.hash === 'string' &&
        Number.isSafeInteger(entry.line) &&
        Number.isSafeInteger(entry.n) &&
        (entry.n as number) >= 1 &&
        typeof entry.document_id === 'string' &&
        typeof entry.token_count === 'number'
      ) {
        entries.add(entry as JournalEntry);
      }
    }
    if (header === undefined) throw damaged(path);
    const tornTail =
      !headerOnly && info.size > 0 && (await handle.read(Buffer.alloc(1), 0, 1, info.size - 1)).buffer[0] !== 0x0a;
    // Stopped cleanly, every line it sent was answered: only one stopped short may have made lines it did not record.
    return {
      header: header as Header,
      entries,
      tornTail,
      mtimeMs: info.mtimeMs,
      clean,
      unanswered,
      sent: clean ? new Set<string>() : sent,
    };
  } catch (error) {
    throw error instanceof CliError ? error : unreadable(path, error);
  } finally {
    await handle.close().catch(() => undefined);
  }
}
