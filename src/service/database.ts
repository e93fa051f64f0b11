import { chmodSync, closeSync, openSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import Database from 'libsql';
import { CliError, ExitCode } from '../errors.js';
import { APPLICATION_ID, MIGRATIONS } from './schema.js';

// Why each setting (exclusive locking, WAL, synchronous=NORMAL, the temporary one): docs/local-service-choices.md.

export type Connection = Database.Database;

export class DataFileInUse extends Error {
  readonly code = 'EDATAINUSE';
}

/** A state file, journal or database that this serve cannot load. */
export class StateFileError extends Error {
  readonly code = 'EBADSTATE';
  /** What to do, when not the usual (another --data file, or the facectl that wrote it). */
  readonly hint: string | undefined;

  constructor(message: string, options?: ErrorOptions & { hint?: string }) {
    super(message, options);
    this.hint = options?.hint;
  }
}

const sqliteCode = (error: unknown): string | undefined => {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : undefined;
};

/** What SQLite said when it could not write (no room, a size limit, a failing disk), along the causes. */
export function writeFailure(error: unknown): string | undefined {
  for (let e = error; e instanceof Error; e = e.cause) {
    const code = sqliteCode(e);
    if (code === 'SQLITE_FULL') return 'no room: database or disk is full';
    if (code?.startsWith('SQLITE_IOERR')) return 'disk I/O error';
  }
  return undefined;
}

/** An error of the database (a failed write among them), not of the service's code. */
export const isDatabaseError = (error: unknown): boolean => sqliteCode(error) !== undefined;

/**
 * A connection to `file` holding its lock (a missing one is made, mode 0600, which SQLite gives its WAL
 * too), or null when it is no SQLite database (an old JSON state file). Without a file: a temporary one.
 */
export function connect(file?: string): Connection | null {
  if (file === undefined) {
    const db = new Database(':memory:', { timeout: 0 });
    db.exec('PRAGMA temp_store = FILE');
    db.exec("ATTACH '' AS state");
    // A commit writes no page of it until a quarter of its cache holds changes (a named file writes 6 per
    // document at each commit); each commit walks the changed pages (16 MiB: 32 µs more each).
    db.exec('PRAGMA state.journal_mode = MEMORY');
    db.exec('PRAGMA state.cache_size = -4096');
    db.exec(MIGRATIONS.join('').replace(/CREATE (TABLE|INDEX) /g, 'CREATE $1 state.'));
    return db;
  }
  // Made with its mode (SQLite would give it the umask's); one another serve made at this very moment is
  // theirs too, and the lock below decides which of the two runs.
  try {
    closeSync(openSync(file, 'wx', 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  // Serves started at once on a new file can each take its read lock before either makes it a database, and
  // all are refused: while the file is empty, the one refused tries again after a few random milliseconds, for
  // at most CREATION_WAIT_MS (docs/local-service-choices.md). A file with content (a database) is refused at once.
  for (const deadline = Date.now() + CREATION_WAIT_MS; ;) {
    try {
      return open(file);
    } catch (error) {
      const size = statSync(file, { throwIfNoEntry: false })?.size ?? 1;
      if (!(error instanceof DataFileInUse) || size > 0 || Date.now() >= deadline) throw error;
      Atomics.wait(pause, 0, 0, 5 + Math.random() * 45);
    }
  }
}

const CREATION_WAIT_MS = 3000;
const pause = new Int32Array(new SharedArrayBuffer(4));

function open(file: string): Connection | null {
  const db = new Database(file, { timeout: 0 });
  try {
    db.exec('PRAGMA locking_mode = EXCLUSIVE');
    // Read before anything is written: a file that is not ours is refused exactly as it is.
    if (!checkOwnership(file, db)) {
      closeConnection(db, false);
      return null;
    }
    // Before its WAL exists, which gets the file's mode. By path: closing any descriptor of a file drops
    // every lock this process holds on it (POSIX), a serve's in the same process (tests) included.
    if ((statSync(file).mode & 0o777) !== 0o600) chmodSync(file, 0o600);
    db.exec('PRAGMA journal_mode = WAL');
    db.exec('PRAGMA synchronous = NORMAL');
    // After a checkpoint the WAL is cut back to this size instead of keeping its largest one.
    db.exec('PRAGMA journal_size_limit = 8388608');
    migrate(file, db);
    return db;
  } catch (error) {
    closeConnection(db, false);
    const code = sqliteCode(error);
    if (code === 'SQLITE_NOTADB') return null;
    // Bad input (exit 2) naming the file, as a damaged state file is; not a failure of the service's own.
    if (code === 'SQLITE_CORRUPT') {
      throw new StateFileError(`${file}: a damaged database (${(error as Error).message}); it was left untouched`, {
        cause: error,
        hint: 'restore it from a copy of yours, or point --data at another file (a new one starts empty)',
      });
    }
    if (code !== 'SQLITE_BUSY' && code !== 'SQLITE_LOCKED') throw error;
    throw new DataFileInUse(`${file} is in use by another facectl serve`, { cause: error });
  }
}

/**
 * Frees the file at once: libsql closes the connection only once its last statement is garbage-collected,
 * so the lock would outlive close(). Leaving WAL mode folds the WAL into the file, NORMAL locking drops
 * the lock at the next read. `ours`: false for a file refused as it is, which is not written.
 */
export function closeConnection(db: Connection, ours = true): void {
  try {
    if (ours) db.exec('PRAGMA journal_mode = DELETE');
    db.exec('PRAGMA locking_mode = NORMAL');
    db.exec('SELECT count(*) FROM sqlite_schema');
  } catch {
    // the process's end releases it
  } finally {
    db.close();
  }
}

const scalar = (db: Connection, sql: string): unknown => (db.prepare<unknown[]>(sql).raw().get() as unknown[])[0];

/** False for a file that is no database (then imported as an old state file, or refused as one). */
function checkOwnership(file: string, db: Connection): boolean {
  const application = scalar(db, 'PRAGMA application_id');
  const version = Number(scalar(db, 'PRAGMA user_version'));
  const tables = Number(scalar(db, "SELECT count(*) FROM sqlite_schema WHERE type = 'table'"));
  // SQLite takes a one-byte file (`{`) for an empty database, and would write one over it: an empty one of
  // ours is new (no byte yet) or at least a page. By path: closing a descriptor would drop this process's locks.
  if (application === 0 && tables === 0) {
    const { size } = statSync(file);
    return size === 0 || size >= 512;
  }
  if (application !== APPLICATION_ID) {
    throw new StateFileError(
      `${file} is an SQLite database of another program, not a facectl serve state; the file was left untouched`,
    );
  }
  if (version > MIGRATIONS.length) {
    throw new StateFileError(
      `${file}: database version ${version} is not one this facectl serve reads (version ${MIGRATIONS.length} ` +
        'or older); the file was left untouched (a newer facectl may have written it)',
    );
  }
  return true;
}

/** In one transaction, which also takes the file's lock. */
function migrate(file: string, db: Connection): void {
  db.exec('BEGIN EXCLUSIVE');
  try {
    const version = Number(scalar(db, 'PRAGMA user_version'));
    for (let next = version; next < MIGRATIONS.length; next++) db.exec(MIGRATIONS[next] as string);
    if (version < MIGRATIONS.length) {
      db.exec(`PRAGMA application_id = ${APPLICATION_ID}`);
      db.exec(`PRAGMA user_version = ${MIGRATIONS.length}`);
    }
    db.exec('COMMIT');
  } catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw new Error(`${file}: the database could not be prepared (${(error as Error).message})`, { cause: error });
  }
}

/** Copies out the state of a `file` replaced or removed while serve ran (docs/local-service-choices.md): where to. */
export function rescueIfReplaced(db: Connection, file: { path: string; ino: number; dev: number }): string | undefined {
  try {
    const now = statSync(file.path);
    if (now.ino === file.ino && now.dev === file.dev) return undefined;
  } catch {
    // removed
  }
  const name = `${basename(file.path)}.rescued-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  let failure: unknown;
  for (const dir of [dirname(file.path), tmpdir()]) {
    const rescue = join(dir, name);
    let made = false;
    try {
      // Made first, with its mode: SQLite would create it with the umask's (it holds every content).
      closeSync(openSync(rescue, 'wx', 0o600));
      made = true;
      db.prepare('VACUUM INTO ?').run(rescue);
      return rescue;
    } catch (error) {
      failure ??= error;
      if (made) rmSync(rescue, { force: true });
    }
  }
  throw new CliError(
    `${file.path} was replaced or removed while serve ran, and its state could not be copied out`,
    ExitCode.error,
    {
      code: 'storage_error',
      hint: `no room for it beside ${file.path} nor in ${tmpdir()}: ${(failure as Error).message}`,
      cause: failure,
    },
  );
}
