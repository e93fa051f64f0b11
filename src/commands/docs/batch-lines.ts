import type { NdjsonLine } from '../../input/ndjson.js';
import { bodyHash, type LineKey, type Occurrences } from '../../state/line-keys.js';

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

export interface ReadAhead {
  head: NdjsonLine[];
  /** Every line, the ones read ahead first. */
  lines: AsyncIterable<NdjsonLine>;
  /** The input ended within the head. */
  ended: boolean;
}

/**
 * Reads the first lines ahead (see HEAD_LINES), each given its key; an abort ends the wait, a read error
 * waits for its turn.
 */
export async function readAhead(
  lines: AsyncIterable<NdjsonLine>,
  seen: Occurrences,
  signal: AbortSignal,
): Promise<ReadAhead> {
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
    if (pending !== undefined) {
      const result = await pending;
      if (result.done) return;
      yield result.value;
    }
    for (;;) {
      const result = await iterator.next();
      if (result.done) return;
      yield result.value;
    }
  };
  return { head, lines: rest(), ended };
}

type Settled = { result: IteratorResult<NdjsonLine> } | { error: unknown } | 'waited';

/** The next line, or 'waited' when the deadline passed or the signal aborted first. */
function settle(
  next: Promise<IteratorResult<NdjsonLine>>,
  signal: AbortSignal,
  deadline: number | undefined,
): Promise<Settled> {
  if (signal.aborted) return Promise.resolve('waited');
  return new Promise((resolve) => {
    const stop = () => finish('waited');
    const timer = deadline === undefined ? undefined : setTimeout(stop, Math.max(deadline - Date.now(), 0));
    signal.addEventListener('abort', stop, { once: true });
    function finish(settled: Settled) {
      if (timer !== undefined) clearTimeout(timer);
      signal.removeEventListener('abort', stop);
      resolve(settled);
    }
    next.then(
      (result) => finish({ result }),
      (error: unknown) => finish({ error }),
    );
  });
}
