import { createHash } from 'node:crypto';
import { realpath } from 'node:fs/promises';
import { resolve } from 'node:path';
import { isServiceKey, keyPrefix } from '../../config/credentials.js';
import { UsageError } from '../../errors.js';
import type { InputSource } from '../../input/source.js';
import type { NdjsonLine } from '../../input/ndjson.js';
import { otherBatches } from '../../state/batch-read.js';
import type { DocumentBody } from '../../input/documents.js';
import { documentHash, type JournalEntry, keyText, type LineKey, Occurrences } from '../../state/line-keys.js';

/** Gives a valid line its key, counting occurrences in `seen`, unless it has one (from a file's check pass). */
export function giveKey(line: NdjsonLine, seen: Occurrences): void {
  if (line.error === undefined && line.key === undefined) line.key = keyOf(line.document, seen);
}

export function keyOf(document: DocumentBody, seen: Occurrences): LineKey {
  const hash = documentHash(document);
  return { hash, n: seen.next(hash) };
}

/**
 * Standard input is read ahead before anything is sent: HEAD_LINES lines, HEAD_BYTES of bodies, what came within
 * HEAD_WAIT_MS of the first line (a slow writer is not waited for), or all of it, whichever is least.
 */
export const HEAD_LINES = 100;
const HEAD_BYTES = 1024 * 1024;
const HEAD_WAIT_MS = 1000;

/** Returns the first lines, keyed; every line (those first); and whether the input ended there. */
export async function readAhead(lines: AsyncIterable<NdjsonLine>, seen: Occurrences, signal: AbortSignal) {
  const iterator = lines[Symbol.asyncIterator]();
  const head: NdjsonLine[] = [];
  let bytes = 0;
  let deadline: number | undefined;
  // A read that failed stays pending: the rest throws its error after the first lines.
  let pending: Promise<IteratorResult<NdjsonLine>> | undefined;
  let ended = false;
  while (head.length < HEAD_LINES && bytes < HEAD_BYTES) {
    if (pending === undefined) {
      pending = iterator.next();
      // Awaited later if not now: its failure is not an unhandled one meanwhile.
      pending.catch(() => undefined);
    }
    const outcome = await settle(pending, signal, deadline).catch(() => 'failed' as const);
    if (outcome === 'waited' || outcome === 'failed') break;
    pending = undefined;
    if (outcome.done) {
      ended = true;
      break;
    }
    const line = outcome.value;
    giveKey(line, seen);
    head.push(line);
    if (line.error === undefined) bytes += line.body.length;
    deadline ??= Date.now() + HEAD_WAIT_MS;
  }
  const rest = async function* (): AsyncGenerator<NdjsonLine> {
    for (const line of head) yield line;
    if (ended) return;
    for (;;) {
      const result = await (pending ?? iterator.next());
      pending = undefined;
      if (result.done) return;
      yield result.value;
    }
  };
  return { head, lines: rest(), ended };
}

/** A file's first HEAD_LINES valid lines, keyed as the send pass keys them. */
export async function fileHead(lines: AsyncIterable<NdjsonLine>): Promise<LineKey[]> {
  const seen = new Occurrences();
  const head: LineKey[] = [];
  for await (const line of lines) {
    if (head.length === HEAD_LINES) break;
    if (line.error === undefined) head.push(keyOf(line.document, seen));
  }
  return head;
}

/**
 * An input without a batch of its own (but for --restart): the unfinished batches of other inputs, counting its lines
 * they submitted; `refuse` throws when one of them submitted (or may have) any line of it (this input is most likely
 * that one moved, a copy, or part of one; sent, those lines would be made twice).
 */
export async function otherInputBatch(dir: string, name: string, identity: string, streamed = false) {
  const others = await otherBatches(dir, identity);
  if (others.length === 0) return undefined;
  const matched = others.map(() => 0);
  const recorded = others.map(() => 0);
  let lines = 0;
  return {
    add(key: LineKey) {
      lines++;
      others.forEach((batch, i) => {
        const acknowledged = batch.acknowledged.get(key) !== undefined;
        if (acknowledged) recorded[i] = (recorded[i] as number) + 1;
        if (acknowledged || batch.sent.has(keyText(key))) matched[i] = (matched[i] as number) + 1;
      });
    },
    /** `keys`: lines of the input not added yet. */
    refuse(resume: boolean, keys: readonly LineKey[] = []): void {
      for (const key of keys) this.add(key);
      const most = Math.max(...matched);
      if (most === 0) return;
      const at = matched.indexOf(most);
      const { path: was, name: other, gone, record } = others[at] as (typeof others)[number];
      const known = recorded[at] as number;
      // Standard input is read no further than its first lines before sending: a floor.
      const of = streamed ? `${resume ? 'its' : 'the'} first ${lines} lines` : resume ? 'its lines' : 'the lines';
      // Killed or stopped with requests unanswered, it may have made lines it sent and did not record.
      const said =
        `${most} of ${of}${resume ? '' : ` of ${name}`} ${most === 1 ? 'was' : 'were'} submitted${known === most ? '' : ', or may have been,'}` +
        ` by the unfinished batch of ${other}${gone ? ', a file no longer there' : was === undefined ? '' : ' (is it a copy?)'}` +
        (known === most ? '' : ` (${known} recorded as submitted)`);
      throw new UsageError(
        resume ? `nothing to resume: no unfinished batch of ${name} was recorded, but ${said}` : said,
        {
          code: resume ? 'nothing_to_resume' : 'unfinished_batch',
          hint:
            (was === undefined
              ? `a batch of standard input is known by its first lines: to go on with it, feed it its own input with --resume there (the record is ${record})`
              : "a batch is known by its file's path: " +
                (gone
                  ? `if ${name} is ${was} moved, move it back and run --resume`
                  : `to go on with it, run \`facectl docs submit --file ${was} --resume\` with the flags it was run with`)) +
            ` (its submitted lines are not sent twice); --restart sends every line of ${name} anyway: those already ` +
            'submitted are created again, as duplicates',
        },
      );
    },
  };
}

