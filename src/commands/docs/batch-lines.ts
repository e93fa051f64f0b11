import { UsageError } from '../../errors.js';
import type { NdjsonLine } from '../../input/ndjson.js';
import { goneFileBatches } from '../../state/batch-journal.js';
import { bodyHash, type LineKey, type Occurrences } from '../../state/line-keys.js';
import { settle } from './batch-pool.js';

/** Gives a valid line its key, counting occurrences in `seen`, unless it has one (from a file's check pass). */
export function giveKey(line: NdjsonLine, seen: Occurrences): void {
  if (line.error === undefined && line.key === undefined) line.key = keyOf(line.body, seen);
}

export function keyOf(body: Buffer | string, seen: Occurrences): LineKey {
  const hash = bodyHash(body);
  return { hash, n: seen.next(hash) };
}

/**
 * How far standard input is read before anything is sent: its first HEAD_LINES lines, HEAD_BYTES of
 * bodies, what came within HEAD_WAIT_MS of the first line (a writer that sends a line now and then is
 * not waited for long), or all of it, whichever is least.
 */
export const HEAD_LINES = 100;
const HEAD_BYTES = 1024 * 1024;
const HEAD_WAIT_MS = 1000;

/**
 * Reads the first lines ahead, each given its key; an abort ends the wait, a read error waits for its turn.
 * Returns them, every line (the ones read ahead first), and whether the input ended within them.
 */
export async function readAhead(lines: AsyncIterable<NdjsonLine>, seen: Occurrences, signal: AbortSignal) {
  const iterator = lines[Symbol.asyncIterator]();
  const head: NdjsonLine[] = [];
  let bytes = 0;
  let deadline: number | undefined;
  let pending: Promise<IteratorResult<NdjsonLine>> | undefined;
  let failure: { error: unknown } | undefined;
  let ended = false;
  while (head.length < HEAD_LINES && bytes < HEAD_BYTES) {
    if (pending === undefined) {
      pending = iterator.next();
      // Awaited later if not now: its failure is not an unhandled one meanwhile.
      pending.catch(() => undefined);
    }
    const outcome = await settle(pending, signal, deadline);
    if (outcome === 'waited') break;
    pending = undefined;
    if ('error' in outcome) {
      failure = outcome;
      break;
    }
    if (outcome.result.done) {
      ended = true;
      break;
    }
    const line = outcome.result.value;
    giveKey(line, seen);
    head.push(line);
    if (line.error === undefined) bytes += line.body.length;
    deadline ??= Date.now() + HEAD_WAIT_MS;
  }
  const rest = async function* (): AsyncGenerator<NdjsonLine> {
    for (const line of head) yield line;
    if (failure !== undefined) throw failure.error;
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

/**
 * For `--resume` of a file with no batch of its own: the unfinished batches of files no longer at their
 * path, each line's key counted against what they acknowledged (`add`). `refuse` throws when one holds
 * lines of this file: most likely this file, moved, whose lines would be sent twice.
 */
export async function movedFileBatch(dir: string, name: string) {
  const gone = await goneFileBatches(dir);
  if (gone.length === 0) return undefined;
  const matched = gone.map(() => 0);
  return {
    add(key: LineKey) {
      gone.forEach((batch, i) => {
        if (batch.acknowledged.get(key) !== undefined) matched[i] = (matched[i] as number) + 1;
      });
    },
    refuse(): void {
      const most = Math.max(...matched);
      if (most === 0) return;
      const was = (gone[matched.indexOf(most)] as { path: string }).path;
      throw new UsageError(
        `nothing to resume: no unfinished batch of ${name} was recorded, but ${most} of its lines were ` +
          `acknowledged by the unfinished batch of ${was}, a file no longer there`,
        {
          code: 'nothing_to_resume',
          hint:
            `a batch is known by its file's path: if ${name} is ${was} moved, move it back and run --resume ` +
            `again (its acknowledged lines are not sent twice); --restart sends every line anyway: the ${most} ` +
            'already submitted are created again, as duplicates',
        },
      );
    },
  };
}
