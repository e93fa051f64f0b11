import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  constants,
  fchmodSync,
  fsyncSync,
  lstatSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { ExitCode } from '../errors.js';
import { type HeldLock, LockHeldError, waitForLock } from '../state/lock.js';
import {
  makeDirectories,
  nearestThere,
  readConfigText,
  statOrUndefined,
  syncDirectory,
  writeRefusal,
} from './file-safety.js';
import { configFilePath } from './paths.js';
import { type ConfigData, ConfigFileError, ConfigWriteError, ProfileStore, parseConfigText } from './profile-store.js';

/** As the state directory's: a file where the directory, or one above it, would be (ENOTDIR) is refused, exit 2. */
const notADirectory = (env: Readonly<Record<string, string | undefined>>, dir: string) =>
  [
    `${env.FACECTL_CONFIG_DIR ? 'FACECTL_CONFIG_DIR' : 'the configuration directory'} ${dir} is not a directory (a file is where it, or a directory above it, would be)`,
    `set FACECTL_CONFIG_DIR to a directory (a missing one is made), or move ${nearestThere(dir)} away`,
  ] as const;

/** The configuration file's text (undefined: there is none yet); one that cannot be read, a ConfigFileError. */
export function readConfigFile(env: Readonly<Record<string, string | undefined>>): string | undefined {
  const path = configFilePath(env);
  try {
    return readConfigText(path);
  } catch (error) {
    if (error instanceof ConfigFileError) throw error;
    const { code, message, syscall } = error as NodeJS.ErrnoException;
    const dir = dirname(path);
    if (code === 'ENOTDIR') throw new ConfigFileError(...notADirectory(env, dir), error);
    if (code === 'EACCES' || code === 'EPERM') {
      // Denied its lookup (stat): the directory, or one above it, is closed to the user; the file may not exist.
      throw syscall === 'stat'
        ? new ConfigFileError(
            `cannot open the configuration directory ${dir} (${code})`,
            `check the permissions of ${dir} (\`chmod 700 ${dir}\` if it is yours), or set FACECTL_CONFIG_DIR to another directory`,
            error,
          )
        : new ConfigFileError(
            `cannot read configuration file ${path} (${code})`,
            `check the permissions of ${path}`,
            error,
          );
    }
    throw new ConfigFileError(`cannot use configuration file ${path}: ${message}`, `check ${path}`, error);
  }
}

/**
 * The configuration file (rules: docs/usage.md). Reading creates nothing; a change is a read-modify-write
 * under a lock, to a temp file fsynced and renamed over the file, so a kill leaves the old or the new one.
 */
export function openConfigStore(env: Readonly<Record<string, string | undefined>>, warn: (message: string) => void) {
  const path = configFilePath(env);
  const dir = dirname(path);
  tightenFileMode(path, warn);
  const notDirectory = notADirectory(env, dir);

  const read = (): ConfigData => {
    const text = readConfigFile(env);
    if (text === undefined || text.trim() === '') return {};
    return parseConfigText(text, path);
  };

  const update = async (change: (data: ConfigData) => ConfigData): Promise<ConfigData> => {
    // The per-user directory, when mine and wider than 0700, is made 0700; a FACECTL_CONFIG_DIR is refused instead.
    if (!env.FACECTL_CONFIG_DIR) {
      try {
        const stat = statSync(dir);
        if ((stat.mode & 0o077) !== 0 && (!process.getuid || stat.uid === process.getuid())) chmodSync(dir, 0o700);
      } catch {
        // missing (created 0700 later) or not mine: refused before any write, and reported by doctor
      }
    }
    let lock: HeldLock;
    try {
      refuseUnsafe(path); // first: a directory under a dangling symlink cannot be made (ENOENT)
      // Made 0700 whatever the umask.
      for (const created of makeDirectories(dir)) chmodSync(created, 0o700);
      lock = await waitForLock(`${path}.lock`, { waitMs: 20_000 });
    } catch (error) {
      if (error instanceof ConfigWriteError) throw error;
      if ((error as NodeJS.ErrnoException).code === 'ENOTDIR') {
        throw new ConfigWriteError(`${notDirectory[0]}; nothing was written`, error, notDirectory[1], ExitCode.usage);
      }
      if (error instanceof LockHeldError) {
        throw new ConfigWriteError(
          `cannot write configuration file ${path}: another facectl kept it locked for 20 s (${error.lockPath}); it was left unchanged`,
          error,
          `if no other facectl is running, remove ${error.lockPath} and try again`,
        );
      }
      throw writeError(error, path);
    }
    try {
      refuseUnsafe(path); // again, now that nobody else can be writing
      removeLeftTempFiles(path);
      const data = read();
      const next = change(data);
      // Unchanged (checkWritable) and no file yet: the directory is made and locked, no empty file left behind.
      if (next === data && !lstatSync(path, { throwIfNoEntry: false })) return data;
      try {
        writeAtomically(path, `${JSON.stringify(next, undefined, '\t')}\n`);
      } catch (error) {
        throw writeError(error, path);
      }
      return read();
    } finally {
      lock.release();
    }
  };

  return new ProfileStore({ path, read, update });
}

