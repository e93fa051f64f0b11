import { createHash, randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { UsageError } from '../errors.js';
import { type JournalMode, startJournal } from './batch-journal.js';
import { listRecords, prunedSince, readJournal } from './batch-read.js';
import { type Acknowledged, type Compared, type LineKey, keyText } from './line-keys.js';
import { acquireLock, type HeldLock, LockHeldError, waitForLock } from './lock.js';
import { inProgress, REWRITTEN, STALE_SECONDS, stateError, stopWithout } from './batch-refusals.js';
import { privateDirectory } from './state-dir.js';

/**
 * Which batch a run of `docs submit` belongs to, by comparing the input's lines with what each earlier
 * batch acknowledged (rules: docs/usage.md). Locks keep two runs of one input apart (exit 5): a file has
 * one for the run; standard input has one per batch, plus one for its directory held while choosing.
 */

const CHOOSING_WAIT_MS = (STALE_SECONDS + 5) * 1000;

interface OpenRecordsOptions {
  dir: string;
  /** What identifies the input across runs: a file's real path, or standard input in a directory. */
  identity: string;
  /** For messages: the input as the user named it. */
  sourceName: string;
  mode: JournalMode;
  /** Read once as it comes (standard input, a pipe): compared by its first lines, one lock per batch. */
  streamed: boolean;
  /** `key <prefix>`, not the base URL: one service has several (a proxy, localhost, 127.0.0.1). */
  destination: string;
}

type Candidate = Awaited<ReturnType<typeof listRecords>>[number] &
  Omit<NonNullable<Awaited<ReturnType<typeof readJournal>>>, 'header' | 'entries'> & {
    readonly acknowledged: Acknowledged;
    /** keyText of the first lines of its input (standard input only). */
    readonly head: ReadonlySet<string>;
    readonly destination: string | undefined;
    readonly createdAt: string;
    /** Standard input: another facectl sends this batch now (busy), or this run took its lock (lock). */
    busy?: LockHeldError;
    lock?: HeldLock;
  };

/** Takes the input's lock and reads the earlier batches (finished ones too for --resume, or their headers). */
export async function openBatchRecords(options: OpenRecordsOptions) {
  const dir = join(options.dir, 'batches');
  const input = createHash('sha256').update(options.identity).digest('hex').slice(0, 24);
  // --resume goes on with a record in this directory: a failure here must not send the user to another one.
  const keep = options.mode === 'resume';
  // --resume with no record directory has no batch to go on with: refused (choose), nothing made, no lock taken.
  const none = !privateDirectory(options.dir, dir, keep);
  let lost: Error | undefined;
  // The lock removed (its files or the state directory deleted): said as a write there that failed, not as a takeover.
  const onLost = (error: Error) =>
    void (lost = (error as NodeJS.ErrnoException).code === 'ENOENT' ? stateError(dir, error) : error);
  /** An input's lock (exit 5 while another facectl holds it past `waitMs`); a killed run's is taken over. */
  const lockInput = (lockPath: string, waitMs: number, onCompromised?: (error: Error) => void) =>
    waitForLock(lockPath, { staleMs: STALE_SECONDS * 1000, waitMs, onCompromised }).catch((error: unknown) => {
      throw error instanceof LockHeldError ? inProgress(error, options) : stateError(lockPath, error, keep);
    });
  // Standard input waits while another run of its directory chooses its batch (a moment).
  const inputLock = none
    ? { path: '', release: () => undefined, verify: () => undefined }
    : options.streamed
      ? await lockInput(join(dir, `${input}.lock`), CHOOSING_WAIT_MS)
      : await lockInput(join(dir, `${input}.lock`), 0, onLost);
  const candidates: Candidate[] = [];
  let fileFinished: string[] = [];
  // A plain run of a file whose last batch finished: its first lines' keys, to say when this run repeats it.
  let lastFinished: { head: ReadonlySet<string>; at: string } | undefined;
  const release = () => {
    for (const candidate of candidates) candidate.lock?.release();
    inputLock.release();
  };
  try {
    const found = none ? [] : await listRecords(dir, input);
    fileFinished = options.streamed ? [] : found.filter((r) => r.finished).map((r) => r.path);
    for (const record of found) {
      if (record.finished && options.mode === 'new' && !options.streamed && lastFinished === undefined) {
        const header = (await readJournal(record.path, true).catch(() => undefined))?.header;
        if (header?.head !== undefined)
          lastFinished = { head: new Set(header.head.map(([hash, n]) => keyText({ hash, n }))), at: header.created_at };
      }
      if (record.finished && options.mode !== 'resume' && !options.streamed) continue;
      const headerOnly = record.finished && options.mode !== 'resume';
      let lock: HeldLock | undefined;
      let busy: LockHeldError | undefined;
      if (options.streamed && !record.finished) {
        try {
          lock = acquireLock(join(dir, `${input}.${record.batchId}.lock`), {
            staleMs: STALE_SECONDS * 1000,
            onCompromised: onLost,
          });
        } catch (error) {
          if (!(error instanceof LockHeldError)) throw stateError(dir, error, keep);
          busy = error;
        }
      }
      const read = await readJournal(record.path, headerOnly).catch((error: unknown) => {
        lock?.release();
        throw error;
      });
      if (read === undefined || read.header.batch_id !== record.batchId) {
        lock?.release();
        continue;
      }
      candidates.push({
        ...record,
        ...read,
        acknowledged: read.entries,
        head: new Set((read.header.head ?? []).map(([hash, n]) => keyText({ hash, n }))),
        destination: read.header.destination,
        createdAt: read.header.created_at,
        busy,
        lock,
      });
    }
    return {
      candidates,
      compare: () => {
        const results: Compared[] = candidates.map(() => ({ lines: 0, matched: 0, moved: 0, headOnly: 0 }));
        const add = (line: number, key: LineKey) => {
          for (let i = 0; i < candidates.length; i++) {
            const candidate = candidates[i] as Candidate;
            const result = results[i] as Compared;
            result.lines++;
            const earlier = candidate.acknowledged.get(key);
            if (earlier !== undefined) {
              result.matched++;
              if (earlier.line !== line) result.moved++;
            } else if (candidate.head.has(keyText(key))) result.headOnly++;
          }
        };
        return { results, add };
      },
      /** Chooses the batch (or refuses, exit 2 or 5) and opens its journal; `head`: standard input's first keys. */
      open: (comparison: { results: Compared[] }, head?: readonly LineKey[], ended?: boolean) =>
        choose(comparison, head, ended).catch((error: unknown) => {
          release();
          throw error;
        }),
      release,
    };
  } catch (error) {
    release();
    throw error;
  }

  /** A batch recorded as sent elsewhere (journals of earlier versions say nothing: taken as here). */
  function elsewhere(candidate: Candidate): boolean {
    return candidate.destination !== undefined && candidate.destination !== options.destination;
  }

  async function choose(comparison: { results: Compared[] }, head: readonly LineKey[] | undefined, ended?: boolean) {
    const scored = candidates.map((candidate, i) => {
      const compared = comparison.results[i] as Compared;
      return Object.assign(candidate, { compared, any: compared.matched + compared.headOnly });
    });
    // The same input: a file's every batch; standard input's whose first lines are mostly the earlier one's, as far
    // as both have them (a slow producer's record holds only a few). A whole input shorter than those, with lines of
    // its own, is another input that begins alike.
    const now = (head ?? []).map(keyText);
    const sameInput = (s: (typeof scored)[number]) => {
      if (!options.streamed) return true;
      const earlier = [...s.head];
      const k = Math.min(earlier.length, now.length);
      // A record of an earlier version, without its first lines: by the lines it acknowledged.
      if (k === 0) return s.compared.matched > 0;
      const first = new Set(earlier.slice(0, k));
      const shorter =
        ended === true &&
        now.length < earlier.length &&
        (head ?? []).some((key) => !s.head.has(keyText(key)) && s.acknowledged.get(key) === undefined);
      return 2 * now.slice(0, k).filter((key) => first.has(key)).length > k && !shorter;
    };
    // Another facectl sends this very input now.
    const busy = scored.find((s) => s.busy !== undefined && sameInput(s))?.busy;
    if (busy !== undefined) throw inProgress(busy, options);

    let chosen: (typeof scored)[number] | undefined;
    let dropped: typeof scored = [];
    const unfinished = scored.filter((s) => !s.finished && s.busy === undefined);
    const stopped = unfinished
      .filter((s) => s.compared.matched > 0 && sameInput(s))
      .sort((a, b) => b.compared.matched - a.compared.matched)[0];
    // Killed, or stopped with a request unanswered: it may have made documents it has no record of.
    // A file's batch none of whose recorded lines (or, killed before any answer was recorded, first lines) is
    // left: its documents edited, or completed by other flags, and sending them would make them again, altered.
    const rewritten = (s: (typeof scored)[number]) =>
      !options.streamed && s.any === 0 && (s.acknowledged.size > 0 || (!s.clean && s.head.size > 0));
    const unclean = unfinished.find((s) => !s.clean && sameInput(s) && !rewritten(s));
    // The batch a plain run is refused for, which --resume then goes on with.
    const blocking = stopped ?? unclean;
    // Standard input of another input whose first lines hold lines an unfinished batch here submitted (part of that
    // input, or sharing some): refused as a file's copy is, those lines would be made twice; --restart sends it as a
    // batch of its own. Stopped short, it may also have made the lines it sent and did not record.
    const mayHaveMade = (s: (typeof scored)[number]) =>
      (head ?? []).filter((key) => s.acknowledged.get(key) !== undefined || s.sent.has(keyText(key))).length;
    const part = options.streamed ? unfinished.find((s) => !sameInput(s) && mayHaveMade(s) > 0) : undefined;
    const partOf = (s: (typeof scored)[number], resume: boolean) => {
      const n = mayHaveMade(s);
      return new UsageError(
        `${resume ? 'nothing to resume: ' : ''}an unfinished batch of standard input read here ${s.clean ? 'submitted' : 'submitted, or may have,'} ` +
          `${n} of this input's first ${s.compared.lines} lines, though this is another input`,
        {
          code: resume ? 'nothing_to_resume' : 'unfinished_batch',
          hint:
            `to go on with that batch, feed it its own input with --resume (the record is ${s.path}); --restart sends ` +
            `this input as a batch of its own, and leaves that one to resume: ${n === 1 ? 'that line is' : `those ${n} lines are`} created again, as duplicates, and so are any of its later lines that batch submitted`,
        },
      );
    };
    if (options.mode === 'new') {
      if (blocking !== undefined) {
        const done = blocking.acknowledged.size;
        // Every line of this file submitted: what stopped it came after (a --jq filter, a closed output).
        const all = stopped !== undefined && !options.streamed && stopped.compared.matched === stopped.compared.lines;
        // Killed with requests in flight, it may have made more than it recorded: its count is a floor.
        const clean = blocking.clean;
        const what = all
          ? done === 1
            ? 'submitted its 1 document but stopped before printing its result'
            : `submitted all ${done} of its documents but stopped before printing every result`
          : clean
            ? `stopped after ${done} of its documents ${done === 1 ? 'was' : 'were'} submitted`
            : `${stopWithout(blocking.unanswered)}, so it may have submitted lines it has no record of (${done} recorded)`;
        const went = elsewhere(blocking) ? ` (sent with ${blocking.destination}…)` : '';
        const resume = all ? 'print every result, sending nothing again' : 'send only the lines not yet submitted';
        const again = options.streamed ? done : Math.min(blocking.compared.matched, done);
        // Of a file edited since, only the lines still there as sent are made again (an edited one is new); of
        // standard input, not read yet past its first lines, those of them it holds.
        const left = options.streamed
          ? ' that this input holds'
          : again < done
            ? ` still in it (of the ${done}: the others were edited or removed since)`
            : '';
        // Standard input is known by its first lines: how many it shares says whether it is that input.
        const shares = options.streamed
          ? ` (sharing ${blocking.any} of this input's first ${blocking.compared.lines} lines)`
          : '';
        const created =
          clean || all
            ? again === 1
              ? `the 1 line already submitted${left} is created again, as a duplicate`
              : `${options.streamed ? 'those of' : ''} the ${again} lines already submitted${left} are created again, as duplicates`.trimStart()
            : `${options.streamed ? 'those of' : ''} the ${again} recorded as submitted${left}, and any it has no record of, are created again, as duplicates`.trimStart();
        throw new UsageError(`an earlier batch of ${options.sourceName}${shares}${went} ${what}`, {
          code: 'unfinished_batch',
          hint: `pass --resume to ${resume}; --restart sends every line again: ${created} (the record is ${blocking.path})`,
        });
      }
      const gone = unfinished.find(rewritten);
      if (gone !== undefined) {
        const n = gone.acknowledged.size;
        const stop = gone.clean ? 'stopped' : `${stopWithout(gone.unanswered)},`;
        const what =
          n === 0
            ? 'before any answer was recorded, and none of the lines it began with'
            : `after ${n} of its documents ${n === 1 ? 'was' : 'were'} submitted, and none of ${n === 1 ? 'that line' : 'those lines'}`;
        throw new UsageError(`an earlier batch of ${options.sourceName} ${stop} ${what} is in it now`, {
          code: 'unfinished_batch',
          hint: `${REWRITTEN} (the record is ${gone.path})`,
        });
      }
      if (part !== undefined) throw partOf(part, false);
      // A clean earlier run with no answer recorded made nothing: this batch takes its place.
      dropped = unfinished.filter((s) => s.clean && s.acknowledged.size === 0 && sameInput(s));
    } else if (options.mode === 'restart') {
      dropped = scored.filter((s) => !s.finished && sameInput(s));
    } else if (blocking !== undefined) {
      // Even when a finished batch overlaps more: else the blocking one stays and plain runs stay refused.
      chosen = blocking;
    } else {
      // The batch that overlaps most; among equals an unfinished one, then the most recent. A file's batch is
      // resumed even with no line recognized when it recorded none (it stopped before its first answer); standard
      // input in a directory is too weak a name for that.
      chosen = scored
        .filter((s) => s.busy === undefined && sameInput(s))
        .sort((a, b) => b.any - a.any || Number(a.finished) - Number(b.finished) || b.mtimeMs - a.mtimeMs)[0];
      if (chosen !== undefined && rewritten(chosen)) {
        const n = chosen.acknowledged.size;
        const lines = n === 0 ? 'lines' : `${n} ${n === 1 ? 'line' : 'lines'}`;
        throw new UsageError(
          `nothing to resume: none of the ${lines} the earlier batch of ${options.sourceName} ${n === 0 ? 'began with' : 'submitted'} is in it now`,
          { code: 'nothing_to_resume', hint: REWRITTEN },
        );
      }
      // Sending every line could make twice what a batch no longer recorded here (pruned, other directory) made.
      if (chosen === undefined && part !== undefined) throw partOf(part, true);
      if (chosen === undefined) {
        const what = options.streamed ? 'most of its first lines' : 'any of its lines';
        const none =
          candidates.length === 0 ? `is recorded in ${options.dir}` : `recorded in ${options.dir} holds ${what}`;
        const read = options.identity.startsWith('stdin:') ? ` read in ${options.identity.slice('stdin:'.length)}` : '';
        throw new UsageError(`nothing to resume: no batch of ${options.sourceName}${read} ${none}`, {
          code: 'nothing_to_resume',
          hint:
            'run without --resume to send every line as a new batch (its documents are created again if an earlier ' +
            `run made them), or set FACECTL_STATE_DIR to the directory the batch was recorded in${options.streamed ? '; a batch of standard input is resumed only in the directory it was read in' : ''}`,
        });
      }
    }
    const replaced = options.streamed
      ? scored.filter((s) => s.finished && sameInput(s)).map((s) => s.path)
      : fileFinished;

    for (const candidate of scored) if (candidate !== chosen && !dropped.includes(candidate)) candidate.lock?.release();
    // Resumed with another key (maybe another account): its record goes and every line is sent again under
    // the same batch id, so the same idempotency keys.
    const moved = chosen !== undefined && elsewhere(chosen) ? chosen : undefined;
    const resumed = moved === undefined ? chosen : undefined;
    const batchId = chosen?.batchId ?? randomBytes(12).toString('base64url');
    let held: HeldLock;
    try {
      // A new batch's lock is free: its id is new.
      held = options.streamed
        ? (chosen?.lock ?? (await lockInput(join(dir, `${input}.${batchId}.lock`), 0, onLost)))
        : inputLock;
      for (const candidate of moved === undefined ? dropped : [...dropped, moved]) {
        await rm(candidate.path, { force: true }).catch((error: unknown) => {
          if (held !== inputLock) held.release();
          throw stateError(candidate.path, error);
        });
        // A moved batch's lock is the one this run now holds.
        if (candidate.lock !== held) candidate.lock?.release();
      }
      return await startJournal({
        dir,
        input,
        batchId,
        held,
        resumed,
        began: chosen?.createdAt,
        sentBefore: chosen?.sent,
        // A finished batch made its lines itself: what was pruned since is nothing to it.
        pruned: chosen?.finished === false && (await prunedSince(dir, chosen.createdAt)),
        header: {
          source: options.identity,
          created_at: new Date().toISOString(),
          destination: options.destination,
          ...(head === undefined ? {} : { head: head.map((key) => [key.hash, key.n] as [string, number]) }),
        },
        compared: options.streamed || moved !== undefined ? undefined : chosen?.compared,
        // Said only of a batch that may have made documents: one refused for its key made none.
        ...(moved?.destination === undefined || (moved.clean && moved.acknowledged.size === 0)
          ? {}
          : { movedFrom: moved.destination }),
        replaced,
        // Most of this input's first lines begin a finished batch of it too: this new batch makes them again.
        repeats: options.streamed
          ? options.mode === 'new'
            ? scored.find((s) => s.finished && sameInput(s))?.createdAt
            : undefined
          : lastFinished !== undefined &&
              head !== undefined &&
              2 * head.filter((key) => lastFinished?.head.has(keyText(key))).length >
                Math.min(head.length, lastFinished.head.size)
            ? lastFinished.at
            : undefined,
        // --restart over a batch that made documents: how many it recorded (said, as they are made again).
        restarted: {
          recorded: options.mode === 'restart' ? dropped.reduce((n, s) => n + s.acknowledged.size, 0) : 0,
          // How many of them this file holds as they were sent (standard input's rest is not read yet).
          present: options.streamed ? undefined : dropped.reduce((n, s) => n + s.compared.matched, 0),
        },
        finishing: options.streamed ? () => lockInput(inputLock.path, CHOOSING_WAIT_MS) : undefined,
        // Looked at now when this run was stopped longer than a takeover needs (its heartbeat may not have run yet).
        lockLost: () => {
          held.verify();
          return lost;
        },
      });
    } finally {
      if (options.streamed) inputLock.release();
    }
  }
}