/**
 * For --resume: the lines batches of other inputs here submitted, unfinished ones or those finished since this batch
 * began (`began`), with the same key (the same account): a slice of its lines sent as a file of its own, or piped. Such a
 * line is reported with the document made (`made`), or sent under the key of the batch that sent it without an
 * answer (`sentBy`): never made twice.
 */
export async function otherInputsLines(dir: string, identity: string, began: string, destination: string) {
  const others = await otherBatches(dir, identity, began);
  if (others.length === 0) return undefined;
  const same = others.filter((batch) => batch.destination === destination);
  const from = new Set<string>();
  return {
    made(key: LineKey): JournalEntry | undefined {
      for (const batch of same) {
        const entry = batch.acknowledged.get(key);
        if (entry !== undefined) return from.add(batch.name) && entry;
      }
      return undefined;
    },
    // Sent with another key, perhaps of this account: under that batch's key, the service answers with what it made.
    sentBy: (key: LineKey) =>
      others.find(
        (batch) =>
          batch.sent.has(keyText(key)) ||
          (batch.destination !== destination && batch.acknowledged.get(key) !== undefined),
      )?.batchId,
    /** The inputs whose batches made lines of this one. */
    from,
  };
}

/**
 * `concurrency` workers over one stream until it ends, `work` or `admit` (in input order) says false, a read fails,
 * or the signal aborts. `slowSource` (stdin): an abort ends the wait for the next item (a listener per item).
 */
export async function runPool<T>(
  items: AsyncIterable<T>,
  options: { concurrency: number; signal: AbortSignal; slowSource: boolean; admit?: (item: T) => boolean },
  work: (item: T) => Promise<boolean>,
) {
  const { signal } = options;
  const iterator = items[Symbol.asyncIterator]();
  // A file's lines come straight from the iterator (no promise of ours per line); a slow source's, or the abort.
  const next = options.slowSource
    ? async (): Promise<IteratorResult<T>> => {
        const settled = await settle(iterator.next(), signal);
        return settled === 'waited' ? { done: true, value: undefined } : settled;
      }
    : () => iterator.next();
  const outcome: { stopped: boolean; readError?: unknown } = { stopped: false };
  const worker = async () => {
    while (!outcome.stopped && !signal.aborted) {
      let taken: IteratorResult<T>;
      try {
        taken = await next();
      } catch (error) {
        outcome.readError ??= error;
        outcome.stopped = true;
        return;
      }
      // Another worker may have stopped the pool while this one waited for its item.
      if (taken.done || outcome.stopped || signal.aborted) return;
      if (options.admit && !options.admit(taken.value)) {
        outcome.stopped = true;
        return;
      }
      if (!(await work(taken.value))) outcome.stopped = true;
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  return outcome;
}

/**
 * The next item, or 'waited' on the deadline or the abort. Not Promise.race with one long-lived "aborted" promise:
 * each race left on it a reaction holding a whole document (a 1 GiB batch peaked at 1.4 GiB RSS).
 */
export function settle<T>(next: Promise<T>, signal: AbortSignal, deadline?: number): Promise<T | 'waited'> {
  if (signal.aborted) return Promise.resolve('waited');
  return new Promise((resolve, reject) => {
    const stop = () => finish(resolve, 'waited');
    const timer = deadline === undefined ? undefined : setTimeout(stop, Math.max(deadline - Date.now(), 0));
    signal.addEventListener('abort', stop, { once: true });
    function finish<V>(settled: (value: V) => void, value: V) {
      if (timer !== undefined) clearTimeout(timer);
      signal.removeEventListener('abort', stop);
      settled(value);
    }
    next.then(
      (result) => finish(resolve, result),
      (error: unknown) => finish(reject, error),
    );
  });
}

/**
 * What a batch records of its key, to tell a resume with another key: a service key's prefix; of another key its
 * short prefix and a digest (4 characters alone could make two keys one, and a resume skip lines never sent).
 */
export function keyIdentity(key: string): string {
  if (isServiceKey(key)) return keyPrefix(key);
  return `${keyPrefix(key)} #${createHash('sha256').update(key).digest('hex').slice(0, 12)}`;
}

/** What names the input across runs: a file by its real path, standard input by the directory it is read in. */
export async function inputIdentity(source: InputSource, cwd: string): Promise<string> {
  if (source.kind === 'stdin') return `stdin:${cwd}`;
  const path = resolve(cwd, source.name);
  return `file:${await realpath(path).catch(() => path)}`;
}
