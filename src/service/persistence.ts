import {
  closeSync,
  existsSync,
  fchmodSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { acquireLock, type HeldLock, LockHeldError } from '../state/lock.js';
import { randomBase62 } from './ids.js';
import {
  checkJournalLine,
  checkSnapshot,
  type JournalOp,
  type SnapshotCollections,
  STATE_FORMAT,
  STATE_VERSION,
  StateFileError,
} from './state-shape.js';

/**
 * `--data FILE`: a snapshot (FILE) plus an append-only journal (FILE.journal).
 *
 * Each mutating request appends one line to the journal, before its response is sent (the lines of one
 * event-loop turn are written together, see Store.commit),
 * so everything answered 2xx survives kill -9 (the write has reached the kernel). A line holds full
 * records (upserts) and deletes, which are idempotent: replaying a line that the snapshot already holds
 * changes nothing, so a crash between writing a snapshot and truncating the journal is harmless. The
 * journal is compacted into a new snapshot when it outgrows the snapshot, and on start and clean close,
 * so the cost of saving stays proportional to the change, not to the state. The journal is not fsynced
 * per request (that would cost milliseconds per write); an OS crash may lose the last writes, a process
 * crash does not. Every file is created with mode 0600.
 */

export type { JournalOp, SnapshotCollections } from './state-shape.js';

interface SnapshotFile {
  format: typeof STATE_FORMAT;
  version: typeof STATE_VERSION;
  saved_at: string;
  collections: SnapshotCollections;
}

const MIN_COMPACT_BYTES = 8 * 1024 * 1024;
/** A lock not refreshed for this long belongs to a serve that is gone (another host, container). */
const LOCK_STALE_MS = 30_000;

export class DataFile {
  readonly path: string;
  readonly journalPath: string;
  private readonly lockPath: string;
  private journalFd: number | null = null;
  private journalBytes = 0;
  private snapshotBytes = 0;
  private held: HeldLock | null = null;
  /** Set when another process took the lock from us (we stalled past its staleness): stop writing. */
  private compromised = false;

  constructor(path: string) {
    this.path = path;
    this.journalPath = `${path}.journal`;
    this.lockPath = `${path}.lock`;
  }

  /** Takes the lock, reads the snapshot and the journal. Throws, naming the file, on a corrupt one. */
  load(): { collections: SnapshotCollections; ops: JournalOp[] } {
    this.lock();
    this.removeLeftovers();
    let collections: SnapshotCollections = {};
    if (existsSync(this.path)) {
      const text = readFileSync(this.path, 'utf8');
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (error) {
        throw new StateFileError(
          `${this.path} is not a valid state file (${(error as Error).message}); it was left untouched`,
        );
      }
      collections = checkSnapshot(this.path, parsed);
    }
    const ops: JournalOp[] = [];
    if (existsSync(this.journalPath)) {
      const text = readFileSync(this.journalPath, 'utf8');
      const lines = text.split('\n');
      // The part after the last newline is a write that a crash cut short: it was never acknowledged.
      lines.pop();
      lines.forEach((line, index) => {
        if (line.length === 0) return;
        let parsed: unknown;
        try {
          parsed = JSON.parse(line);
        } catch {
          throw new StateFileError(`${this.journalPath} line ${index + 1} is corrupt; the files were left untouched`);
        }
        ops.push(...checkJournalLine(this.journalPath, index + 1, parsed));
      });
    }
    return { collections, ops };
  }

  /**
   * Appends each request's changes as one line, all lines with one write. `texts` holds the JSON of
   * texts already serialized (Store.noteJson): a record whose `content` is one of them is written with
   * that JSON instead of serializing the content again. The line is the same either way.
   */
  append(batch: JournalOp[][], texts: ReadonlyMap<string, string> = new Map()): void {
    const lines = batch.filter((ops) => ops.length > 0).map((ops) => `${opsLine(ops, texts)}\n`);
    if (lines.length === 0) return;
    this.checkLock();
    if (this.journalFd === null) {
      this.journalFd = openSync(this.journalPath, 'a', 0o600);
      fchmodSync(this.journalFd, 0o600);
      this.journalBytes = statSync(this.journalPath).size;
    }
    const line = Buffer.from(lines.join(''), 'utf8');
    let offset = 0;
    while (offset < line.length) offset += writeSync(this.journalFd, line, offset);
    this.journalBytes += line.length;
  }

  /** True when the journal is worth folding into a new snapshot. */
  wantsCompaction(): boolean {
    return this.journalBytes > Math.max(MIN_COMPACT_BYTES, this.snapshotBytes);
  }

  /** Writes a new snapshot atomically (temp file, fsync, rename, fsync of the directory), then empties the journal. */
  compact(collections: SnapshotCollections, now: Date): void {
    this.checkLock();
    const snapshot: SnapshotFile = {
      format: STATE_FORMAT,
      version: STATE_VERSION,
      saved_at: now.toISOString(),
      collections,
    };
    const data = Buffer.from(JSON.stringify(snapshot), 'utf8');
    const tmp = `${this.path}.tmp-${process.pid}-${randomBase62(6)}`;
    try {
      const fd = openSync(tmp, 'wx', 0o600);
      try {
        let offset = 0;
        while (offset < data.length) offset += writeSync(fd, data, offset);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(tmp, this.path);
    } catch (error) {
      try {
        unlinkSync(tmp);
      } catch {
        // nothing to clean up
      }
      throw error;
    }
    syncDirectory(dirname(this.path));
    this.snapshotBytes = data.length;
    if (this.journalFd === null) {
      // Truncate (or create) the journal; a stale one would otherwise be replayed again next start.
      writeFileSync(this.journalPath, '', { mode: 0o600 });
      this.journalFd = openSync(this.journalPath, 'a', 0o600);
    } else {
      ftruncateSync(this.journalFd, 0);
    }
    fchmodSync(this.journalFd, 0o600);
    this.journalBytes = 0;
  }

  /** Writing after another serve took the file over would destroy its state. */
  private checkLock(): void {
    if (this.compromised) throw new Error(`another process took over ${this.path}; this serve no longer writes it`);
  }

  close(): void {
    if (this.journalFd !== null) {
      closeSync(this.journalFd);
      this.journalFd = null;
    }
    this.unlock();
  }

  /**
   * Snapshots a killed process was writing (`FILE.tmp-<pid>-<random>`) were never renamed into place, so
   * nothing reads them; under the lock no other process is writing one, so they can go.
   */
  private removeLeftovers(): void {
    const prefix = `${basename(this.path)}.tmp-`;
    for (const name of readdirSync(dirname(this.path))) {
      if (name.startsWith(prefix)) rmSync(join(dirname(this.path), name), { force: true });
    }
  }

  /**
   * One `serve` per data file: two writers would interleave their journals and overwrite each other's
   * snapshots. The lock is src/state/lock.ts's (a directory `FILE.lock`, kept fresh by a heartbeat;
   * one left by a killed serve on this machine is taken over at once, one from elsewhere once stale).
   * A serve that is refused never took the lock, so it has nothing to release: it can never remove
   * the lock of the serve that runs.
   */
  private lock(): void {
    try {
      this.held = acquireLock(this.lockPath, {
        staleMs: LOCK_STALE_MS,
        onCompromised: () => {
          this.compromised = true;
        },
      });
    } catch (error) {
      if (error instanceof LockHeldError) {
        throw new DataFileInUse(
          `${this.path} is in use by another facectl serve${error.ownerPid ? ` (pid ${error.ownerPid})` : ''}`,
        );
      }
      throw error;
    }
  }

  private unlock(): void {
    this.held?.release();
    this.held = null;
  }
}

/** Another serve holds the data file. */
export class DataFileInUse extends Error {
  readonly code = 'EDATAINUSE';
}

const CONTENT_SLOT = '"content":null';

/**
 * JSON.stringify({ ops }), with the content of records whose content JSON is known spliced in: the
 * record serialized with content null has `"content":null` where the content goes (the same key
 * order); that sequence cannot occur earlier in it, since quotes inside string values are escaped.
 */
function opsLine(ops: JournalOp[], texts: ReadonlyMap<string, string>): string {
  if (texts.size === 0) return JSON.stringify({ ops });
  const parts = ops.map((op) => {
    const record = op[0] === 'put' ? (op[2] as { content?: unknown }) : undefined;
    const json = typeof record?.content === 'string' ? texts.get(record.content) : undefined;
    if (json === undefined) return JSON.stringify(op);
    const outline = JSON.stringify([op[0], op[1], { ...record, content: null }]);
    const at = outline.indexOf(CONTENT_SLOT);
    if (at < 0) return JSON.stringify(op);
    const cut = at + CONTENT_SLOT.length - 4;
    return outline.slice(0, cut) + json + outline.slice(cut + 4);
  });
  return `{"ops":[${parts.join(',')}]}`;
}

function syncDirectory(dir: string): void {
  try {
    const fd = openSync(dir, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Some file systems refuse fsync on a directory; the rename is still atomic there.
  }
}
