import { constants } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { CliError } from '../errors.js';
import { FORMAT, type Header, STARTED, STOPPED, stateError } from './batch-journal.js';
import { Acknowledged, type JournalEntry } from './line-keys.js';

/** Reading an earlier batch's journal (batch-journal.ts says what it holds), never through a symlink. */

const READ = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0);

export interface ReadJournal {
  header: Header;
  entries: Acknowledged;
  tornTail: boolean;
  mtimeMs: number;
  /** Whether its last run stopped cleanly (see the top of batch-journal.ts); not read for a finished record. */
  clean: boolean;
}

/**
 * The records of an earlier run (or only its header); a record cut short or unreadable is skipped (that
 * line is sent again); undefined for a journal gone or of another format.
 */
export async function readJournal(path: string, headerOnly: boolean): Promise<ReadJournal | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(path, READ);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw stateError(path, error);
  }
  try {
    const info = await handle.stat();
    const entries = new Acknowledged();
    let header: Partial<Header> | undefined;
    let clean = false;
    // Read as lines, streaming: a journal may be larger than a string can be.
    for await (const text of handle.readLines({ autoClose: false })) {
      if (header === undefined) {
        header = parse(text) as Partial<Header> | undefined;
        if (header?.facectl_batch !== FORMAT || typeof header.batch_id !== 'string') return undefined;
        if (headerOnly) break;
        continue;
      }
      if (text === STOPPED || text === STARTED) {
        clean = text === STOPPED;
        continue;
      }
      const entry = parse(text) as Partial<JournalEntry> | undefined;
      if (
        entry !== undefined &&
        Number.isSafeInteger(entry.line) &&
        typeof entry.hash === 'string' &&
        Number.isSafeInteger(entry.n) &&
        (entry.n as number) >= 1 &&
        typeof entry.document_id === 'string' &&
        typeof entry.token_count === 'number'
      ) {
        entries.add(entry as JournalEntry);
      }
    }
    if (header === undefined) return undefined;
    let tornTail = false;
    if (!headerOnly && info.size > 0) {
      const last = Buffer.alloc(1);
      await handle.read(last, 0, 1, info.size - 1);
      tornTail = last[0] !== 0x0a;
    }
    return { header: header as Header, entries, tornTail, mtimeMs: info.mtimeMs, clean };
  } catch (error) {
    throw error instanceof CliError ? error : stateError(path, error);
  } finally {
    await handle.close().catch(() => undefined);
  }
}

function parse(line: string | undefined): unknown {
  if (!line) return undefined;
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}
