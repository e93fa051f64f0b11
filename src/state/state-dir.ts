import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';
import {
  danglingLink,
  directoryRefusal,
  makeDirectories,
  nearestThere,
  type Refusal,
  statOrUndefined,
} from '../config/file-safety.js';
import { writeFailure } from '../config/file-store.js';
import { CliError, ExitCode } from '../errors.js';
import { stateError } from './batch-refusals.js';

/** The record directory checked, made, then checked again: a symlink planted meanwhile is refused too. */
export function privateDirectory(stateDir: string, dir: string, keep: boolean): boolean {
  if (checkStateDirectory(stateDir, keep) === undefined) return false;
  try {
    makeDirectories(dir);
  } catch (error) {
    throw stateError(dir, error, keep);
  }
  checkStateDirectory(stateDir, keep);
  return true;
}

/**
 * What a batch checks of the state directory before it writes there, making nothing (`facectl doctor` runs it
 * too): the user's and writable by no one else, or another user could plant a symlink where records go; a
 * directory; writable. Throws the batch's error (nothing sent); returns the nearest directory there is on the
 * way to the records, or undefined for --resume (`keep`) when there is no record directory (none is made).
 */
export function checkStateDirectory(stateDir: string, keep = false): string | undefined {
  refuse(stateDir, 'state directory');
  // A symlink to nothing: reading takes it for a directory not made yet, but mkdir cannot make it (ENOENT).
  const dangling = danglingLink(stateDir, 'state directory', 'FACECTL_STATE_DIR');
  if (dangling) refused(dangling);
  const dir = join(stateDir, 'batches');
  const at = nearestThere(dir);
  if (at === dir) {
    const info = statOrUndefined(dir, true);
    if (!info?.isDirectory()) {
      refused({
        problem: `${dir} is not a directory of facectl's (it is ${info?.isSymbolicLink() ? 'a symlink' : 'a file'})`,
        fix: `remove ${dir} (facectl makes it again), or set FACECTL_STATE_DIR to a directory of your own`,
      });
    }
    refuse(dir, 'batch record directory');
  } else if (!statOrUndefined(at, false)?.isDirectory()) {
    refused({
      problem: `the state directory ${stateDir} is not a directory (a file is where it, or a directory above it, would be)`,
      fix: `set FACECTL_STATE_DIR to a directory (a missing one is made), or move ${at} away`,
    });
  }
  // --resume with no record directory has no batch to go on with: only a way to look for it is needed.
  const none = keep && at !== dir;
  try {
    accessSync(at, none ? constants.X_OK : constants.W_OK | constants.X_OK);
  } catch (error) {
    throw unwritable(at, error, keep);
  }
  return none ? undefined : at;
}

/** The nearest directory there is on the way to the records denies this user (or is read-only): nothing was sent. */
function unwritable(at: string, error: unknown, keep: boolean): CliError {
  const failure = writeFailure(error, at, 'FACECTL_STATE_DIR');
  const permissions = `check the permissions of ${at} (\`chmod 700 ${at}\` if it is yours)`;
  return new CliError(`cannot write batch records in ${at}: ${failure.reason}; nothing was sent`, ExitCode.error, {
    code: 'state_unwritable',
    hint: keep
      ? `${failure.inPlace ?? permissions}, then --resume with FACECTL_STATE_DIR as it is (where the batch's record is kept)`
      : (failure.fix ?? `${permissions}, or set FACECTL_STATE_DIR to a writable one`),
    cause: error,
  });
}

function refuse(dir: string, what: string): void {
  const refusal = directoryRefusal(dir, {
    what,
    risk: 'they could read or rewrite the records of your batches',
    swap: 'plant links where facectl writes the records of your batches',
    elsewhere: 'FACECTL_STATE_DIR',
  });
  if (refusal) refused(refusal);
}

/** Exit 2, as for bad input: nothing was sent, and the fix is the user's (a directory to give or to mend). */
function refused(refusal: Refusal): never {
  throw new CliError(`refusing to write batch records: ${refusal.problem}; nothing was sent`, ExitCode.usage, {
    code: 'state_unsafe',
    hint: refusal.fix,
  });
}