export const NOFOLLOW = constants.O_NOFOLLOW ?? 0;

function refuseUnsafe(path: string): void {
  const refusal = writeRefusal(path);
  if (refusal) {
    // Refused before anything is sent or written, as a corrupt file is: exit 2.
    throw new ConfigWriteError(
      `refusing to write: ${refusal.problem}; nothing was written`,
      undefined,
      refusal.fix,
      ExitCode.usage,
    );
  }
}

/** Temp files of writers killed mid-write (they may hold a key): under the lock, any is a leftover. */
function removeLeftTempFiles(path: string): void {
  const prefix = `${basename(path)}.`;
  let names: string[];
  try {
    names = readdirSync(dirname(path));
  } catch {
    return;
  }
  for (const name of names) {
    if (name.startsWith(prefix) && name.endsWith('.tmp')) rmSync(join(dirname(path), name), { force: true });
  }
}

export function writeAtomically(
  path: string,
  text: string,
  temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`,
): void {
  const fd = openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW, 0o600);
  try {
    try {
      // Whole or an error: writeSync alone may write part of it (a file size limit) and say nothing.
      writeFileSync(fd, text);
      fchmodSync(fd, 0o600); // whatever the umask
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
  syncDirectory(dirname(path));
}

/** The system's reason in words; its fix, and `inPlace` the fix where the files must stay (a batch's record). */
const WRITE_FAILURES: Record<
  string,
  { what: string; fix?: (dir: string, variable: string) => string; inPlace: string }
> = {
  ENOSPC: {
    what: 'no space left on the device',
    fix: (dir, variable) => `make room on the disk of ${dir}, or set ${variable} to a directory on another disk`,
    inPlace: 'make room on that disk',
  },
  EDQUOT: {
    what: 'disk quota exceeded',
    fix: (dir, variable) =>
      `make room in your quota on the disk of ${dir}, or set ${variable} to a directory on another disk`,
    inPlace: 'make room in your quota on that disk',
  },
  EFBIG: {
    what: 'a file size limit was reached',
    fix: (_, variable) => `raise the limit (ulimit -f), or set ${variable} to a directory on another disk`,
    inPlace: 'raise the file size limit (ulimit -f)',
  },
  EROFS: {
    what: 'read-only file system',
    fix: (dir, variable) => `${dir} is on a read-only file system: set ${variable} to a writable directory`,
    inPlace: 'make that file system writable again',
  },
  EACCES: { what: 'permission denied', inPlace: 'make that directory writable for you again' },
  EPERM: { what: 'operation not permitted', inPlace: 'make that directory writable for you again' },
};

/**
 * A write in `dir` (moved elsewhere by the variable `variable`) that failed: the reason to show and its fix;
 * no fix for EACCES/EPERM, whose hint (the permissions) is the caller's, nor for an error without a code.
 */
export function writeFailure(
  error: unknown,
  dir: string,
  variable: string,
): { reason: string; fix?: string; inPlace?: string } {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === undefined) return { reason: (error as Error).message };
  const known = WRITE_FAILURES[code];
  if (!known) return { reason: code, fix: `check ${dir} and its disk, or set ${variable} to another directory` };
  return { reason: `${known.what}, ${code}`, fix: known.fix?.(dir, variable), inPlace: known.inPlace };
}

function writeError(error: unknown, path: string): ConfigWriteError {
  const { reason, fix } = writeFailure(error, dirname(path), 'FACECTL_CONFIG_DIR');
  return new ConfigWriteError(`cannot write configuration file ${path} (${reason}); it was left unchanged`, error, fix);
}

/** A file another tool wrote with a looser mode (e.g. 0644) holds a secret: warn and make it 0600. */
function tightenFileMode(path: string, warn: (message: string) => void): void {
  const stat = statOrUndefined(path, true);
  // Not written yet; a symlink (refused on write, reported by doctor) or another user's file (refused on write).
  if (!stat?.isFile() || (process.getuid && stat.uid !== process.getuid()) || (stat.mode & 0o077) === 0) return;
  const mode = (stat.mode & 0o777).toString(8).padStart(4, '0');
  try {
    chmodSync(path, 0o600);
    warn(`configuration file ${path} had mode ${mode}; changed it to 0600`);
  } catch {
    warn(`configuration file ${path} has mode ${mode}; run chmod 600 on it`);
  }
}
