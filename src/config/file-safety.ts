import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readlinkSync,
  readSync,
  type Stats,
  statSync,
} from 'node:fs';
import { dirname } from 'node:path';

/**
 * Whether facectl may write the configuration file: the file must not be a symlink (a write would
 * replace or go through it, wherever it points), and neither the file nor its directory may belong to
 * another user (who could read the key, or swap the file), nor may the directory be writable by its group
 * or by others (who could swap the file too). Each refusal comes with its fix. Used by the
 * store before every write and by `doctor`. Not checked on Windows, where owners are not uids.
 */

export interface Refusal {
  /** What is wrong, naming the path. */
  problem: string;
  /** The command or step that fixes it. */
  fix: string;
}

export function writeRefusal(path: string, uid: number | undefined = process.getuid?.()): Refusal | undefined {
  const dir = dirname(path);
  const refusal = directoryRefusal(dir, uid, {
    what: 'configuration directory',
    risk: 'they could read or replace the stored key',
    swap: 'replace the stored configuration',
    elsewhere: 'FACECTL_CONFIG_DIR',
  });
  if (refusal) return refusal;
  const fileStat = lstatOrUndefined(path);
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

/** How a refusal names the directory and what another user could do with it. */
export interface DirectoryRole {
  /** e.g. "configuration directory" */
  what: string;
  /** What its owner could do: "they could read or replace the stored key". */
  risk: string;
  /** What a writer could do: "replace the stored configuration". */
  swap: string;
  /** The variable that picks another directory. */
  elsewhere: string;
}

/**
 * A directory facectl writes secrets or records in must belong to the user and be writable by no one
 * else: whoever can write to it can replace what is in it (a sticky bit does not stop them from
 * creating a file or a symlink where facectl is about to write). It may itself be a symlink (dotfile
 * managers do that); what matters is who owns where it leads. Missing: no refusal (it is created 0700).
 */
export function directoryRefusal(dir: string, uid: number | undefined, role: DirectoryRole): Refusal | undefined {
  const dirStat = statOrUndefined(dir);
  if (dirStat && uid !== undefined && dirStat.uid !== uid) {
    return {
      problem: `the ${role.what} ${dir} belongs to another user (uid ${dirStat.uid}, you are ${uid}): ${role.risk}`,
      fix:
        `if it is yours, take it back (\`sudo chown -R ${uid} ${dir}\`); if it is theirs (facectl run with sudo?), ` +
        `run facectl as its owner, or set ${role.elsewhere} to a directory you own`,
    };
  }
  if (dirStat && process.platform !== 'win32' && (dirStat.mode & 0o022) !== 0) {
    const who = [dirStat.mode & 0o020 ? 'its group' : '', dirStat.mode & 0o002 ? 'everyone' : ''].filter(Boolean);
    return {
      problem: `the ${role.what} ${dir} has mode ${(dirStat.mode & 0o7777).toString(8).padStart(4, '0')}: ${who.join(' and ')} can write to it, and so ${role.swap}`,
      fix: `chmod 700 ${dir} (or set ${role.elsewhere} to a directory only you can write to)`,
    };
  }
  return undefined;
}

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/** Far above any real configuration (a few KB); past it the file is refused, not read. */
export const MAX_CONFIG_BYTES = 16 * 1024 * 1024;

/** The configuration file exists but is not one facectl will read: what is wrong, and the fix. */
export class ConfigReadRefusal extends Error {
  constructor(
    readonly problem: string,
    readonly fix: string,
  ) {
    super(problem);
    this.name = 'ConfigReadRefusal';
  }
}

/**
 * The configuration file's text, or undefined when it does not exist. Only a regular file of at most
 * MAX_CONFIG_BYTES is read (through a symlink too, wherever it leads): a FIFO would block the read
 * forever, a device like /dev/zero never ends, and a huge file would be held in memory whole. It is
 * opened with O_NONBLOCK (a FIFO swapped in after the check cannot block the open) and checked again
 * on the open descriptor; at most one byte past the cap is ever read. Other errors (EACCES) are thrown.
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
    // A socket cannot be opened (ENXIO): refused like any other file that is not a regular one.
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

function notRegular(path: string, kind: string): ConfigReadRefusal {
  return new ConfigReadRefusal(
    `configuration file ${path} is not a regular file (it is ${kind}); facectl reads only a regular file`,
    `remove ${path} (or replace it with a regular file), or set FACECTL_CONFIG_DIR to another directory`,
  );
}

function tooLarge(path: string, size: number): ConfigReadRefusal {
  return new ConfigReadRefusal(
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
