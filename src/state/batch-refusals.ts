import { dirname } from 'node:path';
import { writeFailure } from '../config/file-store.js';
import { CliError, ExitCode } from '../errors.js';
import type { LockHeldError } from './lock.js';
import type { JournalMode } from './line-keys.js';

/** What the batch records say when they refuse a run (batch-records.ts). */

export const STALE_SECONDS = 10;

export const REWRITTEN =
  'lines are known by the documents they send: none it recorded is in the file now, which is how a file looks with ' +
  'its documents edited, completed by another --alias, --label or --perspective, or with the lines already ' +
  'submitted removed. Put the file and flags back as they were, then --resume (it skips ' +
  'what was submitted); --restart drops that batch and sends every line as new: any already submitted or in flight ' +
  'when it stopped are created again';

export function inProgress(
  error: LockHeldError,
  { sourceName, mode }: { sourceName: string; mode: JournalMode },
): CliError {
  const who =
    error.ownerPid === undefined
      ? 'another facectl'
      : `another facectl (pid ${error.ownerPid}${error.holder === 'stopped' ? ', stopped' : ''})`;
  // A plain run after that one finished would be a batch of its own, every line sent again.
  const again =
    mode === 'new'
      ? 'run this command again with --resume, which sends only what that run did not'
      : 'run this command again';
  // The holder touches its lock every few seconds; a run killed with kill -9 no longer does.
  const seen = Math.floor(error.ageMs / 1000);
  const pid = error.ownerPid;
  const hint =
    error.holder === 'stopped'
      ? `that run is stopped (Ctrl-Z, or SIGSTOP) and holds its batch until it ends: let it go on (\`fg\` where it ` +
        `runs, or kill -CONT ${pid}) or end it (kill ${pid}; kill -CONT ${pid}); then ${again}`
      : error.holder === 'running'
        ? `that run is still going: wait for it to finish, or stop it (Ctrl-C where it runs, or kill ${pid}); then ${again}`
        : `wait for it to finish or stop it; if it was killed, its lock (${error.lockPath}, last touched ${seen} s ago) ` +
          (seen < STALE_SECONDS
            ? `is taken over once it is ${STALE_SECONDS} s old: ${again} in ${STALE_SECONDS - seen} s`
            : `is being taken over (a run killed while taking it over holds that up to ${STALE_SECONDS} s): ${again} in a few seconds`);
  return new CliError(`${who} is submitting ${sourceName}`, ExitCode.conflict, { code: 'batch_in_progress', hint });
}

/** How an unclean batch ended: stopped with requests unanswered (Ctrl-C, SIGTERM), or killed. */
export const stopWithout = (unanswered: number | undefined): string =>
  unanswered === undefined
    ? 'did not stop cleanly (it was killed, crashed, or could not write its record)'
    : `was stopped with ${unanswered} ${unanswered === 1 ? 'request' : 'requests'} unanswered`;

/** A record here that cannot be read (chmod 000): what its batch submitted is not known. */
export function unreadable(path: string, error: unknown): CliError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const reason = code === 'EACCES' ? 'permission denied, EACCES' : (code ?? (error as Error).message);
  return new CliError(`cannot read the batch record ${path}: ${reason}; nothing was sent`, ExitCode.error, {
    code: 'state_unreadable',
    hint:
      code === 'ELOOP'
        ? 'it is a symbolic link, which facectl does not follow: put the record itself there, or remove the link'
        : `make it readable for you again (chmod 600 ${path}): without it, lines that batch submitted could be sent again`,
    cause: error,
  });
}

/** A record here whose header is gone (emptied, overwritten), or not a file: what its batch submitted is not known. */
export const damaged = (path: string, what = 'it is empty or damaged'): CliError =>
  new CliError(`cannot read the batch record ${path}: ${what}; nothing was sent`, ExitCode.error, {
    code: 'state_unreadable',
    hint: `what that batch submitted is not known: remove the record (rm ${path}) to go on, and lines that batch submitted may be sent again`,
  });

/** `resume`: a batch's record is here (documents sent), so the fix keeps it and ends with --resume. */
export function stateError(path: string, error: unknown, resume = false): CliError {
  // The record or its directory removed under a batch (rm -rf): no --resume can know what it sent. Moved, it can.
  if ((error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') {
    return new CliError(
      `cannot write the batch record ${path}: it was removed or moved while the batch ran (ENOENT)`,
      ExitCode.error,
      {
        code: 'state_unwritable',
        hint:
          "moved, put it back where it was and --resume; removed, the batch's record went with it: this run's " +
          'results say what it submitted, and a later run of this input sends every line again',
        cause: error,
      },
    );
  }
  // Said as a configuration write's failure is: the permissions only when they are the cause.
  const failure = writeFailure(error, dirname(path), 'FACECTL_STATE_DIR');
  // A batch under way has its record here: another state directory has none, and --resume there sends every line.
  const fix = resume ? failure.inPlace : failure.fix;
  return new CliError(`cannot write the batch record ${path}: ${failure.reason}`, ExitCode.error, {
    code: 'state_unwritable',
    hint: resume
      ? `${fix ?? 'fix what the system said there'}, then --resume with FACECTL_STATE_DIR as it is (the batch's record is there)`
      : (fix ?? 'check the permissions of that directory, or set FACECTL_STATE_DIR to a writable one'),
    cause: error,
  });
}
