import { lstatSync, readlinkSync, type Stats, statSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Whether facectl may write the configuration file: the file must not be a symlink (a write would
 * replace or go through it, wherever it points), and neither the file nor its directory may belong to
 * another user (who could read the key, or swap the file). Each refusal comes with its fix. Used by the
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
  // The directory may be a symlink (dotfile managers do that); what matters is who owns where it leads.
  const dirStat = statOrUndefined(dir);
  if (dirStat && uid !== undefined && dirStat.uid !== uid) {
    return {
      problem: `the configuration directory ${dir} belongs to another user (uid ${dirStat.uid}, you are ${uid}): they could read or replace the stored key`,
      fix:
        `if it is yours, take it back (\`sudo chown -R ${uid} ${dir}\`); if it is theirs (facectl run with sudo?), ` +
        'run facectl as its owner, or set FACECTL_CONFIG_DIR to a directory you own',
    };
  }
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
