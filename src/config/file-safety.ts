import {
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readlinkSync,
  readSync,
  type Stats,
  statSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { ConfigFileError } from './profile-store.js';

export type Refusal = { problem: string; fix: string };

/** Checked before every write and by `doctor`; owners are not checked on Windows (no uids). */
export function writeRefusal(path: string): Refusal | undefined {
  const uid = process.getuid?.();
  const refusal = directoryRefusal(dirname(path), {
    what: 'configuration directory',
    risk: 'they could read or replace the stored key',
    swap: 'replace the stored configuration',
    elsewhere: 'FACECTL_CONFIG_DIR',
  });
  if (refusal) return refusal;
  const dangling = danglingLink(dirname(path), 'configuration directory', 'FACECTL_CONFIG_DIR');
  if (dangling) return dangling;
  const fileStat = statOrUndefined(path, true);
  if (fileStat?.isSymbolicLink()) {
    let target = '?';
    try {
      target = readlinkSync(path);
    } catch {
      // shown as ?
    }
    return {
      problem: `the configuration file ${path} is a symlink (to ${target}); facectl does not write through it`,
      fix: `replace it with a regular file of your own: \`cp --remove-destination "$(readlink -f ${path})" ${path}\` (or remove it and log in again)`,
    };
  }
  if (fileStat && uid !== undefined && fileStat.uid !== uid) {
    return {
      problem: `the configuration file ${path} belongs to another user (uid ${fileStat.uid}, you are ${uid}): they could read the stored key`,
      fix:
        `if it is yours, take it back (\`sudo chown ${uid} ${path}\`); if it is theirs (facectl run with sudo?), ` +
        'run facectl as its owner, or set FACECTL_CONFIG_DIR to a directory you own',
    };
  }
  return undefined;
}

/**
 * `dir` (the configuration or state directory), or the nearest one above it there is, a symlink to nothing:
 * reading takes it for a directory with nothing in it yet, but it cannot be made (mkdir says ENOENT).
 */
export function danglingLink(dir: string, what: string, variable: string): Refusal | undefined {
  const at = nearestThere(dir);
  let target: string;
  try {
    if (statSync(at, { throwIfNoEntry: false })) return undefined;
    target = readlinkSync(at);
  } catch {
    return undefined; // not a symlink, or one that loops or is out of reach: the write's own error says so
  }
  return {
    problem: `the ${what} ${dir} is ${at === dir ? '' : `under ${at}, `}a symlink to ${target}, which does not exist`,
    fix: `create its target (\`mkdir -m 700 -p ${resolve(dirname(at), target)}\`) or remove the symlink (facectl then makes the directory), or set ${variable} to another directory`,
  };
}

/**
 * A directory of secrets or records must be the user's and writable by no one else (a sticky bit does not
 * stop another user planting a symlink); a symlink to it is fine (dotfile managers). The fix never chmods
 * or chowns a shared directory (/tmp) or another user's outside the home: it says to use another.
 */
export function directoryRefusal(dir: string, role: { what: string; risk: string; swap: string; elsewhere: string }) {
  const uid = process.getuid?.();
  const dirStat = statOrUndefined(dir, false);
  const elsewhere = `set ${role.elsewhere} to a directory only you can write to`;
  if (dirStat && uid !== undefined && dirStat.uid !== uid) {
    // Under the home, most likely made by a facectl run with sudo; anywhere else, it is theirs.
    const home = homedir();
    const inHome = dir !== home && !relative(home, dir).startsWith('..') && !isAbsolute(relative(home, dir));
    return {
      problem: `the ${role.what} ${dir} belongs to another user (uid ${dirStat.uid}, you are ${uid}): ${role.risk}`,
      fix: inHome
        ? `if it is yours, take it back (\`sudo chown -R ${uid} ${dir}\`); if it is theirs (facectl run with sudo?), ` +
          `run facectl as its owner, or ${elsewhere}`
        : `${elsewhere} (a missing one is made 0700); ${dir} is not yours to change`,
    };
  }
  if (dirStat && process.platform !== 'win32' && (dirStat.mode & 0o022) !== 0) {
    const who = [dirStat.mode & 0o020 ? 'its group' : '', dirStat.mode & 0o002 ? 'everyone' : ''].filter(Boolean);
    const shared = (dirStat.mode & 0o1002) !== 0;
    return {
      problem: `the ${role.what} ${dir} has mode ${(dirStat.mode & 0o7777).toString(8).padStart(4, '0')}: ${who.join(' and ')} can write to it, and so ${role.swap}`,
      fix: shared
        ? `${elsewhere} (a missing one is made 0700); leave ${dir} as it is: it is shared, others need to write to it`
        : `\`chmod 700 ${dir}\` (or ${elsewhere})`,
    };
  }
  return undefined;
}

/** `path`, or the nearest directory above it, that is there (a symlink counts, even one to nothing). */
export function nearestThere(path: string): string {
  let at = path;
  while (!statOrUndefined(at, true) && dirname(at) !== at) at = dirname(at);
  return at;
}

export function statOrUndefined(path: string, link: boolean): Stats | undefined {
  try {
    return link ? lstatSync(path) : statSync(path);
  } catch {
    return undefined;
  }
}

/** A new entry of `dir` made durable; best effort: not every system can open a directory. */
export function syncDirectory(dir: string): void {
  try {
    const fd = openSync(dir, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // only a power loss could lose the entry
  }
}

/** Far above any real configuration (a few KB). */
const MAX_CONFIG_BYTES = 16 * 1024 * 1024;

/**
 * Only a regular file of at most MAX_CONFIG_BYTES is read (a FIFO would block forever, /dev/zero never
 * ends), opened O_NONBLOCK (a FIFO swapped in after the check cannot block) and checked again on its fd.
 */
export function readConfigText(path: string): string | undefined {
  let info: Stats;
  try {
    info = statSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  refuseUnreadable(path, info);
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENXIO') throw notRegular(path, 'a socket');
    throw error;
  }
  try {
    refuseUnreadable(path, fstatSync(fd));
    const buffer = Buffer.alloc(MAX_CONFIG_BYTES + 1);
    let length = 0;
    for (let read = 1; read > 0 && length < buffer.length; length += read) {
      read = readSync(fd, buffer, length, buffer.length - length, null);
    }
    // It grew between fstat and the read.
    if (length > MAX_CONFIG_BYTES) throw tooLarge(path, length);
    return buffer.toString('utf8', 0, length);
  } finally {
    closeSync(fd);
  }
}

function refuseUnreadable(path: string, info: Stats): void {
  if (!info.isFile()) throw notRegular(path, kindOf(info));
  if (info.size > MAX_CONFIG_BYTES) throw tooLarge(path, info.size);
}

function notRegular(path: string, kind: string): ConfigFileError {
  return new ConfigFileError(
    `configuration file ${path} is not a regular file (it is ${kind}); facectl reads only a regular file`,
    `remove ${path} (or replace it with a regular file), or set FACECTL_CONFIG_DIR to another directory`,
  );
}

function tooLarge(path: string, size: number): ConfigFileError {
  return new ConfigFileError(
    `configuration file ${path} is ${size} bytes, over the ${MAX_CONFIG_BYTES} bytes (16 MiB) a configuration file may have`,
    `a real configuration is a few KB: check what wrote ${path}, then fix or remove it (facectl never clears it)`,
  );
}

function kindOf(info: Stats): string {
  if (info.isDirectory()) return 'a directory';
  if (info.isFIFO()) return 'a FIFO';
  if (info.isCharacterDevice()) return 'a character device';
  if (info.isBlockDevice()) return 'a block device';
  if (info.isSocket()) return 'a socket';
  return 'not a file';
}

/** `mkdir -p DIR` at mode 0700, returning what it made (top first); not Node's recursive mkdir (docs/decisions.md). */
export function makeDirectories(dir: string): string[] {
  const missing: string[] = [];
  for (let at = dir; dirname(at) !== at; at = dirname(at)) {
    try {
      lstatSync(at);
      break;
    } catch {
      missing.unshift(at);
    }
  }
  for (const at of missing) {
    try {
      mkdirSync(at, { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  return missing;
}
